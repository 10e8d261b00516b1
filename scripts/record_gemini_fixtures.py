"""Record real Gemini-wire replies from LiteLLM's proxy in front of vLLM as fixtures (rerunnable).

    python scripts/record_gemini_fixtures.py http://127.0.0.1:18341 [--only NAME] [--list]
        [--vllm http://127.0.0.1:18321] [--upstream-flags "FLAGS"] [--out tests/fixtures]

Start the servers first: ``scripts/live-vllm.sh start && scripts/live-litellm.sh start``.
Writes ``tests/fixtures/google_genai/litellm-<version>/<name>.json``, each
``{"route", "method", "request", "status", "reply" | "reply_sse", "server"}``: the same shape as the
vLLM fixtures written by ``record_fixtures.py``. ``request`` is the body exactly as sent (a string
for the malformed-body case). The proxy key (``SIEVAL_LITELLM_KEY``, default the fake local
``sk-sieval-local-test``) is sent as ``x-goog-api-key``; it is never written, and any echo of it
(or of the deliberately wrong key) in a reply is replaced by a ``<redacted …>`` marker.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MODEL = "gemma-3-270m"
EXPECTED_LITELLM = "1.108.7"
GEN = f"/v1beta/models/{MODEL}:generateContent"
STREAM = f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
WRONG_KEY = "sk-sieval-wrong-key"
# A 1x1 opaque red RGBA PNG.
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def greedy(max_tokens: int, **extra: object) -> dict[str, Any]:
    """A generationConfig with every sampling field this wire maps spelled out."""
    return {"temperature": 0.0, "topP": 1.0, "maxOutputTokens": max_tokens, **extra}


ANN_JSON = [user('Return this JSON: {"name": "Ann", "adult": true}')]
CAPITAL = [user("What is the capital of France? Answer in one word.")]
REPEAT = [user("Write the word cat ten times.")]
STORY = [user("Tell me a story about a dragon.")]
PERSON_JSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "adult": {"type": "boolean"}},
    "required": ["name", "adult"],
}
PERSON_OPENAPI_SCHEMA = {
    "type": "OBJECT",
    "properties": {"name": {"type": "STRING"}, "adult": {"type": "BOOLEAN"}},
    "required": ["name", "adult"],
    "propertyOrdering": ["name", "adult"],
}
WEATHER_TOOL = {
    "functionDeclarations": [
        {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": {
                "type": "OBJECT",
                "properties": {"city": {"type": "STRING", "description": "City name"}},
                "required": ["city"],
            },
        }
    ]
}

WEATHER_JSON_SCHEMA_TOOL = {
    "functionDeclarations": [
        {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parametersJsonSchema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
    ]
}
# One worked call in the history and a stop at the closing tag: Gemma 3 270M then writes a
# complete hermes <tool_call> that vLLM's parser (--tool-call-parser hermes) turns into a call.
HERMES_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
FEW_SHOT_CALL = [
    user("Weather in Paris?"),
    {
        "role": "model",
        "parts": [{"text": HERMES_CALL}],
    },
    user("Weather in Paris?"),
]
TOOL_CALL_REPLY = {
    "contents": FEW_SHOT_CALL,
    "tools": [WEATHER_JSON_SCHEMA_TOOL],
    "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    "generationConfig": greedy(40, stopSequences=["</tool_call>"]),
}

# name -> (method, route, body (a dict, a raw str or None), key sent: "good" | "wrong" | "none")
CASES: dict[str, tuple[str, str, dict[str, Any] | str | None, str]] = {
    "plain": ("POST", GEN, {"contents": CAPITAL, "generationConfig": greedy(8)}, "good"),
    "system_instruction": (
        "POST",
        GEN,
        {
            "systemInstruction": {"parts": [{"text": "Answer with one word: yes or no."}]},
            "contents": [user("Is Paris in France?")],
            "generationConfig": greedy(8),
        },
        "good",
    ),
    "system_instruction_two_parts": (
        "POST",
        GEN,
        {
            "systemInstruction": {
                "parts": [
                    {"text": "Answer with one word: yes or no."},
                    {"text": "Always answer in French."},
                ]
            },
            "contents": [user("Is Paris in France?")],
            "generationConfig": greedy(8),
        },
        "good",
    ),
    "multi_turn": (
        "POST",
        GEN,
        {
            "contents": [
                user("My name is Ann."),
                {"role": "model", "parts": [{"text": "Hello Ann! How can I help you?"}]},
                user("What is my name?"),
            ],
            "generationConfig": greedy(12),
        },
        "good",
    ),
    "sampling_stop": (
        "POST",
        GEN,
        {
            "contents": [user("Continue the list: 1, 2, 3, 4, 5,")],
            "generationConfig": {
                "temperature": 0.7,
                "topP": 0.5,
                "maxOutputTokens": 30,
                "stopSequences": [","],
            },
        },
        "good",
    ),
    "max_tokens": ("POST", GEN, {"contents": STORY, "generationConfig": greedy(3)}, "good"),
    "json_schema": (
        "POST",
        GEN,
        {
            "contents": ANN_JSON,
            "generationConfig": greedy(
                40, responseMimeType="application/json", responseJsonSchema=PERSON_JSON_SCHEMA
            ),
        },
        "good",
    ),
    # The grammar admits unbounded whitespace and this small model takes it until MAX_TOKENS.
    "json_schema_whitespace_run": (
        "POST",
        GEN,
        {
            "contents": [user("Describe a person named Ann, aged 30, as JSON.")],
            "generationConfig": greedy(
                40, responseMimeType="application/json", responseJsonSchema=PERSON_JSON_SCHEMA
            ),
        },
        "good",
    ),
    "response_schema": (
        "POST",
        GEN,
        {
            "contents": ANN_JSON,
            "generationConfig": greedy(
                40, responseMimeType="application/json", responseSchema=PERSON_OPENAPI_SCHEMA
            ),
        },
        "good",
    ),
    "tool_forced": (
        "POST",
        GEN,
        {
            "contents": [user("What is the weather in Paris?")],
            "tools": [WEATHER_TOOL],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
            "generationConfig": greedy(30),
        },
        "good",
    ),
    "tool_auto": (
        "POST",
        GEN,
        {
            "contents": [user("What is the weather in Paris?")],
            "tools": [WEATHER_TOOL],
            "generationConfig": greedy(30),
        },
        "good",
    ),
    "tool_mode_none": (
        "POST",
        GEN,
        {
            "contents": [user("What is the weather in Paris?")],
            "tools": [WEATHER_TOOL],
            "toolConfig": {"functionCallingConfig": {"mode": "NONE"}},
            "generationConfig": greedy(8),
        },
        "good",
    ),
    "stream_tool_forced": (
        "POST",
        STREAM,
        {
            "contents": [user("What is the weather in Paris?")],
            "tools": [WEATHER_TOOL],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
            "generationConfig": greedy(30),
        },
        "good",
    ),
    "function_response_history": (
        "POST",
        GEN,
        {
            "contents": [
                user("What is the weather in Paris?"),
                {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
                },
                {
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "name": "get_weather",
                                "response": {"temperature_c": 18, "sky": "sunny"},
                            }
                        }
                    ],
                },
            ],
            "generationConfig": greedy(20),
        },
        "good",
    ),
    "stream": ("POST", STREAM, {"contents": CAPITAL, "generationConfig": greedy(8)}, "good"),
    "stream_system_instruction": (
        "POST",
        STREAM,
        {
            "systemInstruction": {"parts": [{"text": "Answer with one word: yes or no."}]},
            "contents": [user("Is Paris in France?")],
            "generationConfig": greedy(8),
        },
        "good",
    ),
    "stream_no_alt": (
        "POST",
        f"/v1beta/models/{MODEL}:streamGenerateContent",
        {"contents": CAPITAL, "generationConfig": greedy(4)},
        "good",
    ),
    # Fields said to be dropped on the way to vLLM; each chosen so the reply can show it.
    "top_k_control": ("POST", GEN, {"contents": STORY, "generationConfig": greedy(12)}, "good"),
    "drop_top_k": (
        "POST",
        GEN,
        {"contents": STORY, "generationConfig": greedy(12, temperature=1.0, topK=1)},
        "good",
    ),
    "drop_seed": (
        "POST",
        GEN,
        {"contents": STORY, "generationConfig": greedy(12, temperature=1.0, seed=7)},
        "good",
    ),
    "drop_seed_repeat": (
        "POST",
        GEN,
        {"contents": STORY, "generationConfig": greedy(12, temperature=1.0, seed=7)},
        "good",
    ),
    "drop_candidate_count": (
        "POST",
        GEN,
        {"contents": STORY, "generationConfig": greedy(8, temperature=1.0, candidateCount=2)},
        "good",
    ),
    "drop_logprobs": (
        "POST",
        GEN,
        {"contents": CAPITAL, "generationConfig": greedy(4, responseLogprobs=True, logprobs=3)},
        "good",
    ),
    "penalties_control": (
        "POST",
        GEN,
        {"contents": REPEAT, "generationConfig": greedy(16)},
        "good",
    ),
    "drop_penalties": (
        "POST",
        GEN,
        {
            "contents": REPEAT,
            "generationConfig": greedy(16, presencePenalty=2.0, frequencyPenalty=2.0),
        },
        "good",
    ),
    "inline_image": (
        "POST",
        GEN,
        {
            "contents": [
                {
                    "role": "user",
                    "parts": [
                        {"text": "What colour is this image?"},
                        {"inlineData": {"mimeType": "image/png", "data": PNG_1X1}},
                    ],
                }
            ],
            "generationConfig": greedy(8),
        },
        "good",
    ),
    "inline_image_snake_case": (
        "POST",
        GEN,
        {
            "contents": [
                {
                    "role": "user",
                    "parts": [
                        {"text": "What colour is this image?"},
                        {"inline_data": {"mime_type": "image/png", "data": PNG_1X1}},
                    ],
                }
            ],
            "generationConfig": greedy(8),
        },
        "good",
    ),
    # Recorded against vLLM started with --enable-auto-tool-choice --tool-call-parser hermes.
    "tool_call_reply": ("POST", GEN, TOOL_CALL_REPLY, "good"),
    "stream_tool_call_reply": ("POST", STREAM, TOOL_CALL_REPLY, "good"),
    "tool_forced_json_schema": (
        "POST",
        GEN,
        {
            "contents": [user("What is the weather in Paris?")],
            "tools": [WEATHER_JSON_SCHEMA_TOOL],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
            "generationConfig": greedy(30),
        },
        "good",
    ),
    "drop_thinking_config": (
        "POST",
        GEN,
        {
            "contents": CAPITAL,
            "generationConfig": greedy(
                8, thinkingConfig={"thinkingBudget": 64, "includeThoughts": True}
            ),
        },
        "good",
    ),
    "drop_json_object": (
        "POST",
        GEN,
        {"contents": ANN_JSON, "generationConfig": greedy(30, responseMimeType="application/json")},
        "good",
    ),
    # The fifth stop string would end the list at its first comma (compare sampling_stop).
    "drop_fifth_stop": (
        "POST",
        GEN,
        {
            "contents": [user("Continue the list: 1, 2, 3, 4, 5,")],
            "generationConfig": {
                "temperature": 0.7,
                "topP": 0.5,
                "maxOutputTokens": 30,
                "stopSequences": ["x1", "x2", "x3", "x4", ","],
            },
        },
        "good",
    ),
    "stream_drop_logprobs": (
        "POST",
        STREAM,
        {"contents": CAPITAL, "generationConfig": greedy(4, responseLogprobs=True, logprobs=3)},
        "good",
    ),
    "error_temperature": (
        "POST",
        GEN,
        {"contents": CAPITAL, "generationConfig": {"temperature": 3.0, "maxOutputTokens": 4}},
        "good",
    ),
    "error_context_overflow": (
        "POST",
        GEN,
        {
            "contents": [user("hello " * 4200)],
            "generationConfig": {"temperature": 0.0, "maxOutputTokens": 1},
        },
        "good",
    ),
    "error_unknown_model": (
        "POST",
        "/v1beta/models/no-such-model:generateContent",
        {"contents": CAPITAL, "generationConfig": greedy(4)},
        "good",
    ),
    "error_wrong_key": ("POST", GEN, {"contents": CAPITAL, "generationConfig": greedy(4)}, "wrong"),
    "error_no_key": ("POST", GEN, {"contents": CAPITAL, "generationConfig": greedy(4)}, "none"),
    "error_malformed_body": ("POST", GEN, '{"contents": [{"role": "user", "parts": [', "good"),
    "error_unknown_field": (
        "POST",
        GEN,
        {"contents": CAPITAL, "generationConfig": greedy(4), "noSuchField": 1},
        "good",
    ),
    "stream_error_unknown_model": (
        "POST",
        "/v1beta/models/no-such-model:streamGenerateContent?alt=sse",
        {"contents": CAPITAL, "generationConfig": greedy(4)},
        "good",
    ),
    "count_tokens": (
        "POST",
        f"/v1beta/models/{MODEL}:countTokens",
        {"contents": CAPITAL},
        "good",
    ),
    "count_tokens_error": (
        "POST",
        f"/v1beta/models/{MODEL}:countTokens",
        {"contents": "not a list"},
        "good",
    ),
    "models": ("GET", "/v1beta/models", None, "good"),
    "model_get": ("GET", f"/v1beta/models/{MODEL}", None, "good"),
    "health_liveliness": ("GET", "/health/liveliness", None, "none"),
    "health_readiness": ("GET", "/health/readiness", None, "none"),
}


def call(
    base: str, method: str, route: str, body: dict[str, Any] | str | None, key: str | None
) -> tuple[int, dict[str, str], str]:
    if body is None:
        data = None
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = json.dumps(body).encode()
    req = urllib.request.Request(base + route, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if key is not None:
        req.add_header("x-goog-api-key", key)
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, dict(resp.headers.items()), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers.items()), err.read().decode()


def redact(text: str, secrets: dict[str, str]) -> str:
    for secret, marker in secrets.items():
        text = text.replace(secret, marker)
    return text


def vllm_version(url: str) -> str:
    try:
        with urllib.request.urlopen(url + "/version", timeout=10) as resp:
            return str(json.loads(resp.read())["version"])
    except (OSError, ValueError, KeyError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("--only", action="append", help="record only this case (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    parser.add_argument(
        "--vllm", default=os.environ.get("SIEVAL_VLLM_URL", "http://127.0.0.1:18321")
    )
    parser.add_argument(
        "--upstream-flags",
        help="the upstream vLLM's server flags, kept in each fixture's server block",
    )
    parser.add_argument(
        "--out", default=str(Path(__file__).resolve().parent.parent / "tests/fixtures")
    )
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return
    key = os.environ.get("SIEVAL_LITELLM_KEY", "sk-sieval-local-test")
    secrets = {key: "<redacted SIEVAL_LITELLM_KEY>", WRONG_KEY: "<redacted wrong key>"}
    keys = {"good": key, "wrong": WRONG_KEY, "none": None}
    base = args.base.rstrip("/")
    unknown = set(args.only or ()) - set(CASES)
    if unknown:
        parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    records: dict[str, dict[str, Any]] = {}
    version = "unknown"  # only replies that reached a model carry x-litellm-version
    for name, (method, route, body, key_kind) in CASES.items():
        if args.only and name not in args.only:
            continue
        status, reply_headers, text = call(base, method, route, body, keys[key_kind])
        text = redact(text, secrets)
        lower = {k.lower(): v for k, v in reply_headers.items()}
        version = lower.get("x-litellm-version", version)
        record: dict[str, Any] = {"route": route, "method": method, "request": body}
        record["status"] = status
        if "text/event-stream" in lower.get("content-type", ""):
            record["reply_sse"] = text
        else:
            try:
                record["reply"] = json.loads(text) if text else None
            except ValueError:
                record["reply"] = text
        records[name] = record
        print(f"google_genai/{name}: HTTP {status}", file=sys.stderr)
    if version == "unknown":
        version = EXPECTED_LITELLM
        print(f"warning: no reply named the LiteLLM version; assuming {version}", file=sys.stderr)
    elif version != EXPECTED_LITELLM:
        print(
            f"warning: proxy reports LiteLLM {version}, expected {EXPECTED_LITELLM}",
            file=sys.stderr,
        )
    server = {
        "engine": "litellm-proxy",
        "version": version,
        "upstream": f"vllm {vllm_version(args.vllm)}",
        "model": MODEL,
    }
    if args.upstream_flags:
        server["upstream_flags"] = args.upstream_flags
    folder = Path(args.out) / "google_genai" / f"litellm-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    for name, record in records.items():
        out = json.dumps({**record, "server": server}, indent=1, ensure_ascii=False) + "\n"
        assert key not in out, "the proxy key must never reach a fixture"
        (folder / f"{name}.json").write_text(out)


if __name__ == "__main__":
    main()
