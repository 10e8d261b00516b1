"""vLLM 0.32.0's Anthropic route, ``POST /v1/messages`` (+ ``/v1/messages/count_tokens``), as the
reference server speaks it (wire reference 4.6).

vLLM translates the Messages body onto its chat pipeline; this wire does the same onto
``chat_template.render_messages`` and the completions renderer, then reshapes the generation into
the Messages reply or its named events. Reproduced from ``vllm/entrypoints/anthropic/`` and from
replies recorded on the live server (``tests/fixtures/anthropic_messages/0.32.0/``):

* the top-level ``system`` blocks are joined with no separator into one system message; a
  ``tool_result`` in a user turn becomes a ``tool`` turn; a turn holding only ``tool_use`` renders
  empty; thinking blocks are dropped; an image is a 400 (the model is text-only);
* the reply keeps only set keys (``stop_sequence`` appears when a stop string matched); usage has
  ``input_tokens`` and ``output_tokens`` only (no cache fields without
  ``--enable-prompt-tokens-details``); an empty answer is one empty text block;
* offered tools are called as ``tool_calls.py`` decides: ``tool_choice`` auto (the default with
  tools, as vLLM sets it), any (vLLM's ``required``), tool (a named call), none; each call a
  ``tool_use`` block (``chatcmpl-tool-`` id) and ``stop_reason`` ``tool_use`` (a named call's
  too, as recorded); ``disable_parallel_tool_use`` is not read (vLLM drops it), so parallel
  calls come anyway; an assistant turn's ``tool_use`` blocks are its calls, a ``tool_result`` whose
  ``tool_use_id`` matches no call is accepted (vLLM forwards it unchecked; Anthropic's API
  refuses it); a conversation ending with tool results is answered by quoting them;
* ``output_config.format.schema`` is a JSON-schema constraint; ``thinking.enabled`` is a 400, as
  on a server without ``--reasoning-parser``; effort and ``thinking.disabled`` change nothing;
* errors are vLLM's mixed shapes: request validation is OpenAI-shaped (``"type": "Bad Request"``,
  a pydantic message), handler errors are Anthropic-shaped with vLLM's type names;
* Bearer-only auth on ``/v1`` (``{"error": "Unauthorized"}``): an ``x-api-key`` is not read.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..chat_template import render_messages
from ..envelopes import VllmError
from ..faults import negative_count
from ..tool_calls import Call, Mode, Offer, Tool, call_id, decide, extract, follow_up, script
from . import Context, Reply, Route, Wire, WireError
from .completions import Rendered, render

__all__ = ["WIRE"]

_MAX_STOP = 4
_MIN_BUDGET = 1024
_NO_REASONING = (
    "thinking_token_budget is set but reasoning_config is not configured. Please set "
    "--reasoning-parser and/or --reasoning-config to use thinking_token_budget."
)


class AnthropicShaped(WireError):
    """A handler-level error: Anthropic's envelope carrying vLLM's type name."""

    def __init__(self, status: int, message: str, err_type: str) -> None:
        super().__init__(status, envelope(status, message, err_type))


def envelope(status: int, message: str, kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


# -- request validation (pydantic's messages, OpenAI-shaped) --------------------------------------


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return f"<dict of {len(value)} items>"
    if isinstance(value, list):
        return f"<list of {len(value)} items>"
    return str(value)


def _invalid(kind: str, loc: str, msg: str, value: Any, ctx: str = "") -> VllmError:
    detail = f"{{'type': {kind!r}, 'loc': {loc!r}, 'msg': {msg!r}, 'input': {_shown(value)!r}"
    detail += f", 'ctx': {ctx}}}" if ctx else "}"
    return VllmError(400, f"1 validation error:\n  {detail}", "Bad Request", loc)


def _value_error(loc: str, text: str, value: Any) -> VllmError:
    return _invalid(
        "value_error", loc, f"Value error, {text}", value, f"{{'error': ValueError({text!r})}}"
    )


def _require(body: dict[str, Any], key: str) -> Any:
    if key not in body:
        raise _invalid("missing", f"body.{key}", "Field required", body)
    return body[key]


def _messages_field(body: dict[str, Any]) -> list[dict[str, Any]]:
    _require(body, "model")
    messages = _require(body, "messages")
    if not isinstance(messages, list):
        raise _invalid("list_type", "body.messages", "Input should be a valid list", messages)
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant", "system"):
            raise _invalid(
                "literal_error",
                f"body.messages.{i}.role",
                "Input should be 'user', 'assistant' or 'system'",
                role,
            )
        if not isinstance(message.get("content"), str | list):
            raise _invalid(
                "missing", f"body.messages.{i}.content", "Field required", message.get("content")
            )
    return messages


def _validate(body: dict[str, Any]) -> int:
    """The pydantic-level checks of vLLM's ``AnthropicMessagesRequest``; returns max_tokens."""
    _messages_field(body)
    max_tokens = _require(body, "max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise _invalid("int_type", "body.max_tokens", "Input should be a valid integer", max_tokens)
    if max_tokens <= 0:
        raise _value_error("body.max_tokens", "max_tokens must be positive", max_tokens)
    stop = body.get("stop_sequences")
    if isinstance(stop, list) and len(stop) > _MAX_STOP:
        raise _invalid(
            "too_long",
            "body.stop_sequences",
            f"List should have at most {_MAX_STOP} items after validation, not {len(stop)}",
            stop,
            f"{{'field_type': 'List', 'max_length': {_MAX_STOP}, 'actual_length': {len(stop)}}}",
        )
    thinking = body.get("thinking")
    if isinstance(thinking, dict):
        kind = thinking.get("type")
        if kind not in ("enabled", "disabled", "adaptive"):
            raise _invalid(
                "union_tag_invalid",
                "body.thinking",
                f"Input tag {kind!r} found using 'type' does not match any of the expected tags: "
                "'enabled', 'disabled', 'adaptive'",
                thinking,
            )
        budget = thinking.get("budget_tokens")
        if kind == "enabled" and isinstance(budget, int):
            if budget < _MIN_BUDGET:
                raise _invalid(
                    "greater_than_equal",
                    "body.thinking.enabled.budget_tokens",
                    f"Input should be greater than or equal to {_MIN_BUDGET}",
                    budget,
                    f"{{'ge': {_MIN_BUDGET}}}",
                )
            if budget >= max_tokens:
                raise _value_error(
                    "body", "thinking.budget_tokens must be less than max_tokens", body
                )
    return max_tokens


# -- the Messages body as the chat template's messages --------------------------------------------


def _system(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):  # vLLM joins the blocks with no separator
        return "".join(
            str(b.get("text") or "")
            for b in system
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(i.get("text", ""))
            for i in content
            if isinstance(i, dict) and i.get("type") == "text"
        )
    return ""


def chat_messages(body: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """The chat messages vLLM's translation builds, in the template's terms."""
    out: list[dict[str, Any]] = []
    system = _system(body)
    if system:
        out.append({"role": "system", "content": system})
    for message in body["messages"]:
        role, content = message["role"], message["content"]
        if isinstance(content, str):
            out.append({"role": role, "content": content})
            continue
        texts: list[str] = []
        tool_turns: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and block.get("text"):
                texts.append(str(block["text"]))
            elif kind == "image":
                raise AnthropicShaped(
                    400, f"{ctx.served_model} is not a multimodal model", "BadRequestError"
                )
            elif kind == "tool_use":
                arguments = block.get("input")
                calls.append(
                    {
                        "id": block.get("id"),
                        "name": block.get("name") or "",
                        "arguments": arguments if isinstance(arguments, dict) else {},
                    }
                )
            elif kind == "tool_result" and role == "user":
                tool_turns.append(
                    {
                        "role": "tool",
                        "content": _result_text(block.get("content")),
                        "tool_call_id": block.get("tool_use_id") or "",
                    }
                )
            elif kind == "tool_result":
                texts.append(f"Tool result: {block.get('content') or ''}")
        out.extend(tool_turns)  # vLLM appends a user turn's tool results before the turn itself
        if texts or role != "user":
            turn: dict[str, Any] = {"role": role, "content": "\n".join(texts)}
            if calls:
                turn["tool_calls"] = calls
            out.append(turn)
    return out


# -- generation -----------------------------------------------------------------------------------


def _offer(body: dict[str, Any]) -> Offer:
    """The tools and how they may be called, as vLLM converts them to a chat request."""
    tools = body.get("tools") or []
    choice = body.get("tool_choice") or {"type": "auto"}
    offered = tuple(
        Tool(str(t.get("name")), str(t.get("description") or ""), t.get("input_schema"))
        for t in tools
        if isinstance(t, dict)
    )
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind == "tool":
        if choice.get("name") not in [t.name for t in offered]:
            raise AnthropicShaped(
                400,
                "The tool specified in `tool_choice` does not match any of the specified `tools`",
                "BadRequestError",
            )
        return Offer(offered, "named", str(choice["name"]))
    modes: dict[str, Mode] = {"any": "required", "none": "none"}
    return Offer(offered, modes.get(str(kind), "auto"), None)


def _completion_body(body: dict[str, Any], prompt: str) -> Any:
    out: dict[str, Any] = {
        "model": body["model"],
        "prompt": prompt,
        "max_tokens": body["max_tokens"],
    }
    for key in ("temperature", "top_p", "top_k"):
        if body.get(key) is not None:
            out[key] = body[key]
    if body.get("stop_sequences"):
        out["stop"] = body["stop_sequences"]
    fmt = (body.get("output_config") or {}).get("format") or {}
    if fmt.get("schema") is not None:
        out["structured_outputs"] = {"json": fmt["schema"]}
    return out


@dataclass(frozen=True)
class _Plan:
    """A Messages request as generated: the rendering and what its reply needs to know."""

    rendered: Rendered
    offer: Offer
    messages: list[dict[str, Any]]
    calls: tuple[Call, ...]
    fault: str | None


def _generate(body: dict[str, Any], ctx: Context) -> _Plan:
    _validate(body)
    model = body.get("model")
    if model != ctx.served_model:
        raise AnthropicShaped(
            404,
            f"The model `{model}` does not exist. Valid aliases: {ctx.served_model}.",
            "NotFoundError",
        )
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        raise AnthropicShaped(400, _NO_REASONING, "BadRequestError")
    offer = _offer(body)
    messages = chat_messages(body, ctx)
    calls = decide(messages, offer)
    text = script(calls, ctx.tool_fault) if calls else follow_up(messages)
    try:
        rendered = render(_completion_body(body, render_messages(messages)), ctx, text)
    except VllmError as exc:  # handler errors leave vLLM's serving layer Anthropic-shaped
        raise AnthropicShaped(exc.status, exc.message, exc.err_type) from exc
    return _Plan(rendered, offer, messages, calls, ctx.tool_fault)


def _stop_reason(plan: _Plan, finish: str, matched: Any, called: bool) -> str:
    """``tool_use`` whenever calls were read (a named call too: recorded in ``tool_named``),
    and under ``any`` whenever generation stopped (vLLM's ``required`` finish)."""
    if finish == "length":
        return "max_tokens"
    if called or plan.offer.mode == "required":
        return "tool_use"
    return "stop_sequence" if isinstance(matched, str) else "end_turn"


def _answer(plan: _Plan) -> tuple[list[Any], str, Any]:
    """The content blocks, the stop reason and the matched stop string of the generation."""
    _, choice = plan.rendered.choices[0]
    read = extract(choice.text, plan.calls, plan.fault)
    stop = _stop_reason(plan, choice.finish, choice.stop_reason, read is not None)
    matched = choice.stop_reason if stop == "stop_sequence" else None
    if read is not None:
        blocks = [
            {
                "type": "tool_use",
                "id": call_id(plan.messages, i),
                "name": call.name,
                "input": call.arguments,
            }
            for i, call in enumerate(read)
        ]
        return blocks, stop, None
    return [{"type": "text", "text": choice.text}], stop, matched


def _usage(rendered: Rendered, output: int | None = None) -> dict[str, int]:
    _, choice = rendered.choices[0]
    out = len(choice.out) if output is None else output
    return {"input_tokens": len(rendered.prompts[0].ids), "output_tokens": out}


def _message_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:16]}"


def _messages(body: Any, ctx: Context) -> Reply:
    plan = _generate(body, ctx)
    rendered = plan.rendered
    if body.get("stream"):
        return Reply(events=list(_events(plan, ctx)), terminator=None)
    content, stop, matched = _answer(plan)
    reply: dict[str, Any] = {
        "id": _message_id(),
        "type": "message",
        "role": "assistant",
        "content": content,
        "model": ctx.served_model,
        "stop_reason": stop,
    }
    if matched is not None:
        reply["stop_sequence"] = matched
    reply["usage"] = _usage(rendered)
    return Reply(body=reply)


def _deltas(out: list[int], text: str, ctx: Context) -> list[str]:
    """Per-token text pieces that concatenate to ``text`` (empty pieces dropped)."""
    tok = ctx.model.tokenizer
    pieces: list[str] = []
    done = 0
    for j in range(len(out)):
        upto = min(len(tok.decode_stable(out[: j + 1])), len(text))
        if j == len(out) - 1:
            upto = len(text)
        if upto > done:
            pieces.append(text[done:upto])
            done = upto
    return pieces


def _block_events(
    block: dict[str, Any], index: int, out: list[int], ctx: Context
) -> Iterator[tuple[str, Any]]:
    """One content block streamed: start, its deltas piece by piece (a text block's by the
    generated tokens ``out``), stop; an empty text block streams nothing."""
    if block["type"] == "tool_use":
        text = json.dumps(block["input"])
        out = list(ctx.model.tokenize(text, add_bos=False))
        shell: dict[str, Any] = {**block, "input": {}}
        kind, key = "input_json_delta", "partial_json"
    else:
        text, shell = block["text"], {"type": "text", "text": ""}
        kind, key = "text_delta", "text"
    pieces = _deltas(out, text, ctx)
    if not pieces:
        return
    start = {"type": "content_block_start", "content_block": shell, "index": index}
    yield "content_block_start", start
    for piece in pieces:
        delta = {"type": "content_block_delta", "delta": {"type": kind, key: piece}, "index": index}
        yield "content_block_delta", delta
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def _events(plan: _Plan, ctx: Context) -> Iterator[tuple[str, Any]]:
    rendered = plan.rendered
    content, stop, matched = _answer(plan)
    start: dict[str, Any] = {
        "id": _message_id(),
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": ctx.served_model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage(rendered, output=0),
    }
    yield "message_start", {"type": "message_start", "message": start}
    out = rendered.choices[0][1].out
    for index, block in enumerate(content):
        yield from _block_events(block, index, out, ctx)
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": matched},
            "usage": _usage(rendered),
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _count_tokens(body: Any, ctx: Context) -> Reply:
    _messages_field(body)
    model = body.get("model")
    if model != ctx.served_model:
        raise AnthropicShaped(
            404,
            f"The model `{model}` does not exist. Valid aliases: {ctx.served_model}.",
            "NotFoundError",
        )
    prompt = render_messages(chat_messages(body, ctx))
    count = len(ctx.model.tokenize(prompt))
    return Reply(
        body={"input_tokens": count, "context_management": {"original_input_tokens": count}}
    )


def _bad_json(decode_error: str | None) -> VllmError:
    if decode_error is not None:
        return _invalid(
            "json_invalid", "body.0", "JSON decode error", {}, f"{{'error': {decode_error!r}}}"
        )
    return _invalid(
        "model_attributes_type",
        "body",
        "Input should be a valid dictionary or object to extract fields from",
        "",
    )


def _bearer(headers: Mapping[str, str], key: str) -> bool:
    return headers.get("Authorization", "") == f"Bearer {key}"


def alter_message(body: Any, mode: str) -> None:
    """Apply a body fault to a Messages reply or stream event, in place: only
    ``usage-negative`` (the wire has no logprobs for the others to alter); a stream's
    ``message_start`` holds its usage in ``message``."""
    if mode == "usage-negative":
        for node in (body, body.get("message")):
            if isinstance(node, dict):
                negative_count(node.get("usage"), "input_tokens")


WIRE = Wire(
    name="vllm-messages",
    routes=(
        Route("POST", "/v1/messages", _messages),
        Route("POST", "/v1/messages/count_tokens", _count_tokens, faults=False),
    ),
    error=envelope,
    bad_json=_bad_json,
    guarded=("/v1",),
    authorized=_bearer,
    unauthorized=(401, {"error": "Unauthorized"}),
    alter=alter_message,
)
