"""WinoGrande (Sakaguchi et al. 2020), ``winogrande_xl``: ``winogrande/winogrande.zip``, a Hugging
Face ``save_to_disk`` dump (one Arrow IPC stream a split, ``winogrande/{split}/
data-00000-of-00001.arrow``), read from the zip in memory (40,398 / 1,267 / 1,767 rows).

lm-eval 0.4.13 ``winogrande`` reads ``allenai/winogrande`` config ``winogrande_xl`` (scores
validation, shots from train): ``sentence`` split at its ``_``, ``option1``, ``option2`` and
``answer`` (``"1"`` / ``"2"``). Rows: ``sentence, option1, option2, answer``, all strings, as the
hub has them; ``answer`` is ``""`` in the unlabelled test split. A sentence without exactly one
``_`` or an answer outside ``"1"``, ``"2"`` (``""`` in test) is refused. The original release's
``qID`` is not in the hub schema, so not here either.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .arrow import zipped_stream_rows
from .rows import as_fields, bad_row, converted, local_or_hub
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="winogrande",
    splits=("train", "validation", "test"),
    hub="allenai/winogrande",
    hub_name="winogrande_xl",
    format="zipped save_to_disk Arrow: winogrande.zip!winogrande/{split}/data-00000-of-00001.arrow",
    fields=("sentence", "option1", "option2", "answer"),
)


class _Fields(msgspec.Struct):
    sentence: str
    option1: str
    option2: str
    answer: str


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "winogrande.zip"]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    member = f"winogrande/{split}/data-00000-of-00001.arrow"
    typed = local_or_hub(
        SOURCE,
        split,
        paths,
        lambda: converted(zipped_stream_rows(paths[0], member, SOURCE.fields), _Fields),
        _Fields,
        SOURCE.hub_name,
    )
    answers = ("",) if split == "test" else ("1", "2")
    for where, row in typed:
        if row.sentence.count("_") != 1:
            raise bad_row(where, f"the sentence has {row.sentence.count('_')} blanks '_', not 1")
        if row.answer not in answers:
            raise bad_row(where, f"answer {row.answer!r} is not {' or '.join(map(repr, answers))}")
    return as_fields(typed)
