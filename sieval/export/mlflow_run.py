"""An MLflow run of a sieval run, through ``mlflow`` (an optional extra): a local store by default.

One MLflow run (named by the run identity, in the experiment ``sieval``): the params (each
model's id, dialect and endpoint, each task's shots, n and seed: MLflow params are short
strings), the metrics with their intervals (``<model>.<task>.<metric>`` and ``….se``,
``….ci_low``, ``….ci_high``: MLflow's metric names allow no ``/`` in a file store), the
per-sample table (``samples.json``, MLflow's ``log_table`` form), ``report.json`` and ``run.json``
as artifacts, and the HTML report when one is given. The tracking URI is the caller's; by
default MLflow's local store in ``DEST``: its SQLite database ``DEST/mlflow.db`` (MLflow 3 keeps
its file store only in maintenance mode) and the artifacts under ``DEST/artifacts/``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .extras import need
from .source import Source
from .wandb_run import sample_rows

__all__ = ["export_mlflow", "metric_key"]

_UNSAFE = re.compile(r"[^0-9A-Za-z_\-. ]")


def metric_key(*parts: str) -> str:
    """An MLflow-safe metric or param name from ``parts``."""
    return ".".join(_UNSAFE.sub("_", p) for p in parts)


def export_mlflow(
    source: Source,
    dest: Path,
    *,
    html: Path | None = None,
    tracking_uri: str | None = None,
    experiment: str = "sieval",
) -> list[Path]:
    need("mlflow", "MLflow runs")
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    dest.mkdir(parents=True, exist_ok=True)
    uri = tracking_uri or f"sqlite:///{(dest / 'mlflow.db').resolve()}"
    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    experiment_id = (
        found.experiment_id
        if found
        else client.create_experiment(
            experiment, artifact_location=(dest / "artifacts").resolve().as_uri()
        )
    )
    run = client.create_run(
        experiment_id,
        run_name=f"sieval {source.identity.removeprefix('sha256:')[:12]}",
        tags={"sieval.run": source.identity, "sieval.version": source.version},
    )
    run_id = run.info.run_id
    try:
        now = int(source.started * 1000)
        client.log_batch(
            run_id,
            metrics=[Metric(k, v, now, 0) for k, v in _metrics(source).items()],
            params=[Param(k, str(v)) for k, v in _params(source).items()],
        )
        columns, rows = sample_rows(source)
        client.log_table(
            run_id,
            data={c: [r[i] for r in rows] for i, c in enumerate(columns)},
            artifact_file="samples.json",
        )
        for name in ("report.json", "run.json"):
            if (source.run_dir / name).is_file():
                client.log_artifact(run_id, str(source.run_dir / name))
        if html is not None:
            client.log_artifact(run_id, str(html))
        client.set_terminated(run_id, "FINISHED")
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    return [dest]


def _params(source: Source) -> dict[str, Any]:
    params: dict[str, Any] = {"sieval.run": source.identity}
    for model in source.models():
        provenance = source.provenance(model)
        params[metric_key(model, "model_id")] = source.model_id(model)
        params[metric_key(model, "dialect")] = provenance.get("dialect") or ""
        params[metric_key(model, "endpoint")] = provenance.get("endpoint") or ""
    for unit in source.units:
        config = source.task_config(unit.task)
        params[metric_key(unit.task, "shots")] = "" if unit.shots is None else unit.shots
        params[metric_key(unit.task, "n")] = config.get("n") or ""
        params[metric_key(unit.task, "seed")] = config.get("seed") or ""
    return params


def _metrics(source: Source) -> dict[str, float]:
    out: dict[str, float] = {}
    for unit in source.units:
        for metric, value in unit.scalar_metrics().items():
            key = metric_key(unit.model, unit.task, metric)
            out[key] = value
            spread = unit.spread(metric)
            if isinstance(spread.get("se"), int | float):
                out[f"{key}.se"] = float(spread["se"])
            ci = spread.get("ci")
            if isinstance(ci, list) and len(ci) == 2 and None not in ci:
                out[f"{key}.ci_low"], out[f"{key}.ci_high"] = float(ci[0]), float(ci[1])
    return out
