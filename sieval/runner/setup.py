"""A run's setup: reach every model's server, check it, and build the models the run sends through.

``set_up`` does, before the run directory exists (any failure is a ``ConfigError`` and nothing is
written): each model's URL check, then the embedded reference servers started, then the run's
endpoints (``endpoints.py``: one budget and one pool per server), then per model in config order
the pre-flight (``preflight.py``), the embedded model's id, the facts its tasks need from the
server's tokenizer, the pre-run checks (``checks.py``) and the serving checks (``serving/``).
Every request of the setup goes through the endpoint's pool, as the run's will, but the serving
checks' (their batch probe's copies must reach the server at once, whatever its budget);
``Setup.model`` builds a model on it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..model import Model
from ..plan.config import EMBEDDED, ModelConfig
from ..plan.plan import Plan, PlannedModel
from ..serving import Serving, parse_selection
from ..serving.across_runs import report_section
from ..serving.in_eval import serving_for
from ..settings import named, setting
from ..tasks.base import ModelFacts
from ..transport import Limits, Timeouts, Transport, redact_url
from .checks import (
    CheckResult,
    Primed,
    check_endpoint,
    check_model,
    failure,
    resolve_documents,
    resolve_token_ids,
    run_checks,
)
from .endpoints import Endpoints
from .preflight import PREFLIGHT_TIMEOUTS, Provenance, embedded_server, preflight
from .replicas import check_replicas

__all__ = ["Setup", "TransportFactory", "set_up"]

TransportFactory = Callable[[ModelConfig], Transport]
"""A test seam: the transport of a model (a ``FakeTransport``) instead of its endpoint's."""


@dataclass
class Setup:
    """What the setup found and holds, per model label."""

    endpoints: Endpoints
    urls: dict[str, str] = field(default_factory=dict)
    """The base URL each model is reached at (the embedded server's, once started)."""
    transports: dict[str, Transport] = field(default_factory=dict)
    """The test seam's transports; a model without one sends through its endpoint's pool."""
    provenance: dict[str, Provenance] = field(default_factory=dict)
    checks: dict[str, list[CheckResult]] = field(default_factory=dict)
    facts: dict[str, ModelFacts] = field(default_factory=dict)
    primed: dict[str, Primed] = field(default_factory=dict)
    serving: dict[str, Serving] = field(default_factory=dict)
    """What the serving checks found (none with the pre-run checks off)."""

    def as_data(self) -> dict[str, Any]:
        """What the setup found, as plain data (``RunResult.setup``)."""
        return {
            "provenance": {label: msgspec.to_builtins(p) for label, p in self.provenance.items()},
            "facts": {label: msgspec.to_builtins(f) for label, f in self.facts.items()},
            "checks": {label: msgspec.to_builtins(c) for label, c in self.checks.items()},
            "serving": report_section(self.serving),
        }

    def model(self, pm: PlannedModel, *, wire_log: Path | None = None) -> Model:
        """``pm``'s model: its retries, timeouts and request defaults, on its endpoint's pool."""
        cfg = pm.config
        timeouts = _timeouts(cfg.timeout_s)
        transport = self.transports.get(pm.label) or self.endpoints[pm.label].transport(
            limits=Limits(
                retries=cfg.retries,
                retry_after_max_s=cfg.retry_after_max_s,
                outage_s=cfg.outage_s,
                max_reply_bytes=cfg.max_reply_bytes,
            ),
            timeouts=timeouts,
            wire_log=wire_log,
        )
        return Model(
            dialect=pm.dialect,
            base_url=self.urls[pm.label],
            model_id=cfg.model,
            api_key=pm.api_key,
            auth=pm.auth,
            timeouts=timeouts,
            request_defaults=cfg.request_defaults,
            transport=transport,
        )


async def set_up(
    plan: Plan,
    stack: contextlib.AsyncExitStack,
    *,
    preflight_checks: bool,
    keep_primed: bool,
    first_request: bool = True,
    transport_factory: TransportFactory | None,
    serving_checks: str = "auto",
    concurrency: int = 1,
    stage: Callable[[str], None],
) -> Setup:
    """Reach and check every model's server (``stack`` holds the embedded servers and the
    endpoints' pools until the run ends). ``keep_primed``: the checks' answered sample requests
    are kept for the run to use instead of sending them again (not with a wire log, which holds
    every request the run sent). Without ``first_request`` (``--dry-run``) a server that lists no
    models is not sent a first request to check the model id: nothing but read-only routes.
    ``serving_checks`` (``--serving-checks``) at the run's ``concurrency``: none without
    ``preflight_checks``."""
    selection = parse_selection(serving_checks if preflight_checks else "off")
    urls: dict[str, str] = {}
    for pm in plan.models:
        url_check = check_endpoint(pm)
        if preflight_checks and url_check.outcome == "failed":
            raise failure(pm, url_check)
        if pm.config.endpoint == EMBEDDED:
            stage("starting the embedded reference server")
            urls[pm.label] = await stack.enter_async_context(embedded_server())
    endpoints = Endpoints(plan.models)
    stack.push_async_callback(endpoints.aclose)  # closed before the servers stop
    setup = Setup(endpoints)
    for pm in plan.models:
        cfg = pm.config
        if cfg.endpoint == EMBEDDED:
            setup.urls[pm.label] = urls[pm.label]
        else:
            setup.urls[pm.label] = cfg.base_url
            stage(f"reaching {redact_url(cfg.base_url)} ({pm.dialect.id})")
        if transport_factory is not None:
            setup.transports[pm.label] = transport_factory(cfg)
        found = await preflight(
            setup.urls[pm.label],
            dialect=pm.dialect,
            api_key=pm.api_key,
            auth=pm.auth,
            transport=setup.transports.get(pm.label)
            or endpoints[pm.label].transport(limits=Limits(retries=0), timeouts=PREFLIGHT_TIMEOUTS),
            shown=EMBEDDED if cfg.endpoint == EMBEDDED else None,
            model_id=cfg.model if first_request else None,
        )
        setup.provenance[pm.label] = found
        endpoints.notes += await check_replicas(
            pm,
            endpoints[pm.label],
            fingerprints=preflight_checks,
            first_request=first_request,
            stage=stage,
        )  # a model on several replicas: each reached and fingerprinted, or the run stops
        if cfg.endpoint == EMBEDDED:  # one id only, --no-preflight or not
            served = check_model(pm, found)
            if served.outcome == "failed":
                raise ConfigError(
                    f"the embedded reference server does not serve model {cfg.model!r}; "
                    f"it serves only {', '.join(found.served_models)}: leave "
                    f"{named('model')} out, or set {setting('endpoint', 'URL')} to the "
                    "server that serves it",
                    path="model",
                )
        setup.primed[pm.label] = {}
        setup.facts[pm.label], checked = await _facts_and_checks(
            pm,
            plan,
            setup,
            preflight_checks,
            stage,
            setup.primed[pm.label] if keep_primed else None,
        )
        if checked is not None:
            setup.checks[pm.label] = checked
        setup.serving[pm.label] = await serving_for(
            pm,
            plan,
            setup.urls[pm.label],
            setup.transports.get(pm.label),
            setup.facts[pm.label],
            selection=selection,
            concurrency=concurrency,
            stage=stage,
        )
    return setup


async def _facts_and_checks(
    pm: PlannedModel,
    plan: Plan,
    setup: Setup,
    preflight: bool,
    stage: Callable[[str], None],
    primed: Primed | None,
) -> tuple[ModelFacts, list[CheckResult] | None]:
    """The model's facts (with the token ids its tasks asked for, read from the server's
    tokenizer) and, unless skipped, the pre-run checks, through a short-lived Model like the
    run's own."""
    model = setup.model(pm)
    provenance = setup.provenance
    try:
        facts = pm.facts
        texts = [t for pt in plan.tasks for t in getattr(pt.task, "token_texts", _none)(pt.config)]
        if texts and "candidate_scoring" in facts.capabilities:
            stage(f"reading the token ids of {len(texts)} task texts from {pm.label}'s tokenizer")
            ids = await resolve_token_ids(model, texts)
            facts = msgspec.structs.replace(facts, token_ids=ids)
        docs = [
            t
            for pt in plan.tasks
            for t in getattr(pt.task, "documents", _none)(pt.samples, pt.config)
        ]
        if docs:  # rolling log-likelihood: whole documents through the server's tokenizer
            stage(f"tokenizing {len(docs)} documents through {pm.label}'s tokenizer")
            length = provenance[pm.label].max_model_len.get(pm.config.model)
            facts = msgspec.structs.replace(facts, **await resolve_documents(model, docs, length))
        if not preflight:
            return facts, None
        stage(f"pre-run checks for {pm.label} (skip with --no-preflight)")
        return facts, await run_checks(model, pm, plan.tasks, provenance[pm.label], facts, primed)
    finally:
        if pm.label not in setup.transports:  # a shared test transport outlives the checks
            await model.aclose()


def _none(*_: Any) -> tuple[str, ...]:
    return ()


def _timeouts(timeout_s: float) -> Timeouts:
    return Timeouts(total=timeout_s, connect=min(10.0, timeout_s), read=min(300.0, timeout_s))
