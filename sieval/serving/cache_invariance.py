"""Cache invariance: a prompt sent once (new to the server), then again (its prefix cached).

A prefix cache (vLLM's automatic prefix caching, SGLang's radix cache) serves the second send's
prompt from stored keys and values instead of computing them; on some kernels the next-token
scores then differ (vLLM 0.32 on CPU, bf16: 1 of 60 MMLU next-token scores moved). The probe is
``LONG`` after a fresh nonce, so its first send cannot be cached whatever ran before, and it
asks for the next tokens' scores only (vLLM never reads the cache for a request that asks for
the prompt's log-probabilities).
"""

from __future__ import annotations

from .finding import Finding, compared, moved_text
from .fixes import cache_fix
from .observation import Sender, differ
from .probes import Probe

__all__ = ["check_cache"]


async def check_cache(sender: Sender, probe: Probe, engine: str | None = None) -> Finding:
    """``probe`` (a new prompt) sent twice, one after the other."""
    mark = sender.mark()
    first = await sender.one(probe.request)
    second = await sender.one(probe.request)
    cost = sender.since(mark)
    if not first.ok or not second.ok:
        return Finding(
            check="cache_invariance", outcome="skipped",
            detail=f"a probe failed: {first.error or second.error}", cost=cost,
        )  # fmt: skip
    diff = differ(first, second)
    evidence = diff.summary()
    detail = f"a new prompt, then the same again: {moved_text(diff, 'on the second send')}"
    return compared("cache_invariance", diff, detail, evidence, cost, cache_fix(engine))
