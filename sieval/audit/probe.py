"""Rerunnable live probes: each dialect claim exercised against a real server, with its outcome;
and ``--checks``, the serving checks (``sieval/serving``) against one server.

``sieval probe --dialect ID --endpoint URL --model ID`` runs the dialect's cases (the ``CASES`` of
``audit/cases/<dialect>.py``) and prints what happened: a reply that passed all checks, a refusal
before I/O, a server rejection (with the server's words) or a contract violation. The evidence in
``docs/evidence/`` is this output.
"""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..dialects.registry import get_dialect
from ..errors import ConfigError, SievalError, TransportError
from ..ir.request import Request, Sampling, Scoring
from ..model import Call, Model
from ..serving import ALL, DEFAULT_COPIES, Needs, Serving, run_serving_checks
from ..transport import HttpTransport, Limits, get_json

__all__ = [
    "ProbeCase",
    "ProbeResult",
    "cases_for",
    "probe_serving",
    "probed_dialects",
    "run_probe",
]

Check = Callable[[list[Call]], str]


@dataclass(frozen=True)
class ProbeCase:
    name: str
    expect: str
    """``ok``, ``Refused``, ``ServerRejected`` or ``ContractViolation``."""
    requests: tuple[Request, ...]
    check: Check | None = None
    """Turns the calls into a one-line finding; raises AssertionError when the claim fails."""


@dataclass
class ProbeResult:
    case: str
    expect: str
    outcome: str
    detail: str
    body: dict[str, Any] | None = None
    reported_model: str | None = None

    @property
    def passed(self) -> bool:
        return self.outcome == self.expect


def probed_dialects() -> list[str]:
    """The dialect ids that have a cases module."""
    from . import cases

    return sorted(
        m.name for m in pkgutil.iter_modules(cases.__path__) if not m.name.startswith("_")
    )


def cases_for(dialect: str) -> list[ProbeCase]:
    """The probe cases of one dialect (``ConfigError`` naming those that have cases)."""
    if dialect not in probed_dialects():
        raise ConfigError(
            f"no probe cases for {dialect!r}; probes exist for: {', '.join(probed_dialects())}",
            path="dialect",
        )
    found: list[ProbeCase] = importlib.import_module(f"{__package__}.cases.{dialect}").CASES
    return found


async def _run_case(model: Model, case: ProbeCase) -> ProbeResult:
    calls: list[Call] = []
    body: dict[str, Any] | None = None
    for request in case.requests:
        call = await model.call(request)
        body = call.body
        if call.error is not None:
            error = call.error
            return ProbeResult(case.name, case.expect, error.error_class, error.message, body)
        calls.append(call)
    try:
        detail = case.check(calls) if case.check else "reply accepted"
    except AssertionError as exc:
        return ProbeResult(case.name, case.expect, "claim failed", repr(exc), body)
    first = calls[0].response if calls else None
    reported = first.model if first is not None else None
    return ProbeResult(
        case.name, case.expect, "ok", detail, body, reported if isinstance(reported, str) else None
    )


async def run_probe(
    dialect: str,
    endpoint: str,
    model_id: str,
    *,
    api_key: str | None = None,
    wire_log: Path | None = None,
    on_result: Callable[[ProbeResult], Awaitable[None] | None] | None = None,
) -> tuple[dict[str, Any], list[ProbeResult]]:
    """Run the dialect's cases one at a time; return server facts and one result per case."""
    cases = cases_for(dialect)
    spec = get_dialect(dialect)
    facts: dict[str, Any] = {"endpoint": endpoint, "requested_model": model_id}
    routes = {"version": spec.endpoint.version, "models": spec.endpoint.models}
    headers = spec.auth.headers(api_key)
    async with HttpTransport(limits=Limits(retries=0)) as transport:
        for key, path in routes.items():
            if path is None:
                continue
            try:
                facts[key] = await get_json(transport, endpoint.rstrip("/") + path, headers=headers)
            except TransportError as exc:
                raise ConfigError(
                    f"cannot reach {endpoint}: {exc.message}", path="endpoint"
                ) from None
            except SievalError as exc:
                facts[key] = f"unavailable: {exc.message}"
    results: list[ProbeResult] = []
    async with Model(
        dialect=spec,
        base_url=endpoint,
        model_id=model_id,
        api_key=api_key,
        limits=Limits(concurrency=1, retries=0),
        wire_log=wire_log,
    ) as model:
        for case in cases:
            result = await _run_case(model, case)
            results.append(result)
            if on_result is not None:
                maybe = on_result(result)
                if asyncio.iscoroutine(maybe):
                    await maybe
    return facts, results


PROBED_KINDS = (
    ("(scoring)", Request.completion(
        "x", sampling=Sampling(temperature=0.0, max_tokens=1), scoring=Scoring(input_logprobs=True)
    )),
    ("(greedy)", Request.completion("x", sampling=Sampling(temperature=0.0, max_tokens=64))),
    ("(sampled)", Request.completion(
        "x", sampling=Sampling(temperature=1.0, max_tokens=64, seed=1)
    )),
    ("(server temperature)", Request.completion("x", sampling=Sampling(max_tokens=64, seed=1))),
)  # fmt: skip
"""What ``--checks`` checks the server's defaults for, with no tasks: a request of each kind
(the last leaves even the temperature to the server) leaving every sampling field out."""


async def probe_serving(
    dialect: str,
    endpoint: str,
    model_id: str,
    *,
    api_key: str | None = None,
    copies: int = DEFAULT_COPIES,
    checks: tuple[str, ...] = ALL,
    wire_log: Path | None = None,
) -> Serving:
    """``sieval probe --checks``: every serving check (or ``checks``) against one server, as if
    a run had a scoring, a greedy and a seeded sampled task."""
    needs = Needs({c: [] for c in checks}, PROBED_KINDS)
    async with Model(
        dialect=get_dialect(dialect),
        base_url=endpoint,
        model_id=model_id,
        api_key=api_key,
        limits=Limits(concurrency=copies + 1, retries=0),
        wire_log=wire_log,
    ) as model:
        return await run_serving_checks(model, needs, copies=copies)
