"""A run's config as ``run.json`` keeps it: stored with no secret, loaded back for a resume.

``run.json`` (``store/rundir.py``) holds the resolved config, so ``sieval eval --resume RUN_DIR``
needs nothing else; keys are never in a config, and an endpoint's password is stored redacted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..store.rundir import read_run_json
from ..transport import REDACTED, redact_url
from .config import EvalConfig, check_config

__all__ = ["load_run_config", "stored"]


def stored(config: EvalConfig) -> dict[str, Any]:
    """``config`` as ``run.json`` keeps it: plain data, every endpoint's password redacted."""
    data: dict[str, Any] = msgspec.to_builtins(config)
    for model in data["models"]:
        model["endpoint"] = redact_url(model["endpoint"])
    return data


def load_run_config(
    run_dir: Path,
    *,
    endpoints: EvalConfig | None = None,
    contacts: bool = True,
    again: str = "sieval eval CONFIG --resume {run_dir}",
) -> EvalConfig:
    """The config a run was made with, from its ``run.json`` (``--resume`` without a config).

    ``run.json`` never stores an endpoint's password (it holds the URL redacted). A run that
    will contact the servers (``contacts``) takes such an endpoint from ``endpoints`` (the
    config file the user passes again: the model of the same label, at the same URL once
    redacted); without it the error names the command that works, ``again``. A reader that
    sends nothing (``finalize``) keeps the redacted URL."""
    raw = read_run_json(run_dir).get("config")
    if raw is None:
        raise ConfigError(
            f"{run_dir}/run.json predates stored configs; pass the config file too: "
            f"sieval eval CONFIG --resume {run_dir}",
            path="resume",
        )
    try:
        config = check_config(msgspec.convert(raw, EvalConfig), f"{run_dir}/run.json")
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{run_dir}/run.json: unreadable config ({exc})", path="resume") from exc
    hidden = [m for m in config.models if REDACTED in m.endpoint]
    if not hidden or not contacts:
        return config
    if endpoints is None:
        raise ConfigError(
            f"{run_dir}: the endpoint URL of model {hidden[0].label!r} holds a password, which "
            "run.json does not store; pass the config file the run was made with (it is read "
            f"for that URL only): {again.format(run_dir=run_dir)}",
            path="resume",
        )
    given = {m.label: m for m in endpoints.models}
    models = []
    for model in config.models:
        if model in hidden:
            mine = given.get(model.label)
            if mine is None or redact_url(mine.endpoint.rstrip("/")) != model.endpoint.rstrip("/"):
                raise ConfigError(
                    f"the config file has no model {model.label!r} at {model.endpoint} (the "
                    f"endpoint {run_dir} was made with, password hidden); pass the config file "
                    "the run was made with",
                    path="endpoint",
                )
            model = msgspec.structs.replace(model, endpoint=mine.endpoint)
        models.append(model)
    return msgspec.structs.replace(config, models=models)
