"""Results that travel: a finished run written in the shapes other tools read.

``export_run(RUN_DIR, FORMAT, DEST)`` reads the run once (``source.py``: ``report.json``,
``run.json``, the records) and hands it to the format's module, one module per format:

========== ================================================= ===========================
format     what is written                                   read back by
========== ================================================= ===========================
lm-eval    ``results_<stamp>.json``, ``samples_<task>_…``    lm-eval 0.4.13's readers
inspect    one ``.eval`` log per (model, task)               ``inspect_ai.log``, ``inspect view``
eee        Every Eval Ever aggregate + instance records       evaleval's validator
wandb      a W&B run, offline (``DEST/wandb/``)              ``wandb leet inspect``, ``wandb sync``
mlflow     an MLflow run in a local store (``DEST``)          ``MlflowClient``
========== ================================================= ===========================

Every figure is the report's (never recomputed); ``inspect``, ``wandb`` and ``mlflow`` write
through their libraries, an optional extra (``pip install 'sieval[export]'``): a missing one is
a ``ConfigError`` naming it before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from .extras import need
from .source import Source, load_source

__all__ = ["FORMATS", "export_run", "export_source"]

FORMATS: dict[str, str] = {
    "lm-eval": "lm-evaluation-harness 0.4.13 results and samples files",
    "inspect": "Inspect eval logs (.eval), one per model and task",
    "eee": "Every Eval Ever records (evaleval schema 0.3.0)",
    "wandb": "a W&B run, offline",
    "mlflow": "an MLflow run in a local store",
}
"""Each format's name (``--to``) and what it writes."""


def _writer(fmt: str) -> Callable[..., list[Path]]:
    if fmt == "lm-eval":
        from .lm_eval import export_lm_eval

        return export_lm_eval
    if fmt == "inspect":
        need("inspect_ai", "Inspect logs")
        from .inspect_log import export_inspect

        return export_inspect
    if fmt == "eee":
        from .every_eval_ever import export_every_eval_ever

        return export_every_eval_ever
    if fmt == "wandb":
        need("wandb", "W&B runs")
        from .wandb_run import export_wandb

        return export_wandb
    if fmt == "mlflow":
        need("mlflow", "MLflow runs")
        from .mlflow_run import export_mlflow

        return export_mlflow
    raise ConfigError(
        f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}", path="export"
    )


def default_dest(run_dir: Path, fmt: str) -> Path:
    """Where an export goes when no DEST is given: ``RUN_DIR/exports/<format>/``."""
    return run_dir / "exports" / fmt


def export_source(
    source: Source, fmt: str, dest: Path | None = None, *, html: Path | None = None
) -> list[Path]:
    """Write ``source`` as ``fmt`` under ``dest``; the paths written (or the run's directory
    of them: a W&B run, an MLflow store)."""
    writer = _writer(fmt)
    target = dest if dest is not None else default_dest(source.run_dir, fmt)
    if fmt in ("wandb", "mlflow"):
        return writer(source, target, html=html)
    return writer(source, target)


def export_run(
    run_dir: Path,
    fmt: str,
    dest: Path | None = None,
    *,
    html: Path | None = None,
    data_dir: Path | None = None,
) -> list[Path]:
    """Read the finished run at ``run_dir`` and write it as ``fmt`` (``FORMATS``)."""
    _writer(fmt)  # an unknown format or a missing library, before the run is read
    return export_source(load_source(run_dir, data_dir=data_dir), fmt, dest, html=html)
