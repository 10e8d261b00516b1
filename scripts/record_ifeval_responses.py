"""Record real IFEval responses from a running vLLM as the IFEval checker's fixture (resumable).

    python scripts/record_ifeval_responses.py http://127.0.0.1:18321 [--max-tokens 128]
        [--concurrency 2] [--data-dir ../shared/data] [--out tests/fixtures/ifeval]

One greedy ``/v1/chat/completions`` call per prompt of ``ifeval/input_data.jsonl`` (the prompt as
the single user message, ``temperature: 0``, ``max_tokens`` as given), a few at a time. The server
is the live vLLM of the common setup (``scripts/live-vllm.sh``: Gemma 3 270M in bfloat16,
``--max-logprobs 100 --seed 0 --max-model-len 4096``). Writes
``<out>/vllm-<server-version>/responses.jsonl``, one ``{"key", "response", "finish_reason",
"completion_tokens"}`` per prompt, appended as each reply arrives (so a stopped run resumes where
it was); the prompts themselves stay in the data directory. ``tests/scoring/test_ifeval.py``
compares sieval's verdicts on these responses with the reference checker's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Lock
from typing import Any

MODEL = "gemma-3-270m"


def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=900) as reply:
        result: dict[str, Any] = json.load(reply)
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base_url")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--data-dir", default=os.environ.get("SIEVAL_DATA_DIR", "../shared/data"))
    parser.add_argument("--out", default="tests/fixtures/ifeval")
    args = parser.parse_args()
    base = args.base_url.rstrip("/")
    with urllib.request.urlopen(base + "/version", timeout=10) as reply:
        version = json.load(reply)["version"]
    out = Path(args.out) / f"vllm-{version}" / "responses.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        done = {json.loads(line)["key"] for line in out.read_text().splitlines() if line}
    prompts = [
        json.loads(line)
        for line in (Path(args.data_dir) / "ifeval" / "input_data.jsonl").read_text().splitlines()
    ]
    todo = [p for p in prompts if p["key"] not in done]
    print(f"{len(done)} recorded, {len(todo)} to go -> {out}", file=sys.stderr)
    lock = Lock()

    def one(row: dict[str, Any]) -> None:
        body = {
            "model": MODEL,
            "messages": [{"role": "user", "content": row["prompt"]}],
            "temperature": 0,
            "max_tokens": args.max_tokens,
        }
        reply = post(base + "/v1/chat/completions", body)
        choice = reply["choices"][0]
        line = {
            "key": row["key"],
            "response": choice["message"]["content"] or "",
            "finish_reason": choice["finish_reason"],
            "completion_tokens": reply["usage"]["completion_tokens"],
        }
        with lock, out.open("a") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")

    with ThreadPoolExecutor(args.concurrency) as pool:
        for _ in pool.map(one, todo):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
