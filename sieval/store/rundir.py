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
from .files import storage_error, write_atomic
from .identity import changed_inputs, fingerprint
from .paths import segment
from .records import SCHEMA_VERSION

__all__ = [
    "check_resume",
    "create_run_dir",
    "html_target",
    "new_run_dir",
    "read_run_json",
    "run_directory",
    "write_json",
    "write_new_file",
    "write_run_json",
]


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON, written atomically (``StorageError`` when it cannot be)."""
    write_atomic(path, msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n")


def new_run_dir(out: Path, name: str | None, identity: str) -> Path:
    """A fresh run directory under ``out`` (not created yet); refuses an ``out`` that is a file
    or cannot be written, and a ``name`` that is not one plain path segment."""
    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"--out {str(out)!r} is a file; pass a directory in which run directories are created",
            path="out",
        )
    _check_writable(out)
    if name is not None:
        path = out / segment(name, key="run name", fix="name the run directory plainly")
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


def _check_writable(out: Path) -> None:
    """Refuse, before any I/O, an ``out`` that cannot be created or written in (a read-only
    filesystem, no permission): its nearest existing directory is checked."""
    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
        why = "read-only filesystem" if _read_only(existing) else "permission denied"
        raise ConfigError(
            f"--out {str(out)!r} cannot be written ({existing}: {why}); choose a directory you "
            "can write with --out DIR (or 'out:' in the config)",
            path="out",
        )


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:  # pragma: no cover - statvfs of a directory that exists
        return False


def create_run_dir(run_dir: Path, *, fresh: bool) -> None:
    """Make the run directory (``fresh``: it must not exist yet: two runs never share one)."""
    try:
        run_dir.mkdir(parents=True, exist_ok=not fresh)
    except FileExistsError:
        raise ConfigError(
            f"run directory {str(run_dir)!r} already exists; use --resume {run_dir} to complete it",
            path="out",
        ) from None
    except OSError as exc:
        raise storage_error(exc, run_dir, doing="create the run directory") from None


def run_directory(path: Path, *, what: str = "run directory") -> Path:
    """``path`` when it is a directory; a run's file given instead (``RUN/run.json``) or a
    missing path is a ``ConfigError`` saying what to pass."""
    if path.is_dir():
        return path
    if path.is_file():
        hint = (
            f"; pass its directory: {path.parent}" if (path.parent / "run.json").is_file() else ""
        )
        raise ConfigError(f"{str(path)!r} is a file, not a {what}{hint}", path=str(path))
    raise ConfigError(
        f"{str(path)!r} does not exist; pass the {what} an earlier 'sieval eval' printed",
        path=str(path),
    )


def write_run_json(
    run_dir: Path,
    identity: str,
    inputs: Mapping[str, Any],
    config: Mapping[str, Any],
    serving: Mapping[str, Any] | None = None,
) -> None:
    """``config``: the run's config as plain data with no secret (``plan.run_config.stored``).
    ``serving``: each model's serving fingerprints (``serving/fingerprint_history.py``), kept
    beside the identity, never in it: a run made before them resumes as it did."""
    data = {
        "identity": identity,
        "inputs": inputs,
        "config": dict(config),
        "created": time.time(),
        "records_schema_version": SCHEMA_VERSION,
    }
    if serving:
        data["serving"] = dict(serving)
    write_json(run_dir / "run.json", data)


def read_run_json(run_dir: Path) -> dict[str, Any]:
    meta = run_directory(run_dir) / "run.json"
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


# -- the HTML report's target -----------------------------------------------------------------

HTML_FILE = "report.html"

HTML_MARK = b'<meta name="generator" content="sieval'
"""What the head of an HTML report sieval wrote holds (``report.html.j2``)."""


def html_target(path: Path, run_dir: Path, *, force: bool = False) -> Path:
    """Where ``--html PATH`` for the run ``run_dir`` writes: ``PATH``, or ``PATH/report.html``
    for a directory. Refused (``ConfigError``, before anything is written): any path inside a
    run directory except the reported run's own ``report.html`` (a run's records, config and
    report are never overwritten, ``--force`` or not); an existing file that is not an HTML
    report sieval wrote, unless ``force``; a directory where the file would go."""
    target = path / HTML_FILE if path.is_dir() else path
    resolved = target.resolve()  # a symbolic link to run.json is run.json
    holder = _enclosing_run(resolved.parent)
    if holder is not None and (resolved != holder / HTML_FILE or holder != run_dir.resolve()):
        mine = "" if holder == run_dir.resolve() else f" of another run ({holder})"
        raise ConfigError(
            f"--html {str(path)!r} is inside the run directory{mine}, whose files sieval never "
            f"overwrites; write the report as {run_dir / HTML_FILE} (--html {run_dir}) or "
            "outside any run directory",
            path="html",
        )
    if target.is_dir():
        raise ConfigError(
            f"--html {str(path)!r}: {target} is a directory; pass another path", path="html"
        )
    if target.exists() and not target.is_file():  # reading a pipe to see what it is never ends
        raise ConfigError(
            f"--html {str(path)!r}: {target} is not a regular file (a pipe, a socket or a "
            "device); pass a file path",
            path="html",
        )
    if target.exists() and not force and not _is_html_report(target):
        raise ConfigError(
            f"--html {str(path)!r}: {target} exists and is not an HTML report sieval wrote; "
            "pass --force to overwrite it, or choose another path",
            path="html",
        )
    return target


def write_new_file(path: Path, text: str, *, flag: str) -> None:
    """Write ``text`` to ``path``, a file that must not exist yet and must not be in a run
    directory (``ConfigError`` naming ``flag`` otherwise; nothing written). Created exclusively,
    so a file made meanwhile, or a dangling link into a run, is never written through."""
    holder = _enclosing_run(path.resolve().parent)
    if holder is not None:
        raise ConfigError(
            f"{flag} {str(path)!r} is inside the run directory {holder}, whose files sieval never "
            "overwrites; write it outside any run directory",
            path=flag,
        )
    try:
        with open(path, "x", encoding="utf-8") as file:
            file.write(text)
    except FileExistsError:
        raise ConfigError(f"{flag} {str(path)!r} exists; name a new file", path=flag) from None
    except OSError as exc:
        raise ConfigError(f"{flag} {str(path)!r}: cannot write it ({exc.strerror})") from exc


def _enclosing_run(directory: Path) -> Path | None:
    """The nearest of ``directory`` and its parents that is a run directory (holds run.json)."""
    for candidate in (directory, *directory.parents):
        if (candidate / "run.json").is_file():
            return candidate
    return None


def _is_html_report(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            return HTML_MARK in file.read(4096)
    except OSError:
        return False
