"""Batch invariance: the same request alone, then among concurrent copies of itself.

A server that batches (vLLM, SGLang) computes a batched request with other shapes: split
across scheduler steps when the batch holds more tokens than a step takes (chunked prefill), or
with other matrix shapes; on many kernels the sums then round differently, and on bf16 a
log-probability can move by whole nats (vLLM 0.32 on CPU: 222 of 399 ARC log-likelihoods, up to
1.93). The copies are compared with the request sent alone, value by value.
"""

from __future__ import annotations

from .finding import Finding, compared, moved_text
from .fixes import batch_fix
from .observation import Sender, differ, merged
from .probes import Probe

__all__ = ["check_batch"]


async def check_batch(
    sender: Sender, probe: Probe, copies: int, engine: str | None = None
) -> Finding:
    """``probe`` sent alone, then ``copies`` concurrent copies of it."""
    mark = sender.mark()
    alone = await sender.one(probe.request)
    seen = await sender.many([probe.request] * copies)
    cost = sender.since(mark)
    failed = [o.error for o in seen if not o.ok]
    if failed or not alone.ok:
        error = (failed or [alone.error])[0]
        return Finding(
            check="batch_invariance", outcome="skipped", detail=f"a probe failed: {error}",
            cost=cost,
        )  # fmt: skip
    diff = merged([differ(alone, o) for o in seen])
    changed = sum(o.text != alone.text for o in seen)
    evidence = {"copies": copies, "changed_texts": changed, **diff.summary()}
    detail = (
        f"{copies} concurrent copies against the request alone: "
        f"{moved_text(diff, f'in {changed} of {copies} copies')}"
    )
    return compared("batch_invariance", diff, detail, evidence, cost, batch_fix(engine))
