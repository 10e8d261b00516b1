"""Logprob channels as vLLM 0.32.0 builds them: per-position entries and the two wire forms.

An entry maps token id -> (logprob, rank, decoded_token) with the ACTUAL token first, then
ranks 1..k (``append_logprobs_for_next_position``); ``completion_logprobs`` renders the OpenAI
``logprobs`` object keyed by decoded text (later entries overwrite earlier ones with the same
text), ``prompt_logprobs_json`` the id-keyed ``prompt_logprobs`` list. −inf is clamped to −9999.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .lm import ReferenceModel

__all__ = [
    "Entry",
    "completion_logprobs",
    "prompt_entries",
    "prompt_logprobs_json",
    "sample_entries",
]

_CLAMP = -9999.0


Entry = dict[int, tuple[float, int, str]]  # id -> (logprob, rank, decoded_token)


def _position(
    model: ReferenceModel, context: Sequence[int], actual: int, k: int, decode_ctx: Sequence[int]
) -> Entry:
    dist = model.distribution(context)
    tok = model.tokenizer
    lp = dist.logprobs
    ids = [actual, *(dist.order if k == -1 else dist.top(k))]
    entry: Entry = {}
    for tid in ids:
        entry[tid] = (max(lp[tid], _CLAMP), dist.rank(tid), tok.decoded_token(tid, decode_ctx))
    return entry


def prompt_entries(model: ReferenceModel, ids: list[int], k: int) -> list[Entry | None]:
    out: list[Entry | None] = [None]
    for i in range(1, len(ids)):
        out.append(_position(model, ids[:i], ids[i], k, ids[max(1, i - 4) : i]))
    return out


def sample_entries(
    model: ReferenceModel, prompt: list[int], out: list[int], k: int
) -> list[Entry | None]:
    entries: list[Entry | None] = []
    for j, tid in enumerate(out):
        entries.append(_position(model, prompt + out[:j], tid, k, out[max(0, j - 4) : j]))
    return entries


def completion_logprobs(
    model: ReferenceModel,
    ids: Sequence[int],
    entries: Sequence[Entry | None],
    as_ids: bool,
    k: int,
    initial_offset: int = 0,
) -> dict[str, Any]:
    tokens: list[str] = []
    token_logprobs: list[float | None] = []
    top: list[dict[str, float] | None] = []
    offsets: list[int] = []
    last_len = 0
    for tid, entry in zip(ids, entries, strict=True):
        if entry is None:
            token = f"token_id:{tid}" if as_ids else model.token_text(tid)
            token_logprobs.append(None)
            top.append(None)
        else:
            token = f"token_id:{tid}" if as_ids else entry[tid][2]
            token_logprobs.append(entry[tid][0])
            items = list(entry.items())
            if k != -1:
                items = items[: k + 1]  # vLLM keeps entries while ``k >= position``
            top.append({(f"token_id:{i}" if as_ids else v[2]): v[0] for i, v in items})
        tokens.append(token)
        offsets.append(initial_offset if not offsets else offsets[-1] + last_len)
        last_len = len(token)
    return {
        "text_offset": offsets,
        "token_logprobs": token_logprobs,
        "tokens": tokens,
        "top_logprobs": top,
    }


def prompt_logprobs_json(entries: list[Entry | None]) -> list[dict[str, Any] | None]:
    return [
        None
        if e is None
        else {str(i): {"logprob": v[0], "rank": v[1], "decoded_token": v[2]} for i, v in e.items()}
        for e in entries
    ]
