"""The reference judging code beside the data, imported as oracles (never copied into the repo):
FastChat's ``mt_bench/reference_common.py`` and arena-hard-auto's ``arena_hard_v2/reference/``.

Their imports that only serve model calls or plots (``openai``, ``anthropic``, ``fastchat``'s
conversation templates, ``utils.completion``, ``torch``, ``tqdm``, ``utils.math_utils``) are
stubbed; what they compute with is real: ``re`` and ``ast`` for the parsers, pandas and numpy
for Arena-Hard's scores (which come with the ``lm-eval`` extra that ``scripts/test`` installs;
without them the score test says so and skips).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
ARENA = DATA / "arena_hard_v2" / "reference"


def load(name: str, path: Path, stubs: dict[str, types.ModuleType]) -> types.ModuleType:
    """Import a reference file from the data folder, its unavailable imports stubbed."""
    if not path.is_file():
        pytest.skip(f"reference code not found at {path}; set SIEVAL_DATA_DIR")
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        with warnings.catch_warnings():  # its regexes are written with invalid escapes
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            spec.loader.exec_module(module)
    finally:
        for key, value in saved.items():
            if value is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = value
    return module


def _module(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    for key, value in attributes.items():
        setattr(module, key, value)
    return module


class _Conversation:
    """The part of FastChat's conversation template ``run_judge_single`` calls."""

    roles = ("user", "assistant")

    def set_system_message(self, text: str) -> None:
        pass

    def append_message(self, role: str, text: str | None) -> None:
        pass


def mt_bench() -> types.ModuleType:
    """FastChat's ``common.py``; set ``module.REPLY`` to the judge reply its model call gets."""
    adapter = _module(
        "fastchat.model.model_adapter",
        get_conversation_template=lambda model: _Conversation(),
        OPENAI_MODEL_LIST=("gpt-4",),
        ANTHROPIC_MODEL_LIST=(),
    )
    stubs = {
        "openai": _module("openai"),
        "anthropic": _module("anthropic"),
        "fastchat": _module("fastchat"),
        "fastchat.model": _module("fastchat.model"),
        "fastchat.model.model_adapter": adapter,
    }
    module = load("mt_bench_oracle", DATA / "mt_bench" / "reference_common.py", stubs)

    def reply(model: str, conv: Any, temperature: float, max_tokens: int) -> str:
        return str(module.REPLY)  # type: ignore[attr-defined]

    module.chat_completion_openai = reply  # type: ignore[attr-defined]
    return module


def _utils() -> dict[str, types.ModuleType]:
    judge_utils = load("utils.judge_utils", ARENA / "judge_utils.py", {})
    completion = _module(
        "utils.completion",
        load_questions=None,
        registered_api_completion={},
        load_model_answers=None,
        get_endpoint=None,
        make_config=None,
    )
    math_utils = _module(
        "utils.math_utils",
        one_hot_encode=None,
        to_winrate_probabilities=None,
        bootstrap_pairwise_model=None,
    )
    return {
        "utils": _module("utils"),
        "utils.judge_utils": judge_utils,
        "utils.completion": completion,
        "utils.math_utils": math_utils,
    }


def arena_judgment() -> types.ModuleType:
    """arena-hard-auto's ``gen_judgment.py`` (``get_score``)."""
    return load("arena_judgment_oracle", ARENA / "gen_judgment.py", _utils())


def arena_result() -> types.ModuleType:
    """arena-hard-auto's ``show_result.py`` (``load_judgments``, ``print_leaderboard``): needs
    pandas and numpy; torch (style control only) and tqdm stubbed."""
    pytest.importorskip("pandas", reason="Arena-Hard's score oracle needs pandas (lm-eval extra)")
    stubs = {
        **_utils(),
        "torch": _module("torch"),
        "tqdm": _module("tqdm", tqdm=lambda iterable, **_: iterable),
    }
    return load("arena_result_oracle", ARENA / "show_result.py", stubs)
