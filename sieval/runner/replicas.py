"""A model served by several replicas, checked before the run: each reached, each serving the
model, each fingerprinted; replicas whose fingerprints differ are refused before the first sample.

``check_replicas`` runs in the setup, after the model's own pre-flight: every replica's
pre-flight (the listing names the model), then, with the pre-run checks on, each one's serving
fingerprint (``serving.measure_fingerprint``: engine, version, the model as listed, and the
greedy probe's numbers, twice). Two replicas differ when ``serving.compare`` finds a line between
them (another engine or version, another model or setting, numbers moved past their own noise);
the run then stops with a ``ConfigError`` naming both replicas and what differs, unless the entry
sets ``allow_mixed_replicas``, which the run's warnings (and so its report) name instead.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ConfigError
from ..model import Model
from ..plan.plan import PlannedModel
from ..plan.urls import base_url
from ..serving import Fingerprint, compare
from ..serving.suite import measure_fingerprint
from ..setting_names import setting
from ..transport import HttpTransport, Limits, redact_url
from .checks import check_model
from .endpoints import Endpoint
from .preflight import PREFLIGHT_TIMEOUTS, preflight

__all__ = ["check_replicas"]


async def check_replicas(
    pm: PlannedModel,
    endpoint: Endpoint,
    *,
    fingerprints: bool,
    first_request: bool,
    stage: Callable[[str], None],
) -> list[str]:
    """Check every replica of ``pm`` (nothing for one endpoint); the notes the run keeps."""
    cfg = pm.config
    if len(cfg.replicas) < 2:
        return []
    secrets = (pm.api_key,) if pm.api_key else ()
    found: list[tuple[str, Fingerprint]] = []
    for url in cfg.replicas:
        base = base_url(url)
        shown = redact_url(base, secrets)
        stage(f"reaching replica {shown} of {pm.label} ({pm.dialect.id})")
        reached = await preflight(
            base,
            dialect=pm.dialect,
            api_key=pm.api_key,
            auth=pm.auth,
            transport=HttpTransport(
                limits=Limits(retries=0), timeouts=PREFLIGHT_TIMEOUTS, pool=endpoint.pool
            ),
            model_id=cfg.model if first_request else None,
        )
        served = check_model(pm, reached)
        if served.outcome == "failed":
            raise ConfigError(
                f"model {pm.label!r}: replica {shown} does not serve it ({served.detail}); every "
                "replica must serve the same model",
                path="endpoint",
            )
        if not fingerprints:
            continue
        stage(f"fingerprinting replica {shown} of {pm.label}")
        model = Model(
            dialect=pm.dialect,
            base_url=base,
            model_id=cfg.model,
            api_key=pm.api_key,
            auth=pm.auth,
            request_defaults=cfg.request_defaults,
            transport=HttpTransport(limits=Limits(retries=cfg.retries), pool=endpoint.pool),
        )
        try:
            found.append((shown, await measure_fingerprint(model)))
        finally:
            await model.aclose()
    if not fingerprints:
        return [
            f"model {pm.label!r}: its {len(cfg.replicas)} replicas were reached but not "
            "fingerprinted (the pre-run checks are off): nothing says they serve the same numbers"
        ]
    (first, mine), others = found[0], found[1:]
    differ = [(shown, lines) for shown, other in others if (lines := compare(mine, other))]
    if not differ:
        return [
            f"model {pm.label!r}: {len(found)} replicas, one serving fingerprint "
            f"({mine.headline()})"
        ]
    said = "; ".join(f"{first} -> {shown}: {', '.join(lines)}" for shown, lines in differ)
    if not cfg.allow_mixed_replicas:
        raise ConfigError(
            f"model {pm.label!r}: its replicas serve different numbers ({said}), so which one "
            "answered would change the scores; serve one build, model and dtype on every "
            f"replica, or set {setting('allow_mixed_replicas', 'true')} to run on them anyway",
            path="allow_mixed_replicas",
        )
    return [
        f"model {pm.label!r} runs on replicas whose serving fingerprints differ "
        f"(allow_mixed_replicas): {said}; its figures mix them, and each record names the "
        "replica that answered"
    ]
