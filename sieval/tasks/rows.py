"""The rows a task reads, through the dataset loaders (``sieval/data/<folder>.py``).

A loader declares ``SOURCE`` and gives, per split (and subset), its files and its rows as
``(where, fields)``, the fields named and typed as the Hugging Face dataset lm-eval reads. Until
every stored dataset has such a loader, the four first ones are read here through their older
functions and given the hub's field names (``_legacy``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Row", "SourceLike", "source"]

Row = tuple[str, dict[str, Any]]


class SourceLike(Protocol):
    splits: tuple[str, ...]

    def files(self, data_dir: Path, split: str, subset: str | None = None) -> list[Path]: ...

    def rows(self, data_dir: Path, split: str, subset: str | None = None) -> Sequence[Row]: ...


def source(name: str) -> SourceLike:
    """The loader of the dataset folder ``name``."""
    try:
        from ..data.registry import get_source
    except ImportError:  # pragma: no cover - the loaders' registry is not merged yet
        return _legacy(name)
    found: SourceLike = get_source(name)
    return found


@dataclass(frozen=True)
class _Legacy:
    splits: tuple[str, ...]
    file: Callable[[Path, str, str | None], Path | None]
    read: Callable[[Path, str, str | None], Sequence[Row]]

    def files(self, data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
        path = self.file(data_dir, split, subset)
        return [path] if path is not None else []

    def rows(self, data_dir: Path, split: str, subset: str | None = None) -> Sequence[Row]:
        return self.read(data_dir, split, subset)


def _legacy(name: str) -> SourceLike:  # pragma: no cover - replaced by the loaders' registry
    from .. import data

    if name == "arc_easy":

        def arc(d: Path, split: str, _: str | None) -> list[Row]:
            return [
                (
                    it.id,
                    {"id": it.id, "question": it.question,
                     "choices": {"text": list(it.choices), "label": list(it.labels)},
                     "answerKey": it.labels[it.answer]},
                )  # fmt: skip
                for it in data.load_arc_easy(d, split)
            ]

        return _Legacy(("train", "validation", "test"), lambda d, s, _: data.arc_easy_file(d, s), arc)
    if name == "gsm8k":

        def gsm(d: Path, split: str, _: str | None) -> list[Row]:
            return [
                (str(it.index), {"question": it.question, "answer": it.answer})
                for it in data.load_gsm8k(d, split)
            ]

        return _Legacy(("train", "test"), lambda d, s, _: data.gsm8k_file(d, s), gsm)
    if name == "mmlu":

        def mmlu(d: Path, split: str, subject: str | None) -> list[Row]:
            assert subject is not None
            return [
                (
                    f"{subject}/{it.index}",
                    {"question": it.question, "subject": subject, "choices": list(it.options),
                     "answer": "ABCD".index(it.answer)},
                )  # fmt: skip
                for it in data.load_mmlu(d, subject, split)
            ]

        return _Legacy(
            ("dev", "validation", "test"),
            lambda d, s, subject: data.mmlu_file(d, subject or "", s),
            mmlu,
        )
    if name == "hellaswag":

        def hs(d: Path, split: str, _: str | None) -> list[Row]:
            return [
                (
                    it.where,
                    {"activity_label": it.activity_label, "ctx_a": it.ctx_a, "ctx_b": it.ctx_b,
                     "endings": list(it.endings), "label": str(it.label)},
                )  # fmt: skip
                for it in data.load_hellaswag(d, split)
            ]

        return _Legacy(("validation",), lambda d, s, _: data.hellaswag_file(d, s), hs)
    raise KeyError(name)
