"""SGLang's ``POST /generate`` reply: Structs, the cumulative stream fold, and the checks.

SGLang 0.5.23 (wire reference section 6; measured in ``docs/evidence/sglang-server-notes.md``).
Nothing is trusted: a finish of type ``abort`` is an error even inside an HTTP 200 reply, logprob
lists are counted against ``output_ids``, ``completion_tokens`` and ``prompt_tokens``, a top-k row
holds exactly k entries sorted by logprob, a candidate row holds exactly the ids asked for in the
order asked, and every token text is placed in the text it claims to spell (the prompt, or the
choice's text).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from operator import attrgetter
from typing import Any, cast

import msgspec
from msgspec import UNSET

from ...errors import ServerRejected, SievalError
from ...ir.response import Token, TopEntry
from ..checks import Checker, descending_rows, sampled_first, sound, top_contradiction
from ..envelopes import http_error, message_kind, server_message
from .openai import in_band_error
from .sglang_placing import SPECIAL, is_piece, place, spelled
from .sse import SseEvent

__all__ = [
    "Finish",
    "Item",
    "Meta",
    "abort_error",
    "fold",
    "input_tokens",
    "sampled_tokens",
    "sglang_error",
]


class Triple(msgspec.Struct, array_like=True, forbid_unknown_fields=True, gc=False):
    """A logprob entry, positional on the wire: ``[logprob, token_id, text]`` (text null unless
    asked for; ``token`` here, as ``channels.top_k`` reads it). Scalars only, so the collector
    need not track the thousands a reply holds."""

    logprob: float | None
    token_id: int
    token: str | None


_ID, _LOGPROB = attrgetter("token_id"), attrgetter("logprob")


class Finish(msgspec.Struct):
    type: str
    matched: str | int | None = None
    length: int | None = None
    message: str | None = None
    status_code: int | None = None


class Meta(msgspec.Struct):
    finish_reason: Finish | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    input_token_logprobs: list[Triple] | None = None
    output_token_logprobs: list[Triple] | None = None
    output_token_logprobs_length: int | None = None
    input_top_logprobs: list[list[Triple] | None] | None = None
    output_top_logprobs: list[list[Triple] | None] | None = None
    output_token_ids_logprobs: list[list[Triple] | None] | None = None


class Item(msgspec.Struct):
    """One generation: a single reply, one element of an ``n > 1`` list, or a stream's state."""

    text: str
    meta_info: Meta
    output_ids: list[int] | None = None


class _Chunk(msgspec.Struct):
    text: str | None = None
    meta_info: Meta | None = None
    output_ids: list[int] | None = None
    index: int | None = None
    error: dict[str, Any] | None = None


_chunk = msgspec.json.Decoder(_Chunk)

# -- errors -------------------------------------------------------------------------------------


def sglang_error(dialect: str, status: int, body: bytes) -> SievalError:
    """A non-2xx reply in any of SGLang's three error shapes (wire reference 0.4). SGLang's
    scheduler words a too-long prompt "exceeds the maximum allowed length" (notes item 1)."""
    error = http_error(dialect, status, body)
    message = server_message(body)
    too_long = "exceeds the maximum allowed length" in message
    if isinstance(error, ServerRejected) and message_kind(message) is None and too_long:
        return ServerRejected(
            f"{dialect}: the server rejected the request (HTTP {status}) [context_overflow]: "
            f"{message}",
            status=status,
            server_message=message,
            dialect=dialect,
            path="context_overflow",
        )
    return error


def abort_error(dialect: str, where: str, finish: Finish) -> SievalError:
    """A ``finish_reason`` of type ``abort``: the request failed, whatever the HTTP status said
    (a streamed abort arrives as an ordinary-looking chunk with a bogus token, notes item 3)."""
    code = finish.status_code
    status = code if isinstance(code, int) and 400 <= code < 600 else 500
    message = finish.message or "the server aborted the request"
    body = msgspec.json.encode({"error": {"message": f"{message} ({where} is an abort)"}})
    return sglang_error(dialect, status, body)


# -- the stream ---------------------------------------------------------------------------------


def fold(events: list[SseEvent], check: Checker) -> list[Item]:
    """SSE chunks as one item per index. Each chunk is the cumulative state so far (wire
    reference 6.5), so the last one per index is kept, never concatenated; a chunk whose
    ``output_ids`` do not extend the previous ones (a server started with
    ``--incremental-streaming-output``) is refused, since keeping the last would lose the rest."""
    last: dict[int, _Chunk] = {}
    for event in events:
        chunk = check.decode(event.data, _chunk)
        if chunk.error is not None:
            raise in_band_error(check.dialect, chunk.error, event.data)
        if chunk.text is None or chunk.meta_info is None:
            raise check.violation("", "a stream chunk has neither text and meta_info nor an error")
        index = chunk.index if chunk.index is not None else 0
        before = last.get(index)
        if before is not None:
            old, new = before.output_ids or [], chunk.output_ids or []
            if new[: len(old)] != old:
                raise check.violation(
                    f"[{index}].output_ids",
                    f"stream chunk for index {index} carries output_ids {new[:8]}... that do not "
                    f"extend the previous chunk's {old[:8]}...: the stream is not cumulative "
                    "(--incremental-streaming-output?), so its last chunk is not the whole reply",
                )
        last[index] = chunk
    if not last:
        raise check.violation("", "the stream carried no chunk before [DONE]")
    return [
        Item(text=str(c.text), meta_info=c.meta_info or Meta(), output_ids=c.output_ids)
        for _, c in sorted(last.items())
    ]


# -- input tokens -------------------------------------------------------------------------------


def input_tokens(
    check: Checker, item: Item, prompt: str | None, sent_ids: Sequence[int] | None, k: int
) -> tuple[Token, ...]:
    """``input_token_logprobs`` (asked from position 0) as the scored prompt: one entry per prompt
    token (``prompt_tokens`` counts the BOS), null at position 0 only, exact top-k, and texts
    that rebuild the prompt (the BOS covers no text)."""
    meta = item.meta_info
    where = "meta_info.input_token_logprobs"
    triples = meta.input_token_logprobs
    if triples is None:
        raise check.violation(where, f"{where} is missing although input logprobs were asked for")
    counts: dict[str, Any] = {
        "input_token_logprobs": len(triples),
        "prompt_tokens": meta.prompt_tokens,
    }
    if sent_ids is not None:
        counts["input_ids sent"] = len(sent_ids)
    check.agree(where, counts, "the prompt (a radix-cache hit can shorten input logprobs)")
    logprobs = [t.logprob for t in triples]
    if not triples or logprobs[0] is not None:
        raise check.violation(
            f"{where}[0]", f"{where}[0] must be the unscored first position (a null logprob)"
        )
    if None in logprobs[1:]:
        nulls = [i for i, v in enumerate(logprobs) if i and v is None]
        raise check.violation(
            f"{where}[{nulls[0]}]",
            f"{where} is null at positions {nulls[:5]}: only the first may be unscored",
        )
    check.logprobs(where, logprobs, "[0]")
    ids = [t.token_id for t in triples]
    if sent_ids is not None and ids != list(sent_ids):
        raise check.violation(where, f"{where} scores other token ids than the input_ids sent")
    texts = _texts(check, where, triples)
    offsets: list[Any] = (
        _place_prompt(check, where, texts, prompt) if prompt is not None else [UNSET] * len(texts)
    )
    rows = _rows(check, "meta_info.input_top_logprobs", meta.input_top_logprobs, len(triples), k)
    if not rows:
        return tuple(map(_plain, texts, logprobs, ids, offsets))
    if rows[0] is None and (whole := _tops_whole(rows[1:], triples[1:], k)) is not None:
        # every scored position checked whole (position 0 is unscored and lists nothing)
        tops, ranks = whole
        first = _plain(texts[0], logprobs[0], ids[0], offsets[0])
        return (
            first,
            *[
                Token(text=x, logprob=v, token_id=t, offset=o, top=top, scored_rank=rank)
                for x, v, t, o, top, rank in zip(
                    texts[1:], logprobs[1:], ids[1:], offsets[1:], tops, ranks, strict=True
                )
            ],
        )
    return tuple(
        _token(check, where, i, triples[i], texts[i], offsets[i], rows[i], k)
        for i in range(len(triples))
    )


def _plain(text: str, logprob: float | None, token_id: int, offset: Any) -> Token:
    """A position without alternatives (no top-k asked)."""
    return Token(text=text, logprob=logprob, token_id=token_id, offset=offset)


def _place_prompt(check: Checker, where: str, texts: list[str], prompt: str) -> list[int]:
    whole = spelled(texts, prompt)
    if whole is not None:
        return whole
    offsets, end, tail = place(texts, prompt, specials_anywhere=False)
    if tail != len(texts) or end != len(prompt):
        bad = min(tail, len(texts) - 1)
        raise check.violation(
            f"{where}[{bad}]",
            f"the prompt's token texts do not rebuild the prompt: token {bad} {texts[bad]!r} "
            f"does not continue it at character {end} (found {prompt[end : end + 12]!r})",
        )
    return offsets


# -- sampled tokens -----------------------------------------------------------------------------


def sampled_tokens(
    check: Checker, i: int, item: Item, k: int, candidates: Sequence[int]
) -> tuple[Token, ...]:
    """``output_token_logprobs`` of generation ``i`` as its sampled tokens: counted three ways
    (``output_ids``, ``completion_tokens``, ``output_token_logprobs_length``), ids matching,
    exact top-k, candidates in the order asked, texts placed in the choice's text."""
    meta = item.meta_info
    where = f"[{i}].meta_info.output_token_logprobs"
    triples = meta.output_token_logprobs
    if triples is None:
        raise check.violation(where, f"{where} is missing although sampled logprobs were asked for")
    counts: dict[str, Any] = {
        "output_token_logprobs": len(triples),
        "completion_tokens": meta.completion_tokens,
    }
    if item.output_ids is not None:
        counts["output_ids"] = len(item.output_ids)
    if meta.output_token_logprobs_length is not None:
        counts["output_token_logprobs_length"] = meta.output_token_logprobs_length
    check.agree(where, counts, f"generation {i}'s tokens")
    ids = [t.token_id for t in triples]
    if item.output_ids is not None and ids != item.output_ids:
        raise check.violation(where, f"{where} scores other token ids than output_ids")
    logprobs = [t.logprob for t in triples]
    if None in logprobs:
        raise check.violation(where, f"{where} holds a null logprob for a sampled token")
    check.logprobs(where, logprobs, "[0]")
    texts = _texts(check, where, triples)
    offsets = _place_sampled(check, where, texts, item)
    n = len(triples)
    rows = _rows(check, f"[{i}].meta_info.output_top_logprobs", meta.output_top_logprobs, n, k)
    cand = (
        _candidate_rows(check, f"[{i}].meta_info.output_token_ids_logprobs", meta, n, candidates)
        if candidates
        else None
    )
    if not rows:
        tokens = list(map(_plain, texts, logprobs, ids, offsets))
    elif (whole := _tops_whole(rows, triples, k)) is not None:
        tops, ranks = whole
        tokens = [
            Token(text=x, logprob=v, token_id=i, offset=o, top=top, scored_rank=rank)
            for x, v, i, o, top, rank in zip(
                texts, logprobs, ids, offsets, tops, ranks, strict=True
            )
        ]
    else:
        tokens = [
            _token(check, where, j, triples[j], texts[j], offsets[j], rows[j], k) for j in range(n)
        ]
    if cand is not None:
        at = f"[{i}].meta_info.output_token_ids_logprobs"
        tokens = [_with_candidates(check, at, j, t, cand[j]) for j, t in enumerate(tokens)]
    return tuple(tokens)


def _place_sampled(check: Checker, where: str, texts: list[str], item: Item) -> list[int]:
    """Offsets into the choice's text. SGLang trims a matched stop string (or stop token) from
    ``text`` but keeps its tokens in ``output_ids`` (notes item 5): the tokens after the text's
    end must then spell the stop (or be the stop token, or special tokens such as ``<eos>``),
    and they sit at the text's end."""
    text = item.text
    whole = spelled(texts, text)
    if whole is not None:
        return whole
    offsets, end, tail = place(texts, text, specials_anywhere=True)
    rest = texts[tail:]
    if end == len(text) and _tail_ok(rest, item):
        return [*offsets, *([len(text)] * len(rest))]
    # the token at ``tail`` may straddle the end: the text ends inside it
    if rest and end < len(text) and rest[0].startswith(text[end:]):
        spill = [rest[0][len(text) - end :], *rest[1:]]
        if _tail_ok(spill, item, straddle=True):
            return [*offsets, end, *([len(text)] * (len(rest) - 1))]
    bad = min(tail, len(texts) - 1)
    found = text[end : end + 12]
    raise check.violation(
        f"{where}[{bad}]",
        f"the sampled token texts do not spell the choice's text: token {bad} "
        f"{texts[bad] if texts else ''!r} does not continue it at character {end} (found "
        f"{found!r}, finish {item.meta_info.finish_reason})",
    )


def _tail_ok(rest: list[str], item: Item, straddle: bool = False) -> bool:
    spoken = [t for t in rest if not SPECIAL.match(t)]
    if not spoken:
        return True
    finish = item.meta_info.finish_reason
    if finish is None or finish.type != "stop":
        return False
    if isinstance(finish.matched, str):
        return "".join(spoken).startswith(finish.matched) or _pieces(spoken)
    if isinstance(finish.matched, int) and item.output_ids is not None:
        return len(rest) == 1 and not straddle and item.output_ids[-1] == finish.matched
    return False


def _pieces(texts: list[str]) -> bool:
    return all(is_piece(t) for t in texts)


# -- per-position pieces ------------------------------------------------------------------------


def _texts(check: Checker, where: str, triples: Sequence[Triple]) -> list[str]:
    texts = [t.token for t in triples]
    if None in texts:
        missing = texts.index(None)
        raise check.violation(
            f"{where}[{missing}]",
            f"{where}[{missing}] has no token text although return_text_in_logprobs was sent",
        )
    return cast(list[str], texts)


def _rows(
    check: Checker, where: str, rows: list[list[Triple] | None] | None, n: int, k: int
) -> list[list[Triple] | None] | None:
    """The top-k rows, one per position (``max_new_tokens: 0`` adds one row for the position
    after the prompt although no token is sampled, notes item 4: it is dropped)."""
    if not k:
        return None
    if rows is None:
        raise check.violation(where, f"{where} is missing for top-k={k}")
    if n == 0 and len(rows) <= 1:
        return []
    if len(rows) != n:
        raise check.violation(
            where, f"{where} has {len(rows)} rows for {n} positions", expected=n, received=len(rows)
        )
    return rows


def _tops_whole(
    rows: list[list[Triple] | None], triples: list[Triple], k: int
) -> tuple[list[tuple[TopEntry, ...]], list[int]] | None:
    """Every sampled position's top-k and rank, the rows checked whole: k entries each, sound,
    most likely first, no id twice, agreeing with the sampled token (``top_contradiction``). None
    when any row breaks a rule, for ``_token`` to say which at the first one."""
    if None in rows or list(map(len, cast(list[list[Triple]], rows))).count(k) != len(rows):
        return None
    full = cast(list[list[Triple]], rows)
    values = [e.logprob for row in full for e in row]
    if None in values:
        return None
    floats = cast(list[float], values)
    if not sound(floats) or not descending_rows(floats, k):
        return None
    firsts = [row[0] for row in full]
    settled = sampled_first(
        [t.token_id for t in triples],
        [cast(float, t.logprob) for t in triples],
        [e.token_id for e in firsts],
        [cast(float, e.logprob) for e in firsts],
    )
    ranks: list[int] = []
    for row, triple in zip(full, triples, strict=True):
        ids = [e.token_id for e in row]
        if len(set(ids)) != k:
            return None
        own = cast(float, triple.logprob)
        if not settled and top_contradiction(triple.token_id, own, row, _ID, _LOGPROB):
            return None
        ranks.append(ids.index(triple.token_id) if triple.token_id in ids else -1)
    tops = [
        tuple(
            [
                TopEntry(
                    token=e.token if e.token is not None else "",
                    logprob=cast(float, e.logprob),
                    token_id=e.token_id,
                )
                for e in row
            ]
        )
        for row in full
    ]
    return tops, ranks


def _token(
    check: Checker,
    where: str,
    i: int,
    triple: Triple,
    text: str,
    offset: Any,
    row: list[Triple] | None,
    k: int,
) -> Token:
    logprob, token_id = triple.logprob, triple.token_id
    if not k or logprob is None:
        if k and row is not None:
            raise check.violation(
                f"{where}[{i}]", f"the unscored position {i} carries top-k alternatives"
            )
        return Token(text=text, logprob=logprob, token_id=token_id, offset=offset)
    path = f"{where}[{i}] top-k"
    if row is None or len(row) != k:
        got = 0 if row is None else len(row)
        raise check.violation(
            path,
            f"{path} lists {got} alternatives for top-k={k}: the reply is short",
            expected=k,
            received=got,
        )
    values = [e.logprob for e in row]
    if None in values:
        raise check.violation(path, f"{path} holds a null logprob")
    check.logprobs(path, values, "[0]")
    floats = [float(v) for v in values if v is not None]
    if any(a < b for a, b in itertools.pairwise(floats)):
        raise check.violation(path, f"{path} is not sorted most likely first: {floats}")
    ids = [e.token_id for e in row]
    if len(set(ids)) != k:
        raise check.violation(path, f"{path} lists a token id twice: {ids}")
    check.sampled_in_top(path, token_id, logprob, row, _ID, _LOGPROB)
    rank = ids.index(token_id) if token_id in ids else -1
    top = tuple(
        TopEntry(token=e.token if e.token is not None else "", logprob=v, token_id=e.token_id)
        for e, v in zip(row, floats, strict=True)
    )
    return Token(
        text=text, logprob=logprob, token_id=token_id, offset=offset, top=top, scored_rank=rank
    )


def _candidate_rows(
    check: Checker, where: str, meta: Meta, n: int, asked: Sequence[int]
) -> list[list[Triple]]:
    rows = meta.output_token_ids_logprobs
    if rows is None:
        raise check.violation(where, f"{where} is missing although token_ids_logprob was sent")
    if n == 0 and len(rows) <= 1:
        return []
    if len(rows) != n:
        raise check.violation(
            where, f"{where} has {len(rows)} rows for {n} sampled tokens", expected=n
        )
    out: list[list[Triple]] = []
    for j, row in enumerate(rows):
        ids = [e.token_id for e in row] if row is not None else []
        if ids != list(asked):
            raise check.violation(
                f"{where}[{j}]",
                f"{where}[{j}] scores ids {ids}, not the candidates asked for {list(asked)} in "
                "their order",
                expected=list(asked),
                received=ids,
            )
        assert row is not None
        values = [e.logprob for e in row]
        if None in values:
            raise check.violation(f"{where}[{j}]", f"{where}[{j}] holds a null logprob")
        check.logprobs(f"{where}[{j}]", values, "[0]")
        out.append(row)
    return out


def _with_candidates(check: Checker, where: str, j: int, token: Token, row: list[Triple]) -> Token:
    entries = tuple(
        TopEntry(
            token=e.token if e.token is not None else "",
            logprob=float(e.logprob or 0.0),
            token_id=e.token_id,
        )
        for e in row
    )
    if isinstance(token.logprob, float) and isinstance(token.token_id, int):
        # the candidates asked for are no top-k: only a listed sampled token is checked
        check.sampled_in_top(
            f"{where}[{j}]", token.token_id, token.logprob, entries, _ID, _LOGPROB, exact=False
        )
    return msgspec.structs.replace(token, candidates=entries)
