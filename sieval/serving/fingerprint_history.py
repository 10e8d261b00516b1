"""Fingerprints across runs: where a run keeps them, and a resume onto other numerics refused.

``run.json`` keeps, beside the identity hash (which they never enter, so a run made before them
still resumes), ``serving: {model label: [fingerprint, ...]}``: the fingerprint the run began
with, then each one a resume accepted. A resume takes a new fingerprint and compares it with the
run's last: another engine, model, dtype, server setting or probe numerics would merge two
numerics into one figure, so it is refused, naming what changed and the flag that accepts it
(``--accept-numerics-change``); accepted, the run records both.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..store.rundir import read_run_json, write_json
from .fingerprint import Fingerprint, compare, plainly
from .suite import Serving

__all__ = [
    "ACCEPT_FLAG",
    "RUN_KEY",
    "check_numerics",
    "report_section",
    "run_json_entry",
    "stored_fingerprints",
]

RUN_KEY = "serving"
ACCEPT_FLAG = "--accept-numerics-change"


def run_json_entry(serving: Mapping[str, Serving]) -> dict[str, list[Any]]:
    """What a new run's ``run.json`` keeps: each model's fingerprint (when one was taken)."""
    return {
        label: [msgspec.to_builtins(s.fingerprint)]
        for label, s in serving.items()
        if s.fingerprint is not None
    }


def stored_fingerprints(run: Mapping[str, Any]) -> dict[str, list[Fingerprint]]:
    """A run's fingerprints by model label, from its ``run.json`` (or ``report.json``) data; a
    run made before fingerprints has none."""
    raw = run.get(RUN_KEY)
    if not isinstance(raw, dict):
        return {}
    out: dict[str, list[Fingerprint]] = {}
    for label, items in raw.items():
        if isinstance(items, list):
            try:
                out[str(label)] = [msgspec.convert(x, Fingerprint) for x in items]
            except msgspec.ValidationError:
                continue
    return out


def _changes(old: Fingerprint, new: Fingerprint) -> list[str]:
    return [line for line in compare(old, new) if "not comparable" not in line]


def check_numerics(
    run_dir: Path, serving: Mapping[str, Serving], *, accept: bool, write: bool = True
) -> list[str]:
    """Compare each model's new fingerprint with the run's last one. A change is a
    ``ConfigError`` naming it, unless ``accept``: then the new fingerprint is appended to
    ``run.json`` (unless not ``write``) and a note says the run spans both. Returns notes."""
    run = read_run_json(run_dir)
    before = stored_fingerprints(run)
    notes: list[str] = []
    changed: dict[str, list[str]] = {}
    for label, found in serving.items():
        if found.fingerprint is None:
            continue
        kept = before.get(label)
        if not kept:
            notes.append(
                f"{label}: the run holds no serving fingerprint (made before sieval took one, or "
                "with the serving checks off): its numerics are not compared"
            )
            continue
        lines = _changes(kept[-1], found.fingerprint)
        if lines:
            changed[label] = lines
    if not changed:
        return notes
    said = "\n".join(
        f"  {label}: the numerics differ ({plainly(lines)}):\n    " + "\n    ".join(lines)
        for label, lines in changed.items()
    )
    if not accept:
        raise ConfigError(
            f"cannot resume {str(run_dir)!r}: the server now computes other numbers than the "
            f"run was made with:\n{said}\nresuming would merge two numerics into one figure: "
            f"start a fresh run, or pass {ACCEPT_FLAG} to resume anyway (the run then records "
            "both fingerprints and its report says it spans them)",
            path="resume",
        )
    raw = dict(run.get(RUN_KEY) or {})
    for label in changed:
        fingerprint = serving[label].fingerprint
        raw[label] = [*raw.get(label, []), msgspec.to_builtins(fingerprint)]
        notes.append(
            f"{label}: resumed onto other numerics ({ACCEPT_FLAG}): the run now spans "
            f"{len(raw[label])} serving fingerprints ({plainly(changed[label])}); its figures "
            "mix them"
        )
    if write:
        write_json(run_dir / "run.json", {**run, RUN_KEY: raw})
    return notes


def report_section(
    serving: Mapping[str, Serving], run_dir: Path | None = None
) -> dict[str, dict[str, Any]]:
    """``report.json``'s ``serving``: per model what the checks found, what they cost, and how
    many fingerprints the run spans (from ``run.json``)."""
    spans: dict[str, list[Fingerprint]] = {}
    if run_dir is not None:
        try:
            spans = stored_fingerprints(read_run_json(run_dir))
        except ConfigError:
            spans = {}
    out: dict[str, dict[str, Any]] = {}
    for label, found in serving.items():
        if not found.checks and found.fingerprint is None:
            continue  # the checks were off for this model
        entry: dict[str, Any] = msgspec.to_builtins(found)
        kept = spans.get(label, [])
        entry["fingerprints"] = len(kept) or (1 if found.fingerprint is not None else 0)
        if len(kept) > 1:
            entry["spans"] = [fp.headline() for fp in kept]
        out[label] = entry
    return out
