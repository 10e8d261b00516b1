"""A run's setup: reach every model's server, check it, and build the models the run sends through.

``set_up`` does, before the run directory exists (any failure is a ``ConfigError`` and nothing is
written): each model's URL check, then the embedded reference servers started, then the run's
endpoints (``endpoints.py``: one budget and one pool per server), then per model in config order
the pre-flight (``preflight.py``), the embedded model's id, the facts its tasks need from the
server's tokenizer, the pre-run checks (``checks.py``) and the serving checks (``serving/``).
Every request of the setup goes through the endpoint's pool, as the run's will, but the serving
checks' (their batch probe's copies must reach the server at once, whatever its budget);
``Setup.model`` builds a model on it.

A role's model (``roles:``, a judge) is set up like the evaluated models, after them: reached,
pre-flighted, its id and the URL checked, serving-checked on the calls the tasks make in its
role; the sample-reading checks (top-k, context, BOS) read the evaluated model's requests and
are not its. Any failure of its setup stops the run before the first sample, naming the role.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ..cost.forecast import Forecast
from ..errors import ConfigError
from ..model import Model
from ..plan.config import EMBEDDED, ModelConfig
from ..plan.plan import Plan, PlannedModel
from ..serving import Serving, parse_selection
from ..serving.eval_checks import serving_for
from ..serving.fingerprint_history import report_section
from ..setting_names import named, setting
from ..tasks.base import ModelFacts, chat_facts
from ..transport import Limits, Transport, redact_url
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
from .reply_cache import ReplyCache
from .tokenizer import ServedTokenizer

__all__ = ["Found", "Setup", "TransportFactory", "set_up"]

TOKENIZE_TIMEOUT_S = 60.0
"""The most a tokenize request of the forecast may take (a model's ``timeout_s`` when less)."""

TransportFactory = Callable[[ModelConfig], Transport]
"""A test seam: the transport of a model (a ``FakeTransport``) instead of its endpoint's."""


class Found(msgspec.Struct, kw_only=True):
    """What a run's setup found, per model label: ``RunResult.setup``, and ``plan.json``'s
    ``setup`` (what a planned run's shards and ``finalize`` take from the plan's checks)."""

    provenance: dict[str, Provenance] = msgspec.field(default_factory=dict)
    facts: dict[str, ModelFacts] = msgspec.field(default_factory=dict)
    checks: dict[str, list[CheckResult]] = msgspec.field(default_factory=dict)
    serving: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    """What the serving checks found (``serving.fingerprint_history.report_section``)."""
    forecast: Forecast | UnsetType = UNSET
    """The run's forecast, when it made one."""

    def preflight(self) -> dict[str, list[dict[str, Any]]]:
        """The checks as ``report.json``'s ``preflight`` keeps them: plain data."""
        return {label: msgspec.to_builtins(found) for label, found in self.checks.items()}


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
    caches: dict[str, ReplyCache] = field(default_factory=dict)
    """The models whose replies go through ``--cache`` (those with a serving fingerprint)."""

    def found(self) -> Found:
        """What the setup found (``RunResult.setup``, ``plan.json``'s ``setup``)."""
        return Found(
            provenance=dict(self.provenance),
            facts=dict(self.facts),
            checks=dict(self.checks),
            serving=report_section(self.serving),
        )

    def contexts(self, models: Sequence[PlannedModel]) -> dict[str, int | None]:
        """Each model's maximum model length (prompt and output tokens), where its server says
        one (else the dialect's), by label: what the forecast holds the longest prompt to."""
        out: dict[str, int | None] = {}
        for pm in models:
            found = self.provenance.get(pm.label)
            lengths = found.max_model_len if found is not None else {}
            out[pm.label] = lengths.get(pm.config.model, self.facts[pm.label].max_length)
        return out

    def model(
        self, pm: PlannedModel, *, wire_log: Path | None = None, cache: Path | None = None
    ) -> Model:
        """``pm``'s model: its retries, timeouts, request defaults and overrides, on its
        endpoint's pool; with ``cache``, its replies kept and answered there under its serving
        fingerprint (none without one)."""
        timeouts = pm.timeouts()
        transport: Transport = self.transports.get(pm.label) or self.endpoints[pm.label].transport(
            limits=pm.limits(), timeouts=timeouts, wire_log=wire_log
        )
        found = self.serving.get(pm.label)
        fingerprint = found.fingerprint if found is not None else None
        if cache is not None and fingerprint is not None and fingerprint.digest:
            transport = self.caches[pm.label] = ReplyCache(transport, cache, fingerprint)
        return pm.model(self.urls[pm.label], transport, timeouts)

    @contextlib.asynccontextmanager
    async def tokenizing(self, models: Sequence[PlannedModel]) -> AsyncIterator[dict[str, Model]]:
        """A model per label for tokenize requests only (the forecast's), like the pre-run
        checks' own, on the endpoint's pool; closed when the block ends."""
        made = {}
        for pm in models:
            timeouts = pm.timeouts(most_s=TOKENIZE_TIMEOUT_S)
            transport = self.transports.get(pm.label) or self.endpoints[pm.label].transport(
                limits=pm.limits(), timeouts=timeouts
            )
            made[pm.label] = pm.model(self.urls[pm.label], transport, timeouts)
        try:
            yield made
        finally:
            for label, model in made.items():
                if label not in self.transports:  # a shared test transport outlives the forecast
                    await model.aclose()


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
    every = [*plan.models, *plan.role_models]
    for pm in every:
        url_check = check_endpoint(pm)
        if preflight_checks and url_check.outcome == "failed":
            raise _of_role(plan, pm, failure(pm, url_check))
        if pm.config.endpoint == EMBEDDED:
            stage("starting the embedded reference server")
            urls[pm.label] = await stack.enter_async_context(embedded_server())
    endpoints = Endpoints(every)
    stack.push_async_callback(endpoints.aclose)  # closed before the servers stop
    setup = Setup(endpoints)
    for pm in plan.models:
        await _set_up_model(
            pm, plan, setup, urls, preflight_checks, keep_primed, first_request,
            transport_factory, selection, concurrency, stage,
        )  # fmt: skip
    for pm in plan.role_models:
        try:
            await _set_up_model(
                pm, plan, setup, urls, preflight_checks, keep_primed, first_request,
                transport_factory, selection, concurrency, stage,
            )  # fmt: skip
        except ConfigError as exc:
            raise _of_role(plan, pm, exc) from None
    return setup


def _of_role(plan: Plan, pm: PlannedModel, exc: ConfigError) -> ConfigError:
    """``exc`` naming the role ``pm`` plays, when it plays one and is not evaluated."""
    if pm in plan.models:
        return exc
    roles = " and ".join(repr(r) for r in plan.roles_of(pm))
    exc.message = (
        f"the model playing the role {roles} ({pm.label!r}, set in the config's roles:) cannot "
        f"be used, so no sample was run: {exc.message}"
    )
    exc.args = (exc.message,)
    return exc


async def _set_up_model(
    pm: PlannedModel,
    plan: Plan,
    setup: Setup,
    urls: dict[str, str],
    preflight_checks: bool,
    keep_primed: bool,
    first_request: bool,
    transport_factory: TransportFactory | None,
    selection: Sequence[str] | None,
    concurrency: int,
    stage: Callable[[str], None],
) -> None:
    """One model reached, checked and serving-checked (a role's: on its role's calls)."""
    endpoints = setup.endpoints
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
        roles=plan.roles_of(pm) if pm not in plan.models else (),
    )


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
    evaluated = pm in plan.models
    try:
        facts = pm.facts
        if not evaluated:  # a role's model: its URL and id, none of the samples' checks
            if not preflight:
                return facts, None
            stage(f"pre-run checks for {pm.label} (skip with --no-preflight)")
            return facts, await run_checks(model, pm, [], provenance[pm.label], facts, None)
        if pm.chat_template:  # the template's route answers before any request is sent
            stage(f"asking {pm.label}'s tokenize route for its chat template")
            await model.check_chat_template()
        texts = [t for pt in plan.tasks for t in pt.task.token_texts(pt.config)]
        if texts and "candidate_scoring" in facts.capabilities:
            stage(f"reading the token ids of {len(texts)} task texts from {pm.label}'s tokenizer")
            ids = await resolve_token_ids(model, texts)
            facts = msgspec.structs.replace(facts, token_ids=ids)
        docs = [t for pt in plan.tasks for t in pt.task.documents(pt.samples, pt.config)]
        if docs:  # rolling log-likelihood: whole documents through the server's tokenizer
            stage(f"tokenizing {len(docs)} documents through {pm.label}'s tokenizer")
            length = provenance[pm.label].max_model_len.get(pm.config.model)
            facts = msgspec.structs.replace(facts, **await resolve_documents(model, docs, length))
        facts = await _generated(pm, plan, model, facts, provenance[pm.label], stage)
        if not preflight:
            return facts, None
        stage(f"pre-run checks for {pm.label} (skip with --no-preflight)")
        return facts, await run_checks(model, pm, plan.tasks, provenance[pm.label], facts, primed)
    finally:
        if pm.label not in setup.transports:  # a shared test transport outlives the checks
            await model.aclose()


async def _generated(
    pm: PlannedModel,
    plan: Plan,
    model: Model,
    facts: ModelFacts,
    found: Provenance,
    stage: Callable[[str], None],
) -> ModelFacts:
    """``facts`` with what the tasks generate through the server's tokenizer (RULER's samples),
    before the checks and the forecast read their requests."""
    generated: dict[str, Any] = {}
    length = found.max_model_len.get(pm.config.model) or facts.max_length
    tokenizers: dict[bool, ServedTokenizer] = {}
    for pt in plan.tasks:
        chat = chat_facts(pt.config, facts).input_kind == "chat"  # the template's tokens too
        tokenizer = tokenizers.setdefault(chat, ServedTokenizer(model, length, chat=chat))
        made = await pt.task.generate(pt.samples, pt.config, tokenizer, plan.data_dir)
        if made is not None:
            stage(f"generated {pt.name}'s samples through {pm.label}'s tokenizer")
            generated[pt.task.name] = made
    return msgspec.structs.replace(facts, generated=generated) if generated else facts
