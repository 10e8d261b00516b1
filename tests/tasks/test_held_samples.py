"""Every task's samples, as the plan holds them (``plan/samples.py``), read back equal to what
the task built: in memory and spilled to a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from sieval.plan.samples import Samples
from sieval.tasks.base import TaskConfig
from sieval.tasks.registry import TASKS

ZERO_SHOT = {"boolq", "hellaswag", "truthfulqa_mc1", "truthfulqa_mc2", "wikitext", "aime2024",
             "aime2025", "bbh", "gpqa_diamond", "humaneval", "ifeval", "math500",
             "mt_bench_answers", "bank_tools", "mt_bench", "arena_hard_v2", "bfcl",
             "bfcl_prompt", "bfcl_multi_turn", "bfcl_multi_turn_prompt",
             "bfcl_memory", "bfcl_memory_prompt",
             "niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1",
             "niah_multikey_2", "niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt",
             "cwe", "fwe"}  # fmt: skip
"""No shot split is stored (boolq, hellaswag), the task is 0-shot as lm-eval's, or its shots are
not drawn from a split (BBH's prompt files), or it is a conversation, or generated (RULER's)."""
SMALL = {"bank_tools"}
"""Tasks whose samples all fit in 4 KB: never spilled."""


@pytest.mark.parametrize("name", sorted(TASKS))
@pytest.mark.parametrize("spill_bytes", [1 << 30, 1 << 12])  # AIME holds 14 KB
def test_every_task_reads_back_equal_in_memory_and_spilled(
    data_dir: Path, name: str, spill_bytes: int
) -> None:
    task = TASKS[name]
    shots = 0 if "0shot" in name or name in ZERO_SHOT else 3
    built = list(task.load(data_dir, TaskConfig(name=name, num_fewshot=shots)))
    held = Samples(iter(built), spill_bytes=spill_bytes)
    assert ("temporary file" in repr(held)) == (spill_bytes < 1 << 20 and name not in SMALL)
    assert len(held) == len(built)
    assert list(held) == built
    step = max(1, len(built) // 50)
    for i in range(0, len(built), step):
        assert held[i] == built[i]
        assert held.position(built[i].id) == i
        assert held.id_at(i) == built[i].id and held.group_at(i) == built[i].group
    assert held[-1] == built[-1] and held[1:3] == built[1:3]
    assert list(held.ids()) == [s.id for s in built]
    assert held.position("not a sample id") is None
    with pytest.raises(IndexError):
        held[len(built)]
