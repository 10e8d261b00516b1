"""Names that become paths: the one check every configured name passes before a join.

A name that a config, the command line or a run's own files give (a model label, a task name, a
run name) becomes one directory of a run, ``<out>/<run>/<model>/<task>/``. ``segment`` is how
such a name becomes part of a path: it is one plain path segment, or a ``ConfigError`` naming
the key and the fix. Refused: empty; ``.`` and ``..``; ``/`` and ``\\``; NUL and every other
control character (and the bidirectional overrides); a leading ``.`` (hidden, and sieval's own
work files start with one) or ``-`` (read as an option by the shell tools a user points at the
directory); a name of a run's own files (``RUN_FILES``, compared case-insensitively, as a
case-insensitive filesystem would); more than ``MAX_NAME`` bytes in UTF-8.

A model's directory is its label made file-safe (``results_dirname``: ``google/gemma`` ->
``google_gemma``, since a label defaults to the model id), then checked like any name.
"""

from __future__ import annotations

import re
import unicodedata

from ..errors import ConfigError

__all__ = ["MAX_NAME", "RUN_FILES", "results_dirname", "segment", "unsafe"]

MAX_NAME = 128
"""Bytes (UTF-8) a name may take: half of the usual ``NAME_MAX`` (255), so a name with a suffix
added (``.lock``, a merge's work file) still fits."""

RUN_FILES = frozenset(
    {
        "run.json",
        "report.json",
        "plan.json",
        "forecast.json",
        "report.html",
        "records.jsonl",
        "shared.jsonl",
        "wire.jsonl",
        "run.lock",
        "shards",
        "slurm",
        "k8s",
    }
)
"""What a run writes beside its model, task and shard directories."""

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unsafe(name: str) -> str | None:
    """Why ``name`` is not one plain path segment, or None when it is."""
    if not name:
        return "it is empty"
    if name in (".", ".."):
        return f"{name!r} names a directory above or at its place, not one of its own"
    for char in name:
        if char in "/\\":
            return f"it holds {char!r}, a path separator"
        if unicodedata.category(char) == "Cc" or char in _BIDI:
            return f"it holds the control character U+{ord(char):04X}"
    if name[0] in ".-":
        return f"it starts with {name[0]!r} (hidden, or read as an option by shell tools)"
    if name.casefold() in RUN_FILES:
        return f"{name!r} is the name of a run's own file"
    size = len(name.encode("utf-8", errors="surrogatepass"))
    if size > MAX_NAME:
        return f"it is {size} bytes long, more than {MAX_NAME}"
    return None


def segment(name: str, *, key: str, fix: str = "give it a plain name such as 'my-model'") -> str:
    """``name`` when it is one plain path segment (``unsafe``), else a ``ConfigError`` naming
    ``key`` (what to change) and ``fix``."""
    why = unsafe(name)
    if why is not None:
        shown = name if len(name) <= 40 else name[:40] + "..."
        raise ConfigError(
            f"{key} {shown!r} cannot name a directory of the run: {why}; {fix}", path=key
        )
    return name


_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._-]")


def results_dirname(label: str, *, key: str = "models[].name") -> str:
    """A model label as its directory name (``google/gemma`` -> ``google_gemma``), checked by
    ``segment``: ``..``, a hidden name or ``run.json`` is refused, never mapped."""
    for char in label:
        if unicodedata.category(char) == "Cc" or char in _BIDI:
            raise ConfigError(
                f"{key} {label[:40]!r} holds the control character U+{ord(char):04X}; "
                "give the model a plain 'name:'",
                path=key,
            )
    return segment(
        _UNSAFE_CHARS.sub("_", label),
        key=key,
        fix="give the model a plain 'name:' such as 'my-model' (characters other than letters, "
        "digits, '.', '_' and '-' become '_')",
    )
