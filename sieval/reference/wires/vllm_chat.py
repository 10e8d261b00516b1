"""vLLM 0.32.0's ``POST /v1/chat/completions``, as the reference server speaks it.

The route checks what vLLM's ``ChatCompletionRequest`` validators check (with vLLM's messages),
converts ``developer`` to ``system`` (as vLLM does for a template without a developer role),
renders the messages with the live Gemma's turn format (``chat_template.render_messages``) and
runs the prompt through the completions renderer; ``chat_replies.py`` reshapes the result into
vLLM's chat reply or stream chunks, with vLLM's sampled-first top-logprobs lists.

Tools (``tool_calls.py``): offered ``tools`` with ``tool_choice`` ``auto`` (the default with
tools), ``required`` or a named function, and ``parallel_tool_calls`` (default true), are called
as that module decides: the arguments are generated, read back by its parser, and written as
vLLM writes parsed calls (``tool_calls`` finish under auto and required, ``stop`` for a named
call, ``content`` null under auto and ``""`` when forced); ``none`` leaves the answer to the
model. Earlier assistant turns keep their ``tool_calls`` (each entry an object of type
``function``, else vLLM's pydantic 400), ``tool`` turns their ``tool_call_id``; arguments that
are no JSON object become ``{}``, and a ``tool_call_id`` that matches no call is accepted (vLLM
0.32.0 answers both, seen live: the template never reads the id). A conversation that ends with
tool results is answered by quoting them. Bearer auth, vLLM's envelope and bad-JSON errors are
``wires/vllm.py``'s; the body faults alter chat replies.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..chat_template import render_messages
from ..envelopes import VllmError, plain, request_validation, validation, vllm_envelope
from ..faults import negative_count
from ..tool_calls import Offer, Tool, decide, follow_up, script
from . import Context, Reply, Route, Wire
from .chat_replies import ChatPlan, chat_chunks, chat_reply
from .completions import render
from .vllm import _bad_json, _bearer

__all__ = ["WIRE", "alter_chat", "plan"]

_REASONING_EFFORTS = {"none", "minimal", "low", "medium", "high", "xhigh", "max"}
_PASSED = (
    "temperature",
    "top_p",
    "n",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "stream",
    "stream_options",
    "response_format",
    "top_k",
    "min_p",
    "repetition_penalty",
    "stop_token_ids",
    "ignore_eos",
    "min_tokens",
)
"""Chat fields the completions renderer reads under the same name."""


def _content_text(content: Any, served: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise request_validation("content must be a string or a list of parts", "messages", {})
    texts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind in ("image_url", "input_audio", "video_url", "audio_url"):
            raise plain(f"{served} is not a multimodal model")
        else:
            raise request_validation(f"unsupported content part {kind!r}", "messages", {})
    return "\n".join(texts)


def _arguments(value: Any) -> Any:
    """A history call's arguments as vLLM hands them to the template: an object, ``{}`` for
    anything else (vLLM coerces a malformed string so the conversation can go on)."""
    if isinstance(value, str) and value:
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


_FUNCTION_CALL = "ChatCompletionMessageFunctionToolCallParam"
_CUSTOM_CALL = "ChatCompletionMessageCustomToolCallParam"


def _bad_call(at: int, item: Any) -> VllmError:
    """vLLM 0.32.0's pydantic 400 for a history call that is no function call (recorded live
    for an entry that is no object; the wrong-type message keeps only its first error)."""
    loc = f"body.{at}.{_FUNCTION_CALL}"
    if not isinstance(item, dict):
        shown = repr(item)
        errors = [
            f"{{'type': 'dict_type', 'loc': '{loc}', 'msg': 'Input should be a valid "
            f"dictionary', 'input': {shown}}}",
            f"{{'type': 'dict_type', 'loc': 'body.{at}.{_CUSTOM_CALL}', 'msg': 'Input should be "
            f"a valid dictionary', 'input': {shown}}}",
        ]
        param = loc
    else:
        errors = [
            f"{{'type': 'literal_error', 'loc': '{loc}.type', 'msg': \"Input should be "
            f"'function'\", 'input': {item.get('type')!r}, 'ctx': {{'expected': \"'function'\"}}}}"
        ]
        param = f"{loc}.type"
    head = f"{len(errors)} validation error{'s' if len(errors) > 1 else ''}:\n  "
    return VllmError(400, head + "\n  ".join(errors), "Bad Request", param)


def _history_calls(calls: Any) -> list[dict[str, Any]]:
    """An assistant turn's ``tool_calls``, checked as vLLM 0.32.0 checks them."""
    if not isinstance(calls, list):
        return []
    out = []
    for at, item in enumerate(calls):
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict) or item.get("type", "function") != "function":
            raise _bad_call(at, item)
        name, args = function.get("name"), _arguments(function.get("arguments"))
        out.append({"id": item.get("id"), "name": name, "arguments": args})
    return out


def _messages(body: dict[str, Any], served: str) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise request_validation("messages must be a non-empty list", "messages", body)
    out: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise request_validation("each message needs a role", "messages", body)
        role = "system" if message["role"] == "developer" else message["role"]
        turn: dict[str, Any] = {
            "role": role,
            "content": _content_text(message.get("content"), served),
        }
        if role == "assistant" and message.get("tool_calls"):
            turn["tool_calls"] = _history_calls(message["tool_calls"])
        if role == "tool":
            turn["tool_call_id"] = message.get("tool_call_id")
            turn["name"] = message.get("name")
        out.append(turn)
    return out


def _offer(body: dict[str, Any]) -> Offer:
    """vLLM's ``check_tool_usage``, then the tools and how they may be called."""
    tools = body.get("tools")
    if tools == []:
        raise validation(
            "`tools` must not be an empty array. Either provide at least one tool or omit the "
            "field entirely.",
            "tools",
        )
    choice = body.get("tool_choice", "auto" if tools else "none")
    if choice == "none" or choice is None:
        return Offer((), "none")
    if not tools:
        raise validation("When using `tool_choice`, `tools` must be set.", "tool_choice")
    offered = tuple(
        Tool(str(f.get("name")), str(f.get("description") or ""), f.get("parameters"))
        for f in (t.get("function") or {} for t in tools if isinstance(t, dict))
    )
    parallel = body.get("parallel_tool_calls") is not False
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if name not in [t.name for t in offered]:
            raise validation(
                "The tool specified in `tool_choice` does not match any of the specified `tools`",
                "tool_choice",
            )
        return Offer(offered, "named", str(name), parallel)
    if choice not in ("auto", "required"):
        raise validation(
            f'Invalid value for `tool_choice`: {choice}! Only named tools, "none", "auto" or '
            '"required" are supported.',
            "tool_choice",
        )
    return Offer(offered, choice, None, parallel)


def _logprob_checks(body: dict[str, Any]) -> int | None:
    top = body.get("top_logprobs")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int | float)):
        raise validation("`top_logprobs` must be an integer.", "top_logprobs", top)
    if top is not None and top < 0 and top != -1:
        raise validation("`top_logprobs` must be a positive value or -1.", "top_logprobs", top)
    if top is not None and (top == -1 or top > 0) and not body.get("logprobs"):
        raise validation(
            "when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs"
        )
    return int(top or 0) if body.get("logprobs") else None


def plan(body: dict[str, Any], ctx: Context) -> ChatPlan:
    """Validate a chat body as vLLM 0.32 does and build its completions request."""
    if body.get("stream_options") and not body.get("stream"):
        raise validation("Stream options can only be defined when `stream=True`.", "stream_options")
    top = _logprob_checks(body)
    offer = _offer(body)
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in _REASONING_EFFORTS:
        raise request_validation(
            f"reasoning_effort must be one of {sorted(_REASONING_EFFORTS)}",
            "reasoning_effort",
            body,
        )
    requested = body.get("model")
    if requested and requested != ctx.served_model:
        raise plain(
            f"The model `{requested}` does not exist. Valid aliases: {ctx.served_model}.",
            param="model",
            status=404,
            err_type="NotFoundError",
        )
    messages = _messages(body, ctx.served_model)
    prompt = render_messages(messages)
    count = len(ctx.model.tokenize(prompt))
    limit = ctx.max_model_len
    if count > limit:  # vLLM tokenizes at most max_model_len + 1 tokens, hence "at least"
        raise validation(
            f"This model's maximum context length is {limit} tokens. However, your prompt "
            f"contains at least {limit + 1} input tokens, which exceeds this limit even without "
            "any output tokens. Please reduce the length of the input prompt.",
            "input_tokens",
            limit + 1,
        )
    most = body.get("max_completion_tokens")
    if most is None:
        most = body.get("max_tokens")
    completion: dict[str, Any] = {"model": requested, "prompt": prompt}
    completion["max_tokens"] = limit - count if most is None else most
    completion.update({k: body[k] for k in _PASSED if body.get(k) is not None})
    if top is not None:
        completion["logprobs"] = top
    calls = decide(messages, offer)
    text = script(calls, ctx.tool_fault) if calls else follow_up(messages)
    return ChatPlan(completion, top, offer, messages, calls, text, ctx.tool_fault)


def _chat(body: Any, ctx: Context) -> Reply:
    p = plan(body, ctx)
    rendered = render(p.completion, ctx, p.script)
    if rendered.params.stream:
        return Reply(events=[(None, c) for c in chat_chunks(rendered, p, ctx.model)])
    return Reply(body=chat_reply(rendered, p, ctx.model))


def alter_chat(body: Any, mode: str) -> None:
    """Apply a body fault to a non-stream chat reply, in place."""
    if mode == "usage-negative":
        negative_count(body.get("usage"), "prompt_tokens", "total_tokens")
        return
    if mode == "usage-off":
        usage = body.get("usage") or {}
        usage["completion_tokens"] = usage.get("completion_tokens", 0) + 1
        usage["total_tokens"] = usage.get("total_tokens", 0) + 1
        return
    for choice in body.get("choices", []):
        entries = (choice.get("logprobs") or {}).get("content") or []
        if mode == "short-prompt-logprobs" and len(entries) > 1:
            del entries[1]
        for entry in entries:
            if mode == "topk-short" and len(entry["top_logprobs"]) >= 2:
                entry["top_logprobs"].pop()
            elif mode == "nan":
                entry["logprob"] = math.nan
                for alternative in entry["top_logprobs"]:
                    alternative["logprob"] = math.nan


WIRE = Wire(
    name="vllm-chat",
    routes=(Route("POST", "/v1/chat/completions", _chat),),
    error=lambda status, message, kind: vllm_envelope(status, message, kind),
    bad_json=_bad_json,
    guarded=("/v1", "/v2", "/inference"),
    authorized=_bearer,
    alter=alter_chat,
)
