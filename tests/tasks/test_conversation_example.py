"""docs/tasks.md's conversational examples, as written: each a module of its own, discovered, and
run on the embedded server through the engine (every turn recorded)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from sieval.plan.config import parse_config
from sieval.runner import RunOptions, read_records, run_eval
from sieval.tasks.registry import discover

TASKS_DOC = Path(__file__).parents[2] / "docs" / "tasks.md"


def examples() -> list[str]:
    text = TASKS_DOC.read_text()
    start = text.index("## Conversations, tool loops and judges")
    section = text[start : text.index("\n## ", start + 1)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


@pytest.mark.parametrize(
    ("index", "name", "metric", "calls"),
    [
        (0, "follow_up", "answered", ["turn1", "turn2"]),
        (1, "count_to", "right", ["turn1", "turn2"]),
    ],
)
def test_the_doc_examples_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, name: str, metric: str,
    calls: list[str],
) -> None:  # fmt: skip
    package = tmp_path / f"mytasks{index}"  # a name of its own: no import cache between them
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / f"{name}.py").write_text(examples()[index])
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        found = discover(package.name)
    finally:
        for module in [m for m in sys.modules if m.startswith(package.name)]:
            monkeypatch.delitem(sys.modules, module)
    run = run_eval(
        parse_config(
            f"models: [{{name: m, endpoint: embedded, kind: chat}}]\ntasks: [{{name: {name}}}]"
        ),
        RunOptions(out=tmp_path / "runs", data_dir=tmp_path, preflight=False),
        tasks=found,
    )
    assert run.exit_code == 0
    (entry,) = run.report.results
    assert entry.samples.scored == 2 and entry.metrics[metric] == 1.0
    records = read_records(run.run_dir / "m" / name / "records.jsonl").records
    assert all(list(r.requests) == calls for r in records.values())
