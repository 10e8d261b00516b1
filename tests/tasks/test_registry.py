"""The task table is discovered from modules; every task is well-formed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sieval.ir.capabilities import CAPABILITIES
from sieval.tasks.registry import TASKS, discover

NAMES = [
    "aime2024", "aime2025", "arc_challenge", "arc_easy", "arc_easy_kshot_ppl", "arena_hard_v2",
    "bank_tools", "bbh", "bfcl", "bfcl_memory", "bfcl_memory_prompt", "bfcl_multi_turn",
    "bfcl_multi_turn_prompt", "bfcl_prompt",
    "boolq", "gpqa_diamond", "gsm8k_0shot_gen", "gsm8k_kshot_base_gen", "hellaswag",
    "hellaswag_kshot_ppl", "humaneval", "ifeval", "lambada_openai", "math500", "mbpp",
    "mbpp_sanitized", "mmlu", "mmlu_0shot_gen", "mmlu_kshot_clp", "mmlu_pro", "mt_bench",
    "mt_bench_answers",
    "openbookqa", "piqa", "sciq", "truthfulqa_mc1", "truthfulqa_mc2", "wikitext", "winogrande",
]  # fmt: skip
RULER = ["cwe", "fwe", "niah_multikey_1", "niah_multikey_2", "niah_multikey_3", "niah_multiquery",
         "niah_multivalue", "niah_single_1", "niah_single_2", "niah_single_3", "vt"]  # fmt: skip
CHAT_ONLY = {"gsm8k_0shot_gen", "mmlu_0shot_gen", "ifeval", "math500", "aime2024", "aime2025",
             "gpqa_diamond", "mt_bench_answers", "bank_tools", "mt_bench",
             "arena_hard_v2", "bfcl", "bfcl_multi_turn", "bfcl_memory"}  # fmt: skip
NOT_STATIC = {"mt_bench_answers", "bank_tools", "mt_bench", "arena_hard_v2", "bfcl_multi_turn",
              "bfcl_multi_turn_prompt", "bfcl_memory", "bfcl_memory_prompt"}  # fmt: skip
TOKEN_PROMPT = {"wikitext"}


def test_the_seed_tasks_and_the_chat_tasks() -> None:
    assert list(TASKS) == sorted(NAMES + RULER)
    for name, task in TASKS.items():
        assert task.name == name and task.protocol and task.headline
        assert {r.capability for r in task.requirements} <= set(CAPABILITIES)
        prompt = "chat" if name in CHAT_ONLY else "text_prompt"
        prompt = "token_prompt" if name in TOKEN_PROMPT else prompt
        assert prompt in {r.capability for r in task.requirements}
        assert task.static == (name not in NOT_STATIC)
    clp = {r.capability: r for r in TASKS["mmlu_kshot_clp"].requirements}
    assert clp["sampled_top_k"].min_top_k == 100


def test_discover_reads_module_level_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "faketasks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text("class T:\n    name = 'one'\nTASK = T()\n")
    (package / "helper.py").write_text("X = 1\n")
    (package / "_private.py").write_text("raise RuntimeError('never imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert list(discover("faketasks")) == ["one"]
    (package / "two.py").write_text("class T:\n    name = 'one'\nTASK = T()\n")
    with pytest.raises(AssertionError, match="two task modules"):
        discover("faketasks")
    for name in [m for m in sys.modules if m.startswith("faketasks")]:
        monkeypatch.delitem(sys.modules, name)
