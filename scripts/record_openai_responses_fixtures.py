"""Record real ``/v1/responses`` replies from a running vLLM as fixtures (rerunnable).

    python scripts/record_openai_responses_fixtures.py http://127.0.0.1:18322 [--only NAME]
        [--list] [--out tests/fixtures]

The server is the live vLLM 0.32.0 of the common setup (``--max-logprobs 100 --seed 0
--max-model-len 4096 --enable-auto-tool-choice --tool-call-parser hermes``, no
``--reasoning-parser``, no ``--api-key``, ``VLLM_ENABLE_RESPONSES_API_STORE`` unset). Writes
``tests/fixtures/openai_responses/<server-version>/<name>.json``, each ``{"route", "method",
"request", "status", "reply" | "reply_sse", "server"}``. ``request`` is the body exactly as sent
(no key is ever sent, so nothing needs redacting); volatile ids (``resp_...``, ``msg_...``, call
ids) are kept as the server sent them. Bodies are plain data here: the dialect tests lower the
matching IR requests and compare. Cases named ``doc_*`` (and ``instructions``,
``previous_response_id``, ``error_prompt_field``, ``get_stored_response``) use fields the dialect
never sends; they document what vLLM does with them (``doc_tokenize_chat_route`` asks vLLM's
``/tokenize`` how the chat route tokenizes the same conversation). Requests go one at a time.
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
ROUTE = "/v1/responses"
LOGPROBS = ["message.output_text.logprobs"]
CAPITAL = "What is the capital of France?"
FRAKTUR = "𝔘𝔫𝔦 ꙮ 𐍈"  # characters Gemma writes as byte-fallback pieces
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
# Gemma 3 270M copies its prompt: these prompts make its JSON complete.
PERSON_PROMPT = "Return JSON with name Bob and adult true."
COLOR_PROMPT = 'Give a JSON object with one key "color" whose value is "red".'
PERSON_FORMAT = {
    "format": {"type": "json_schema", "name": "person", "schema": PERSON, "strict": True}
}
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
TIME = {
    "type": "function",
    "name": "get_time",
    "description": "Current time in a timezone",
    "parameters": {
        "type": "object",
        "properties": {"zone": {"type": "string"}},
        "required": ["zone"],
        "additionalProperties": False,
    },
    "strict": True,
}
WEATHER_Q = "What is the weather in Paris?"
# Gemma 3 270M copies its prompt: asked to copy a hermes block it writes the call the parser
# finds (the stop string ends it cleanly); it copies no two blocks (see the chat recorder)
AUTO_Q = (
    'Copy this text exactly:\n<tool_call>\n{"name": "get_weather", "arguments": {"city": '
    '"Paris"}}\n</tool_call>\nEND'
)
CALL = {
    "type": "function_call",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city":"Paris"}',
}
CALL_OUTPUT = {
    "type": "function_call_output",
    "call_id": "call_1",
    "output": '{"temperature_c":18,"sky":"clear"}',
}


def text_item(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def assistant_item(index: int, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "id": f"msg_{index}",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def body(items: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A body as openai_responses writes it: ``store: false`` always."""
    return {"model": MODEL, "input": items, "store": False, **fields}


def greedy(max_output_tokens: int) -> dict[str, Any]:
    return {"temperature": 0.0, "max_output_tokens": max_output_tokens}


ASK = [text_item("user", CAPITAL)]

# (name, method, route, body)
CASES: list[tuple[str, str, str, dict[str, Any] | None]] = [
    ("plain", "POST", ROUTE, body(ASK, **greedy(12))),
    (
        "system_item",
        "POST",
        ROUTE,
        body([text_item("system", "Answer in one word."), *ASK], **greedy(8)),
    ),
    (
        "instructions",
        "POST",
        ROUTE,
        body(ASK, instructions="Answer in one word.", **greedy(8)),
    ),
    (
        "developer_item",
        "POST",
        ROUTE,
        body([text_item("developer", "Answer in one word."), *ASK], **greedy(8)),
    ),
    (
        "multi_turn",
        "POST",
        ROUTE,
        body([*ASK, assistant_item(1, "Paris."), text_item("user", "And of Italy?")], **greedy(8)),
    ),
    (
        "logprobs_top3",
        "POST",
        ROUTE,
        body(
            [text_item("user", "Name a color.")],
            temperature=1.0,
            max_output_tokens=6,
            include=LOGPROBS,
            top_logprobs=4,
        ),
    ),
    (
        "logprobs_cjk",
        "POST",
        ROUTE,
        body(
            [text_item("user", "中国的首都是哪里？")], **greedy(8), include=LOGPROBS, top_logprobs=3
        ),
    ),
    (
        "doc_top_logprobs_3_seed5",
        "POST",
        ROUTE,
        body(
            [text_item("user", "Name a color.")],
            temperature=1.0,
            max_output_tokens=6,
            include=LOGPROBS,
            top_logprobs=3,
            seed=5,
        ),
    ),
    (
        "doc_top_logprobs_4_seed5",
        "POST",
        ROUTE,
        body(
            [text_item("user", "Name a color.")],
            temperature=1.0,
            max_output_tokens=6,
            include=LOGPROBS,
            top_logprobs=4,
            seed=5,
        ),
    ),
    (
        "logprobs_byte_fallback",
        "POST",
        ROUTE,
        body([text_item("user", FRAKTUR)], **greedy(10), include=LOGPROBS, top_logprobs=2),
    ),
    (
        "stream_logprobs_byte_fallback",
        "POST",
        ROUTE,
        body(
            [text_item("user", FRAKTUR)],
            **greedy(10),
            include=LOGPROBS,
            top_logprobs=2,
            stream=True,
        ),
    ),
    (
        "json_schema",
        "POST",
        ROUTE,
        body([text_item("user", PERSON_PROMPT)], **greedy(40), text=PERSON_FORMAT),
    ),
    (
        "json_schema_logprobs",
        "POST",
        ROUTE,
        body(
            [text_item("user", PERSON_PROMPT)],
            **greedy(40),
            text=PERSON_FORMAT,
            include=LOGPROBS,
            top_logprobs=2,
        ),
    ),
    (
        "json_schema_cut",
        "POST",
        ROUTE,
        body([text_item("user", PERSON_PROMPT)], **greedy(3), text=PERSON_FORMAT),
    ),
    (
        "json_object",
        "POST",
        ROUTE,
        body(
            [text_item("user", COLOR_PROMPT)],
            **greedy(40),
            text={"format": {"type": "json_object"}},
        ),
    ),
    (
        "max_output_tokens",
        "POST",
        ROUTE,
        body([text_item("user", "Tell me a story.")], **greedy(5)),
    ),
    (
        "clamped_max_output_tokens",
        "POST",
        ROUTE,
        body([text_item("user", "hello " * 4080)], **greedy(50)),
    ),
    (
        "tool_required",
        "POST",
        ROUTE,
        body([text_item("user", WEATHER_Q)], **greedy(60), tools=[WEATHER], tool_choice="required"),
    ),
    (
        "tool_followup",
        "POST",
        ROUTE,
        body(
            [text_item("user", WEATHER_Q), CALL, CALL_OUTPUT],
            **greedy(24),
            tools=[WEATHER],
            tool_choice="auto",
        ),
    ),
    # issue 35: the shapes the reference server's tool calls are held to (doc_: bodies the
    # dialect does not lower from a case of its own test)
    (
        "doc_tool_auto",
        "POST",
        ROUTE,
        body([text_item("user", AUTO_Q)], **greedy(60), stop=["END"], tools=[WEATHER, TIME]),
    ),
    (
        "doc_stream_tool_auto",
        "POST",
        ROUTE,
        body(
            [text_item("user", AUTO_Q)],
            **greedy(60),
            stop=["END"],
            tools=[WEATHER, TIME],
            stream=True,
        ),
    ),
    (
        "doc_tool_named_strict",
        "POST",
        ROUTE,
        body(
            [text_item("user", WEATHER_Q)],
            **greedy(60),
            tools=[WEATHER, TIME],
            tool_choice={"type": "function", "name": "get_weather"},
        ),
    ),
    (
        "reasoning_effort",
        "POST",
        ROUTE,
        body(
            [text_item("user", "What is 2+2?")],
            **greedy(8),
            reasoning={"effort": "low", "summary": "auto"},
        ),
    ),
    ("stream_plain", "POST", ROUTE, body(ASK, **greedy(8), stream=True)),
    (
        "stream_logprobs",
        "POST",
        ROUTE,
        body(
            [text_item("user", "Name a color.")],
            **greedy(6),
            include=LOGPROBS,
            top_logprobs=3,
            stream=True,
        ),
    ),
    (
        "stream_json_schema_logprobs",
        "POST",
        ROUTE,
        body(
            [text_item("user", PERSON_PROMPT)],
            **greedy(40),
            text=PERSON_FORMAT,
            include=LOGPROBS,
            top_logprobs=2,
            stream=True,
        ),
    ),
    (
        "stream_tool_required",
        "POST",
        ROUTE,
        body(
            [text_item("user", WEATHER_Q)],
            **greedy(60),
            tools=[WEATHER],
            tool_choice="required",
            stream=True,
        ),
    ),
    (
        "previous_response_id",
        "POST",
        ROUTE,
        body(
            [text_item("user", "And of Italy?")],
            **greedy(8),
            previous_response_id="resp_b136a265990be60e",
        ),
    ),
    ("get_stored_response", "GET", f"{ROUTE}/resp_b136a265990be60e", None),
    (
        "error_top_logprobs_101",
        "POST",
        ROUTE,
        body(ASK, max_output_tokens=2, include=LOGPROBS, top_logprobs=101),
    ),
    (
        "error_unknown_model",
        "POST",
        ROUTE,
        {**body(ASK, max_output_tokens=2), "model": "no-such-model"},
    ),
    ("error_prompt_field", "POST", ROUTE, body(ASK, max_output_tokens=2, prompt={"id": "pmpt_1"})),
    (
        "error_context_overflow",
        "POST",
        ROUTE,
        body([text_item("user", "hello " * 4200)], **greedy(4)),
    ),
    ("error_max_output_tokens_5000", "POST", ROUTE, body(ASK, max_output_tokens=5000)),
    (
        "error_image_text_only",
        "POST",
        ROUTE,
        body(
            [
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "What is this?"},
                        {
                            "type": "input_image",
                            "image_url": f"data:image/png;base64,{PNG_1X1}",
                            "detail": "auto",
                        },
                    ],
                }
            ],
            max_output_tokens=2,
        ),
    ),
    (
        "doc_seed_11",
        "POST",
        ROUTE,
        body(
            [text_item("user", "Tell me a story.")], temperature=1.0, max_output_tokens=10, seed=11
        ),
    ),
    (
        "doc_seed_11_again",
        "POST",
        ROUTE,
        body(
            [text_item("user", "Tell me a story.")], temperature=1.0, max_output_tokens=10, seed=11
        ),
    ),
    (
        "doc_seed_12",
        "POST",
        ROUTE,
        body(
            [text_item("user", "Tell me a story.")], temperature=1.0, max_output_tokens=10, seed=12
        ),
    ),
    ("doc_stop", "POST", ROUTE, body(ASK, **greedy(12), stop=[" Paris"])),
    ("doc_n2", "POST", ROUTE, body(ASK, temperature=1.0, max_output_tokens=5, n=2)),
    ("doc_presence_penalty", "POST", ROUTE, body(ASK, **greedy(12), presence_penalty=1.5)),
    ("doc_unknown_field", "POST", ROUTE, body(ASK, **greedy(4), no_such_field=1)),
    (
        "doc_forced_call_without_strict",
        "POST",
        ROUTE,
        body(
            [text_item("user", WEATHER_Q)],
            **greedy(40),
            tools=[{k: v for k, v in WEATHER.items() if k != "strict"}],
            tool_choice={"type": "function", "name": "get_weather"},
        ),
    ),
    (
        "doc_tokenize_chat_route",
        "POST",
        "/tokenize",
        {
            "model": MODEL,
            "messages": [{"role": "user", "content": "Tell me a story."}],
            "add_generation_prompt": True,
        },
    ),
    (
        "doc_double_bos",
        "POST",
        ROUTE,
        body([text_item("user", "Tell me a story.")], **greedy(2), enable_response_messages=True),
    ),
]


def call(
    base: str, method: str, route: str, payload: dict[str, Any] | None
) -> tuple[int, str, str]:
    data = json.dumps(payload).encode() if payload is not None else None
    req = urllib.request.Request(base + route, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("content-type", ""), err.read().decode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("--only", help="record only this case")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument(
        "--out", default=str(Path(__file__).resolve().parent.parent / "tests/fixtures")
    )
    args = parser.parse_args()
    if args.list:
        print("\n".join(name for name, *_ in CASES))
        return
    base = args.base.rstrip("/")
    _, _, version_text = call(base, "GET", "/version", None)
    version = json.loads(version_text)["version"]
    for name, method, route, payload in CASES:
        if args.only and name != args.only:
            continue
        status, ctype, text = call(base, method, route, payload)
        record: dict[str, Any] = {
            "route": route,
            "method": method,
            "request": payload,
            "status": status,
        }
        if "text/event-stream" in ctype:
            record["reply_sse"] = text
        else:
            record["reply"] = json.loads(text) if text else None
        record["server"] = {"engine": "vllm", "version": version, "model": MODEL}
        path = Path(args.out) / "openai_responses" / version / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"openai_responses/{name}: HTTP {status}", file=sys.stderr)


if __name__ == "__main__":
    main()
