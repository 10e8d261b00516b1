"""Google's ``generateContent`` reply (Gemini API ``v1beta``): Structs, the ``alt=sse`` fold and
the error envelope.

Wire truth: ``shared/reference/wire-reference.md`` sections 0.1, 0.4 and 5.3; the field meanings
are the google-genai SDK's (``types.LogprobsResult``, ``GenerateContentResponseUsageMetadata``).
Names on the wire are camelCase, so the Structs rename their fields; ``google_genai`` reads them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...errors import ServerRejected, SievalError
from ..envelopes import http_error
from ..reply_checks import Checker
from .numbers import Count, TokenId
from .openai import in_band_error
from .sse import SseEvent

__all__ = ["Candidate", "Chunk", "Reply", "blocked", "error", "fold", "withheld"]

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
    token_id: TokenId | None = None
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
    token_count: Count | None = None
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


def blocked(dialect: str, feedback: PromptFeedback) -> ServerRejected:
    """A reply without candidates whose ``promptFeedback`` names a block reason (HTTP 200)."""
    said = f": {feedback.block_reason_message}" if feedback.block_reason_message else ""
    message = f"promptFeedback.blockReason {feedback.block_reason}{said}"
    return ServerRejected(
        f"{dialect}: the server blocked the prompt ({message}); there is no answer to score: "
        "change the prompt or its safety settings",
        status=200,
        server_message=message,
        dialect=dialect,
        path="prompt_blocked",
    )


def withheld(dialect: str, index: int, finish: str, message: str | None) -> ServerRejected:
    """A candidate with no content that finished for another reason than STOP or MAX_TOKENS
    (HTTP 200): the server withheld the answer, which is not an empty one."""
    said = f" ({message})" if message else ""
    return ServerRejected(
        f"{dialect}: candidate {index} has no content and finished with {finish}{said}: the "
        "server withheld the answer, which is not an empty one",
        status=200,
        server_message=f"finishReason {finish}{said}",
        dialect=dialect,
        path="candidate_withheld",
    )
