"""What RULER's generators read besides a tokenizer: the essay haystack and the word lists.

- The essay haystack: RULER's ``PaulGrahamEssays.json`` is the 49 essays of
  ``ruler/essays/*.txt`` (the LLMTest_NeedleInAHaystack copy), sorted by file name and joined
  with nothing between them, followed by 169 essays scraped from paulgraham.com that are not
  stored here (``ruler/SOURCE.md``). RULER reads the first words of it, so any haystack within
  these 49 essays is RULER's own; one that needs more is refused by the generator.
- The word lists: ``wonderwords``' noun, adjective and verb lists (the ``ruler`` extra), read as
  wonderwords reads them (each line right-stripped).
"""

from __future__ import annotations

import functools
import importlib
import re
from pathlib import Path

from ..errors import ConfigError

__all__ = ["ESSAY_FOLDER", "essay_files", "essay_words", "word_list"]

ESSAY_FOLDER = "ruler/essays"
_NOT_ESSAYS = {"LICENSE.txt"}


def essay_files(data_dir: Path) -> list[Path]:
    """The essays in the order RULER concatenates them (sorted by file name)."""
    folder = data_dir / ESSAY_FOLDER
    found = sorted(p for p in folder.glob("*.txt") if p.name not in _NOT_ESSAYS)
    if not found:
        raise ConfigError(
            f"RULER's essay haystack is not in {folder}: put the 49 essays of "
            "gkamradt/LLMTest_NeedleInAHaystack (PaulGrahamEssays/*.txt) there, or set "
            "--data-dir / SIEVAL_DATA_DIR to a data directory that has ruler/essays/",
            path="data_dir",
        )
    return found


@functools.cache
def _words(paths: tuple[Path, ...]) -> tuple[str, ...]:
    text = "".join(p.read_text(encoding="utf-8") for p in paths)
    return tuple(re.sub(r"\s+", " ", text).split(" "))


def essay_words(data_dir: Path) -> tuple[str, ...]:
    """The essay text with whitespace runs collapsed, split on spaces (RULER's ``haystack``)."""
    return _words(tuple(essay_files(data_dir)))


@functools.cache
def word_list(name: str) -> tuple[str, ...]:
    """One of wonderwords' lists (``nounlist.txt``, ``adjectivelist.txt``, ``verblist.txt``)."""
    try:
        assets = importlib.import_module("wonderwords.assets")
    except ImportError as error:
        raise ConfigError(
            "RULER's word needles and common words come from wonderwords' lists: "
            "pip install 'sieval[ruler]'",
            path="tasks",
        ) from error
    resources = importlib.import_module("importlib.resources")
    with resources.files(assets).joinpath(name).open("r") as f:
        return tuple(line.rstrip() for line in f.readlines())
