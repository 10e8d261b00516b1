"""SGLang's ``POST /generate`` reply: its Structs, the cumulative stream fold, and its errors.

SGLang 0.5.23 (wire reference section 6; measured in ``docs/evidence/sglang-server-notes.md``).
A finish of type ``abort`` is an error even inside an HTTP 200 reply (``abort_error``);
``sglang_native`` reads the rest.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...errors import ServerRejected, SievalError
from ..envelopes import http_error, message_kind, server_message
from ..reply_checks import Checker
from .numbers import Count, TokenId
from .openai import in_band_error
from .sse import SseEvent

__all__ = ["Finish", "Item", "Meta", "Triple", "abort_error", "fold", "sglang_error"]


class Triple(msgspec.Struct, array_like=True, forbid_unknown_fields=True, gc=False):
    """A logprob entry, positional on the wire: ``[logprob, token_id, text]`` (text null unless
    asked for; ``token`` here, as ``channels.top_k`` reads it). Scalars only, so the collector
    need not track the thousands a reply holds."""

    logprob: float | None
    token_id: TokenId
    token: str | None


class Finish(msgspec.Struct):
    type: str
    matched: str | int | None = None
    length: int | None = None
    message: str | None = None
    status_code: int | None = None


class Meta(msgspec.Struct):
    finish_reason: Finish | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    input_token_logprobs: list[Triple] | None = None
    output_token_logprobs: list[Triple] | None = None
    output_token_logprobs_length: Count | None = None
    input_top_logprobs: list[list[Triple] | None] | None = None
    output_top_logprobs: list[list[Triple] | None] | None = None
    output_token_ids_logprobs: list[list[Triple] | None] | None = None


class Item(msgspec.Struct):
    """One generation: a single reply, one element of an ``n > 1`` list, or a stream's state."""

    text: str
    meta_info: Meta
    output_ids: list[TokenId] | None = None


class _Chunk(msgspec.Struct):
    text: str | None = None
    meta_info: Meta | None = None
    output_ids: list[TokenId] | None = None
    index: int | None = None
    error: dict[str, Any] | None = None


_chunk = msgspec.json.Decoder(_Chunk)

# -- errors -------------------------------------------------------------------------------------


def sglang_error(dialect: str, status: int, body: bytes) -> SievalError:
    """A non-2xx reply in any of SGLang's three error shapes (wire reference 0.4). SGLang's
    scheduler words a too-long prompt "exceeds the maximum allowed length" (notes item 1)."""
    error = http_error(dialect, status, body)
    message = server_message(body)
    too_long = "exceeds the maximum allowed length" in message
    if isinstance(error, ServerRejected) and message_kind(message) is None and too_long:
        return ServerRejected(
            f"{dialect}: the server rejected the request (HTTP {status}) [context_overflow]: "
            f"{message}",
            status=status,
            server_message=message,
            dialect=dialect,
            path="context_overflow",
        )
    return error


def abort_error(dialect: str, where: str, finish: Finish) -> SievalError:
    """A ``finish_reason`` of type ``abort``: the request failed, whatever the HTTP status said
    (a streamed abort arrives as an ordinary-looking chunk with a bogus token, notes item 3)."""
    code = finish.status_code
    status = code if isinstance(code, int) and 400 <= code < 600 else 500
    message = finish.message or "the server aborted the request"
    body = msgspec.json.encode({"error": {"message": f"{message} ({where} is an abort)"}})
    return sglang_error(dialect, status, body)


# -- the stream ---------------------------------------------------------------------------------


def fold(events: list[SseEvent], check: Checker) -> list[Item]:
    """SSE chunks as one item per index. Each chunk is the cumulative state so far (wire
    reference 6.5), so the last one per index is kept, never concatenated; a chunk whose
    ``output_ids`` do not extend the previous ones (a server started with
    ``--incremental-streaming-output``) is refused, since keeping the last would lose the rest."""
    last: dict[int, _Chunk] = {}
    for event in events:
        chunk = check.decode(event.data, _chunk)
        if chunk.error is not None:
            raise in_band_error(check.dialect, chunk.error, event.data)
        if chunk.text is None or chunk.meta_info is None:
            raise check.violation("", "a stream chunk has neither text and meta_info nor an error")
        index = chunk.index if chunk.index is not None else 0
        before = last.get(index)
        if before is not None:
            old, new = before.output_ids or [], chunk.output_ids or []
            if new[: len(old)] != old:
                raise check.violation(
                    f"[{index}].output_ids",
                    f"stream chunk for index {index} carries output_ids {new[:8]}... that do not "
                    f"extend the previous chunk's {old[:8]}...: the stream is not cumulative "
                    "(--incremental-streaming-output?), so its last chunk is not the whole reply",
                )
        last[index] = chunk
    if not last:
        raise check.violation("", "the stream carried no chunk before [DONE]")
    return [
        Item(text=str(c.text), meta_info=c.meta_info or Meta(), output_ids=c.output_ids)
        for _, c in sorted(last.items())
    ]
