"""A W&B run of a sieval run, through ``wandb`` (an optional extra), offline by default.

One W&B run per sieval run (named by its identity): the config (the run's models and tasks as
``run.json`` keeps them, secrets never stored there), a summary with each (model, task, metric)'s
value, standard error and 95% interval bounds (``<model>/<task>/<metric>``, ``…/se``,
``…/ci_low``, ``…/ci_high``, ``…/n``, and ``…/shots``), the per-sample table (``samples``: model,
task, sample id, status, prediction, gold, each metric, the replica that answered), and the
HTML report as an artifact of type ``sieval-report`` when one is given.

``mode="offline"`` writes under ``DEST/wandb/`` and sends nothing (``wandb sync`` uploads it
later); the mode is the caller's (``WANDB_MODE`` is not read here, so a test never uploads).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .extras import need
from .source import Source

__all__ = ["export_wandb", "sample_rows", "summary"]


def summary(source: Source) -> dict[str, Any]:
    """Each metric's figures, keyed ``<model>/<task>/<metric>[/se|ci_low|ci_high|n]``."""
    out: dict[str, Any] = {}
    for unit in source.units:
        base = f"{unit.model}/{unit.task}"
        out[f"{base}/shots"] = unit.shots
        for metric, value in unit.scalar_metrics().items():
            key = f"{base}/{metric}"
            out[key] = value
            spread = unit.spread(metric)
            if isinstance(spread.get("se"), int | float):
                out[f"{key}/se"] = float(spread["se"])
            ci = spread.get("ci")
            if isinstance(ci, list) and len(ci) == 2 and None not in ci:
                out[f"{key}/ci_low"], out[f"{key}/ci_high"] = float(ci[0]), float(ci[1])
            if isinstance(spread.get("n"), int):
                out[f"{key}/n"] = int(spread["n"])
    return out


def sample_rows(source: Source) -> tuple[list[str], list[list[Any]]]:
    """The per-sample table: its columns and rows (metric columns: every metric of the run)."""
    metrics = list(
        dict.fromkeys(m for u in source.units for s in u.samples for m in u.sample_metrics(s))
    )
    columns = ["model", "task", "sample_id", "status", "prediction", "gold", *metrics, "replica"]
    rows = []
    for unit in source.units:
        for sample in unit.samples:
            r, figures = sample.record, unit.sample_metrics(sample)
            rows.append(
                [
                    unit.model,
                    unit.task,
                    r.sample_id,
                    r.status,
                    _text(r.prediction),
                    _text(r.gold),
                    *[figures.get(m) for m in metrics],
                    ", ".join(sample.replicas),
                ]
            )
    return columns, rows


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def export_wandb(
    source: Source,
    dest: Path,
    *,
    html: Path | None = None,
    project: str = "sieval",
    mode: str = "offline",
) -> list[Path]:
    need("wandb", "W&B runs")
    import wandb

    dest.mkdir(parents=True, exist_ok=True)
    run_id = source.identity.removeprefix("sha256:")[:16]
    run = wandb.init(
        project=project,
        name=f"sieval {run_id[:12]}",
        id=run_id,
        dir=str(dest),
        mode=mode,  # type: ignore[arg-type]
        config={
            "sieval": {
                "run": source.identity,
                "version": source.version,
                **source.run.get("config", {}),
            }
        },
        settings=wandb.Settings(silent=True, console="off", x_disable_stats=True),
        reinit="create_new",
    )
    try:
        figures = summary(source)
        run.log(figures)
        for key, value in figures.items():
            run.summary[key] = value
        columns, rows = sample_rows(source)
        run.log({"samples": wandb.Table(columns=list[str | int](columns), data=rows)})
        if html is not None:
            artifact = wandb.Artifact(name=f"sieval-report-{run_id}", type="sieval-report")
            artifact.add_file(str(html), name="report.html")
            run.log_artifact(artifact)
    finally:
        run.finish()
    return sorted((dest / "wandb").glob(f"*-{run_id}"))
