"""The serving checks in order, sharing their probes; what they found and what they cost.

The fingerprint's greedy probe is sent twice, alone, first: those two sends are the
fingerprint, the determinism check and the defaults check's "every field left out" answer. Then
the batch probe alone and its copies, the cache pair, the seeded pair and the defaults probes,
each only when selected.
"""

from __future__ import annotations

import random

import msgspec

from ..ir.request import Sampling
from ..model import Model
from .batch_invariance import check_batch
from .cache_invariance import check_cache
from .defaults import check_defaults
from .determinism import check_determinism, check_seed
from .finding import NEGLIGIBLE, Finding
from .fingerprint import Fingerprint, server_facts, with_numerics
from .observation import Cost, Observation, Sender
from .probes import BATCH, GREEDY_TOKENS, LONG, SHORT, lowered, nonce, shape
from .selection import Needs
from .tool_calls import check_tool_calls, check_tool_prompt

__all__ = ["DEFAULT_COPIES", "Serving", "measure_fingerprint", "run_serving_checks"]

DEFAULT_COPIES = 7
"""Copies in the batch check. vLLM on a CPU prefills at most 2,048 tokens a step: 7 copies of
the 449-token probe hold 3,143, so a step that finds five or more waiting splits one of them
across two steps, as a run's batches of few-shot prompts are. With 4 copies (1,796 tokens) a
split, and moved values, happened only on a server with other traffic (docs/evidence/probe.md:
with a step of 8,192 tokens, 7 copies moved nothing)."""


class Serving(msgspec.Struct, kw_only=True):
    """What the serving checks found for one model."""

    fingerprint: Fingerprint | None = None
    findings: list[Finding] = msgspec.field(default_factory=list)
    cost: Cost = msgspec.field(default_factory=Cost)
    """Everything the checks sent, fingerprint included."""
    checks: list[str] = msgspec.field(default_factory=list)
    """The checks that were selected (what the run's tasks depend on, or ``--serving-checks``)."""

    def warnings(self, label: str) -> list[str]:
        """One line per finding that can change what the run measures."""
        return [f.warning(label) for f in self.findings if f.matters]


async def run_serving_checks(
    model: Model,
    needs: Needs,
    *,
    copies: int = DEFAULT_COPIES,
    rng: random.Random | None = None,
    declared_neutral: str | None = None,
) -> Serving:
    """Run ``needs``' checks against ``model``'s server (nothing when it selects none);
    ``declared_neutral``: why the server is known to apply no sampling defaults (the config says
    ``server_defaults: neutral``, or sieval started it), taken in place of a probe that cannot
    tell."""
    if not needs.checks:
        return Serving()
    sender = Sender(model)
    facts = await server_facts(model)
    greedy = shape(model, SHORT, Sampling(temperature=0.0, max_tokens=GREEDY_TOKENS))
    findings: list[Finding] = []
    fingerprint = facts
    first = second = None
    mark = sender.mark()
    if greedy is not None:
        first = await sender.one(greedy.request)
        second = await sender.one(greedy.request)
        if first.ok and second.ok:
            body = lowered(model, greedy.request).body
            fingerprint = with_numerics(facts, body, first, second)
    sent_twice = sender.since(mark)  # the fingerprint's, shared with determinism
    if first is not None and not first.ok and sender.cost.requests == 0:
        # the server never answered: every check would only say so again
        why = f"the server did not answer the first probe: {first.error}"
        skipped = [Finding(check=c, outcome="skipped", detail=why) for c in needs.checks]
        findings = [f for f in skipped if f.check != "fingerprint"]
        return Serving(fingerprint=facts, findings=findings, checks=list(needs.checks))
    engine = facts.engine
    unsettled = False
    if "determinism" in needs and first is not None and second is not None:
        found = msgspec.structs.replace(check_determinism(first, second, engine), cost=sent_twice)
        unsettled = found.outcome == "failed"
        findings.append(_tasks(found, needs))
    if "batch_invariance" in needs:
        batch = shape(model, nonce(rng) + BATCH, Sampling(temperature=0.0, max_tokens=1))
        if batch is not None:
            batched = await check_batch(sender, batch, copies, engine)
            findings.append(_tasks(_caveat(batched, unsettled), needs))
    if "cache_invariance" in needs:
        sampling = Sampling(temperature=0.0, max_tokens=GREEDY_TOKENS)
        cached = shape(model, nonce(rng) + LONG, sampling, prompt=False)
        if cached is not None:
            found = await check_cache(sender, cached, engine)
            findings.append(_tasks(_caveat(found, unsettled), needs))
    if "seed_repeat" in needs:
        findings.append(_tasks(await check_seed(sender, engine), needs))
    if "server_defaults" in needs:
        seen: Observation | None = first
        found = await check_defaults(
            sender, needs.requests, greedy, seen, engine, declared_neutral=declared_neutral
        )
        findings.append(_caveat(found, unsettled))
    if "tool_calls" in needs:
        findings.append(_tasks(await check_tool_calls(sender, model), needs))
    if "tool_prompt" in needs:
        findings.append(_tasks(await check_tool_prompt(sender, model), needs))
    return Serving(
        fingerprint=fingerprint,
        findings=[_graded(f) for f in findings],
        cost=sender.cost,
        checks=list(needs.checks),
    )


def _graded(finding: Finding) -> Finding:
    """A failure too small to change a result says so before what to do about it."""
    if finding.outcome != "failed" or finding.matters:
        return finding
    said = (
        f"every move is below {NEGLIGIBLE:g} nats, so no score read at four decimals changes and "
        "a prediction flips only at an exact tie (no warning); if that matters: "
    )
    return msgspec.structs.replace(finding, meaning=said + finding.meaning)


def _tasks(finding: Finding, needs: Needs) -> Finding:
    if finding.tasks:
        return finding
    return msgspec.structs.replace(finding, tasks=list(needs.tasks(finding.check)))


def _caveat(finding: Finding, unsettled: bool) -> Finding:
    """A comparison on a server that does not repeat itself alone says nothing of its cause."""
    if not unsettled or finding.outcome != "failed":
        return finding
    return msgspec.structs.replace(
        finding,
        detail=f"{finding.detail} (the server does not repeat itself alone either: see "
        "determinism, so this is not proven to be its cause)",
    )


async def measure_fingerprint(model: Model) -> Fingerprint:
    """The serving fingerprint alone (what ``run_serving_checks`` reads first): the server's
    facts and the greedy probe sent twice, alone. A replica's, before a run on several."""
    sender = Sender(model)
    facts = await server_facts(model)
    greedy = shape(model, SHORT, Sampling(temperature=0.0, max_tokens=GREEDY_TOKENS))
    if greedy is None:
        return facts
    first = await sender.one(greedy.request)
    second = await sender.one(greedy.request)
    if not (first.ok and second.ok):
        return facts
    return with_numerics(facts, lowered(model, greedy.request).body, first, second)
