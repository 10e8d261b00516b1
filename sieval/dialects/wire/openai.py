"""The OpenAI family's reply pieces: usage, and an error event inside a stream.

Used by ``openai_completions``, ``vllm_native`` and ``openai_chat``. Wire truth:
``shared/reference/wire-reference.md`` sections 0.4, 1 and 2.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...errors import SievalError
from ..channels import UsageAt
from ..envelopes import http_error
from .sse import parse

__all__ = ["USAGE", "WireUsage", "in_band_error", "in_band_status"]


class _PromptDetails(msgspec.Struct):
    cached_tokens: int | None = None


class _CompletionDetails(msgspec.Struct):
    reasoning_tokens: int | None = None


class WireUsage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    prompt_tokens_details: _PromptDetails | None = None
    completion_tokens_details: _CompletionDetails | None = None


USAGE = UsageAt(
    input="prompt_tokens",
    output="completion_tokens",
    cached="prompt_tokens_details.cached_tokens",
    reasoning="completion_tokens_details.reasoning_tokens",
    total="total_tokens",
)
"""Where OpenAI's usage keeps each count."""


def _status(error: dict[str, Any]) -> int:
    code = error.get("code")
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    return code if isinstance(code, int) and 400 <= code < 600 else 500


def in_band_error(dialect: str, error: dict[str, Any], payload: bytes) -> SievalError:
    """An ``{"error": {...}}`` event inside a stream, as the error a status would have given."""
    return http_error(dialect, _status(error), payload)


class _ErrorChunk(msgspec.Struct):
    error: dict[str, Any] | None = None


_error_chunk = msgspec.json.Decoder(_ErrorChunk)


def in_band_status(body: bytes) -> int | None:
    """The status the first ``{"error": {...}}`` event of a stream stands for (its ``code``, else
    500), or ``None``: the retry hook (``spec.Retry.in_band``) of the wires whose folds raise
    ``in_band_error``. A body without the key is not parsed."""
    if b'"error"' not in body:
        return None
    for event in parse(body):
        try:
            chunk = _error_chunk.decode(event.data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            continue  # no error event here; the fold refuses what it cannot read
        if chunk.error is not None:
            return _status(chunk.error)
    return None
