"""The OpenAI family: rows and reply pieces shared by every OpenAI-shaped wire.

Used by ``openai_completions`` and ``vllm_native`` (and the chat-shaped OpenAI wires). Wire
truth: ``shared/reference/wire-reference.md`` sections 0.4, 1 and 2.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...errors import SievalError
from ...ir.response import Usage
from ..channels import UsageAt, lift_usage
from ..envelopes import http_error
from ..spec import Encode, Field, Leaf, Outcome, Refuse, Row, Write

__all__ = [
    "MAX_STOP",
    "MAX_TOP_LOGPROBS",
    "SAMPLING",
    "STREAM",
    "WireUsage",
    "in_band_error",
    "stop",
    "top_k_plus_one",
    "usage",
]

MAX_STOP = 4
"""OpenAI and vLLM 0.32 (``VLLM_MAX_STOP_STRINGS``) both cap ``stop`` at 4 strings."""


def stop(limit: int = MAX_STOP) -> Encode:
    def encode(leaf: Leaf) -> Outcome:
        if len(leaf.value) > limit:
            return Refuse(f"the wire takes at most {limit} stop strings; pass {limit} or fewer")
        return Write("stop", list(leaf.value))

    return Encode(encode, ("stop",), f"stop, at most {limit} strings")


def _stream(leaf: Leaf) -> Outcome:
    return Write("stream", True, also={"stream_options": {"include_usage": True}})


STREAM = Encode(
    _stream, ("stream", "stream_options"), "stream with stream_options.include_usage (usage last)"
)
"""``scheduling.stream``: SSE, with usage in the last chunk (otherwise a stream has none)."""

SAMPLING: dict[str, Row] = {
    "sampling.temperature": Field("temperature"),
    "sampling.top_p": Field("top_p"),
    "sampling.seed": Field("seed"),
    "sampling.n": Field("n"),
    "sampling.frequency_penalty": Field("frequency_penalty"),
    "sampling.presence_penalty": Field("presence_penalty"),
    "sampling.stop": stop(),
}
"""The sampling leaves every OpenAI-shaped route takes under the same names (``max_tokens`` and
``top_k`` differ by route and server, so each dialect decides them)."""


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


def usage(wire: WireUsage | None) -> Usage:
    """Usage where "not reported" stays UNSET; the server total is kept only on disagreement."""
    return lift_usage(wire, USAGE)


def in_band_error(dialect: str, error: dict[str, Any], payload: bytes) -> SievalError:
    """An ``{"error": {...}}`` event inside a stream, as the error a status would have given."""
    code = error.get("code")
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    status = code if isinstance(code, int) and 400 <= code < 600 else 500
    return http_error(dialect, status, payload)


MAX_TOP_LOGPROBS = 20
"""OpenAI's cap on ``top_logprobs``, on chat and on responses (vLLM's is ``--max-logprobs``)."""


def top_k_plus_one(k: int, field: str = "top_logprobs") -> Outcome:
    """``field`` = k + 1 for a sampled top-k of k, or the refusal when that passes the cap: vLLM
    lists the sampled token first and cuts at ``field`` (wire reference 2.4, 3.5), so the k best
    of k + 1 are exact either way, and the wire serves k <= 19."""
    if k + 1 > MAX_TOP_LOGPROBS:
        return Refuse(
            f"this wire returns at most {MAX_TOP_LOGPROBS} alternatives and sieval asks for "
            f"k + 1 (vLLM lists the sampled token first and drops the k-th best), so k <= "
            f"{MAX_TOP_LOGPROBS - 1}; lower it or use vllm_native"
        )
    return Write(field, k + 1)
