"""Determinism: the same request twice, alone, one after the other, must give the same answer.

* ``determinism``: the fingerprint's greedy probe, sent twice (those two sends are the
  fingerprint's noise): the log-probabilities and the greedy text must repeat exactly;
* ``seed_repeat``: a sampled probe (temperature 1) with a seed, sent twice: the text must repeat,
  where the wire carries a seed. A server that ignores the seed, or samples on a nondeterministic
  kernel, gives a run whose sampled answers cannot be reproduced. The sampled tokens'
  log-probabilities must repeat too: on a nondeterministic kernel 16 sampled tokens still repeat
  now and then (about 1 in 100 on the reference server's ``nondeterministic`` mode), by chance,
  and a longer or another sampled answer would not.
"""

from __future__ import annotations

from ..ir.request import Sampling
from ..model import Model
from .finding import Finding, compared, moved_text
from .fixes import determinism_fix, seed_fix
from .observation import Cost, Observation, Sender, differ
from .probes import SHORT, shape

__all__ = ["SEED", "check_determinism", "check_seed", "seeded_probe"]

SEED = 20261204
SAMPLED_TOKENS = 16


def check_determinism(
    first: Observation, second: Observation, engine: str | None = None
) -> Finding:
    """The fingerprint's two sends (no request of its own)."""
    if not first.ok or not second.ok:
        return Finding(
            check="determinism", outcome="skipped",
            detail=f"a probe failed: {first.error or second.error}",
        )  # fmt: skip
    diff = differ(first, second)
    detail = f"a greedy request sent twice, alone: {moved_text(diff, 'on the second send')}"
    return compared("determinism", diff, detail, diff.summary(), Cost(), determinism_fix(engine))


def seeded_probe(model: Model) -> Sampling | None:
    """The seeded sampling the wire accepts, or None when it carries no seed."""
    sampling = Sampling(temperature=1.0, max_tokens=SAMPLED_TOKENS, seed=SEED)
    probe = shape(model, SHORT, sampling, prompt=False)
    return sampling if probe is not None else None


async def check_seed(sender: Sender, engine: str | None = None) -> Finding:
    sampling = seeded_probe(sender.model)
    if sampling is None:
        return Finding(
            check="seed_repeat",
            outcome="skipped",
            detail=f"{sender.model.dialect.id} carries no seed (refused before I/O)",
        )
    probe = shape(sender.model, SHORT, sampling, prompt=False)
    assert probe is not None
    mark = sender.mark()
    first = await sender.one(probe.request)
    second = await sender.one(probe.request)
    cost = sender.since(mark)
    if not first.ok or not second.ok:
        return Finding(
            check="seed_repeat", outcome="skipped",
            detail=f"a probe failed: {first.error or second.error}", cost=cost,
        )  # fmt: skip
    diff = differ(first, second)
    detail = (
        f"a sampled request (temperature 1, seed {SEED}, {SAMPLED_TOKENS} tokens) sent twice: "
        f"{moved_text(diff, 'on the second send')}"
    )
    evidence = diff.summary()
    if not diff.same:
        evidence.update(first=first.text, second=second.text)
    return compared("seed_repeat", diff, detail, evidence, cost, seed_fix(engine))
