"""The reply bodies of ``POST /v1/completions`` (one JSON object, or SSE chunks) as vLLM 0.32.0
writes them, from a request already rendered by ``completions.render``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..lm import ReferenceModel
from ..logprobs import (
    Entry,
    completion_logprobs,
    prompt_entries,
    prompt_logprobs_json,
    sample_entries,
)
from .completions import Rendered

__all__ = ["SYSTEM_FINGERPRINT", "complete", "stream_chunks"]

# -- reply bodies ---------------------------------------------------------------------------------


SYSTEM_FINGERPRINT = "sieval-reference-0.32.0"
"""vLLM reports ``vllm-<version>-<hash>``; the reference says what it is instead."""


def _usage(r: Rendered) -> dict[str, Any]:
    prompt_tokens = sum(len(p.ids) for p in r.prompts)
    completion = sum(len(c.out) for _, c in r.choices)
    return {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
        "completion_tokens_details": None,
    }


def complete(r: Rendered, model: ReferenceModel) -> dict[str, Any]:
    """The non-streaming reply body."""
    p = r.params
    choices = []
    prompt_cache: dict[int, list[Entry | None]] = {}
    for index, (pi, c) in enumerate(r.choices):
        prompt = r.prompts[pi]
        plp: list[Entry | None] | None = None
        if p.prompt_logprobs is not None:
            if pi not in prompt_cache:
                prompt_cache[pi] = prompt_entries(model, prompt.ids, p.prompt_logprobs)
            plp = prompt_cache[pi]
        logprobs = None
        if p.echo:
            prompt_text = "" if p.return_token_ids else prompt.text
            if c.hidden:
                ids: list[int] = list(prompt.ids)
                text = prompt_text
                entries = plp
            else:
                ids = [*prompt.ids, *c.out]
                text = prompt_text + c.text
                entries = None
                if p.logprobs is not None and plp is not None:
                    entries = [*plp, *sample_entries(model, prompt.ids, c.out, p.logprobs)]
        else:
            ids, text = c.out, c.text
            entries = (
                sample_entries(model, prompt.ids, c.out, p.logprobs)
                if p.logprobs is not None
                else None
            )
        if p.logprobs is not None and entries is not None:
            logprobs = completion_logprobs(model, ids, entries, p.as_token_ids, p.logprobs)
        choices.append(
            {
                "index": index,
                "text": text,
                "logprobs": logprobs,
                "finish_reason": c.finish,
                "stop_reason": c.stop_reason,
                "token_ids": list(c.out) if p.return_token_ids else None,
                "prompt_logprobs": prompt_logprobs_json(plp) if plp is not None else None,
                "prompt_token_ids": list(prompt.ids) if p.return_token_ids else None,
                "routed_experts": None,
            }
        )
    return {
        "id": r.request_id,
        "object": "text_completion",
        "created": r.created,
        "model": r.model,
        "choices": choices,
        "service_tier": None,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "usage": _usage(r),
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }


def stream_chunks(r: Rendered, model: ReferenceModel) -> Iterator[dict[str, Any]]:
    """The SSE chunk bodies, in order (the caller adds ``data: [DONE]``)."""
    p = r.params
    tok = model.tokenizer
    plans = []
    for index, (pi, c) in enumerate(r.choices):
        prompt = r.prompts[pi]
        # Per-token text deltas that concatenate to the final text.
        deltas: list[str] = []
        done = 0
        for j in range(len(c.out)):
            upto = min(len(tok.decode_stable(c.out[: j + 1])), len(c.text))
            if j == len(c.out) - 1:
                upto = len(c.text)
            deltas.append(c.text[done:upto])
            done = max(done, upto)
        steps: list[tuple[list[int], str, list[Entry | None] | None]] = []
        every = (
            sample_entries(model, prompt.ids, c.out, p.logprobs) if p.logprobs is not None else None
        )
        for j, tid in enumerate(c.out):
            steps.append(([tid], deltas[j], None if every is None else [every[j]]))
        if p.echo:
            prompt_text = "" if p.return_token_ids else prompt.text
            plp = prompt_entries(model, prompt.ids, p.logprobs) if p.logprobs is not None else None
            if c.hidden:
                steps = [(list(prompt.ids), prompt_text, plp)]
            else:
                first_ids, first_text, first_ent = steps[0]
                merged = [*plp, *first_ent] if plp is not None and first_ent is not None else None
                steps[0] = ([*prompt.ids, *first_ids], prompt_text + first_text, merged)
        plans.append((index, pi, c, steps))
    offsets = [0] * len(plans)
    longest = max(len(s) for *_, s in plans)
    for step in range(longest):
        for index, pi, c, steps in plans:
            if step >= len(steps):
                continue
            ids, text, ent = steps[step]
            last = step == len(steps) - 1
            logprobs = None
            if p.logprobs is not None and ent is not None:
                logprobs = completion_logprobs(
                    model, ids, ent, p.as_token_ids, p.logprobs, offsets[index]
                )
                offsets[index] = logprobs["text_offset"][-1] + len(logprobs["tokens"][-1])
            chunk: dict[str, Any] = {
                "id": r.request_id,
                "object": "text_completion",
                "created": r.created,
                "model": r.model,
                "choices": [
                    {
                        "index": index,
                        "text": text,
                        "logprobs": logprobs,
                        "finish_reason": c.finish if last else None,
                        "stop_reason": c.stop_reason if last else None,
                        "prompt_token_ids": (
                            list(r.prompts[pi].ids) if p.return_token_ids and step == 0 else None
                        ),
                        "token_ids": (list(c.out[step : step + 1]) if p.return_token_ids else None),
                    }
                ],
            }
            if p.continuous_usage:
                done_tokens = len(c.out) if c.hidden else step + 1
                pt = len(r.prompts[pi].ids)
                chunk["usage"] = {
                    "prompt_tokens": pt,
                    "total_tokens": pt + done_tokens,
                    "completion_tokens": done_tokens,
                }
            yield chunk
    if p.include_usage:
        usage = _usage(r)
        yield {
            "id": r.request_id,
            "object": "text_completion",
            "created": r.created,
            "model": r.model,
            "choices": [],
            "usage": {k: v for k, v in usage.items() if v is not None},
            "system_fingerprint": SYSTEM_FINGERPRINT,
        }
