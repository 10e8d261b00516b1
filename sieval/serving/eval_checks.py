"""The serving checks in ``sieval eval``: the checks a run's tasks depend on, for each model,
after the pre-run checks; findings that matter are said at once, as warnings.

Which checks: ``selection.py`` reads the first sample's requests of every task as the model will
send them (its ``request_defaults`` applied); ``--serving-checks`` narrows or widens them (``off``
skips them all, as ``--no-preflight`` does). The batch check sends as many copies at once as the
run would (its concurrency and the model's ``concurrency_limit``, at most ``DEFAULT_COPIES``).
What they cost is in the report beside what they found.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ir.defaults import with_defaults, with_overrides
from ..ir.request import Request
from ..plan.config import EMBEDDED
from ..plan.plan import Plan, PlannedModel
from ..setting_names import setting
from ..tasks.base import ModelFacts
from ..transport import Transport
from .selection import needs_of, select
from .suite import DEFAULT_COPIES, Serving, run_serving_checks

__all__ = ["run_requests", "serving_for"]


def _declared_neutral(pm: PlannedModel) -> str | None:
    """Why ``pm``'s server is known to apply no sampling defaults, or None when nothing says so
    (a field its wire cannot send then stays unverified)."""
    if pm.config.endpoint == EMBEDDED:
        return "sieval started this reference server itself, and it applies none"
    if pm.config.server_defaults == "neutral":
        return (
            f"the config declares the server's defaults neutral "
            f"({setting('server_defaults', 'neutral')}), which no probe can confirm"
        )
    return None


def run_requests(
    pm: PlannedModel, plan: Plan, facts: ModelFacts, roles: Sequence[str] = ()
) -> list[tuple[str, Request]]:
    """The first sample's requests of every task as planning knows them (a conversation's
    later turns by the requests standing for them), as ``pm``'s model will send them: the
    evaluated model's, or (``roles``) the calls ``pm`` answers in those roles."""
    found: list[tuple[str, Request]] = []
    for pt in plan.tasks:
        for sample in pt.samples[:1]:
            for role in roles or (None,):
                for call in pt.calls(sample, facts, role):
                    sent = with_defaults(call.request, pm.config.request_defaults)
                    found.append((pt.name, with_overrides(sent, pm.config.overrides)))
    return found


async def serving_for(
    pm: PlannedModel,
    plan: Plan,
    url: str,
    transport: Transport | None,
    facts: ModelFacts,
    *,
    selection: Sequence[str] | None,
    concurrency: int,
    stage: Callable[[str], None],
    roles: Sequence[str] = (),
) -> Serving:
    """The serving checks of one model (``selection``: None, what its tasks depend on; an empty
    selection runs nothing); ``roles``: of a role's model, on the calls of those roles."""
    cap = min(pm.config.concurrency_limit, concurrency)
    needs = select(needs_of(run_requests(pm, plan, facts, roles), cap), selection)
    # the batch probe's copies are as many as the run sends at once, never more than the server's
    # budget: where that is one, the run batches nothing of its own, and the check is left out
    copies = min(DEFAULT_COPIES, cap)
    if copies < 2 and "batch_invariance" in needs:
        stage(f"batch_invariance left out for {pm.label}: its concurrency_limit is 1")
        needs = select(needs, [c for c in needs.checks if c != "batch_invariance"])
    if not needs.checks:
        return Serving()
    stage(
        f"serving checks for {pm.label}: {', '.join(needs.checks)} "
        "(choose with --serving-checks, skip with --serving-checks off)"
    )
    model = pm.model(url, transport, pm.timeouts(), limits=pm.limits(concurrency=max(1, copies)))
    try:
        serving = await run_serving_checks(
            model, needs, copies=copies, declared_neutral=_declared_neutral(pm)
        )
    finally:
        if transport is None:  # a shared test transport outlives the checks
            await model.aclose()
    for line in serving.warnings(pm.label):
        stage(f"warning: {line}")
    stage(f"serving checks for {pm.label} cost {serving.cost}")
    return serving
