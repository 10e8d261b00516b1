"""Explain a chat-route parity difference by replaying each route's prompt as token ids.

    python scripts/explain_chat_prompts.py URL RUN_A RUN_B [--task gsm8k_0shot_gen] [--model M]

RUN_A and RUN_B are two ``sieval parity`` run directories against one vLLM (e.g. openai_chat and
openai_responses). For every sample, the chat messages sent are rendered by the server's own
template (``POST /tokenize`` with ``messages``), then generated greedily through
``/v1/completions`` as a token prompt, once as rendered and once with one more BOS in front, with
the same ``max_tokens``. A route whose text equals one of these replays is explained by that prompt:
the difference between the routes is the prompt the server built, not the dialect.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from sieval import Model, Request, Sampling
from sieval.ir.request import CompletionInput
from sieval.store.records import Shared, expand, read_records


def sent(run: Path, model: str, task: str) -> dict[str, tuple[dict[str, Any], str, int]]:
    """Per sample: the body sent, the generated text and the prompt's token count."""
    unit = run / model / task
    shared = Shared.load(unit / "shared.jsonl")
    out = {}
    for sample_id, record in read_records(unit / "records.jsonl").records.items():
        request = expand(record.requests["gen"], shared)
        text = record.channels["text"]
        out[sample_id] = (request.body or {}, text, (request.usage or {}).get("input_tokens", 0))
    return out


def messages_of(body: dict[str, Any]) -> list[dict[str, str]]:
    """The conversation as chat messages, whichever chat wire the body was for."""
    system = [{"role": "system", "content": _text(body["system"])}] if "system" in body else []
    if "messages" in body:
        items = body["messages"]
    elif isinstance(body["input"], list):
        items = body["input"]
    else:
        items = [{"role": "user", "content": body["input"]}]
    return system + [{"role": m["role"], "content": _text(m["content"])} for m in items]


def _common(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--task", default="gsm8k_0shot_gen")
    parser.add_argument("--model", default="gemma-3-270m")
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args()
    a = sent(args.run_a, args.model, args.task)
    b = sent(args.run_b, args.model, args.task)
    tally = {"a=rendered": 0, "b=rendered": 0, "a=bos+rendered": 0, "b=bos+rendered": 0}
    async with Model(dialect="openai_completions", base_url=args.url, model_id=args.model) as m:
        for sample_id in sorted(a, key=lambda s: int(s.rsplit("/", 1)[1])):
            body, text_a, count_a = a[sample_id]
            _, text_b, count_b = b[sample_id]
            status, tokens = await m.fetch(
                "/tokenize",
                {"model": args.model, "messages": messages_of(body), "add_generation_prompt": True},
            )
            assert status == 200, tokens
            ids = list(tokens["tokens"])
            bos = ids[0]
            replays = {}
            for name, prompt in (("rendered", ids), ("bos+rendered", [bos, *ids])):
                response = await m.run(
                    Request(
                        input=CompletionInput(token_ids=tuple(prompt)),
                        sampling=Sampling(temperature=0.0, max_tokens=args.max_tokens),
                    )
                )
                replays[name] = response.choices[0].text
            row: dict[str, Any] = {
                "sample": sample_id,
                "prompt_tokens": {"a": count_a, "b": count_b, "rendered": len(ids)},
            }
            for route, text in (("a", text_a), ("b", text_b)):
                matches = [name for name, replay in replays.items() if replay == text]
                row[route] = matches or {
                    name: f"same first {_common(replay, text)} of {len(text)} chars"
                    for name, replay in replays.items()
                }
                for name in matches:
                    tally[f"{route}={name}"] += 1
            print(json.dumps(row))
    print(json.dumps({"samples": len(a), **tally}))


if __name__ == "__main__":
    asyncio.run(main())
