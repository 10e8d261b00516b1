"""Google's ``generateContent`` reply (Gemini API ``v1beta``): Structs, usage, parts, sampled
tokens, the ``alt=sse`` fold and the error envelope.

Wire truth: ``shared/reference/wire-reference.md`` sections 0.1, 0.4 and 5.3; the field meanings
are the google-genai SDK's (``types.LogprobsResult``, ``GenerateContentResponseUsageMetadata``).
Names on the wire are camelCase, so the Structs rename their fields. Nothing is trusted: decoding
steps are counted against ``topCandidates``, ``tokenCount`` and ``candidatesTokenCount``, the
``logProbabilitySum`` must be the sum of the chosen logprobs, logprobs are finite and <= 0, top-k
lists are exact and agree with the chosen token, and a stream must end with a ``finishReason``
for every candidate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, cast

import msgspec
from msgspec import UNSET

from ...errors import ServerRejected, SievalError
from ...ir.response import Token, ToolCall, TopEntry, Usage
from ..checks import Checker, best_first, sampled_first, sound
from ..envelopes import http_error
from .openai import in_band_error
from .sse import SseEvent

__all__ = [
    "Candidate",
    "Chunk",
    "Reply",
    "error",
    "fold",
    "sampled_ids",
    "sampled_tokens",
    "split_parts",
    "usage",
]

# -- the reply (only the fields sieval reads) ---------------------------------------------------


class FunctionCall(msgspec.Struct, rename="camel"):
    name: str
    args: dict[str, Any] | None = None
    id: str | None = None


class Part(msgspec.Struct, rename="camel"):
    text: str | None = None
    thought: bool | None = None
    function_call: FunctionCall | None = None


class Content(msgspec.Struct):
    parts: list[Part] | None = None


class LogprobCandidate(msgspec.Struct, rename="camel", gc=False):  # scalars: untracked
    """A chosen or an alternative token; ``logprob`` is ``logProbability`` on the wire (named
    as ``channels.top_k`` reads it)."""

    token: str | None = None
    token_id: int | None = None
    logprob: float | None = msgspec.field(default=None, name="logProbability")


class TopCandidates(msgspec.Struct):
    candidates: list[LogprobCandidate] | None = None


class LogprobsResult(msgspec.Struct, rename="camel"):
    chosen_candidates: list[LogprobCandidate] | None = None
    top_candidates: list[TopCandidates] | None = None
    log_probability_sum: float | None = None


class Candidate(msgspec.Struct, rename="camel"):
    index: int = 0  # proto3 JSON omits a zero int: an absent index is candidate 0
    content: Content | None = None
    finish_reason: str | None = None
    finish_message: str | None = None
    token_count: int | None = None
    logprobs_result: LogprobsResult | None = None


class PromptFeedback(msgspec.Struct, rename="camel"):
    block_reason: str | None = None
    block_reason_message: str | None = None


class UsageMetadata(msgspec.Struct, rename="camel"):
    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    thoughts_token_count: int | None = None
    cached_content_token_count: int | None = None
    total_token_count: int | None = None


class Reply(msgspec.Struct, rename="camel"):
    candidates: list[Candidate] | None = None
    prompt_feedback: PromptFeedback | None = None
    usage_metadata: UsageMetadata | None = None
    model_version: str | None = None


class Chunk(Reply):
    """One ``alt=sse`` event: a reply fragment, or Google's error envelope in band."""

    error: dict[str, Any] | None = None


_chunk = msgspec.json.Decoder(Chunk)

# -- usage --------------------------------------------------------------------------------------


def _count(value: int | None) -> Any:
    return UNSET if value is None else value


def usage(wire: UsageMetadata | None) -> Usage:
    """``usageMetadata`` as IR usage; "not reported" stays UNSET (``thoughtsTokenCount`` absent is
    not 0). ``candidatesTokenCount`` excludes thoughts (wire reference 5.3), so the output is both,
    with the thoughts as ``reasoning_tokens``; the server's total is kept only on disagreement."""
    if wire is None:
        return Usage()
    output = wire.candidates_token_count
    if output is not None and wire.thoughts_token_count is not None:
        output += wire.thoughts_token_count
    lifted = Usage(
        input_tokens=_count(wire.prompt_token_count),
        output_tokens=_count(output),
        cached_tokens=_count(wire.cached_content_token_count),
        reasoning_tokens=_count(wire.thoughts_token_count),
    )
    if wire.total_token_count is not None and wire.total_token_count != lifted.total_tokens:
        return msgspec.structs.replace(lifted, reported_total_tokens=wire.total_token_count)
    return lifted


# -- parts --------------------------------------------------------------------------------------


def split_parts(candidate: Candidate) -> tuple[str, str | None, tuple[ToolCall, ...]]:
    """The answer text, the thought text (``None`` when there is none) and the function calls.

    Parts flagged ``thought`` are reasoning, never the answer. A call without an ``id`` (Google
    pairs a response with its call by name) gets ``<name>-<position among the calls>``.
    """
    answer: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    for part in parts:
        if part.function_call is not None:
            fc = part.function_call
            call_id = fc.id or f"{fc.name}-{len(calls)}"
            calls.append(ToolCall(call_id=call_id, name=fc.name, arguments=fc.args or {}))
        elif part.text is not None:
            (thoughts if part.thought else answer).append(part.text)
    return "".join(answer), ("".join(thoughts) if thoughts else None), tuple(calls)


# -- sampled tokens -----------------------------------------------------------------------------


def _entry(check: Checker, path: str, wire: LogprobCandidate) -> TopEntry:
    if wire.token is None or wire.logprob is None:
        missing = "token" if wire.token is None else "logProbability"
        raise check.violation(path, f"{path} has no {missing}")
    token_id: Any = UNSET if wire.token_id is None else wire.token_id
    return TopEntry(token=wire.token, logprob=wire.logprob, token_id=token_id)


def _chosen(check: Checker, where: str, result: LogprobsResult | None) -> list[TopEntry]:
    if result is None or result.chosen_candidates is None:
        raise check.violation(
            f"{where}.logprobsResult",
            f"{where}.logprobsResult is missing although responseLogprobs was sent",
        )
    path = f"{where}.logprobsResult.chosenCandidates"
    chosen = [_entry(check, f"{path}[{i}]", c) for i, c in enumerate(result.chosen_candidates)]
    check.logprobs(path, [e.logprob for e in chosen], ".logProbability")
    return chosen


def sampled_tokens(
    check: Checker, where: str, candidate: Candidate, k: int, text: str, steps: Any
) -> tuple[Token, ...]:
    """``logprobsResult`` as sampled tokens: one per decoding step (``steps`` is the usage count
    for this candidate, or UNSET), each with its exact top-k, offsets when the tokens rebuild the
    candidate's text."""
    result = candidate.logprobs_result
    chosen = _chosen(check, where, result)
    assert result is not None
    counts: dict[str, Any] = {"chosenCandidates": len(chosen)}
    if k:
        counts["topCandidates"] = len(result.top_candidates or [])
    if candidate.token_count is not None:
        counts["tokenCount"] = candidate.token_count
    if steps is not UNSET:
        counts["usageMetadata.candidatesTokenCount"] = steps
    check.agree(f"{where}.logprobsResult", counts, "the decoding steps")
    reported = result.log_probability_sum
    total = math.fsum(e.logprob for e in chosen)
    if reported is not None and not math.isclose(reported, total, rel_tol=1e-4, abs_tol=1e-3):
        raise check.violation(
            f"{where}.logprobsResult.logProbabilitySum",
            f"{where}.logprobsResult.logProbabilitySum is {reported} but the chosen tokens' "
            f"logprobs sum to {total}: the steps are not the ones the server scored",
            expected=total,
            received=reported,
        )
    offsets: list[Any] = [UNSET] * len(chosen)
    if "".join(e.token for e in chosen) == text:
        position = 0
        for i, e in enumerate(chosen):
            offsets[i] = position
            position += len(e.token)
    tops: list[Any] = [UNSET] * len(chosen)
    ranks: list[Any] = [UNSET] * len(chosen)
    if k:
        assert result.top_candidates is not None
        tops, ranks = _top_k(check, where, chosen, result.top_candidates, k)
    return tuple(
        Token(
            text=e.token,
            logprob=e.logprob,
            token_id=e.token_id,
            offset=offsets[i],
            top=tops[i],
            scored_rank=ranks[i],
        )
        for i, e in enumerate(chosen)
    )


def _top_k(
    check: Checker, where: str, chosen: list[TopEntry], steps: list[TopCandidates], k: int
) -> tuple[list[Any], list[Any]]:
    """Each step's exact top-k, most likely first, and the chosen token's rank in it. Checked
    whole first (every alternative has a token and a sound logprob, every step at least k, each
    agreeing with its chosen token: by id when the chosen token has one, else by text); a reply
    that fails is walked step by step, for the error to name the first one."""
    lists = [step.candidates or [] for step in steps]
    flat = [c.logprob for alts in lists for c in alts]
    if (
        min(map(len, lists), default=k) < k
        or None in flat
        or None in [c.token for alts in lists for c in alts]
        or not sound(cast(list[float], flat))
    ):
        return _top_k_one_by_one(check, where, chosen, steps, k)
    _lists_agree(check, where, chosen, lists)
    widths = set(map(len, lists))
    width = widths.pop() if len(widths) == 1 else None
    ranked = best_first(lists, cast(list[float], flat), width, k, _LOGPROB)
    tops = [
        tuple(
            [
                TopEntry(
                    token=cast(str, c.token),
                    logprob=cast(float, c.logprob),
                    token_id=UNSET if c.token_id is None else c.token_id,
                )
                for c in r
            ]
        )
        for r in ranked
    ]
    ranks = [
        0 if r[0].token == e.token and r[0].logprob == e.logprob else _rank(e, r)
        for e, r in zip(chosen, ranked, strict=True)
    ]
    return tops, ranks


def _rank(e: TopEntry, ranked: Sequence[LogprobCandidate]) -> int:
    """Where the chosen token is among the top-k, or -1."""
    return next(
        (j for j, c in enumerate(ranked) if c.token == e.token and c.logprob == e.logprob),
        -1,
    )


_LOGPROB = attrgetter("logprob")
_TOKEN, _TOKEN_ID = attrgetter("token"), attrgetter("token_id")


def _lists_agree(
    check: Checker, where: str, chosen: list[TopEntry], lists: list[list[LogprobCandidate]]
) -> None:
    """Each step's list agrees with its chosen token (``sampled_in_top``: by id when the chosen
    token has one, else by text), checked whole first when every chosen token has an id."""
    firsts = [alts[0] for alts in lists]
    ids = [e.token_id for e in chosen]
    if UNSET not in ids and sampled_first(
        ids,
        [e.logprob for e in chosen],
        [c.token_id for c in firsts],
        cast(list[float], [c.logprob for c in firsts]),
    ):
        return
    for i, (e, alts) in enumerate(zip(chosen, lists, strict=True)):
        by_id = isinstance(e.token_id, int)
        check.sampled_in_top(
            f"{where}.logprobsResult.topCandidates[{i}].candidates",
            cast(int, e.token_id) if by_id else e.token,
            e.logprob,
            alts,
            _TOKEN_ID if by_id else _TOKEN,
            cast(Callable[[LogprobCandidate], float], _LOGPROB),
        )


def _top_k_one_by_one(
    check: Checker, where: str, chosen: list[TopEntry], steps: list[TopCandidates], k: int
) -> tuple[list[Any], list[Any]]:
    tops: list[Any] = []
    ranks: list[Any] = []
    for i, e in enumerate(chosen):
        path = f"{where}.logprobsResult.topCandidates[{i}].candidates"
        alternatives = [
            _entry(check, f"{path}[{j}]", c) for j, c in enumerate(steps[i].candidates or [])
        ]
        top, rank = check.top_list(path, alternatives, k, e, ".logProbability")
        tops.append(top)
        ranks.append(rank)
    return tops, ranks


def sampled_ids(check: Checker, where: str, candidate: Candidate) -> tuple[int, ...]:
    """The sampled token ids, from ``chosenCandidates[].tokenId`` (every step must carry one)."""
    ids = [e.token_id for e in _chosen(check, where, candidate.logprobs_result)]
    missing = [i for i, tid in enumerate(ids) if not isinstance(tid, int)]
    if missing:
        raise check.violation(
            f"{where}.logprobsResult.chosenCandidates[{missing[0]}].tokenId",
            f"{where}.logprobsResult.chosenCandidates has no tokenId at steps {missing[:5]}: "
            "this server does not give token ids",
        )
    return tuple(tid for tid in ids if isinstance(tid, int))


# -- the stream ---------------------------------------------------------------------------------


def _append(into: Content, parts: list[Part]) -> None:
    """Text deltas concatenate (a thought delta onto thoughts); function calls stay whole."""
    assert into.parts is not None
    for part in parts:
        last = into.parts[-1] if into.parts else None
        if (
            part.text is not None
            and part.function_call is None
            and last is not None
            and last.text is not None
            and last.function_call is None
            and bool(last.thought) == bool(part.thought)
        ):
            into.parts[-1] = Part(text=last.text + part.text, thought=last.thought)
        else:
            into.parts.append(part)


def _extend(current: Candidate, more: LogprobsResult) -> None:
    """Steps extend; a chunk's ``logProbabilitySum`` is not carried (whether it sums the chunk or
    the stream so far is not documented), so a folded stream is checked by its counts only."""
    result = current.logprobs_result
    if result is None:
        result = current.logprobs_result = LogprobsResult(chosen_candidates=[], top_candidates=[])
    assert result.chosen_candidates is not None and result.top_candidates is not None
    result.chosen_candidates += more.chosen_candidates or []
    result.top_candidates += more.top_candidates or []


def fold(events: list[SseEvent], check: Checker) -> Reply:
    """``alt=sse`` events (each a reply fragment) as one reply: parts concatenate per candidate,
    logprob steps extend, the last finishReason, usage and prompt feedback win. Google's stream
    has no terminator (wire reference 0.1), so a candidate without a final finishReason means the
    body was cut short."""
    if not events:
        raise check.violation("", "the stream carried no events: the reply is truncated")
    merged: dict[int, Candidate] = {}
    reply = Reply()
    for event in events:
        chunk = check.decode(event.data, _chunk)
        if chunk.error is not None:
            raise in_band_error(check.dialect, chunk.error, event.data)
        reply.usage_metadata = chunk.usage_metadata or reply.usage_metadata
        reply.prompt_feedback = chunk.prompt_feedback or reply.prompt_feedback
        reply.model_version = chunk.model_version or reply.model_version
        for delta in chunk.candidates or []:
            current = merged.setdefault(
                delta.index, Candidate(index=delta.index, content=Content(parts=[]))
            )
            if delta.content is not None and delta.content.parts:
                assert current.content is not None
                _append(current.content, delta.content.parts)
            current.finish_reason = delta.finish_reason or current.finish_reason
            current.finish_message = delta.finish_message or current.finish_message
            current.token_count = delta.token_count or current.token_count
            if delta.logprobs_result is not None:
                _extend(current, delta.logprobs_result)
    unfinished = [c.index for c in merged.values() if c.finish_reason is None]
    if unfinished:
        raise check.violation(
            "candidates[].finishReason",
            f"the stream ended without a finishReason for candidates {unfinished} after "
            f"{len(events)} events: the reply is truncated",
        )
    reply.candidates = list(merged.values())
    return reply


# -- errors -------------------------------------------------------------------------------------

_LOGPROBS_OFF = "logprobs is not enabled"


def error(dialect: str, status: int, body: bytes) -> SievalError:
    """Google's envelope (``{"error": {"code", "message", "status"}}``) and the proxy's
    OpenAI-shaped one, through ``envelopes.http_error``; the Gemini API's ``400 Logprobs is not
    enabled for models/...`` (wire reference 5.4) says what to do instead."""
    err = http_error(dialect, status, body)
    if isinstance(err, ServerRejected) and _LOGPROBS_OFF in err.server_message.lower():
        return ServerRejected(
            f"{dialect}: the server rejected the request (HTTP {status}) [logprobs_disabled]: "
            f"{err.server_message}; this model returns no logprobs on this API: drop "
            "scoring.sampled_logprobs, or use a model or endpoint that serves them (Vertex AI "
            "serves them for more models)",
            status=status,
            server_message=err.server_message,
            dialect=dialect,
            path="logprobs_disabled",
        )
    return err
