"""vLLM 0.32.0's ``POST /v1/responses`` (and ``GET /v1/responses/{id}``), as the reference server
speaks it.

Like vLLM, the route is a translation onto the chat pipeline (``responses/serving.py``,
``responses/utils.py``): ``instructions`` become a leading system message, message items their
role and text (``developer`` is rendered as ``system``, as vLLM does for a template without a
developer role), assistant output messages their first ``output_text``, a ``function_call`` joins
the assistant message before it, a ``function_call_output`` is a ``tool`` turn. The messages go
through the live Gemma's turn format (``chat_template.render_messages``) and the prompt through
the completions renderer, then the reply is reshaped into vLLM's ``ResponsesResponse`` (every key,
nulls included) or its typed events. Wire facts kept (wire reference 3.5, evidence in
``docs/evidence/openai_responses.md``):

* the prompt starts with two BOS tokens: vLLM renders the template's ``<bos>`` and the tokenizer
  adds another on this route;
* nothing is stored: ``previous_response_id`` and ``GET /v1/responses/{id}`` are 404;
* ``top_logprobs`` lists the sampled token first and is cut at ``top_logprobs`` entries;
* a non-stream reply lists the stop token (``<eos>``) in the logprobs; a stream never streams it;
* ``max_output_tokens`` reached is ``status: "incomplete"`` with reason ``max_output_tokens``, and
  a stream still ends with ``response.completed``; the applied budget is echoed (shortened to
  the room the prompt leaves);
* offered function tools are called as ``tool_calls.py`` decides (``tool_choice`` ``auto`` by
  default, ``required``, ``{"type": "function", "name"}``, ``none``; ``parallel_tool_calls``
  default true): each call a ``function_call`` item (``fc_`` id, ``chatcmpl-tool-`` call id),
  status ``completed``; a conversation ending with ``function_call_output`` items is answered by
  quoting them; like vLLM, an output whose ``call_id`` matches no call is accepted;
* an empty answer has no message item; images are refused (the model is text-only).
"""

from __future__ import annotations

import itertools
import json
import math
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..chat_template import render_messages
from ..envelopes import plain, validation
from ..faults import negative_count
from ..logprobs import Entry, sample_entries
from ..tokenizer import BOS_ID, Tokenizer
from ..tool_calls import Call, Mode, Offer, Tool, call_id, decide, extract, follow_up, script
from . import Context, Reply, Route, Wire
from .completions import Rendered, render
from .vllm import WIRE as OPENAI_WIRE

__all__ = ["WIRE"]

LOGPROBS = "message.output_text.logprobs"

# -- request: items to messages, messages to a completions body ---------------------------------


@dataclass(frozen=True)
class _Plan:
    body: dict[str, Any]
    """The Responses request as sent."""
    completion: dict[str, Any]
    """The body handed to the completions renderer."""
    prompt: str
    top_logprobs: int | None
    messages: list[dict[str, Any]]
    """The conversation as the template's messages (call ids are derived from it)."""
    calls: tuple[Call, ...]
    """The calls the reply makes (none: a text answer)."""
    fault: str | None
    """A tool-call parser fault of the server, if any."""


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return str(content[0].get("text", ""))
    return None


def _message(item: dict[str, Any], served: str) -> dict[str, Any]:
    role = item.get("role")
    content = item.get("content")
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_image", "image_url"):
            raise plain(f"{served} is not a multimodal model")
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": str(part.get("text", ""))})
    text: Any = content if isinstance(content, str) else parts
    return {"role": "system" if role == "developer" else role, "content": text}


def _messages(body: dict[str, Any], served: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if body.get("instructions"):
        out.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    if isinstance(items, str):
        return [*out, {"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise validation("input must be a string or a non-empty list of items", "input")
    for item in items:
        if not isinstance(item, dict):
            raise validation("input items must be objects", "input")
        kind = item.get("type", "message")
        last = out[-1] if out and out[-1].get("role") == "assistant" else None
        if kind == "function_call":
            call = _history_call(item)
            if last is not None:
                last.setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            if not isinstance(item.get("call_id"), str) or "output" not in item:
                raise validation("a function_call_output item needs call_id and output", "input")
            output = item["output"]
            text = output if isinstance(output, str) else _content_text(output) or ""
            out.append({"role": "tool", "content": text, "tool_call_id": item["call_id"]})
        elif kind == "reasoning":
            continue  # the turn format has no place for reasoning
        elif kind == "message" and item.get("role") == "assistant":
            said = _content_text(item.get("content"))
            if last is not None and last.get("content") is None:
                last["content"] = said
            else:
                out.append({"role": "assistant", "content": said})
        elif kind == "message" and item.get("role") in ("user", "system", "developer"):
            out.append(_message(item, served))
        else:
            raise validation(f"Unsupported input item type: {kind}", "input")
    return out


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = (body.get("text") or {}).get("format")
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    if body.get("structured_outputs") is not None:
        raise validation(
            "Cannot specify both structured_outputs and text.format", "structured_outputs"
        )
    if fmt.get("type") == "json_object":
        return {"json_object": True}
    return {"json": fmt.get("schema") or {}}


def _history_call(item: dict[str, Any]) -> dict[str, Any]:
    """A ``function_call`` input item as the template's call (arguments decoded, ``{}`` when
    they are no JSON object, as vLLM coerces them)."""
    fields = (item.get("call_id"), item.get("name"), item.get("arguments"))
    if not all(isinstance(f, str) for f in fields):
        raise validation("a function_call item needs call_id, name and arguments", "input")
    try:
        arguments = json.loads(item["arguments"])
    except json.JSONDecodeError:
        arguments = {}
    if not isinstance(arguments, dict):
        arguments = {}
    return {"id": item["call_id"], "name": item["name"], "arguments": arguments}


def _offer(body: dict[str, Any]) -> Offer:
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    choice = body.get("tool_choice", "auto")
    if choice == "required" and not tools:
        raise validation(
            "Tool choice 'required' must be specified with 'tools' parameter.", "tool_choice"
        )
    named = choice.get("name") if isinstance(choice, dict) else None
    if named is not None and named not in {t.get("name") for t in tools}:
        raise validation("Tool choice 'function' not found in 'tools' parameter.", "tool_choice")
    functions = tuple(
        Tool(str(t.get("name")), str(t.get("description") or ""), t.get("parameters"))
        for t in tools
        if t.get("type", "function") == "function"
    )
    parallel = body.get("parallel_tool_calls") is not False
    if named is not None:
        return Offer(functions, "named", str(named), parallel)
    modes: dict[str, Mode] = {"none": "none", "required": "required"}
    return Offer(functions, modes.get(str(choice), "auto"), None, parallel)


def _plan(body: dict[str, Any], ctx: Context) -> _Plan:
    if body.get("prompt") is not None:
        raise validation("prompt template is not supported", "prompt")
    model = body.get("model")
    if model and model != ctx.served_model:
        raise plain(
            f"The model `{model}` does not exist. Valid aliases: {ctx.served_model}.",
            param="model",
            status=404,
            err_type="NotFoundError",
        )
    previous = body.get("previous_response_id")
    if previous is not None:
        raise _not_found(str(previous))
    messages = _messages(body, ctx.served_model)
    prompt = render_messages(messages)
    ids = [BOS_ID, *ctx.model.tokenize(prompt, add_bos=True)]  # the template's <bos>, and one more
    limit = body.get("max_output_tokens")
    if isinstance(limit, int) and limit > ctx.max_model_len:
        raise validation(
            f"max_output_tokens={limit} cannot be greater than max_model_len={ctx.max_model_len}. "
            "Please request fewer output tokens.",
            "max_output_tokens",
            limit,
        )
    include = body.get("include") or []
    top = body.get("top_logprobs") or 0
    completion: dict[str, Any] = {
        "model": body.get("model"),
        "prompt": ids,
        "max_tokens": limit if limit is not None else max(ctx.max_model_len - len(ids), 1),
        "logprobs": top if LOGPROBS in include else None,
    }
    for key in ("temperature", "top_p", "top_k", "min_p", "seed", "stop", "stop_token_ids"):
        completion[key] = body.get(key)
    for key in ("presence_penalty", "frequency_penalty", "repetition_penalty"):
        completion[key] = body.get(key)
    completion["structured_outputs"] = _schema(body)
    calls = decide(messages, _offer(body))
    top_k = top if LOGPROBS in include else None
    return _Plan(body, completion, prompt, top_k, messages, calls, ctx.tool_fault)


def _not_found(response_id: str) -> Exception:
    return plain(
        f"Response with id '{response_id}' not found.",
        param="response_id",
        status=404,
        err_type="invalid_request_error",
    )


# -- reply --------------------------------------------------------------------------------------


def _hex() -> str:
    return uuid.uuid4().hex[:16]


def _logprob(token: str, logprob: float, streamed: bool) -> dict[str, Any]:
    """A token as vLLM writes it: ``bytes`` in a reply and in done events, not in a delta."""
    if streamed:
        return {"token": token, "logprob": logprob}
    return {"token": token, "bytes": list(token.encode("utf-8", "replace")), "logprob": logprob}


def _position(entry: Entry, tid: int, k: int, streamed: bool) -> dict[str, Any]:
    """One sampled token: vLLM lists the sampled id first, then the best, cut at k entries."""
    token, logprob = entry[tid][2], entry[tid][0]
    top = [_logprob(v[2], v[0], streamed) for v in list(entry.values())[:k]]
    return {**_logprob(token, logprob, streamed), "top_logprobs": top}


def _tool_echo(tool: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": tool.get("name"),
        "parameters": tool.get("parameters"),
        "strict": tool.get("strict"),
        "type": tool.get("type", "function"),
        "allowed_callers": None,
        "async": None,
        "defer_loading": None,
        "description": tool.get("description"),
        "output_schema": None,
    }


def _text_echo(body: dict[str, Any]) -> dict[str, Any] | None:
    text = body.get("text")
    if not isinstance(text, dict):
        return None
    fmt = dict(text.get("format") or {"type": "text"})
    if fmt.get("type") == "json_schema":
        fmt = {
            "name": fmt.get("name"),
            "schema": fmt.get("schema"),
            "type": "json_schema",
            "description": fmt.get("description"),
            "strict": fmt.get("strict"),
        }
    return {"format": fmt, "verbosity": text.get("verbosity")}


def _reasoning_echo(body: dict[str, Any]) -> dict[str, Any] | None:
    given = body.get("reasoning")
    if not isinstance(given, dict):
        return None
    keys = ("context", "effort", "generate_summary", "mode", "summary")
    return {key: given.get(key) for key in keys}


def _envelope(
    plan: _Plan, r: Rendered, rid: str, status: str, output: list[Any], usage: Any
) -> dict[str, Any]:
    body, p = plan.body, r.params
    tools = [_tool_echo(t) for t in body.get("tools") or [] if isinstance(t, dict)]
    choice = body.get("tool_choice", "auto")
    messages = None
    if body.get("enable_response_messages") and usage is not None:
        prompt = r.prompts[0]
        raw = f"<bos>{plan.prompt}"
        messages = [{"message": raw, "tokens": list(prompt.ids), "type": "raw_message_tokens"}]
    return {
        "id": rid,
        "created_at": r.created,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": body.get("instructions"),
        "metadata": body.get("metadata"),
        "model": r.model,
        "object": "response",
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "temperature": p.temperature,
        "tool_choice": choice if tools or choice not in ("auto", "none") else "none",
        "tools": tools,
        "top_p": p.top_p,
        "background": bool(body.get("background")),
        "max_output_tokens": p.max_tokens,
        "max_tool_calls": body.get("max_tool_calls"),
        "previous_response_id": None,
        "prompt": None,
        "reasoning": _reasoning_echo(body),
        "service_tier": body.get("service_tier", "auto"),
        "status": status,
        "text": _text_echo(body),
        "top_logprobs": plan.top_logprobs,
        "truncation": body.get("truncation", "disabled"),
        "usage": usage,
        "user": body.get("user"),
        "presence_penalty": p.presence,
        "frequency_penalty": p.frequency,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "input_messages": messages,
        "output_messages": None,
    }


def _usage(r: Rendered) -> dict[str, Any]:
    prompt, out = len(r.prompts[0].ids), len(r.choices[0][1].out)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {
            "cached_tokens": 0,
            "cache_write_tokens": 0,
            "input_tokens_per_turn": [],
            "cached_tokens_per_turn": [],
        },
        "output_tokens": out,
        "output_tokens_details": {
            "reasoning_tokens": 0,
            "tool_output_tokens": 0,
            "output_tokens_per_turn": [],
            "tool_output_tokens_per_turn": [],
        },
        "total_tokens": prompt + out,
    }


def _call_item(plan: _Plan, index: int, call: Call, arguments: str, status: str) -> dict[str, Any]:
    return {
        "arguments": arguments,
        "call_id": call_id(plan.messages, index),
        "name": call.name,
        "type": "function_call",
        "id": call_id(plan.messages, index, "fc_"),
        "async": None,
        "caller": None,
        "namespace": None,
        "status": status,
    }


def _message_item(text: str, logprobs: list[Any] | None, status: str) -> dict[str, Any]:
    part = {"annotations": [], "text": text, "type": "output_text", "logprobs": logprobs}
    return {
        "id": f"msg_{_hex()}",
        "content": [part] if text or status == "in_progress" else [],
        "role": "assistant",
        "status": status,
        "type": "message",
        "phase": None,
    }


def _pieces(tok: Tokenizer, text: str) -> list[str]:
    """``text`` cut where its tokens end (the deltas of streamed call arguments)."""
    ids = tok.tokenize(text)
    ends = [len(tok.decode_stable(ids[: j + 1])) for j in range(len(ids))]
    cuts = sorted({0, *(e for e in ends if 0 < e < len(text)), len(text)})
    return [text[i:j] for i, j in itertools.pairwise(cuts)]


def _status(finish: str) -> str:
    return "incomplete" if finish == "length" else "completed"


def _entries(plan: _Plan, r: Rendered, ctx: Context) -> list[Entry | None] | None:
    if plan.top_logprobs is None:
        return None
    choice = r.choices[0][1]
    return sample_entries(ctx.model, r.prompts[0].ids, choice.out, plan.top_logprobs)


def _complete(plan: _Plan, r: Rendered, ctx: Context) -> dict[str, Any]:
    c = r.choices[0][1]
    entries = _entries(plan, r, ctx)
    read = extract(c.text, plan.calls, plan.fault)
    output: list[Any] = []
    if read is not None:
        for i, call in enumerate(read):
            output.append(_call_item(plan, i, call, call.arguments_json, "completed"))
    elif c.text:  # an empty answer has no message item (vLLM's output parser)
        logprobs = None
        if entries is not None and plan.top_logprobs is not None:
            k = plan.top_logprobs
            logprobs = [
                _position(e, tid, k, False)
                for tid, e in zip(c.out, entries, strict=True)
                if e is not None
            ]
        output.append(_message_item(c.text, logprobs, "completed"))
    return _envelope(plan, r, r.request_id, _status(c.finish), output, _usage(r))


def _events(plan: _Plan, r: Rendered, ctx: Context) -> Iterator[tuple[str, dict[str, Any]]]:
    """The typed events of a stream, ``sequence_number`` from 0, ending with response.completed."""
    c = r.choices[0][1]
    tok = ctx.model.tokenizer
    entries = _entries(plan, r, ctx)
    head = _envelope(plan, r, r.request_id, "in_progress", [], None)
    yield "response.created", {"response": head}
    yield "response.in_progress", {"response": head}
    read = extract(c.text, plan.calls, plan.fault)
    output: list[dict[str, Any]] = []
    if read is not None:
        for index, call in enumerate(read):
            item = _call_item(plan, index, call, "", "in_progress")
            arguments = call.arguments_json
            yield "response.output_item.added", {"item": item, "output_index": index}
            for piece in _pieces(tok, arguments):
                yield (
                    "response.function_call_arguments.delta",
                    {"delta": piece, "item_id": item["id"], "output_index": index},
                )
            done_args = {"arguments": arguments, "item_id": item["id"], "output_index": index}
            yield "response.function_call_arguments.done", {**done_args, "name": call.name}
            final = {**item, "arguments": arguments, "status": "completed"}
            yield "response.output_item.done", {"item": final, "output_index": index}
            output.append(final)
    elif c.text:
        item = {**_message_item("", [], "in_progress"), "content": []}
        at = {"item_id": item["id"], "output_index": 0}
        yield "response.output_item.added", {"item": item, "output_index": 0}
        part = {"annotations": [], "text": "", "type": "output_text", "logprobs": []}
        yield "response.content_part.added", {"content_index": 0, **at, "part": part}
        streamed: list[Any] = []
        done = 0
        for j, tid in enumerate(c.out):
            upto = min(len(tok.decode_stable(c.out[: j + 1])), len(c.text))
            delta = c.text[done:upto]
            if not delta:  # vLLM sends no event (and so no logprob) for a token without text
                continue
            done = upto
            logprobs = []
            entry = entries[j] if entries is not None else None
            if entry is not None and plan.top_logprobs is not None:
                logprobs = [_position(entry, tid, plan.top_logprobs, True)]
                streamed.append(_position(entry, tid, plan.top_logprobs, False))
            yield (
                "response.output_text.delta",
                {"content_index": 0, "delta": delta, **at, "logprobs": logprobs},
            )
        kept = streamed if plan.top_logprobs is not None else None
        yield (
            "response.output_text.done",
            {"content_index": 0, **at, "logprobs": [], "text": c.text},
        )
        full = {**part, "text": c.text, "logprobs": kept}
        yield "response.content_part.done", {"content_index": 0, **at, "part": full}
        final_item = _message_item(c.text, kept, "completed")
        final_item["id"] = item["id"]
        yield "response.output_item.done", {"item": final_item, "output_index": 0}
        output.append(final_item)
    completed = _envelope(plan, r, r.request_id, _status(c.finish), output, _usage(r))
    yield "response.completed", {"response": completed}


def _responses(body: Any, ctx: Context) -> Reply:
    plan = _plan(body, ctx)
    text = script(plan.calls, plan.fault) if plan.calls else follow_up(plan.messages)
    rendered = render(plan.completion, ctx, text)
    rendered.request_id = f"resp_{_hex()}"
    rendered.created = int(time.time())
    if not body.get("stream"):
        return Reply(body=_complete(plan, rendered, ctx))
    events: list[tuple[str | None, Any]] = []
    for n, (name, data) in enumerate(_events(plan, rendered, ctx)):
        events.append((name, {**data, "sequence_number": n, "type": name}))
    return Reply(events=events, terminator=None)


def _stored(body: Any, ctx: Context) -> Reply:
    raise _not_found("")  # nothing is ever stored (the route sees no path parameters)


def alter_response(body: Any, mode: str) -> None:
    """Apply a body fault to a non-stream Responses reply, in place."""
    if mode == "usage-negative":
        negative_count(body.get("usage"), "input_tokens", "total_tokens")
        return
    if mode == "usage-off":
        usage = body.get("usage") or {}
        usage["input_tokens"] = usage.get("input_tokens", 0) + 1
        usage["total_tokens"] = usage.get("total_tokens", 0) + 1
        return
    for item in body.get("output", []):
        for part in item.get("content", []) if item.get("type") == "message" else []:
            for entry in part.get("logprobs") or []:
                if mode == "topk-short" and len(entry["top_logprobs"]) >= 2:
                    entry["top_logprobs"].pop()
                elif mode == "nan":
                    entry["logprob"] = math.nan
                elif mode == "short-prompt-logprobs" and part["logprobs"]:
                    del part["logprobs"][0]  # no prompt positions here: a sampled one goes
                    break


WIRE = Wire(
    name="vllm-responses",
    routes=(
        Route("POST", "/v1/responses", _responses),
        Route("GET", "/v1/responses/{response_id}", _stored),
    ),
    error=OPENAI_WIRE.error,
    bad_json=OPENAI_WIRE.bad_json,
    guarded=OPENAI_WIRE.guarded,
    authorized=OPENAI_WIRE.authorized,
    unauthorized=OPENAI_WIRE.unauthorized,
    alter=alter_response,
)
