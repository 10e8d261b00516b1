"""Collect a server's real BFCL outputs for the checker parity test (evidence tooling, not a test).

    python -m tests.scoring.bfcl_collect URL MODEL DIALECT N MAX_TOKENS OUT.jsonl [CATEGORIES
        [TOOL_CHOICE]]

For the first N entries of each category, the ``bfcl`` task (FC; ``openai_completions`` runs
``bfcl_prompt``) asks the server once, and one line per entry is written: ``{"id", "category",
"column", "result", "source"}``, ``result`` being what BFCL's handler stores (FC: the reply's
calls as ``[{name: arguments_json}]`` read from the raw reply body, or its text; Prompt: the
text). Two requests at a time; a sample that failed (a refused reply) is left out.
``TOOL_CHOICE`` ``required`` forces FC calls (vLLM then constrains the reply to its tool-call
JSON): real calls with a small model's own arguments.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from sieval.errors import SievalError
from sieval.model import Model
from sieval.plan.plan import model_facts
from sieval.tasks.base import Sample, TaskConfig
from sieval.tasks.context import DirectContext
from sieval.tasks.registry import TASKS


def stored(column: str, raw: bytes | None, text: str) -> Any:
    """What BFCL's handler keeps of a reply (see the module)."""
    if column == "fc" and raw:
        body = json.loads(raw)
        message = body["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        if calls:
            return [{c["function"]["name"]: c["function"]["arguments"]} for c in calls]
    return text


async def collect(argv: list[str]) -> None:
    url, model_id, dialect, n, tokens, out = argv[:6]
    column = "prompt" if dialect == "openai_completions" else "fc"
    task = TASKS["bfcl_prompt" if column == "prompt" else "bfcl"]
    options: dict[str, Any] = {"max_tokens": int(tokens)}
    if len(argv) > 6:
        options["categories"] = argv[6]
    if len(argv) > 7:
        options["tool_choice"] = argv[7]
    config = TaskConfig(name=task.name, options=options)
    by: dict[str, list[Sample]] = {}
    for sample in task.load(Path(), config):
        by.setdefault(str(sample.group), []).append(sample)
    chosen = [s for group in by.values() for s in group[: int(n)]]
    gate = asyncio.Semaphore(2)
    lines: list[str] = []
    async with Model(dialect=dialect, base_url=url, model_id=model_id) as model:

        async def one(sample: Sample) -> None:
            async with gate:
                ctx = DirectContext(model, sample, config, model_facts(model.dialect))
                try:
                    result = await task.solve(sample, ctx)
                except SievalError as exc:  # a failed sample: not an output BFCL would grade
                    print(sample.id, "failed:", str(exc)[:160], flush=True)
                    return
                call = ctx.calls["answer"]
                text = call.result().choices[0].text
                row = {
                    "id": sample.id,
                    "category": sample.group,
                    "column": column,
                    "result": stored(column, call.raw, text),
                    "source": f"{model_id} via {dialect}, max_tokens {tokens}, "
                    f"tool_choice {options.get('tool_choice', 'auto')}",
                    "sieval": result.metrics["accuracy"],
                }
                lines.append(json.dumps(row))
                print(sample.id, result.metrics["accuracy"], result.channels["miss"], flush=True)

        await asyncio.gather(*(one(s) for s in chosen))
    order = {s.id: i for i, s in enumerate(chosen)}
    lines.sort(key=lambda line: order[json.loads(line)["id"]])
    Path(out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(collect(sys.argv[1:]))
