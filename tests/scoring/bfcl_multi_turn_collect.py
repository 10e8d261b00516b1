"""Collect a server's real BFCL multi-turn outputs for the check's parity test (evidence tooling,
not a test).

    python -m tests.scoring.bfcl_multi_turn_collect URL MODEL DIALECT N MAX_TOKENS OUT.jsonl
        [CATEGORIES]

    python -m tests.scoring.bfcl_multi_turn_collect --from-run RUN_DIR OUT.jsonl

``URL`` ``embedded`` starts sieval's reference server. For the first N entries of each category,
the ``bfcl_multi_turn`` task (FC; ``openai_completions`` runs ``bfcl_multi_turn_prompt``) runs
the entry through its turns and steps, greedy, and one line per entry is written: ``{"id",
"category", "column", "result"}``, ``result`` being what BFCL's inference stores (per turn, per
step: FC, the reply's calls as ``[{name: arguments_json}]`` read from the raw reply body, or its
text; Prompt, the text). Two entries at a time; the task's own verdict is printed beside each.
``--from-run`` reads the same from the records of a ``sieval eval`` run of either task instead
(each step's text and calls, as its channels keep them): the evidence run's own replies.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from sieval.model import Call as ModelCall
from sieval.model import Model
from sieval.plan.plan import model_facts
from sieval.reference.server import start_in_thread
from sieval.tasks.base import Sample, TaskConfig
from sieval.tasks.context import DirectContext
from sieval.tasks.registry import TASKS

from .bfcl_collect import stored

_STEP = re.compile(r"^turn(\d+)\.step(\d+)$")


def result_of(column: str, calls: dict[str, ModelCall]) -> list[list[Any]]:
    """The steps' replies as BFCL's inference result (see the module)."""
    out: list[list[Any]] = []
    for name, call in calls.items():
        match = _STEP.match(name)
        assert match is not None, name
        turn = int(match.group(1)) - 1
        while len(out) <= turn:
            out.append([])
        text = call.result().choices[0].text
        out[turn].append(stored(column, call.raw, text) if column == "fc" else text)
    return out


def from_run(run_dir: Path) -> list[str]:
    """Fixture lines from a run's records (see the module)."""
    lines = []
    for records in sorted(run_dir.glob("*/bfcl_multi_turn*/records.jsonl")):
        for line in records.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            channels = record["channels"]
            column = "fc" if channels["column"] == "FC" else "prompt"
            result = [
                [
                    [{n: json.dumps(a)} for c in step["calls"] for n, a in c.items()]
                    if column == "fc" and step.get("calls")
                    else step["text"]
                    for step in turn
                ]
                for turn in channels["turns"]
            ]
            row = {
                "id": record["sample_id"],
                "category": record["group"],
                "column": column,
                "result": result,
            }
            lines.append(json.dumps(row))
    return lines


async def collect(argv: list[str]) -> None:
    if argv[0] == "--from-run":
        lines = from_run(Path(argv[1]))
        Path(argv[2]).write_text("".join(line + "\n" for line in sorted(lines)), "utf-8")
        return
    url, model_id, dialect, n, tokens, out = argv[:6]
    column = "prompt" if dialect == "openai_completions" else "fc"
    task = TASKS["bfcl_multi_turn_prompt" if column == "prompt" else "bfcl_multi_turn"]
    options: dict[str, Any] = {"max_tokens": int(tokens)}
    if len(argv) > 6:
        options["categories"] = argv[6]
    config = TaskConfig(name=task.name, options=options)
    by: dict[str, list[Sample]] = {}
    for sample in task.load(Path(), config):
        by.setdefault(str(sample.group), []).append(sample)
    chosen = [s for group in by.values() for s in group[: int(n)]]
    server = None
    if url == "embedded":
        server = await asyncio.to_thread(start_in_thread, port=0, max_model_len=1_000_000)
        url = server.url
    gate = asyncio.Semaphore(2)
    lines: list[str] = []
    try:
        async with Model(dialect=dialect, base_url=url, model_id=model_id) as model:

            async def one(sample: Sample) -> None:
                async with gate:
                    ctx = DirectContext(model, sample, config, model_facts(model.dialect))
                    result = await task.solve(sample, ctx)
                    row = {
                        "id": sample.id,
                        "category": sample.group,
                        "column": column,
                        "result": result_of(column, ctx.calls),
                    }
                    lines.append(json.dumps(row))
                    print(sample.id, result.metrics["accuracy"], result.channels["reason"])

            await asyncio.gather(*(one(s) for s in chosen))
    finally:
        if server is not None:
            await asyncio.to_thread(server.stop)
    Path(out).write_text("".join(line + "\n" for line in sorted(lines)), encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(collect(sys.argv[1:]))
