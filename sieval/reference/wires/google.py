"""Google's Gemini API routes, as the reference server speaks them (wire reference section 5).

``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent`` behind
``x-goog-api-key``, with Google's error envelope ``{"error": {"code", "message", "status"}}``. This
is the full wire the LiteLLM proxy cannot show: ``logprobsResult`` (one chosen candidate per
decoding step, ``topCandidates`` sorted and exactly ``logprobs`` long, token ids),
``candidateCount``, ``seed``, ``topK``, the penalties, and function calling: declared functions
are called as ``tool_calls.py`` decides (``functionCallingConfig`` mode ``AUTO`` by default,
``ANY``, ``NONE``, ``VALIDATED`` as ``AUTO``; ``allowedFunctionNames`` bounds the choice; more
than one call may come back), each a ``functionCall`` part ``{name, args}`` (no id, as Gemini
sends none) with ``finishReason`` ``STOP``; a call cut by ``maxOutputTokens`` is
``MALFORMED_FUNCTION_CALL``. History is checked as Google checks it: a ``functionResponse`` turn
must follow a ``functionCall`` turn and answer each of its calls, and ``args`` / ``response`` are
objects (protobuf ``Struct``s); a conversation ending with responses is answered by quoting them.
Unknown fields are a 400, as on Google; top-level, ``generationConfig`` and part names are
accepted in camelCase and snake_case.

The body becomes a message list in the live Gemma's turn format (``chat_template``) and runs
through the completions renderer (sampling, stop strings, seeds, the JSON grammar); its vLLM errors
come back in Google's envelope. Only the served model id is answered in the path (Google's 404
``models/x is not found for API version v1beta`` otherwise), and ``GET /v1beta/models`` and
``GET /v1beta/models/{model}`` describe it as Google's ``Model``; the stream route answers SSE
with or without ``alt=sse``. The stream has no terminator
(Google's ends with the body). Body faults: ``topk-short`` drops one alternative per step, ``nan``
makes every logprob NaN, ``usage-off`` adds one to ``candidatesTokenCount``,
``short-prompt-logprobs`` drops the last chosen step.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Mapping
from typing import Any

from ..chat_template import render_messages
from ..faults import negative_count
from ..logprobs import sample_entries
from ..tokenizer import EOS_ID
from ..tool_calls import Mode, Offer, Tool, decide, extract, follow_up, script
from . import Context, Reply, Route, Wire, WireError
from .completions import Rendered, render

__all__ = ["MAX_LOGPROBS", "WIRE", "google_envelope"]

MAX_LOGPROBS = 20
MAX_STOP = 5

_CANONICAL = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def google_envelope(status: int, message: str) -> dict[str, Any]:
    return {
        "error": {"code": status, "message": message, "status": _CANONICAL.get(status, "UNKNOWN")}
    }


def _invalid(message: str) -> WireError:
    return WireError(400, google_envelope(400, message))


# -- request checks (names as the proto has them; snake_case accepted too) ------------------------

_TOP = {
    "contents",
    "systemInstruction",
    "generationConfig",
    "tools",
    "toolConfig",
    "safetySettings",  # accepted: the reference model has no safety filter to configure
}
_CONFIG = {
    "temperature",
    "topP",
    "topK",
    "candidateCount",
    "maxOutputTokens",
    "stopSequences",
    "seed",
    "presencePenalty",
    "frequencyPenalty",
    "responseMimeType",
    "responseSchema",
    "responseJsonSchema",
    "responseLogprobs",
    "logprobs",
    "thinkingConfig",
}
_PART = {"text", "inlineData", "functionCall", "functionResponse", "thought", "thoughtSignature"}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _fields(obj: Any, known: set[str], where: str) -> dict[str, Any]:
    """``obj`` with camelCase keys; an unknown key is Google's 400."""
    if not isinstance(obj, dict):
        raise _invalid(f"Invalid value at '{where}': expected an object")
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = _camel(key)
        if name not in known:
            raise _invalid(
                f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': "
                "Cannot find field."
            )
        out[name] = value
    return out


# -- contents -> the live template's messages -----------------------------------------------------


def _struct(value: Any, where: str) -> dict[str, Any]:
    """A protobuf ``Struct`` field: a JSON object, else Google's 400 naming the field."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _invalid(
            f"Invalid value at '{where}' (type.googleapis.com/google.protobuf.Struct), "
            f"{json.dumps(value)}"
        )
    return value


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system = body.get("systemInstruction")
    if system is not None:
        parts = [_fields(p, _PART, "system_instruction.parts") for p in _parts(system)]
        out.append({"role": "system", "content": "\n".join(str(p.get("text", "")) for p in parts)})
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _invalid("* GenerateContentRequest.contents: contents is not specified")
    pending = 0  # the calls of the turn before, which a response turn must answer
    for i, content in enumerate(contents):
        role = content.get("role", "user") if isinstance(content, dict) else None
        if role not in ("user", "model"):
            raise _invalid("Please use a valid role: user, model.")
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        answers = 0
        for j, part in enumerate(
            _fields(p, _PART, f"contents[{i}].parts") for p in _parts(content)
        ):
            at = f"contents[{i}].parts[{j}]"
            if "inlineData" in part:
                raise _invalid("sieval reference: the reference model reads text only (inlineData)")
            if "functionResponse" in part:
                answer = part["functionResponse"] or {}
                response = _struct(answer.get("response"), f"{at}.function_response.response")
                out.append(
                    {"role": "tool", "content": json.dumps(response), "name": answer.get("name")}
                )
                answers += 1
            elif "functionCall" in part:
                call = part["functionCall"] or {}
                args = _struct(call.get("args"), f"{at}.function_call.args")
                calls.append({"id": None, "name": call.get("name"), "arguments": args})
            elif "text" in part and not part.get("thought"):
                texts.append(str(part["text"]))
        if answers and not pending:
            raise _invalid(
                "Please ensure that function response turn comes immediately after a function "
                "call turn."
            )
        if answers and answers != pending:
            raise _invalid(
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )
        pending = len(calls)
        if texts or calls:
            turn: dict[str, Any] = {
                "role": "assistant" if role == "model" else "user",
                "content": "\n".join(texts),
            }
            if calls:
                turn["tool_calls"] = calls
            out.append(turn)
    return out


def _parts(content: Any) -> list[Any]:
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        raise _invalid("* GenerateContentRequest.contents[].parts: parts must be a list")
    return parts


# -- generationConfig -> the completions renderer's body ----------------------------------------

_PASSED = {
    "temperature": "temperature",
    "topP": "top_p",
    "topK": "top_k",
    "candidateCount": "n",
    "maxOutputTokens": "max_tokens",
    "stopSequences": "stop",
    "seed": "seed",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
}


def _openapi(schema: Any) -> Any:
    """A ``responseSchema`` / ``parameters`` (OpenAPI subset: ``OBJECT``, ``propertyOrdering``) as
    JSON Schema."""
    if isinstance(schema, dict):
        return {
            k: (v.lower() if k == "type" and isinstance(v, str) else _openapi(v))
            for k, v in schema.items()
            if k != "propertyOrdering"
        }
    if isinstance(schema, list):
        return [_openapi(v) for v in schema]
    return schema


def _whole(value: Any) -> Any:
    """proto3 JSON takes ``5.0`` for an integer field (google-genai sends ``topK`` as a float)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _completion_body(config: dict[str, Any], prompt: str) -> tuple[dict[str, Any], int | None]:
    """The renderer's body, and the number of alternatives per step (``None``: no logprobs)."""
    if "thinkingConfig" in config:
        raise _invalid("sieval reference: the reference model does not think (thinkingConfig)")
    stop = config.get("stopSequences") or []
    if len(stop) > MAX_STOP:
        raise _invalid(f"stop_sequences: at most {MAX_STOP} stop sequences are allowed")
    body: dict[str, Any] = {"prompt": prompt, "max_tokens": config.get("maxOutputTokens", 1024)}
    body.update({_PASSED[k]: _whole(v) for k, v in config.items() if k in _PASSED})
    top_k = body.get("top_k")
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise _invalid("top_k must be a positive integer")
    k: int | None = None
    if config.get("responseLogprobs"):
        k = config.get("logprobs", 0)
        if not isinstance(k, int) or not 0 <= k <= MAX_LOGPROBS:
            raise _invalid(f"logprobs must be in the range [0, {MAX_LOGPROBS}]")
    elif "logprobs" in config:
        raise _invalid("logprobs is only valid when responseLogprobs is true")
    mime = config.get("responseMimeType", "text/plain")
    schema = config.get("responseJsonSchema")
    if schema is None and "responseSchema" in config:
        schema = _openapi(config["responseSchema"])
    if schema is not None and mime != "application/json":
        raise _invalid("response_mime_type must be application/json with a response schema")
    if mime == "application/json":
        fmt = {"type": "json_schema", "json_schema": {"schema": schema}} if schema else None
        body["response_format"] = fmt or {"type": "json_object"}
    return body, k


# -- the candidates -----------------------------------------------------------------------------


def _step(tid: int, entry: dict[int, tuple[float, int, str]]) -> dict[str, Any]:
    logprob, _, text = entry[tid]
    return {"token": text, "tokenId": tid, "logProbability": logprob}


def _logprobs(ctx: Context, prompt: list[int], out: list[int], k: int) -> dict[str, Any]:
    entries = sample_entries(ctx.model, prompt, out, k)
    chosen, top = [], []
    for tid, entry in zip(out, entries, strict=True):
        assert entry is not None
        chosen.append(_step(tid, entry))
        ranked = sorted((v[1], i) for i, v in entry.items() if v[1] <= k)
        top.append({"candidates": [_step(i, entry) for _, i in ranked]})
    total = math.fsum(c["logProbability"] for c in chosen)
    return {"chosenCandidates": chosen, "topCandidates": top, "logProbabilitySum": total}


def _get(obj: Any, name: str) -> Any:
    """A field by its camelCase name or its snake_case one (the SDK sends
    ``parameters_json_schema`` inside ``functionDeclarations``)."""
    if not isinstance(obj, dict):
        return None
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return obj.get(name, obj.get(snake))


def _offer(body: dict[str, Any]) -> Offer:
    """The declared functions and how they may be called (``functionCallingConfig``)."""
    calling = _get(body.get("toolConfig"), "functionCallingConfig") or {}
    mode = str(calling.get("mode", "AUTO")).upper()
    declared = tuple(
        Tool(
            str(d.get("name")),
            str(d.get("description") or ""),
            _get(d, "parametersJsonSchema") or _openapi(d.get("parameters")),
        )
        for t in body.get("tools") or []
        for d in _get(t, "functionDeclarations") or []
        if isinstance(d, dict)
    )
    allowed = _get(calling, "allowedFunctionNames")
    bound = tuple(str(n) for n in allowed) if isinstance(allowed, list) and allowed else None
    modes: dict[str, Mode] = {"ANY": "required", "NONE": "none"}
    return Offer(declared, modes.get(mode, "auto"), allowed=bound)


class _Plan:
    """What both reply forms are built from: per candidate its steps, parts (None: no content)
    and finish."""

    def __init__(self, body: dict[str, Any], ctx: Context) -> None:
        self.body = _fields(body, _TOP, "GenerateContentRequest")
        config = _fields(self.body.get("generationConfig") or {}, _CONFIG, "generation_config")
        messages = _messages(self.body)
        completion, self.k = _completion_body(config, render_messages(messages))
        calls = decide(messages, _offer(self.body))
        text = script(calls, ctx.tool_fault) if calls else follow_up(messages)
        try:
            rendered: Rendered = render(completion, ctx, text)
        except WireError as exc:
            message = _vllm_message(exc.body())
            raise WireError(exc.status, google_envelope(exc.status, message)) from exc
        self.prompt = rendered.prompts[0].ids
        self.candidates: list[tuple[list[int], list[dict[str, Any]] | None, str]] = []
        for _, choice in rendered.choices:
            finish = "STOP" if choice.finish == "stop" else "MAX_TOKENS"
            read = extract(choice.text, calls, ctx.tool_fault)
            parts: list[dict[str, Any]] | None = [{"text": choice.text}]
            if read is not None:
                parts = [{"functionCall": {"name": c.name, "args": c.arguments}} for c in read]
            elif calls and ctx.tool_fault != "tool-calls-as-text":
                parts, finish = None, "MALFORMED_FUNCTION_CALL"  # a call cut short
            self.candidates.append((_no_eos(choice.out), parts, finish))
        self.ctx = ctx
        self.response_id = uuid.uuid4().hex[:22]

    def usage(self, generated: int) -> dict[str, Any]:
        prompt = len(self.prompt)
        return {
            "promptTokenCount": prompt,
            "candidatesTokenCount": generated,
            "totalTokenCount": prompt + generated,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        }


def _no_eos(ids: list[int]) -> list[int]:
    """Decoding steps as Google counts them: the end-of-sequence token is not one."""
    return ids[:-1] if ids and ids[-1] == EOS_ID else list(ids)


def _vllm_message(body: Any) -> str:
    err = body.get("error") if isinstance(body, dict) else None
    return str(err.get("message")) if isinstance(err, dict) else str(body)


def _candidate(plan: _Plan, index: int) -> dict[str, Any]:
    ids, parts, finish = plan.candidates[index]
    out: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "finishReason": finish}
    if parts is None:
        out = {"finishReason": finish}
    out["index"] = index
    if plan.k is not None:
        result = _logprobs(plan.ctx, plan.prompt, ids, plan.k)
        out["avgLogprobs"] = result["logProbabilitySum"] / len(ids) if ids else 0.0
        out["logprobsResult"] = result
    return out


def _generate(body: Any, ctx: Context) -> Reply:
    plan = _Plan(body, ctx)
    return Reply(
        body={
            "candidates": [_candidate(plan, i) for i in range(len(plan.candidates))],
            "usageMetadata": plan.usage(sum(len(ids) for ids, _, _ in plan.candidates)),
            "modelVersion": ctx.served_model,
            "responseId": plan.response_id,
        }
    )


def _deltas(ctx: Context, ids: list[int], text: str) -> list[str]:
    """Per-step text pieces that concatenate to ``text`` (stable UTF-8 prefixes)."""
    out: list[str] = []
    done = 0
    for j in range(len(ids)):
        upto = (
            len(text)
            if j == len(ids) - 1
            else min(len(ctx.model.tokenizer.decode_stable(ids[: j + 1])), len(text))
        )
        out.append(text[done:upto])
        done = max(done, upto)
    return out


def _stream(body: Any, ctx: Context) -> Reply:
    plan = _Plan(body, ctx)
    events: list[tuple[str | None, Any]] = []
    generated = 0
    for index, (ids, parts, finish) in enumerate(plan.candidates):
        whole = _candidate(plan, index)
        text_parts = [p for p in parts or [] if "text" in p]
        pieces = _deltas(ctx, ids, text_parts[0]["text"]) if text_parts and ids else [None]
        for j, piece in enumerate(pieces):
            last = j == len(pieces) - 1
            delta: dict[str, Any] = {"index": index}
            if piece is not None:
                delta["content"] = {"parts": [{"text": piece}], "role": "model"}
            elif parts is not None:
                delta["content"] = {"parts": parts, "role": "model"}
            if "logprobsResult" in whole:
                result = whole["logprobsResult"]
                steps = slice(j, j + 1) if piece is not None else slice(None)
                delta["logprobsResult"] = {
                    "chosenCandidates": result["chosenCandidates"][steps],
                    "topCandidates": result["topCandidates"][steps],
                }
            if last:
                delta["finishReason"] = finish
            generated += 1 if piece is not None else len(ids)
            events.append(
                (
                    None,
                    {
                        "candidates": [delta],
                        "usageMetadata": plan.usage(generated),
                        "modelVersion": ctx.served_model,
                        "responseId": plan.response_id,
                    },
                )
            )
    return Reply(events=events, terminator=None)


# -- auth, errors, faults -----------------------------------------------------------------------


def _authorized(headers: Mapping[str, str], key: str) -> bool:
    return headers.get("x-goog-api-key") == key


def _bad_json(decode_error: str | None) -> WireError:
    if decode_error is None:
        return _invalid(
            'Invalid JSON payload received. Unknown name "": Root element must be a message.'
        )
    return _invalid(f"Invalid JSON payload received. {decode_error}")


def _alter(body: Any, mode: str) -> None:
    usage = body.get("usageMetadata") or {}
    if mode == "usage-negative":
        negative_count(usage, "promptTokenCount", "totalTokenCount")
        return
    if mode == "usage-off":
        usage["candidatesTokenCount"] = usage.get("candidatesTokenCount", 0) + 1
        usage["totalTokenCount"] = usage.get("totalTokenCount", 0) + 1
        return
    for candidate in body.get("candidates", []):
        result = candidate.get("logprobsResult")
        if not result:
            continue
        if mode == "short-prompt-logprobs" and result["chosenCandidates"]:
            result["chosenCandidates"].pop()
        elif mode == "topk-short":
            for step in result["topCandidates"]:
                if len(step["candidates"]) >= 2:
                    step["candidates"].pop()
        elif mode == "nan":
            for entry in result["chosenCandidates"]:
                entry["logProbability"] = math.nan
            for step in result["topCandidates"]:
                for entry in step["candidates"]:
                    entry["logProbability"] = math.nan


def _model(ctx: Context) -> dict[str, Any]:
    """The served model as Google's ``Model`` resource (the fields google-genai reads)."""
    return {
        "name": f"models/{ctx.served_model}",
        "version": "1",
        "displayName": ctx.served_model,
        "description": "sieval's reference n-gram model (not a real LLM)",
        "inputTokenLimit": ctx.max_model_len,
        "outputTokenLimit": ctx.max_model_len,
        "supportedGenerationMethods": ["generateContent"],
        "temperature": 1.0,
        "maxTemperature": 2.0,
    }


def _get_model(body: Any, ctx: Context) -> Reply:
    return Reply(body=_model(ctx))


def _list_models(body: Any, ctx: Context) -> Reply:
    return Reply(body={"models": [_model(ctx)]})


def _unknown_model(name: str, route: str) -> WireError:
    """Google's 404 for a model it does not serve (its generateContent wording; the method is
    the route's: ``generateContent``, ``streamGenerateContent``, ``getModel``)."""
    method = route.rpartition(":")[2] if ":" in route else "getModel"
    message = (
        f"models/{name} is not found for API version v1beta, or is not supported for "
        f"{method}. Call ListModels to see the list of available models and their supported "
        "methods."
    )
    return WireError(404, google_envelope(404, message))


WIRE = Wire(
    name="google-genai",
    routes=(
        Route("POST", "/v1beta/models/{model}:generateContent", _generate, model_param="model"),
        Route("POST", "/v1beta/models/{model}:streamGenerateContent", _stream, model_param="model"),
        Route("GET", "/v1beta/models", _list_models, faults=False),
        Route("GET", "/v1beta/models/{model}", _get_model, faults=False, model_param="model"),
    ),
    unknown_model=_unknown_model,
    error=lambda status, message, kind: google_envelope(status, message),
    bad_json=_bad_json,
    guarded=("/v1beta",),
    authorized=_authorized,
    unauthorized=(400, google_envelope(400, "API key not valid. Please pass a valid API key.")),
    alter=_alter,
)
