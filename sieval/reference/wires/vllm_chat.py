"""vLLM 0.32.0's ``POST /v1/chat/completions``, as the reference server speaks it.

The route checks what vLLM's ``ChatCompletionRequest`` validators check (with vLLM's messages),
converts ``developer`` to ``system`` (as vLLM does for a template without a developer role),
renders the messages with the live Gemma's turn format (``chat_template.render_messages``) and
runs the prompt through the completions renderer; ``chat_replies.py`` reshapes the result into
vLLM's chat reply or stream chunks, with vLLM's sampled-first top-logprobs lists. A forced tool
call (``tool_choice: "required"`` or a named function) is generated as JSON under the tool's
parameter schema; ``auto`` never calls (the reference model writes no tool markup). Bearer auth,
vLLM's envelope and bad-JSON errors are ``wires/vllm.py``'s; the body faults alter chat replies.
"""

from __future__ import annotations

import math
from typing import Any

from ..chat_template import render_messages
from ..envelopes import plain, request_validation, validation, vllm_envelope
from ..faults import negative_count
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


def _messages(body: dict[str, Any], served: str) -> list[dict[str, str]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise request_validation("messages must be a non-empty list", "messages", body)
    out = []
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise request_validation("each message needs a role", "messages", body)
        role = "system" if message["role"] == "developer" else message["role"]
        out.append({"role": role, "content": _content_text(message.get("content"), served)})
    return out


def _tool_checks(body: dict[str, Any]) -> tuple[str | None, bool]:
    """vLLM's ``check_tool_usage``; returns the tool a forced call names, and whether named."""
    tools = body.get("tools")
    if tools == []:
        raise validation(
            "`tools` must not be an empty array. Either provide at least one tool or omit the "
            "field entirely.",
            "tools",
        )
    choice = body.get("tool_choice", "auto" if tools else "none")
    if choice == "none" or choice is None:
        return None, False
    if not tools:
        raise validation("When using `tool_choice`, `tools` must be set.", "tool_choice")
    names = [t.get("function", {}).get("name") for t in tools if isinstance(t, dict)]
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if name not in names:
            raise validation(
                "The tool specified in `tool_choice` does not match any of the specified `tools`",
                "tool_choice",
            )
        return name, True
    if choice not in ("auto", "required"):
        raise validation(
            f'Invalid value for `tool_choice`: {choice}! Only named tools, "none", "auto" or '
            '"required" are supported.',
            "tool_choice",
        )
    return (names[0] if choice == "required" else None), False


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
    forced, named = _tool_checks(body)
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
    prompt = render_messages(_messages(body, ctx.served_model))
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
    if forced is not None:
        tool = next(t for t in body["tools"] if t["function"]["name"] == forced)
        schema = tool["function"].get("parameters") or {"type": "object"}
        completion["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    return ChatPlan(completion, top, forced, named)


def _chat(body: Any, ctx: Context) -> Reply:
    p = plan(body, ctx)
    rendered = render(p.completion, ctx)
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
