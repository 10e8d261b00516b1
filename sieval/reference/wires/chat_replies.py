"""The reply bodies of ``POST /v1/chat/completions`` (one JSON object, or SSE chunks) as vLLM
0.32.0 writes them, from a chat request planned by ``vllm_chat.plan`` and rendered by
``completions.render``.

Keys as vLLM's ``ChatCompletionResponse`` / ``ChatCompletionStreamResponse`` dump them (nulls
included; ``tool_calls`` only when there are some). ``logprobs.content[]`` holds each sampled
token's decoded text, logprob and ``bytes`` (the UTF-8 of that text, as vLLM computes it), and a
``top_logprobs`` list built as vLLM builds it: the sampled token first, then the best tokens, cut
at ``top_logprobs`` entries, so the k-th best is missing whenever the sampled token is not among
the k best (wire reference 2.4).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..lm import ReferenceModel
from ..logprobs import Entry, sample_entries
from ..tool_calls import Call, Offer, call_id, extract
from .completion_replies import SYSTEM_FINGERPRINT
from .completions import Choice, Rendered

__all__ = ["ChatPlan", "chat_chunks", "chat_reply"]


@dataclass(frozen=True)
class ChatPlan:
    """A chat request turned into a completions request, and what the reply needs to know."""

    completion: dict[str, Any]
    """The body handed to the completions renderer."""
    top_logprobs: int | None
    """The ``top_logprobs`` list length when ``logprobs`` is true, else None."""
    offer: Offer
    """The tools offered and how they may be called (mode ``none`` without tools)."""
    messages: list[dict[str, Any]]
    """The conversation as the template's messages (call ids are derived from it)."""
    calls: tuple[Call, ...]
    """The calls the reply makes (none: a text answer)."""
    script: str | None
    """What every choice writes instead of the model's own text (calls, or a follow-up)."""
    fault: str | None = None
    """A tool-call parser fault of the server, if any."""


def _entries(
    model: ReferenceModel, prompt: list[int], out: list[int], k: int
) -> list[dict[str, Any]]:
    entries: list[Entry | None] = sample_entries(model, prompt, out, k)
    content = []
    for tid, entry in zip(out, entries, strict=True):
        assert entry is not None
        ranked = list(entry.values()) if k == -1 else list(entry.values())[:k]
        token = entry[tid][2]
        content.append(
            {
                "token": token,
                "logprob": entry[tid][0],
                "bytes": list(token.encode("utf-8", errors="replace")),
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode("utf-8", errors="replace"))}
                    for lp, _rank, t in ranked
                ],
            }
        )
    return content


def _read(plan: ChatPlan, c: Choice) -> tuple[Call, ...] | None:
    """The calls the server's parser reads from a choice; None: the text is the answer."""
    return extract(c.text, plan.calls, plan.fault)


def _finish(plan: ChatPlan, c: Choice, read: tuple[Call, ...] | None) -> str:
    """vLLM's: ``tool_calls`` for ``required`` (when generation stopped) and for ``auto`` when
    the parser found calls; a named call finishes as the generation did (``stop``)."""
    if plan.offer.mode == "required" and c.finish == "stop":
        return "tool_calls"
    if plan.offer.mode == "auto" and read is not None:
        return "tool_calls"
    return c.finish


def _calls(plan: ChatPlan, read: tuple[Call, ...], choice: int) -> list[dict[str, Any]]:
    return [
        {
            "id": call_id(plan.messages, i, choice=choice),
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json},
        }
        for i, call in enumerate(read)
    ]


def _usage(r: Rendered) -> dict[str, int]:
    prompt = sum(len(p.ids) for p in r.prompts)
    completion = sum(len(c.out) for _, c in r.choices)
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
    }


def _chat_id(r: Rendered) -> str:
    return "chatcmpl-" + r.request_id.removeprefix("cmpl-")[:16]


def chat_reply(r: Rendered, plan: ChatPlan, model: ReferenceModel) -> dict[str, Any]:
    """The non-streaming reply body."""
    choices = []
    for index, (pi, c) in enumerate(r.choices):
        read = _read(plan, c)
        message: dict[str, Any] = {
            "role": "assistant",
            # no text before the calls: null under auto, "" for a forced call (vLLM's)
            "content": c.text if read is None else None if plan.offer.mode == "auto" else "",
            "refusal": None,
            "annotations": None,
            "audio": None,
            "function_call": None,
            "reasoning": None,
        }
        if read is not None:
            message["tool_calls"] = _calls(plan, read, index)
        logprobs = None
        if plan.top_logprobs is not None:
            ids = r.prompts[pi].ids
            logprobs = {"content": _entries(model, ids, c.out, plan.top_logprobs)}
        choices.append(
            {
                "index": index,
                "message": message,
                "logprobs": logprobs,
                "finish_reason": _finish(plan, c, read),
                "stop_reason": c.stop_reason,
                "token_ids": None,
                "routed_experts": None,
            }
        )
    usage: dict[str, Any] = {
        **_usage(r),
        "prompt_tokens_details": None,
        "completion_tokens_details": None,
    }
    return {
        "id": _chat_id(r),
        "object": "chat.completion",
        "created": r.created,
        "model": r.model,
        "choices": choices,
        "service_tier": None,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "usage": usage,
        "prompt_logprobs": None,
        "prompt_token_ids": None,
        "prompt_text": None,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }


def _pieces(model: ReferenceModel, out: list[int], text: str) -> list[str]:
    """Per-token text deltas that concatenate to ``text`` (a byte half adds nothing)."""
    pieces: list[str] = []
    done = 0
    for j in range(len(out)):
        upto = min(len(model.tokenizer.decode_stable(out[: j + 1])), len(text))
        if j == len(out) - 1:
            upto = len(text)
        pieces.append(text[done:upto])
        done = max(done, upto)
    return pieces


def _delta(index: int, delta: dict[str, Any], logprobs: Any = None) -> dict[str, Any]:
    return {
        "index": index,
        "delta": delta,
        "logprobs": logprobs,
        "finish_reason": None,
        "token_ids": None,
    }


def _call_steps(
    plan: ChatPlan, model: ReferenceModel, index: int, read: tuple[Call, ...]
) -> list[dict[str, Any]]:
    """The chunks of parsed calls, as vLLM's hermes parser streams them: per call a header
    (id, name), then its arguments piece by piece, then an empty delta that finishes."""
    out = []
    for n, call in enumerate(_calls(plan, read, index)):
        header = {"id": call["id"], "type": "function", "index": n}
        header["function"] = {"name": call["function"]["name"]}
        out.append(_delta(index, {"content": None, "tool_calls": [header]}))
        arguments = call["function"]["arguments"]
        ids = model.tokenize(arguments, add_bos=False)
        for piece in _pieces(model, ids, arguments):
            fn = {"index": n, "function": {"arguments": piece}}
            out.append(_delta(index, {"content": None, "tool_calls": [fn]}))
    out.append(_delta(index, {}))
    return out


def _steps(r: Rendered, plan: ChatPlan, model: ReferenceModel, index: int) -> list[dict[str, Any]]:
    """One choice's chunk ``choices[0]`` entries after its role chunk, in order."""
    pi, c = r.choices[index]
    read = _read(plan, c)
    if read is not None:
        out = _call_steps(plan, model, index, read)
    else:
        entries = None
        if plan.top_logprobs is not None:
            entries = _entries(model, r.prompts[pi].ids, c.out, plan.top_logprobs)
        out = [
            _delta(
                index,
                {"content": piece},
                {"content": [entries[j]]} if entries is not None else None,
            )
            for j, piece in enumerate(_pieces(model, c.out, c.text))
        ]
    out[-1]["finish_reason"] = _finish(plan, c, read)
    out[-1]["stop_reason"] = c.stop_reason
    return out


def chat_chunks(r: Rendered, plan: ChatPlan, model: ReferenceModel) -> Iterator[dict[str, Any]]:
    """The SSE chunk bodies, in order (the caller adds ``data: [DONE]``)."""
    head = {
        "id": _chat_id(r),
        "object": "chat.completion.chunk",
        "created": r.created,
        "model": r.model,
    }
    for index in range(len(r.choices)):
        role = {"role": "assistant", "content": ""}
        choice = {"index": index, "delta": role, "logprobs": None, "finish_reason": None}
        yield {**head, "choices": [choice], "prompt_token_ids": None, "prompt_text": None}
    steps = [_steps(r, plan, model, i) for i in range(len(r.choices))]
    for j in range(max(len(s) for s in steps)):
        for s in steps:
            if j < len(s):
                yield {**head, "choices": [s[j]]}
    if r.params.include_usage:
        yield {**head, "choices": [], "usage": _usage(r), "system_fingerprint": SYSTEM_FINGERPRINT}
