"""Record real ``/v1/chat/completions`` replies from a running vLLM as fixtures (rerunnable).

    python scripts/record_openai_chat_fixtures.py http://127.0.0.1:18322 [--only NAME] [--list]
        [--out tests/fixtures]

The server is the live vLLM 0.32.0 of the common setup (``--max-logprobs 100 --seed 0
--enable-auto-tool-choice --tool-call-parser hermes``, no ``--reasoning-parser``, no
``--api-key``). Writes ``tests/fixtures/openai_chat/<server-version>/<name>.json``, each
``{"route", "method", "request", "status", "reply" | "reply_sse", "server"}``. ``request`` is the
body exactly as sent (no key is ever sent, so nothing needs redacting); volatile ids
(``chatcmpl-...``, tool call ids) are kept as the server sent them. Bodies are written here as
plain data; ``tests/dialects/test_openai_chat.py`` asserts that the dialect lowers the matching
IR request to exactly these bodies (the two error bodies the dialect refuses before I/O,
``top_logprobs: 101`` and ``tools: []``, are marked below). Requests go one at a time.
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
ROUTE = "/v1/chat/completions"
# A 1x1 PNG, as base64.
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
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
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "description": "Weather for a city",
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {
            "type": "object",
            "properties": {"zone": {"type": "string"}},
            "required": ["zone"],
        },
        "description": "Current time in a timezone",
    },
}
# Gemma 3 270M copies its prompt: these prompts make its forced call and JSON complete.
CALL_TEXT = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
# ... and under tool_choice auto, asked to copy a hermes block it writes the call the parser finds
# (the stop string ends it cleanly; it would repeat the block). It copies no two blocks: tried with
# two tools, one tool twice and tool_choice required, it drifted or made one call.
AUTO_TEXT = f"Copy this text exactly:\n<tool_call>\n{CALL_TEXT}\n</tool_call>\nEND"
TWO_CALLS_TEXT = (
    f"Copy this text exactly:\n<tool_call>\n{CALL_TEXT}\n</tool_call>\n<tool_call>\n"
    '{"name": "get_time", "arguments": {"zone": "Asia/Tokyo"}}\n</tool_call>\nEND'
)
PERSON_TEXT = '{"name": "Bob", "adult": true}'
CAPITAL = "What is the capital of France?"
STREAM = {"stream": True, "stream_options": {"include_usage": True}}


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], **extra}


def msg(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def tool_result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": [{"type": "text", "text": text}]}


def body(messages: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": messages, **fields}


GREEDY = {"temperature": 0.0}
TOOL_TURNS = [
    user(CALL_TEXT),
    {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": [{"type": "text", "text": '{"temperature_c":18}'}],
    },
]

CASES: dict[str, dict[str, Any]] = {
    "plain": body([user(CAPITAL)], **GREEDY, max_completion_tokens=8),
    "system_user": body(
        [msg("system", "Answer in one word."), user(CAPITAL)], **GREEDY, max_completion_tokens=8
    ),
    "developer_name": body(
        [msg("developer", "Be brief."), user("Hi", name="ann")], **GREEDY, max_completion_tokens=6
    ),
    "multi_turn": body(
        [user("Hi"), msg("assistant", "Hello! How can I help?"), user(CAPITAL)],
        **GREEDY,
        max_completion_tokens=8,
    ),
    "seed_11_a": body(
        [user("Tell me a story.")], temperature=1.0, max_completion_tokens=8, seed=11
    ),
    "seed_11_b": body(
        [user("Tell me a story.")], temperature=1.0, max_completion_tokens=8, seed=11
    ),
    "seed_12": body([user("Tell me a story.")], temperature=1.0, max_completion_tokens=8, seed=12),
    "n2_temp1": body(
        [user("Tell me a story.")],
        temperature=1.0,
        max_completion_tokens=6,
        seed=7,
        n=2,
        logprobs=True,
        top_logprobs=3,
    ),
    "logprobs_sampled": body(
        [user("Tell me a story.")],
        temperature=1.0,
        max_completion_tokens=6,
        seed=7,
        logprobs=True,
        top_logprobs=4,
    ),
    "logprobs_greedy": body(
        [user(CAPITAL)], **GREEDY, max_completion_tokens=8, logprobs=True, top_logprobs=3
    ),
    "byte_fallback": body(
        [user("𝔘𝔫𝔦 ꙮ 𐍈")], **GREEDY, max_completion_tokens=10, logprobs=True, top_logprobs=2
    ),
    "stop_string": body(
        [user("Say hi.")], **GREEDY, max_completion_tokens=12, stop=[" mend"], logprobs=True
    ),
    "json_schema": body(
        [user(PERSON_TEXT)],
        **GREEDY,
        max_completion_tokens=24,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "person", "schema": PERSON, "strict": True},
        },
    ),
    "json_schema_cut": body(
        [user("Give a person as JSON.")],
        **GREEDY,
        max_completion_tokens=40,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "person", "schema": PERSON, "strict": True},
        },
    ),
    "json_object": body(
        [user(PERSON_TEXT)],
        **GREEDY,
        max_completion_tokens=24,
        response_format={"type": "json_object"},
    ),
    "tool_required": body(
        [user(CALL_TEXT)],
        **GREEDY,
        max_completion_tokens=40,
        tools=[WEATHER],
        tool_choice="required",
    ),
    "tool_result_turn": body(TOOL_TURNS, **GREEDY, max_completion_tokens=12, tools=[WEATHER]),
    # issue 35: the shapes the reference server's tool calls are held to
    "tool_auto": body(
        [user(AUTO_TEXT)], **GREEDY, max_completion_tokens=60, stop=["END"], tools=[WEATHER, TIME]
    ),
    "tool_auto_no_call": body(
        [user(CAPITAL)], **GREEDY, max_completion_tokens=8, tools=[WEATHER, TIME]
    ),
    "stream_tool_auto": body(
        [user(AUTO_TEXT)],
        **GREEDY,
        max_completion_tokens=60,
        stop=["END"],
        tools=[WEATHER, TIME],
        **STREAM,
    ),
    "tool_results_parallel": body(
        [
            user(TWO_CALLS_TEXT),
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": '{"zone":"Asia/Tokyo"}'},
                    },
                ],
            },
            tool_result("call_1", "18 C"),
            tool_result("call_2", "09:00"),
        ],
        **GREEDY,
        max_completion_tokens=16,
        tools=[WEATHER, TIME],
    ),
    "tool_required_cut": body(
        [user("What is the weather in Paris?")],
        **GREEDY,
        max_completion_tokens=40,
        tools=[WEATHER],
        tool_choice="required",
    ),
    "tool_array_arguments": body(
        [user("What is the weather in Paris?")],
        temperature=0.7,
        max_completion_tokens=40,
        seed=6,
        tools=[WEATHER],
        tool_choice="required",
    ),
    "reasoning_absent": body(
        [user(CAPITAL)], **GREEDY, max_completion_tokens=8, reasoning_effort="low"
    ),
    "clamped": body([user("hello " * 4080)], **GREEDY, max_completion_tokens=40),
    "stream": body([user(CAPITAL)], **GREEDY, max_completion_tokens=8, **STREAM),
    "stream_logprobs": body(
        [user(CAPITAL)],
        **GREEDY,
        max_completion_tokens=8,
        logprobs=True,
        top_logprobs=3,
        **STREAM,
    ),
    "stream_tool": body(
        [user(CALL_TEXT)],
        **GREEDY,
        max_completion_tokens=40,
        tools=[WEATHER],
        tool_choice="required",
        **STREAM,
    ),
    "error_image": body(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {
                        "type": "image_url",
                        "image_url": {"url": f"data:image/png;base64,{PNG_1X1}", "detail": "low"},
                    },
                ],
            }
        ],
        max_completion_tokens=4,
    ),
    "error_unknown_model": {
        **body([user("Hi")], max_completion_tokens=1),
        "model": "no-such-model",
    },
    "error_context_overflow": body([user("hello " * 4200)], **GREEDY, max_completion_tokens=4),
    # not a body the dialect sends: it refuses top-k > 19 before I/O (the server's own cap here)
    "error_top_logprobs_101": body(
        [user("Hi")], max_completion_tokens=1, logprobs=True, top_logprobs=101
    ),
    # not a body the dialect sends: an empty IR tool list is never written
    "error_tools_empty": body([user("Hi")], max_completion_tokens=1, tools=[]),
    # not a body the dialect sends: the IR has no named tool choice
    "tool_named": body(
        [user(CALL_TEXT)],
        **GREEDY,
        max_completion_tokens=40,
        tools=[WEATHER, TIME],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
    ),
}


def call(base: str, payload: dict[str, Any]) -> tuple[int, str, str]:
    req = urllib.request.Request(base + ROUTE, data=json.dumps(payload).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("content-type", ""), err.read().decode()


def version(base: str) -> str:
    with urllib.request.urlopen(base + "/version", timeout=30) as resp:
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
    base = args.base.rstrip("/")
    served = version(base)
    for name, payload in CASES.items():
        if args.only and name not in args.only:
            continue
        status, ctype, text = call(base, payload)
        record: dict[str, Any] = {"route": ROUTE, "method": "POST", "request": payload}
        record["status"] = status
        if "text/event-stream" in ctype:
            record["reply_sse"] = text
        else:
            record["reply"] = json.loads(text) if text else None
        record["server"] = {"engine": "vllm", "version": served, "model": MODEL}
        path = Path(args.out) / "openai_chat" / served / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"openai_chat/{name}: HTTP {status}", file=sys.stderr)


if __name__ == "__main__":
    main()
