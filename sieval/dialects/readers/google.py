"""Google's channels: the answer and thought text of a candidate's parts, and its
``logprobsResult`` as sampled tokens and ids (wire reference 5.3; the google-genai SDK's
``types.LogprobsResult``)."""

from __future__ import annotations

import math
from typing import Any

from msgspec import UNSET

from ...ir.response import Token, TopEntry
from ..channels import place, top_k
from ..reply import Read
from ..wire import google as wire

__all__ = ["chosen_entries", "parts", "sampled", "token_ids"]


def parts(c: wire.Candidate, thought: bool) -> str | None:
    """The answer's text (``thought``: the reasoning's, ``None`` when there is none): parts
    flagged ``thought`` are reasoning, never the answer."""
    parts = c.content.parts if c.content and c.content.parts else []
    texts = [
        p.text
        for p in parts
        if p.function_call is None and p.text is not None and bool(p.thought) == thought
    ]
    return "".join(texts) if texts or not thought else None


def chosen_entries(r: Read, c: wire.Candidate, i: int) -> list[TopEntry]:
    where = f"candidates[{i}].logprobsResult"
    result = c.logprobs_result
    chosen = r.check.present(
        result.chosen_candidates if result is not None else None,
        where,
        "although responseLogprobs was sent",
    )
    out = []
    for j, e in enumerate(chosen):
        if e.token is None or e.logprob is None:
            missing = "token" if e.token is None else "logProbability"
            raise r.check.violation(
                f"{where}.chosenCandidates[{j}]", f"{where}.chosenCandidates[{j}] has no {missing}"
            )
        tid: Any = UNSET if e.token_id is None else e.token_id
        out.append(TopEntry(token=e.token, logprob=e.logprob, token_id=tid))
    r.check.logprobs(f"{where}.chosenCandidates", [e.logprob for e in out], ".logProbability")
    return out


def sampled(r: Read, c: wire.Candidate, i: int) -> tuple[Token, ...]:
    """``logprobsResult`` as sampled tokens: one per decoding step, counted against
    ``topCandidates``, ``tokenCount`` and ``candidatesTokenCount`` (one candidate, no thoughts:
    thoughts are no logprob steps), their logprobs summing to ``logProbabilitySum``, each with its
    exact top-k; offsets when the tokens spell the candidate's text exactly."""
    check, k, where = r.check, r.request.scoring.sampled_top_k, f"candidates[{i}]"
    chosen = chosen_entries(r, c, i)
    result = c.logprobs_result
    assert result is not None
    counts: dict[str, Any] = {"chosenCandidates": len(chosen)}
    if k:
        counts["topCandidates"] = len(result.top_candidates or [])
    if c.token_count is not None:
        counts["tokenCount"] = c.token_count
    meta = r.reply.usage_metadata
    # candidatesTokenCount counts every candidate's steps, and thoughts are no logprob steps
    alone = r.request.sampling.n == 1 and meta is not None and meta.thoughts_token_count is None
    if alone and meta is not None and meta.candidates_token_count is not None:
        counts["usageMetadata.candidatesTokenCount"] = meta.candidates_token_count
    check.agree(f"{where}.logprobsResult", counts, "the decoding steps")
    reported, total = result.log_probability_sum, math.fsum(e.logprob for e in chosen)
    if reported is not None and not math.isclose(reported, total, rel_tol=1e-4, abs_tol=1e-3):
        raise check.violation(
            f"{where}.logprobsResult.logProbabilitySum",
            f"{where}.logprobsResult.logProbabilitySum is {reported} but the chosen tokens' "
            f"logprobs sum to {total}: the steps are not the ones the server scored",
            expected=total,
            received=reported,
        )
    texts = [e.token for e in chosen]
    text = parts(c, False) or ""
    placed = place(texts, text, "none")
    whole = placed.stopped == len(texts) and placed.end == len(text)
    offsets: list[Any] = placed.offsets if whole else [UNSET] * len(chosen)
    tops: list[Any] = [UNSET] * len(chosen)
    ranks: list[Any] = [UNSET] * len(chosen)
    if k:
        lists = [step.candidates or [] for step in result.top_candidates or []]
        path = where + ".logprobsResult.topCandidates[{i}].candidates"
        tops, ranks = top_k(check, path, chosen, lists, k, r.top_k)
    return tuple(map(_token, chosen, offsets, tops, ranks))


def _token(e: TopEntry, offset: Any, top: Any, rank: Any) -> Token:
    return Token(
        text=e.token,
        logprob=e.logprob,
        token_id=e.token_id,
        offset=offset,
        top=top,
        scored_rank=rank,
    )


def token_ids(r: Read, c: wire.Candidate, i: int) -> tuple[int, ...] | Any:
    """The sampled token ids, from ``chosenCandidates[].tokenId`` (every step must carry one)."""
    if not r.request.scoring.token_ids:
        return UNSET
    ids = [e.token_id for e in chosen_entries(r, c, i)]
    missing = [n for n, tid in enumerate(ids) if not isinstance(tid, int)]
    if missing:
        where = f"candidates[{i}].logprobsResult.chosenCandidates"
        raise r.check.violation(
            f"{where}[{missing[0]}].tokenId",
            f"{where} has no tokenId at steps {missing[:5]}: this server does not give token ids",
        )
    return tuple(tid for tid in ids if isinstance(tid, int))
