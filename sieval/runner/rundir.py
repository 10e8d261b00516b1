"""The run directory: where a run is created, what ``run.json`` keeps, and what a resume checks.

``run.json`` holds the run identity, the inputs it hashes, and the resolved config (secret-free:
keys are never in a config, endpoint passwords are redacted), so ``sieval eval --resume RUN_DIR``
needs nothing else. A resume may run a subset of the run's models and tasks; it is refused when
anything that can change a score differs for what it runs, with one line per change (a task's
data files count as one line, not a checksum each).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..transport import REDACTED, redact_url
from .config import EvalConfig
from .identity import changed_inputs, fingerprint
from .records import SCHEMA_VERSION

__all__ = [
    "check_resume",
    "load_run_config",
    "new_run_dir",
    "read_run_json",
    "write_json",
    "write_run_json",
]


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON, written atomically."""
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n")
    os.replace(tmp, path)


def new_run_dir(out: Path, name: str | None, identity: str) -> Path:
    """A fresh run directory under ``out`` (not created yet); refuses an ``out`` that is a file."""
    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"--out {str(out)!r} is a file; pass a directory in which run directories are created",
            path="out",
        )
    if name:
        path = out / name
        if path.exists():
            raise ConfigError(
                f"run directory {str(path)!r} already exists; use --resume {path} to complete it",
                path="out",
            )
        return path
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = f"{stamp}-{identity.removeprefix('sha256:')[:8]}"
    path, i = out / base, 1
    while path.exists():
        i += 1
        path = out / f"{base}-{i}"
    return path


def write_run_json(
    run_dir: Path, identity: str, inputs: Mapping[str, Any], config: EvalConfig
) -> None:
    write_json(
        run_dir / "run.json",
        {
            "identity": identity,
            "inputs": inputs,
            "config": _safe_config(config),
            "created": time.time(),
            "records_schema_version": SCHEMA_VERSION,
        },
    )


def _safe_config(config: EvalConfig) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(config)
    for model in data["models"]:
        model["endpoint"] = redact_url(model["endpoint"])
    return data


def read_run_json(run_dir: Path) -> dict[str, Any]:
    meta = run_dir / "run.json"
    if not meta.is_file():
        raise ConfigError(
            f"{str(run_dir)!r} is not a sieval run directory (no run.json); pass the directory "
            "an earlier 'sieval eval' printed",
            path="resume",
        )
    try:
        stored = msgspec.json.decode(meta.read_bytes())
        if not isinstance(stored, dict) or "identity" not in stored or "inputs" not in stored:
            raise TypeError("identity or inputs missing")
    except (msgspec.DecodeError, TypeError) as exc:
        raise ConfigError(f"{meta}: unreadable run metadata ({exc})", path="resume") from exc
    return stored


def load_run_config(run_dir: Path) -> EvalConfig:
    """The config a run was made with, from its ``run.json`` (``--resume`` without a config)."""
    stored = read_run_json(run_dir)
    raw = stored.get("config")
    if raw is None:
        raise ConfigError(
            f"{run_dir}/run.json predates stored configs; pass the config file too: "
            f"sieval eval CONFIG --resume {run_dir}",
            path="resume",
        )
    if any(REDACTED in str(m.get("endpoint", "")) for m in raw.get("models", [])):
        raise ConfigError(
            f"{run_dir}: an endpoint URL held a password, which was not stored; pass the config "
            f"file too: sieval eval CONFIG --resume {run_dir}",
            path="resume",
        )
    try:
        return msgspec.convert(raw, EvalConfig)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{run_dir}/run.json: unreadable config ({exc})", path="resume") from exc


def check_resume(run_dir: Path, identity: str, inputs: Mapping[str, Any]) -> None:
    """Refuse a resume whose inputs differ from the run's for what it runs (a subset is fine)."""
    stored = read_run_json(run_dir)
    old_identity, old_inputs = stored["identity"], stored["inputs"]
    if old_identity == identity:
        return
    if fingerprint(old_inputs) != old_identity:
        raise ConfigError(
            f"cannot resume {str(run_dir)!r}: run.json was edited (its identity does not match "
            "its inputs); start a fresh run",
            path="resume",
        )
    subset = _restrict(old_inputs, inputs)
    changes = _summarise(changed_inputs(subset, inputs))
    if not changes:
        return
    shown = changes[:8] + ([f"... and {len(changes) - 8} more"] if len(changes) > 8 else [])
    raise ConfigError(
        f"cannot resume {str(run_dir)!r}: what can change a score differs from the run's:\n  "
        + "\n  ".join(shown)
        + "\nstart a fresh run, or resume with the run's own config (sieval eval --resume DIR)",
        path="resume",
    )


def _restrict(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """``old`` with only the models and tasks ``new`` has (a resume of a subset)."""
    out = dict(old)
    for key in ("models", "tasks"):
        if isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            out[key] = {k: v for k, v in old[key].items() if k in new[key]}
    return out


def _summarise(lines: list[str]) -> list[str]:
    """One line per task for changed data files (``tasks.mmlu.data: 57 files changed``)."""
    out: list[str] = []
    data: dict[str, int] = {}
    for line in lines:
        head, sep, _ = line.partition(".data.")
        if sep and head.startswith("tasks."):
            data[head] = data.get(head, 0) + 1
        else:
            out.append(line)
    out += [f"{head}.data: {n} file{'s' if n > 1 else ''} changed" for head, n in data.items()]
    return out
