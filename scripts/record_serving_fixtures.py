"""Turn the wire log of a live ``sieval probe --checks`` into the serving checks' fixtures.

    sieval probe --checks --dialect D --endpoint URL --model M --wire-log WIRE.jsonl --json OUT.json
    python scripts/record_serving_fixtures.py WIRE.jsonl tests/fixtures/serving/<server>-<version>

Writes ``facts.json`` (the read-only routes' replies the fingerprint reads: SGLang's
``/get_server_info`` cut to the keys it keeps), ``fingerprint.json`` (the greedy probe's two
sends), ``cache.json`` (the cache probe's two sends) and ``batch.json.gz`` (the batch probe
alone, and every copy whose reply differs from it, or the first copy when none does). Each
exchange keeps the request body exactly as sent and the reply body as received; nothing else
(no headers, no times) is kept.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

from sieval.serving.fingerprint import SGLANG_KEYS
from sieval.serving.probes import LONG, SHORT


def _prompt(body: Any) -> str:
    return json.dumps(body)


def _logprobs(value: Any) -> list[float]:
    """Every float at most 0 in a reply, in order: its log-probabilities (not its ids or times)."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _logprobs(v)]
    if isinstance(value, list):
        return [x for v in value for x in _logprobs(v)]
    return [value] if isinstance(value, float) and value <= 0 else []


def _pair(line: dict[str, Any]) -> dict[str, Any]:
    return {"request_body": line["request_body"], "reply_body": line["reply_body"]}


def main(wire: Path, out: Path) -> None:
    lines = [json.loads(x) for x in wire.read_text().splitlines() if x.strip()]
    out.mkdir(parents=True, exist_ok=True)
    facts: dict[str, Any] = {}
    for line in lines:
        if line["method"] != "GET" or line["status"] != 200:
            continue
        route = "/" + line["url"].split("//", 1)[1].split("/", 1)[1]
        reply = line["reply_body"]
        if route == "/get_server_info" and isinstance(reply, dict):
            reply = {k: reply[k] for k in (*SGLANG_KEYS, "version") if k in reply}
        facts[route] = reply
    posts = [x for x in lines if x["method"] == "POST" and x["status"] == 200]
    short = [x for x in posts if SHORT[:60] in _prompt(x["request_body"])]
    long = [x for x in posts if LONG[:60] in _prompt(x["request_body"])]
    batch = [x for x in long if _prompt(x["request_body"]).count(LONG[:60]) == 2]  # LONG twice
    cache = [x for x in long if x not in batch]
    (out / "facts.json").write_text(json.dumps(facts, indent=1) + "\n")
    (out / "fingerprint.json").write_text(json.dumps([_pair(x) for x in short[:2]]) + "\n")
    (out / "cache.json").write_text(json.dumps([_pair(x) for x in cache[:2]]) + "\n")
    alone, copies = batch[0], batch[1:5]
    same = _logprobs(alone["reply_body"])
    moved = [c for c in copies if _logprobs(c["reply_body"]) != same] or copies[:1]
    kept = [_pair(alone)] + [_pair(c) for c in moved]
    with gzip.open(out / "batch.json.gz", "wt") as file:
        json.dump({"copies": len(copies), "kept": kept}, file)
    print(f"{out}: facts {sorted(facts)}, fingerprint 2, cache 2, batch alone + {len(moved)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
