"""A new task added as one module, touching no shared file: the worked example of docs/tasks.md,
written to a package of its own, discovered, listed and run on the embedded server."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from runs import options

from sieval.plan.config import parse_config
from sieval.runner import run_eval
from sieval.tasks.base import TaskConfig
from sieval.tasks.registry import TASKS, discover

TASKS_DOC = Path(__file__).parents[2] / "docs" / "tasks.md"


def example() -> str:
    text = TASKS_DOC.read_text()
    section = text[text.index("## Writing a task") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_readme_example_is_a_task(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "mytasks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "sciq_no_support.py").write_text(example())
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        found = discover("mytasks")
    finally:
        for name in [m for m in sys.modules if m.startswith("mytasks")]:
            monkeypatch.delitem(sys.modules, name)
    task = found["sciq_no_support"]
    assert "sciq_no_support" not in TASKS  # nothing shared was touched
    config = TaskConfig(name="sciq_no_support", num_fewshot=1)
    sample = next(iter(task.load(data_dir, config)))
    context, continuation = task.arguments(sample, config)["choice:3"]
    assert context.startswith("Question: ") and "\n\nQuestion: " in context
    assert context.endswith("\nAnswer:") and continuation == " " + sample.data["choices"][3]
    assert sample.gold == 3
    run = run_eval(
        parse_config(
            "models: [{name: m, endpoint: embedded, concurrency_limit: 4}]\n"
            "tasks: [{name: sciq_no_support, n: 4}]"
        ),
        options(out=tmp_path / "runs", data_dir=data_dir),
        tasks={**TASKS, **found},
    )
    assert run.exit_code == 0
    (entry,) = run.report.results
    assert entry.samples.scored == 4 and set(entry.metrics) == {"n", "acc", "acc_norm"}
    assert entry.protocol.startswith("choice log-likelihood (lm-eval 0.4.13 tasks/sciq")
