"""Record real ``/v1/messages`` replies from a running vLLM as fixtures (rerunnable).

    python scripts/record_anthropic_messages_fixtures.py http://127.0.0.1:18322 [--only NAME]
        [--list] [--out tests/fixtures]

The server is the live vLLM 0.32.0 of the common setup (``--enable-auto-tool-choice
--tool-call-parser hermes``, no ``--reasoning-parser``, no ``--api-key``). Writes
``tests/fixtures/anthropic_messages/<server-version>/<name>.json``, each ``{"route", "method",
"request", "headers", "status", "reply" | "reply_sse", "server"}``. ``request`` is the body exactly
as sent; ``headers`` are the request headers beyond ``Content-Type`` (what the dialect sends:
``anthropic-version``, and for one case an ``x-api-key`` whose value is written as a marker, never
as sent). Volatile ids (``chatcmpl-…``, tool call ids) are kept as the server sent them.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MODEL = "gemma-3-270m"
MESSAGES = "/v1/messages"
VERSION_HEADER = {"anthropic-version": "2023-06-01"}
FAKE_KEY = "sk-sieval-not-a-real-key"
KEY_MARKER = "<redacted x-api-key>"
# A 1x1 opaque red PNG.
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "enum": ["Ann", "Bob", "Eve"]},
        "adult": {"type": "boolean"},
    },
    "required": ["name", "adult"],
    "additionalProperties": False,
}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
TIME_TOOL = {
    "name": "get_time",
    "description": "Current time in a timezone.",
    "input_schema": {
        "type": "object",
        "properties": {"zone": {"type": "string"}},
        "required": ["zone"],
    },
}
# Gemma 3 270M loops inside free-form tool arguments; asked to repeat a call verbatim it
# completes one (the hermes structural tag forces the envelope, not the arguments).
TOOL_PROMPT = (
    'Repeat exactly: <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    "</tool_call>"
)
# asked to copy a hermes block under tool_choice auto, it writes the call the parser finds (the
# stop sequence ends it cleanly); it copies no two blocks (see the chat recorder)
AUTO_PROMPT = (
    'Copy this text exactly:\n<tool_call>\n{"name": "get_weather", "arguments": {"city": '
    '"Paris"}}\n</tool_call>\nEND'
)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def user(value: str) -> dict[str, Any]:
    return {"role": "user", "content": [text(value)]}


def assistant(value: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [text(value)]}


def body(messages: list[dict[str, Any]], max_tokens: int, **fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": messages, "max_tokens": max_tokens, **fields}


CAPITAL = [user("What is the capital of France?")]
TOOL_USE_ID = "toolu_sieval_01"
TOOL_FOLLOW_UP = [
    user("What is the weather in Paris?"),
    {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": TOOL_USE_ID,
                "name": "get_weather",
                "input": {"city": "Paris"},
            }
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": TOOL_USE_ID, "content": "22 C, sunny"}],
    },
]

# name -> (route, body, extra headers); every POST also carries anthropic-version, as the dialect
CASES: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    "plain": (MESSAGES, body(CAPITAL, 8, temperature=0.0), {}),
    "system_user": (
        MESSAGES,
        body(CAPITAL, 8, temperature=0.0, system=[text("Answer in one word.")]),
        {},
    ),
    "system_two_blocks": (
        MESSAGES,
        body(
            CAPITAL,
            8,
            temperature=0.0,
            system=[text("Answer in one word."), text("Answer in French.")],
        ),
        {},
    ),
    "multi_turn": (
        MESSAGES,
        body(
            [user("My name is Ann."), assistant("Hello Ann."), user("What is my name?")],
            8,
            temperature=0.0,
        ),
        {},
    ),
    "sampling": (
        MESSAGES,
        body(
            [user("Tell me a story about a dragon.")],
            12,
            temperature=0.7,
            top_p=0.9,
            top_k=40,
        ),
        {},
    ),
    "stop_sequence": (
        MESSAGES,
        body(
            [user("Continue the list: 1, 2, 3, 4, 5,")],
            30,
            temperature=0.0,
            stop_sequences=["3"],
        ),
        {},
    ),
    "max_tokens": (
        MESSAGES,
        body([user("Tell me a story about a dragon.")], 3, temperature=0.0),
        {},
    ),
    "json_schema": (
        MESSAGES,
        body(
            [user('Return this JSON: {"name": "Ann", "adult": true}')],
            40,
            temperature=0.0,
            output_config={"format": {"type": "json_schema", "schema": PERSON}},
        ),
        {},
    ),
    "json_schema_cut": (
        MESSAGES,
        body(
            [user("Give a person as JSON.")],
            40,
            temperature=0.0,
            output_config={"format": {"type": "json_schema", "schema": PERSON}},
        ),
        {},
    ),
    "effort_low": (
        MESSAGES,
        body(CAPITAL, 8, temperature=0.0, output_config={"effort": "low"}),
        {},
    ),
    "thinking_disabled": (
        MESSAGES,
        body(CAPITAL, 8, temperature=0.0, thinking={"type": "disabled"}),
        {},
    ),
    "thinking_enabled": (
        MESSAGES,
        body(CAPITAL, 1100, temperature=0.0, thinking={"type": "enabled", "budget_tokens": 1024}),
        {},
    ),
    "error_thinking_budget_low": (
        MESSAGES,
        body(CAPITAL, 1100, temperature=0.0, thinking={"type": "enabled", "budget_tokens": 512}),
        {},
    ),
    "error_thinking_budget_not_below_max": (
        MESSAGES,
        body(CAPITAL, 1024, temperature=0.0, thinking={"type": "enabled", "budget_tokens": 1024}),
        {},
    ),
    "tool_any": (
        MESSAGES,
        body(
            [user(TOOL_PROMPT)],
            60,
            temperature=0.0,
            tools=[WEATHER_TOOL],
            tool_choice={"type": "any"},
        ),
        {},
    ),
    "tool_result": (
        MESSAGES,
        body(TOOL_FOLLOW_UP, 12, temperature=0.0, tools=[WEATHER_TOOL]),
        {},
    ),
    "stream": (MESSAGES, body(CAPITAL, 8, temperature=0.0, stream=True), {}),
    "stream_tool_any": (
        MESSAGES,
        body(
            [user(TOOL_PROMPT)],
            60,
            temperature=0.0,
            tools=[WEATHER_TOOL],
            tool_choice={"type": "any"},
            stream=True,
        ),
        {},
    ),
    "temperature_above_1": (MESSAGES, body(CAPITAL, 4, temperature=1.5), {}),
    # issue 35: the shapes the reference server's tool calls are held to
    "tool_auto": (
        MESSAGES,
        body(
            [user(AUTO_PROMPT)],
            60,
            temperature=0.0,
            stop_sequences=["END"],
            tools=[WEATHER_TOOL, TIME_TOOL],
        ),
        {},
    ),
    "stream_tool_auto": (
        MESSAGES,
        body(
            [user(AUTO_PROMPT)],
            60,
            temperature=0.0,
            stop_sequences=["END"],
            tools=[WEATHER_TOOL, TIME_TOOL],
            stream=True,
        ),
        {},
    ),
    "tool_named": (
        MESSAGES,
        body(
            [user(TOOL_PROMPT)],
            60,
            temperature=0.0,
            tools=[WEATHER_TOOL, TIME_TOOL],
            tool_choice={"type": "tool", "name": "get_weather"},
        ),
        {},
    ),
    "image_base64": (
        MESSAGES,
        body(
            [
                {
                    "role": "user",
                    "content": [
                        text("What colour is this image?"),
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": PNG_1X1,
                            },
                        },
                    ],
                }
            ],
            8,
            temperature=0.0,
        ),
        {},
    ),
    "error_missing_max_tokens": (
        MESSAGES,
        {"model": MODEL, "messages": CAPITAL, "temperature": 0.0},
        {},
    ),
    "error_max_tokens_0": (MESSAGES, body(CAPITAL, 0, temperature=0.0), {}),
    "error_stop_sequences_5": (
        MESSAGES,
        body(CAPITAL, 4, temperature=0.0, stop_sequences=["a", "b", "c", "d", "e"]),
        {},
    ),
    "error_unknown_model": (
        MESSAGES,
        {**body(CAPITAL, 4, temperature=0.0), "model": "no-such-model"},
        {},
    ),
    "error_context_overflow": (
        MESSAGES,
        body([user("hello " * 4200)], 4, temperature=0.0),
        {},
    ),
    "x_api_key_without_server_key": (
        MESSAGES,
        body(CAPITAL, 4, temperature=0.0),
        {"x-api-key": FAKE_KEY},
    ),
    "count_tokens": (
        "/v1/messages/count_tokens",
        {"model": MODEL, "messages": CAPITAL, "system": [text("Answer in one word.")]},
        {},
    ),
}


def call(
    base: str, route: str, payload: dict[str, Any], headers: dict[str, str]
) -> tuple[int, str, str]:
    req = urllib.request.Request(base + route, data=json.dumps(payload).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    for name, value in {**VERSION_HEADER, **headers}.items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("content-type", ""), err.read().decode()


def shown(headers: dict[str, str]) -> dict[str, str]:
    """The headers as written to the fixture: a key never appears."""
    out = {**VERSION_HEADER, **headers}
    if "x-api-key" in out:
        out["x-api-key"] = KEY_MARKER
    return out


def server_version(base: str) -> str:
    with urllib.request.urlopen(base + "/version", timeout=10) as resp:
        return str(json.loads(resp.read())["version"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("--only", action="append", help="record only this case (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    parser.add_argument(
        "--out", default=str(Path(__file__).resolve().parent.parent / "tests/fixtures")
    )
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return
    unknown = set(args.only or ()) - set(CASES)
    if unknown:
        parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    base = args.base.rstrip("/")
    version = server_version(base)
    for name, (route, payload, headers) in CASES.items():
        if args.only and name not in args.only:
            continue
        status, ctype, reply = call(base, route, payload, headers)
        if FAKE_KEY in reply:
            reply = reply.replace(FAKE_KEY, KEY_MARKER)
        record: dict[str, Any] = {
            "route": route,
            "method": "POST",
            "request": payload,
            "headers": shown(headers),
            "status": status,
        }
        if "text/event-stream" in ctype:
            record["reply_sse"] = reply
        else:
            record["reply"] = json.loads(reply) if reply else None
        record["server"] = {"engine": "vllm", "version": version, "model": MODEL}
        path = Path(args.out) / "anthropic_messages" / version / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"anthropic_messages/{name}: HTTP {status}", file=sys.stderr)


if __name__ == "__main__":
    main()
