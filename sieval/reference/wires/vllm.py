"""vLLM 0.32.0's OpenAI-family routes, as the reference server speaks them.

``POST /v1/completions`` (rendered by ``completions.py``, bodies by ``completion_replies.py``),
``GET /v1/models``, ``GET /version``, ``GET /health`` and ``POST /tokenize``; Bearer auth on
``/v1``, ``/v2`` and ``/inference`` (a bare ``{"error": "Unauthorized"}`` otherwise); vLLM's
error envelope; and the body faults that alter a completions reply. ``/version`` has vLLM's one
key with an honest value, so a run's provenance never mistakes the reference for a real vLLM.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..chat_template import render_messages
from ..envelopes import VllmError, plain, vllm_envelope
from ..faults import negative_count
from . import Context, Reply, Route, Wire
from .completion_replies import complete, stream_chunks
from .completions import render

__all__ = ["EMULATED_VLLM", "VERSION_STRING", "WIRE"]

EMULATED_VLLM = "0.32.0"
VERSION_STRING = f"sieval-reference (vllm {EMULATED_VLLM} wire)"


def _completions(body: Any, ctx: Context) -> Reply:
    rendered = render(body, ctx)
    if rendered.params.stream:
        return Reply(events=[(None, chunk) for chunk in stream_chunks(rendered, ctx.model)])
    return Reply(body=complete(rendered, ctx.model))


def _models(body: Any, ctx: Context) -> Reply:
    created = 0
    return Reply(
        body={
            "object": "list",
            "data": [
                {
                    "id": ctx.served_model,
                    "object": "model",
                    "created": created,
                    "owned_by": "vllm",
                    "root": ctx.served_model,
                    "parent": None,
                    "max_model_len": ctx.max_model_len,
                    "permission": [
                        {
                            "id": "modelperm-sieval-reference",
                            "object": "model_permission",
                            "created": created,
                            "allow_create_engine": False,
                            "allow_sampling": True,
                            "allow_logprobs": True,
                            "allow_search_indices": False,
                            "allow_view": True,
                            "allow_fine_tuning": False,
                            "organization": "*",
                            "group": None,
                            "is_blocking": False,
                        }
                    ],
                }
            ],
        }
    )


def _version(body: Any, ctx: Context) -> Reply:
    return Reply(body={"version": VERSION_STRING})


def _health(body: Any, ctx: Context) -> Reply:
    return Reply(body=None)


def _tokenize(body: Any, ctx: Context) -> Reply:
    """vLLM's ``POST /tokenize``: a ``prompt`` (the BOS added unless ``add_special_tokens`` is
    false), or ``messages`` through the chat template (``chat_template.render_messages``, the
    generation prompt unless ``add_generation_prompt`` is false), tokenized exactly as the chat
    route tokenizes its prompt: the BOS the live template writes as text, and a second one only
    when ``add_special_tokens`` is true (vLLM's default for messages is false)."""
    if "messages" in body:
        from .vllm_chat import _messages

        rendered = render_messages(
            _messages(body, ctx.served_model), body.get("add_generation_prompt", True) is not False
        )
        ids = ctx.model.tokenize(rendered, add_bos=True)
        if body.get("add_special_tokens") is True:
            ids = [ids[0], *ids]  # the tokenizer's BOS before the template's, as vLLM does
        return _tokens(ids, body, ctx)
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise plain("prompt must be a string", param="prompt")
    ids = ctx.model.tokenize(prompt, add_bos=body.get("add_special_tokens", True) is not False)
    return _tokens(ids, body, ctx)


def _tokens(ids: list[int], body: Any, ctx: Context) -> Reply:
    strs = [ctx.model.token_text(i) for i in ids] if body.get("return_token_strs") else None
    return Reply(
        body={
            "count": len(ids),
            "max_model_len": ctx.max_model_len,
            "tokens": ids,
            "token_strs": strs,
        }
    )


def _bad_json(decode_error: str | None) -> VllmError:
    if decode_error is not None:
        detail = (
            "{'type': 'json_invalid', 'loc': 'body', 'msg': 'JSON decode error', "
            f"'ctx': {{'error': '{decode_error}'}}}}"
        )
    else:
        detail = (
            "{'type': 'model_attributes_type', 'loc': 'body', "
            "'msg': 'Input should be a valid dictionary or object to extract fields from'}"
        )
    return VllmError(400, f"1 validation error:\n  {detail}", "Bad Request", "body")


def _bearer(headers: Mapping[str, str], key: str) -> bool:
    return headers.get("Authorization", "") == f"Bearer {key}"


def alter_completion(body: Any, mode: str) -> None:
    """Apply a body fault to a non-stream completions reply, in place."""
    if mode == "usage-negative":
        negative_count(body.get("usage"), "prompt_tokens", "total_tokens")
        return
    if mode == "usage-off":
        usage = body.get("usage") or {}
        usage["prompt_tokens"] = usage.get("prompt_tokens", 0) + 1
        usage["total_tokens"] = usage.get("total_tokens", 0) + 1
        return
    for choice in body.get("choices", []):
        lp = choice.get("logprobs")
        plp = choice.get("prompt_logprobs")
        if mode == "short-prompt-logprobs":
            if plp:
                plp.pop()
            if lp and lp.get("tokens") and len(lp["tokens"]) > 1:
                for key in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
                    del lp[key][1]
        elif mode == "topk-short":
            for d in [*(lp["top_logprobs"] if lp else []), *(plp or [])]:
                if d and len(d) >= 2:
                    d.pop(next(reversed(d)))
        elif mode == "nan":
            if lp:
                lp["token_logprobs"] = [
                    None if x is None else math.nan for x in lp["token_logprobs"]
                ]
                for d in lp["top_logprobs"]:
                    if d:
                        for k in d:
                            d[k] = math.nan
            for d in plp or []:
                if d:
                    for v in d.values():
                        v["logprob"] = math.nan


WIRE = Wire(
    name="vllm-openai",
    routes=(
        Route("POST", "/v1/completions", _completions),
        Route("GET", "/v1/models", _models),
        Route("GET", "/version", _version),
        Route("GET", "/health", _health),
        Route("POST", "/tokenize", _tokenize, faults=False),
    ),
    error=lambda status, message, kind: vllm_envelope(status, message, kind),
    bad_json=_bad_json,
    guarded=("/v1", "/v2", "/inference"),
    authorized=_bearer,
    alter=alter_completion,
)
