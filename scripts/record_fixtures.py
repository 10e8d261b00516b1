"""Record real replies from a running vLLM as test fixtures (rerunnable).

    python scripts/record_fixtures.py http://127.0.0.1:18321 [--only NAME]

Writes ``tests/fixtures/<dialect>/<server-version>/<name>.json``, each
``{"route", "method", "request", "status", "reply" | "reply_sse", "server"}``. Request bodies are
written exactly as sent; an ``Authorization`` header is never sent here, so nothing needs
redacting beyond the volatile ids, which are kept as the server sent them.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

MODEL = "gemma-3-270m"
QA = "Question: What is the capital of France?\nAnswer: Paris"
LONG = "hello " * 4200

# (dialect folder, name, method, route, body)
CASES: list[tuple[str, str, str, str, dict | None]] = [
    ("openai_completions", "models", "GET", "/v1/models", None),
    ("openai_completions", "version", "GET", "/version", None),
    (
        "openai_completions",
        "echo_score",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": QA,
            "echo": True,
            "logprobs": 0,
            "max_tokens": 1,
            "temperature": 0.0,
        },
    ),
    (
        "openai_completions",
        "echo_top3",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": QA,
            "echo": True,
            "logprobs": 3,
            "max_tokens": 1,
            "temperature": 0.0,
        },
    ),
    (
        "openai_completions",
        "echo_max_tokens_0",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": QA,
            "echo": True,
            "logprobs": 1,
            "max_tokens": 0,
            "temperature": 0.0,
        },
    ),
    (
        "openai_completions",
        "echo_cjk",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "中国的首都是北京。",
            "echo": True,
            "logprobs": 2,
            "max_tokens": 1,
            "temperature": 0.0,
        },
    ),
    (
        "openai_completions",
        "gen_top5",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "The capital of France is",
            "logprobs": 5,
            "max_tokens": 8,
            "temperature": 0.0,
        },
    ),
    (
        "openai_completions",
        "gen_stop",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "1, 2, 3, 4,",
            "max_tokens": 30,
            "temperature": 0.0,
            "stop": [" 8"],
        },
    ),
    (
        "openai_completions",
        "n2_temp1",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "Once upon a time",
            "n": 2,
            "temperature": 1.0,
            "seed": 7,
            "logprobs": 2,
            "max_tokens": 6,
        },
    ),
    (
        "openai_completions",
        "stream",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "The capital of France is",
            "max_tokens": 6,
            "temperature": 0.0,
            "logprobs": 1,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    ),
    (
        "openai_completions",
        "stream_echo",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": QA,
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 2,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    ),
    (
        "openai_completions",
        "error_logprobs_101",
        "POST",
        "/v1/completions",
        {"model": MODEL, "prompt": QA, "logprobs": 101, "max_tokens": 1},
    ),
    (
        "openai_completions",
        "error_greedy_n2",
        "POST",
        "/v1/completions",
        {"model": MODEL, "prompt": QA, "n": 2, "temperature": 0.0, "max_tokens": 1},
    ),
    (
        "openai_completions",
        "error_max_tokens_0",
        "POST",
        "/v1/completions",
        {"model": MODEL, "prompt": QA, "max_tokens": 0},
    ),
    (
        "openai_completions",
        "error_suffix",
        "POST",
        "/v1/completions",
        {"model": MODEL, "prompt": "def f(", "suffix": "return x", "max_tokens": 4},
    ),
    (
        "openai_completions",
        "error_context_overflow",
        "POST",
        "/v1/completions",
        {"model": MODEL, "prompt": LONG, "max_tokens": 4, "temperature": 0.0},
    ),
    (
        "openai_completions",
        "error_unknown_model",
        "POST",
        "/v1/completions",
        {"model": "no-such-model", "prompt": QA, "max_tokens": 1},
    ),
    (
        "vllm_native",
        "prompt_logprobs_top3_ids",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": QA,
            "max_tokens": 1,
            "temperature": 0.0,
            "prompt_logprobs": 3,
            "return_token_ids": True,
        },
    ),
    (
        "vllm_native",
        "prompt_logprobs_cjk",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "中国的首都是北京。",
            "max_tokens": 1,
            "temperature": 0.0,
            "prompt_logprobs": 1,
            "return_token_ids": True,
        },
    ),
    (
        "vllm_native",
        "n2_token_ids",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "Once upon a time",
            "n": 2,
            "temperature": 1.0,
            "seed": 7,
            "max_tokens": 6,
            "logprobs": 2,
            "return_token_ids": True,
        },
    ),
    (
        "vllm_native",
        "tokens_as_ids",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "The capital of France is",
            "max_tokens": 4,
            "temperature": 0.0,
            "logprobs": 3,
            "return_tokens_as_token_ids": True,
            "return_token_ids": True,
        },
    ),
    (
        "vllm_native",
        "json_schema",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "A person as JSON:",
            "max_tokens": 40,
            "temperature": 0.0,
            "structured_outputs": {
                "json": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "enum": ["Ann", "Bob", "Eve"]},
                        "adult": {"type": "boolean"},
                    },
                    "required": ["name", "adult"],
                    "additionalProperties": False,
                }
            },
        },
    ),
    (
        "vllm_native",
        "json_schema_cut",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "A person as JSON:",
            "max_tokens": 3,
            "temperature": 0.0,
            "structured_outputs": {
                "json": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name", "age"],
                }
            },
        },
    ),
    (
        "vllm_native",
        "min_p_repetition_penalty",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": "Once upon a time",
            "max_tokens": 8,
            "temperature": 1.0,
            "seed": 3,
            "min_p": 0.1,
            "repetition_penalty": 1.3,
        },
    ),
    (
        "vllm_native",
        "error_prompt_logprobs_stream",
        "POST",
        "/v1/completions",
        {"model": MODEL, "prompt": QA, "max_tokens": 1, "prompt_logprobs": 1, "stream": True},
    ),
    (
        "vllm_native",
        "error_prompt_logprobs_101",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": QA,
            "max_tokens": 1,
            "prompt_logprobs": 101,
            "return_token_ids": True,
        },
    ),
    (
        "vllm_native",
        "echo_return_token_ids",
        "POST",
        "/v1/completions",
        {
            "model": MODEL,
            "prompt": QA,
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 1,
            "return_token_ids": True,
        },
    ),
]


def call(base: str, method: str, route: str, body: dict | None) -> tuple[int, str, str]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + route, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("content-type", ""), err.read().decode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("--only")
    parser.add_argument(
        "--out", default=str(Path(__file__).resolve().parent.parent / "tests/fixtures")
    )
    args = parser.parse_args()
    _, _, version_text = call(args.base, "GET", "/version", None)
    version = json.loads(version_text)["version"]
    for dialect, name, method, route, body in CASES:
        if args.only and name != args.only:
            continue
        status, ctype, text = call(args.base, method, route, body)
        record: dict = {"route": route, "method": method, "request": body, "status": status}
        if "text/event-stream" in ctype:
            record["reply_sse"] = text
        else:
            record["reply"] = json.loads(text) if text else None
        record["server"] = {"engine": "vllm", "version": version, "model": MODEL}
        path = Path(args.out) / dialect / version / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"{dialect}/{name}: HTTP {status}", file=sys.stderr)


if __name__ == "__main__":
    main()
