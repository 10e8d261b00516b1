"""sieval's per-sample strings equal lm-evaluation-harness 0.4.13's, without lm-eval installed.

``scripts/lm_eval_strings.py --write`` built each case's requests in lm-eval itself over the
stored files and recorded, for the first documents, the sha256 of sieval's (identical) arguments
and their lengths in ``tests/fixtures/lm_eval/0.4.13/<task>-<k>shot.json``; here sieval builds
them again. A change to a prompt, a delimiter, a shot draw or a loader fails this test.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sieval.tasks.base import TaskConfig
from sieval.tasks.registry import TASKS

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lm_eval" / "0.4.13"
CASES = sorted(FIXTURES.glob("*shot.json"))


def digest(arguments: list[list[str]]) -> str:
    return hashlib.sha256(json.dumps(arguments, ensure_ascii=False).encode()).hexdigest()[:32]


def test_every_base_suite_task_has_a_recorded_case() -> None:
    from sieval.tasks.registry import SUITES

    recorded = {json.loads(p.read_text())["task"] for p in CASES}
    assert recorded == {m.name for m in SUITES["base_suite"].tasks}


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_strings_are_lm_evals(path: Path, data_dir: Path) -> None:
    case = json.loads(path.read_text())
    task: Any = TASKS[case["task"]]
    config = TaskConfig(name=case["task"], num_fewshot=case["num_fewshot"], seed=case["seed"])
    wanted = {d["sample"]: d for d in case["docs"]}
    seen = 0
    for sample in task.load(data_dir, config):
        if sample.id not in wanted:
            continue
        arguments = [list(a) for a in task.arguments(sample, config).values()]
        expected = wanted[sample.id]
        assert [[len(x) for x in a] for a in arguments] == expected["lengths"], sample.id
        assert digest(arguments) == expected["sha256"], sample.id
        requests = task.requests(sample, config)
        if case["task"] != "wikitext":  # what is sent is what was compared
            for (context, continuation), request in zip(arguments, requests.values(), strict=True):
                assert request.input.text == context + continuation
        seen += 1
        if seen == len(wanted):
            break
    assert seen == len(wanted)
