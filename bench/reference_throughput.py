"""Throughput of the reference server alone: N short echo-scoring requests, concurrency 64.

Usage: python bench/reference_throughput.py [--requests 5000] [--concurrency 64]
Prints requests/s and scored tokens/s. The server runs in this process (its own event loop on a
background thread) so the client's overhead is measured on a separate loop.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

import aiohttp

from sieval.reference import start_in_thread

WORDS = [
    "the",
    "sun",
    "is",
    "a",
    "star",
    "water",
    "boils",
    "at",
    "one",
    "hundred",
    "degrees",
    "Tom",
    "has",
    "apples",
    "and",
    "gives",
]


def prompts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) for _ in range(n)]


async def run(url: str, texts: list[str], concurrency: int) -> tuple[float, int]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for t in texts:
        queue.put_nowait(t)
    scored = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal scored
            while not queue.empty():
                text = queue.get_nowait()
                body = {
                    "prompt": text,
                    "echo": True,
                    "logprobs": 1,
                    "max_tokens": 0,
                    "temperature": 0,
                }
                async with session.post(url + "/v1/completions", json=body) as r:
                    reply = await r.json()
                    assert r.status == 200, reply
                    scored += reply["usage"]["prompt_tokens"]

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - start, scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    handle = start_in_thread(port=0)
    try:
        texts = prompts(args.requests)
        asyncio.run(run(handle.url, texts[:200], args.concurrency))  # warm up
        elapsed, tokens = asyncio.run(run(handle.url, texts, args.concurrency))
    finally:
        handle.stop()
    print(f"{args.requests} echo-scoring requests, concurrency {args.concurrency}")
    print(
        f"{args.requests / elapsed:,.0f} requests/s, {tokens / elapsed:,.0f} tokens/s "
        f"({elapsed:.2f} s)"
    )


if __name__ == "__main__":
    main()
