"""WikiText-2 raw, document level: ``wikitext/wikitext-2-raw-v1/{test,validation}/
data-00000-of-00001.arrow``, the Arrow IPC streams of a Hugging Face ``save_to_disk`` dump of
``EleutherAI/wikitext_document_level`` (62 / 60 documents). The train split is not stored.

lm-eval 0.4.13 ``wikitext`` reads ``EleutherAI/wikitext_document_level`` config
``wikitext-2-raw-v1`` (scores test, rolling log-likelihood of ``wikitext_detokenizer(page)``,
words counted in ``page``). Rows: ``page``, a string: one Wikipedia article with WikiText's
tokenised spacing (`` @-@ ``, `` , ``) as on the hub.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .arrow import arrow_stream_rows
from .rows import as_fields, converted, local_or_hub
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="wikitext",
    splits=("test", "validation"),
    hub="EleutherAI/wikitext_document_level",
    hub_name="wikitext-2-raw-v1",
    format="save_to_disk Arrow stream: wikitext-2-raw-v1/{split}/data-00000-of-00001.arrow",
    fields=("page",),
)


class _Fields(msgspec.Struct):
    page: str


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "wikitext-2-raw-v1" / split / "data-00000-of-00001.arrow"]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    return as_fields(
        local_or_hub(
            SOURCE,
            split,
            paths,
            lambda: converted(arrow_stream_rows(str(paths[0]), paths[0], SOURCE.fields), _Fields),
            _Fields,
            SOURCE.hub_name,
        )
    )
