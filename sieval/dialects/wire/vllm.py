"""vLLM's own fields on its OpenAI routes, as rows that compose with an OpenAI table.

vLLM 0.32.0 (wire reference section 7): ``prompt_logprobs`` (keyed by token id, complete or
refused), ``return_token_ids``, ``structured_outputs``, ``top_k`` and a few engine options. vLLM
accepts and ignores an unknown field (0.3), so an option is forwarded only when it is on the list
below, and never when it names a body field the IR already owns.
"""

from __future__ import annotations

from itertools import accumulate
from operator import attrgetter, itemgetter
from typing import Any, cast

import msgspec
from msgspec import UNSET

from ...ir.request import Scoring, StructuredOutput
from ...ir.response import Token, TopEntry
from ..checks import LOGPROB_TOLERANCE, Checker, sound
from ..spec import (
    Encode,
    Evidence,
    Field,
    Group,
    GroupInput,
    Leaf,
    NoOp,
    Options,
    Outcome,
    Refuse,
    Row,
    Write,
)
from .openai_completions import Choice

__all__ = [
    "FORWARDED_OPTIONS",
    "PromptEntry",
    "VllmChoice",
    "extra_rows",
    "prompt_tokens",
    "sampled_ids",
    "with_ids",
]

FORWARDED_OPTIONS = frozenset({"min_p", "repetition_penalty", "stop_token_ids"})


def _scoring(group: GroupInput) -> dict[str, Outcome]:
    """``prompt_logprobs`` for the input (with ``return_token_ids``, so completeness is counted
    against the prompt's ids) and ``logprobs`` for sampled positions: separate counts."""
    s: Scoring = group.value
    out: dict[str, Outcome] = {}
    if s.input_logprobs:
        out["scoring.input_logprobs"] = Write(
            "prompt_logprobs", s.input_top_k, also={"return_token_ids": True}
        )
    if s.input_top_k:
        out["scoring.input_top_k"] = Write("prompt_logprobs", s.input_top_k)
    if s.sampled_logprobs:
        out["scoring.sampled_logprobs"] = Write("logprobs", s.sampled_top_k)
    if s.sampled_top_k:
        out["scoring.sampled_top_k"] = Write("logprobs", s.sampled_top_k)
    return out


def _structured(group: GroupInput) -> dict[str, Outcome]:
    """``structured_outputs.json`` (the schema) or ``structured_outputs.json_object``."""
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    if o.format == "json_object":
        out["structured_output.format"] = Write("structured_outputs.json_object", True)
    elif o.format == "json_schema":
        out["structured_output.format"] = Evidence("structured_outputs.json")
        out["structured_output.schema"] = Write("structured_outputs.json", o.schema)
    if o.name is not UNSET:
        out["structured_output.name"] = NoOp("structured_outputs takes no name")
    if o.strict is not UNSET:
        out["structured_output.strict"] = (
            NoOp("vLLM's grammar is always strict")
            if o.strict
            else Refuse("vLLM's structured decoding is always strict; drop strict=false")
        )
    return out


def _max_tokens(leaf: Leaf) -> Outcome:
    if leaf.value == 0:
        return Refuse("vLLM answers 400 to max_tokens=0 on this route; ask for 1 and ignore it")
    return Write("max_tokens", leaf.value)


OPTIONS = Options(
    dict.fromkeys(FORWARDED_OPTIONS),
    "vLLM silently ignores unknown fields, so only {allowed} are forwarded",
    "min_p, repetition_penalty, stop_token_ids",
    # OpenAI's fields the table leaves to other leaves (echo scoring, FIM, stream usage) are
    # still the route's: an option must not set them behind those leaves' back
    reserved=frozenset({"echo", "suffix", "stream", "stream_options"}),
)
"""``options.*`` on vLLM's OpenAI routes: a top-level field, from the allow-list only."""


def extra_rows() -> dict[str, Row]:
    """vLLM's rows over an OpenAI route's table."""
    return {
        "sampling.top_k": Field("top_k"),
        "sampling.max_tokens": Encode(_max_tokens, ("max_tokens",), "max_tokens, at least 1"),
        "scoring.*": Group(
            _scoring,
            ("prompt_logprobs", "logprobs", "return_token_ids"),
            "prompt_logprobs (+ return_token_ids) for input, logprobs for sampled positions",
        ),
        "scoring.token_ids": Field("return_token_ids"),
        "structured_output.*": Group(
            _structured, ("structured_outputs",), "structured_outputs.json / .json_object"
        ),
        "options.*": OPTIONS,
    }


# -- reply pieces -------------------------------------------------------------------------------


class PromptEntry(msgspec.Struct, gc=False):  # scalars only: no cycle to collect
    logprob: float
    rank: int
    decoded_token: str


PromptRow = dict[int, PromptEntry]
"""One prompt position: the scored token and the top-k, keyed by token id (a string on the wire,
decoded as the int it spells; a key that is not one is a shape error)."""


class VllmChoice(Choice):
    prompt_logprobs: list[PromptRow | None] | None = None
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None


def sampled_ids(check: Checker, choice: VllmChoice) -> tuple[int, ...]:
    if choice.token_ids is None:
        raise check.violation(
            f"choices[{choice.index}].token_ids",
            f"choices[{choice.index}].token_ids is missing although return_token_ids was sent",
        )
    return tuple(choice.token_ids)


def with_ids(check: Checker, tokens: tuple[Token, ...], ids: tuple[int, ...]) -> tuple[Token, ...]:
    if len(tokens) != len(ids):
        raise check.violation(
            "choices[].token_ids",
            f"{len(ids)} sampled token ids for {len(tokens)} sampled logprobs",
        )
    return tuple(msgspec.structs.replace(t, token_id=i) for t, i in zip(tokens, ids, strict=True))


_Scored = tuple[PromptEntry, Any, Any]
"""A checked prompt position: the scored token's entry, its top-k and its rank (UNSET for k=0)."""


def prompt_tokens(
    check: Checker,
    where: str,
    entries: list[PromptRow | None] | None,
    ids: list[int] | None,
    reported: Any,
    prompt: str | None,
    k: int,
) -> tuple[Token, ...]:
    """``prompt_logprobs`` as scored input tokens: counted three ways, null at position 0 only,
    top-k exact and ranked, the first token's text recovered as the prompt prefix the decoded
    tokens leave (a BOS leaves "")."""
    if entries is None or ids is None:
        raise check.violation(
            f"{where}.prompt_logprobs",
            f"{where} has no prompt_logprobs/prompt_token_ids although both were requested",
        )
    check.agree(
        f"{where}.prompt_logprobs",
        {
            "prompt_logprobs": len(entries),
            "prompt_token_ids": len(ids),
            "usage.prompt_tokens": reported,
        },
        "the prompt",
    )
    rows = entries[1:]
    if entries[0] is not None or None in rows:
        raise check.violation(
            f"{where}.prompt_logprobs", f"{where}.prompt_logprobs must be null at position 0 only"
        )
    scored_ids = ids[1:]
    checked = cast(list[PromptRow], rows)
    alone = _scored_alone(checked, scored_ids) if not k else None
    if alone is not None:
        texts = [e.decoded_token for e in alone]
        first_text, offsets = _first_text_and_offsets(check, prompt, texts, where)
        rest: Any = map(
            lambda e, token_id, offset: Token(
                text=e.decoded_token, logprob=e.logprob, token_id=token_id, offset=offset
            ),
            alone,
            scored_ids,
            offsets[1:],
        )
    else:
        scored = [
            _position(check, checked[i], scored_ids[i], k, f"{where}.prompt_logprobs[{i + 1}]")
            for i in range(len(checked))
        ]
        texts = [e.decoded_token for e, _, _ in scored]
        first_text, offsets = _first_text_and_offsets(check, prompt, texts, where)
        rest = map(
            lambda s, token_id, offset: Token(
                text=s[0].decoded_token,
                logprob=s[0].logprob,
                token_id=token_id,
                offset=offset,
                top=s[1],
                scored_rank=s[2],
            ),
            scored,
            scored_ids,
            offsets[1:],
        )
    first = Token(text=first_text, logprob=None, token_id=ids[0], offset=offsets[0])
    return (first, *rest)


def _scored_alone(rows: list[PromptRow], ids: list[int]) -> list[PromptEntry] | None:
    """A k=0 reply checked whole: every position lists its scored token alone, with a sound
    logprob (finite, at most 0). ``None`` when any position does not, for ``_position`` to say
    which and why."""
    if sum(map(len, rows)) != len(rows):
        return None
    try:
        entries = list(map(dict.__getitem__, rows, ids))
    except KeyError:
        return None
    return entries if sound(list(map(_LOGPROB, entries))) else None


_LOGPROB = attrgetter("logprob")
_ID = itemgetter(0)


def _entry_logprob(item: tuple[int, PromptEntry]) -> float:
    return item[1].logprob


def _position(check: Checker, entries: PromptRow, token_id: int, k: int, path: str) -> _Scored:
    check.logprobs(path, [e.logprob for e in entries.values()], ".logprob", list(entries))
    count = len(entries)
    if token_id not in entries or count not in (k, k + 1):
        raise check.violation(
            path,
            f"{path} lists {count} entries for top-k={k} (scored id {token_id} "
            f"{'present' if token_id in entries else 'absent'}); expected k, or k+1 with the "
            "scored token",
            expected=k,
            received=count,
        )
    scored = entries[token_id]
    if not k:
        return scored, UNSET, UNSET
    others = sorted(
        ((tid, e) for tid, e in entries.items() if count == k or tid != token_id),
        key=lambda item: item[1].rank,
    )
    ranks = [e.rank for _, e in others]
    if ranks != list(range(1, k + 1)):
        raise check.violation(path, f"{path} has ranks {ranks}; expected 1..{k}")
    if count == k + 1 and scored.logprob > others[-1][1].logprob + LOGPROB_TOLERANCE:
        # the scored token is outside the top-k yet above the k-th (rank k): refused
        check.sampled_in_top(path, token_id, scored.logprob, others, _ID, _entry_logprob)
    top = tuple(TopEntry(token=e.decoded_token, logprob=e.logprob, token_id=t) for t, e in others)
    rank = next((j for j, (t, _) in enumerate(others) if t == token_id), -1)
    return scored, top, rank


def _first_text_and_offsets(
    check: Checker, prompt: str | None, texts: list[str], where: str
) -> tuple[str, list[Any]]:
    if prompt is None:
        return "", [UNSET] * (len(texts) + 1)
    tail = "".join(texts)
    if not prompt.endswith(tail):
        raise check.violation(
            f"{where}.prompt_logprobs",
            f"the decoded prompt tokens {tail[-40:]!r} do not end the prompt; the token texts "
            "cannot be placed in the prompt",
        )
    first = prompt[: len(prompt) - len(tail)]
    return first, [0, *list(accumulate(map(len, texts), initial=len(first)))[:-1]]
