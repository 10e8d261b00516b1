"""SGLang's channels: the generations of a ``/generate`` reply, their usage, and the scored
prompt and sampled tokens as ``[logprob, token_id, text]`` triples (wire reference 6;
``docs/evidence/sglang-server-notes.md``)."""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from ...ir.request import CompletionInput
from ...ir.response import Token, Usage
from ..channels import (
    candidate_rows,
    checked_usage,
    count,
    pinned_stop,
    place,
    top_k,
    with_candidates,
)
from ..reply import InputRead, Read
from ..wire import sglang as wire

__all__ = ["input_tokens", "items", "output_ids", "sampled", "usage"]


def items(r: Read) -> list[wire.Item]:
    """The generations in choice order: a single request is one object, ``n > 1`` a list of n
    (SGLang's order: the samples of the prompt in turn; a stream numbers them by ``index``); a
    generation that never finished, or was aborted (whatever the HTTP status), is refused."""
    check, reply, n = r.check, r.reply, r.request.sampling.n
    if isinstance(reply, wire.Item):
        if n != 1:
            raise check.violation(
                "", f"the reply is one object but n={n} asks for a list of {n}", expected=n
            )
        got = [reply]
    else:
        if n == 1 and not r.lowered.stream:
            raise check.violation("", "the reply is a list but a single request was sent")
        got = reply
    if len(got) != n:
        indices = list(range(len(got)))
        raise check.violation(
            "",
            f"the reply holds generations {indices}; expected exactly 0..{n - 1} for n={n}",
            expected=list(range(n)),
            received=indices,
        )
    for i, item in enumerate(got):
        finish, where = item.meta_info.finish_reason, f"[{i}].meta_info.finish_reason"
        if finish is None:
            raise check.violation(
                where, f"{where} is null: the generation never finished (a cut stream?)"
            )
        if finish.type == "abort":
            raise wire.abort_error(check.dialect, where, finish)
    return got


_NAMES = {
    "input": "prompt_tokens",
    "output": "completion_tokens",
    "cached": "cached_tokens",
    "reasoning": "reasoning_tokens",
}


def usage(r: Read) -> Usage:
    """The prompt counts once (every sample reports the same), output tokens add up (unset when
    one is), cached tokens are the first sample's. Each sample's counts are token counts, its
    cached tokens at most its prompt, its reasoning tokens at most its output
    (``channels.checked_usage``)."""
    metas = [item.meta_info for item in r.choices]
    for i, meta in enumerate(metas):
        at = f"[{i}].meta_info."
        one = Usage(
            input_tokens=count(meta.prompt_tokens),
            output_tokens=count(meta.completion_tokens),
            cached_tokens=count(meta.cached_tokens),
            reasoning_tokens=count(meta.reasoning_tokens),
        )
        checked_usage(r.check, one, {key: at + name for key, name in _NAMES.items()})
    prompts = {meta.prompt_tokens for meta in metas}
    if len(prompts) > 1:
        raise r.check.violation(
            "meta_info.prompt_tokens",
            f"the samples report different prompt sizes {sorted(map(str, prompts))}",
        )
    outputs = [meta.completion_tokens for meta in metas]
    reasoning = [meta.reasoning_tokens for meta in metas]
    return Usage(
        input_tokens=count(metas[0].prompt_tokens),
        output_tokens=UNSET if None in outputs else sum(v or 0 for v in outputs),
        cached_tokens=count(metas[0].cached_tokens),
        reasoning_tokens=UNSET if None in reasoning else sum(v or 0 for v in reasoning),
    )


def input_tokens(r: Read) -> InputRead:
    """``input_token_logprobs`` (asked from position 0) as the scored prompt: one entry per prompt
    token (``prompt_tokens`` counts the BOS), null at position 0 only, exact top-k, and texts that
    rebuild the prompt (the BOS covers no text; byte pieces cover their characters)."""
    check, meta, inp = r.check, r.choices[0].meta_info, r.request.input
    prompt = inp.text if isinstance(inp, CompletionInput) and isinstance(inp.text, str) else None
    sent = inp.token_ids if isinstance(inp, CompletionInput) else UNSET
    where = "meta_info.input_token_logprobs"
    why = "although input logprobs were asked for"
    triples = check.present(meta.input_token_logprobs, where, why)
    counts: dict[str, Any] = {
        "input_token_logprobs": len(triples),
        "prompt_tokens": meta.prompt_tokens,
    }
    if isinstance(sent, tuple):
        counts["input_ids sent"] = len(sent)
    check.agree(where, counts, "the prompt (a radix-cache hit can shorten input logprobs)")
    logprobs, ids = [t.logprob for t in triples], [t.token_id for t in triples]
    check.first_unscored(where, logprobs, len(logprobs))
    check.logprobs(where, logprobs, "[0]")
    if isinstance(sent, tuple) and ids != list(sent):
        raise check.violation(where, f"{where} scores other token ids than the input_ids sent")
    texts = _texts(r, where, triples)
    offsets: list[Any] = [UNSET] * len(texts)
    if prompt is not None:
        placed = place(texts, prompt, "first", pieces=True)
        if placed.stopped != len(texts) or placed.end != len(prompt):
            bad, end = min(placed.stopped, len(texts) - 1), placed.end
            raise check.violation(
                f"{where}[{bad}]",
                f"the prompt's token texts do not rebuild the prompt: token {bad} {texts[bad]!r} "
                f"does not continue it at character {end} (found {prompt[end : end + 12]!r})",
            )
        offsets = placed.offsets
    k = r.request.scoring.input_top_k
    rows = _rows(r, "meta_info.input_top_logprobs", meta.input_top_logprobs, len(triples), k)
    if rows and rows[0] is not None:
        raise check.violation(f"{where}[0]", "the unscored position 0 carries top-k alternatives")
    if not rows:
        return InputRead(tuple(map(_plain, texts, logprobs, ids, offsets)))
    first = _plain(texts[0], None, triples[0].token_id, offsets[0])
    rest = _tokens(r, where, triples[1:], texts[1:], offsets[1:], rows[1:], k, 1)
    return InputRead((first, *rest))


def sampled(r: Read, item: wire.Item, i: int) -> tuple[Token, ...]:
    """``output_token_logprobs`` as the sampled tokens: counted three ways (``output_ids``,
    ``completion_tokens``, ``output_token_logprobs_length``), ids matching, exact top-k,
    candidates in the order asked, texts placed in the choice's text (SGLang trims a matched stop
    from the text but keeps its tokens, notes item 5: they sit at the text's end)."""
    check, meta, ids = r.check, item.meta_info, item.output_ids
    where = f"[{i}].meta_info.output_token_logprobs"
    why = "although sampled logprobs were asked for"
    triples = check.present(meta.output_token_logprobs, where, why)
    counts: dict[str, Any] = {
        "output_token_logprobs": len(triples),
        "completion_tokens": meta.completion_tokens,
    }
    if ids is not None:
        counts["output_ids"] = len(ids)
    if meta.output_token_logprobs_length is not None:
        counts["output_token_logprobs_length"] = meta.output_token_logprobs_length
    check.agree(where, counts, f"generation {i}'s tokens")
    if ids is not None and [t.token_id for t in triples] != ids:
        raise check.violation(where, f"{where} scores other token ids than output_ids")
    logprobs = [t.logprob for t in triples]
    check.all_scored(where, logprobs)
    check.logprobs(where, logprobs, "[0]")
    texts = _texts(r, where, triples)
    placed = place(texts, item.text, "anywhere", pieces=True)
    offsets = placed.offsets
    if placed.stopped != len(texts) or placed.end != len(item.text):
        finish = meta.finish_reason
        stop = finish.matched if finish is not None and finish.type == "stop" else None
        pinned = pinned_stop(texts, item.text, placed, stop, ids[-1] if ids else None)
        if pinned is None:
            bad, end = min(placed.stopped, len(texts) - 1), placed.end
            raise check.violation(
                f"{where}[{bad}]",
                "the sampled token texts do not spell the choice's text: token "
                f"{bad} {texts[bad] if texts else ''!r} does not continue it at character {end} "
                f"(found {item.text[end : end + 12]!r}, finish {finish})",
            )
        offsets = pinned
    k, asked = r.request.scoring.sampled_top_k, r.request.scoring.candidate_token_ids
    rows = _rows(r, f"[{i}].meta_info.output_top_logprobs", meta.output_top_logprobs, len(texts), k)
    at = f"[{i}].meta_info.output_token_ids_logprobs"
    cand = (
        candidate_rows(check, at, meta.output_token_ids_logprobs, len(texts), asked)
        if asked
        else None
    )
    tokens = _tokens(r, where, triples, texts, offsets, rows, k)
    return tuple(with_candidates(check, at, tokens, cand) if cand is not None else tokens)


def _texts(r: Read, where: str, triples: list[wire.Triple]) -> list[str]:
    texts = [t.token for t in triples]
    if None in texts:
        missing = texts.index(None)
        raise r.check.violation(
            f"{where}[{missing}]",
            f"{where}[{missing}] has no token text although return_text_in_logprobs was sent",
        )
    return texts  # type: ignore[return-value]


def _rows(r: Read, where: str, rows: Any, n: int, k: int) -> list[Any] | None:
    """The top-k rows, one per position (``max_new_tokens: 0`` adds one row for the position
    after the prompt although no token is sampled, notes item 4: it is dropped)."""
    if not k:
        return None
    found = r.check.present(rows, where, f"for top-k={k}")
    if n == 0 and len(found) <= 1:
        return []
    if len(found) != n:
        raise r.check.violation(
            where,
            f"{where} has {len(found)} rows for {n} positions",
            expected=n,
            received=len(found),
        )
    return list(found)


def _tokens(
    r: Read,
    where: str,
    triples: list[wire.Triple],
    texts: list[str],
    offsets: list[Any],
    rows: list[Any] | None,
    k: int,
    first: int = 0,
) -> list[Token]:
    if not rows:
        logprobs, ids = [t.logprob for t in triples], [t.token_id for t in triples]
        return list(map(_plain, texts, logprobs, ids, offsets))
    tops, ranks = top_k(r.check, where + "[{i}] top-k", triples, rows, k, r.top_k, first)
    return list(map(_token, texts, triples, offsets, tops, ranks))


def _plain(text: str, logprob: float | None, token_id: int, offset: Any) -> Token:
    """A position without alternatives (no top-k asked)."""
    return Token(text=text, logprob=logprob, token_id=token_id, offset=offset)


def _token(text: str, t: wire.Triple, offset: Any, top: Any, rank: Any) -> Token:
    tid = t.token_id
    return Token(
        text=text, logprob=t.logprob, token_id=tid, offset=offset, top=top, scored_rank=rank
    )


def output_ids(r: Read, item: wire.Item, i: int) -> tuple[int, ...] | Any:
    """SGLang always returns ``output_ids``: kept whether asked or not, required when asked."""
    if item.output_ids is None:
        if r.request.scoring.token_ids:
            raise r.check.violation(f"[{i}].output_ids", f"generation {i} has no output_ids")
        return UNSET
    return tuple(item.output_ids)
