"""Dataset loaders: a local data directory first, the Hugging Face hub when files are absent.

One module per folder of the data directory (``sieval/data/<folder>.py``, e.g. ``boolq.py`` for
``$SIEVAL_DATA_DIR/boolq/``). Each declares

- ``SOURCE``: a ``Source`` (``source.py``): the folder, the splits stored (named as on the hub:
  ``train``, ``validation``, ``test``...), the hub dataset and config lm-evaluation-harness
  0.4.13 reads (the fallback), a one-line description of the stored format, the row fields, and
  the subsets when there are some;
- ``files(data_dir, split, subset=None) -> list[Path]``: the files ``rows`` reads (their
  checksums enter the run identity). A split that is not stored, an unknown subset, or a missing
  subset where one is required (BBH, MBPP) is a ``ConfigError`` naming the choices;
- ``rows(data_dir, split, subset=None) -> list[Row]``: every row in the dataset's own order, each
  ``(where, fields)``: where names the place (``FILE:LINE``, ``FILE#row N``, ``ZIP!MEMBER#row N``,
  N from 0) and fields are exactly the fields and value types of the hub dataset lm-eval reads
  (what the stored copy cannot give is said in the module). When none of a split's files is
  there, the rows come from the hub via the optional ``datasets`` package; when that fails, or a
  file is malformed, a ``ConfigError`` names the file (and line, member or row) and the fix.

Subsets are a ``subset=`` argument, never part of the split name: BBH's 27 subtasks (required),
MMLU's 57 subjects and MMLU-Pro's 14 categories (``None``: all of them), MBPP's configs ``full``
and ``sanitized`` (required; their fields differ). A few modules export more for their tasks:
``bbh.cot_prompt`` (the 3-shot CoT prompt), ``gpqa_diamond.USED`` (the columns lm-eval reads),
``mmlu_pro.CATEGORIES``, ``mbpp.SPLITS`` (task-id ranges).

``registry.SOURCES`` (folder -> ``Source``) is discovered from the modules, so a new dataset
touches no shared file; ``registry.get_source(name)`` suggests the closest name for a typo, and
``Source.files`` / ``Source.rows`` call the module's functions. Readers that need pyarrow import
it when they read, never at import.
"""

from .source import (
    DATA_DIR_ENV,
    Row,
    Source,
    checksums,
    file_sha256,
    hub_rows,
    resolve_data_dir,
)

__all__ = [
    "DATA_DIR_ENV",
    "Row",
    "Source",
    "checksums",
    "file_sha256",
    "hub_rows",
    "resolve_data_dir",
]
