"""Channel primitives: what every reader does to a reply's channels, each written once.

* **Placing token texts** in the text they spell (``place``, ``spelled``; ``located`` for a wire
  that gives offsets; ``run_on_stop``, ``pinned_stop`` and ``by_bytes`` for what follows a text cut
  at a stop string or tokens that are byte pieces);
* **exact top-k** from a position's alternatives (``top_k`` for lists, ``top_k_map`` for maps keyed
  by text, ``top_k_by_id`` for maps keyed by token id), the rule a parameter (``TopK``);
* **candidates**, the logprobs of the token ids a request asked for (``candidates``);
* **usage** lifted where "not reported" stays unset, and checked: counts that are token counts
  and parts that fit in their wholes (``UsageAt``, ``lift_usage``, ``checked_usage``);
* the **clamp warning**, when a server shortened the budget it was given (``clamp_warning``);
* **tool arguments** parsed from their JSON text (``tool_arguments``).

Each primitive checks the whole channel first (a join, a sum, a list compare: in C) and walks it
position by position only when that finds a doubt; the walk is the reference (it names the first
bad position), and the two agree on every reply (``tests/dialects/test_channels.py``).
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import attrgetter, itemgetter
from typing import Any, Literal, NamedTuple, TypeVar

import msgspec
from msgspec import UNSET

from ..errors import ContractViolation
from ..ir.response import Token, TopEntry, Usage
from .reply_checks import (
    DEEP,
    LOGPROB_TOLERANCE,
    MAX_TOKEN_COUNT,
    SAME_LOGPROB,
    Checker,
    sampled_first,
    sound,
    top_contradiction,
    walking,
)

__all__ = [
    "SPECIAL",
    "Placed",
    "TopK",
    "UsageAt",
    "best_first",
    "by_bytes",
    "candidate_rows",
    "checked_usage",
    "clamp_warning",
    "count",
    "covered",
    "descending_rows",
    "echoed_clamp_warning",
    "is_piece",
    "lift_usage",
    "located",
    "located_whole",
    "mapped_tokens",
    "pinned_stop",
    "place",
    "ranked_by_id",
    "run_on_stop",
    "spelled",
    "tool_arguments",
    "top_k",
    "top_k_by_id",
    "top_k_map",
    "with_candidates",
]

R = TypeVar("R")

# -- token texts --------------------------------------------------------------------------------

SPECIAL = re.compile(r"^<[^<>\s]+>$")
"""A special token's text (``<bos>``, ``<eos>``, ``<end_of_turn>``): listed, often not in the
text it is said to spell."""


def is_piece(text: str) -> bool:
    """A byte-fallback piece: part of a UTF-8 sequence decoded alone reads U+FFFD (or nothing)."""
    return text == "" or "\ufffd" in text


# -- placing token texts ------------------------------------------------------------------------

Specials = Literal["none", "first", "anywhere"]
"""Where a special token the text leaves out may stand (and cover no text): nowhere, first only
(the BOS of a prompt), or anywhere (the ``<eos>`` a generation ends with)."""


class Placed(NamedTuple):
    """How far ``place`` got: the offsets of the tokens placed, the position reached in the
    target, and the index of the first token not placed (``len(texts)`` when all were)."""

    offsets: list[int]
    end: int
    stopped: int


def spelled(
    texts: list[str], target: str, specials: Specials = "anywhere", pieces: bool = False
) -> list[int] | None:
    """The usual case checked whole: the texts spell the target exactly (after a leading special
    token it leaves out, unless ``specials`` is ``"none"``), so each starts where the last ended.
    ``None`` when ``place`` must walk them (with ``pieces``, also when a byte piece is among
    them: a run of pieces covers characters their own texts do not spell)."""
    lead = 1 if specials != "none" and texts and SPECIAL.match(texts[0]) else 0
    if lead and target.startswith(texts[0]):
        lead = 0
    rest = texts[lead:] if lead else texts
    joined = "".join(rest)
    if joined != target:
        return None
    lengths = list(map(len, rest))
    if pieces and ("\ufffd" in joined or (lead and "\ufffd" in texts[0]) or 0 in lengths):
        return None
    inner = list(accumulate(lengths, initial=0))
    inner.pop()
    return [0, *inner] if lead else inner


def place(
    texts: list[str], target: str, specials: Specials = "anywhere", pieces: bool = False
) -> Placed:
    """Walk ``texts`` along ``target`` (``spelled`` first). A token continues the target where the
    last ended; a special token not spelled there covers no text (where ``specials`` allows);
    with ``pieces``, a run of byte pieces covers the non-ASCII characters up to where the next
    token continues the target."""
    whole = None if walking() else spelled(texts, target, specials, pieces)
    if whole is not None:
        return Placed(whole, len(target), len(texts))
    offsets: list[int] = []
    pos = 0
    run: list[int] = []
    for i, t in enumerate(texts):
        if pieces and is_piece(t):
            run.append(i)
            offsets.append(pos)
            continue
        if run:
            q = _resync(target, pos, t)
            if q is None:
                return Placed(offsets[: run[0]], pos, run[0])
            pos, run = q, []
        if target.startswith(t, pos):
            offsets.append(pos)
            pos += len(t)
        elif SPECIAL.match(t) and (specials == "anywhere" or (specials == "first" and i == 0)):
            offsets.append(pos)
        else:
            return Placed(offsets, pos, i)
    if run:
        q = _resync(target, pos, None)
        if q is None:
            return Placed(offsets[: run[0]], pos, run[0])
        pos = q
    return Placed(offsets, pos, len(texts))


def _resync(target: str, pos: int, nxt: str | None) -> int | None:
    """Where a run of byte pieces starting at ``pos`` ends: after at least one non-ASCII
    character, at the first place ``nxt`` continues the target (the target's end for None)."""
    q = pos
    while q < len(target) and ord(target[q]) > 127:
        q += 1
        if nxt is not None and target.startswith(nxt, q):
            return q
    if nxt is None and q == len(target) and q > pos:
        return q
    return None


def run_on_stop(texts: list[str], target: str, placed: Placed, stop: Any) -> list[int] | None:
    """The offsets of every token when those from ``placed.stopped`` on spell the rest of the
    target and then the stop string ``stop`` the server cut the text at, keeping their logprobs
    (vLLM's chat route): their offsets run on past the text. ``None`` when they do not."""
    i, pos = placed.stopped, placed.end
    rest = "".join(texts[i:])
    tail = target[pos:]
    if not (isinstance(stop, str) and rest.startswith(tail) and rest[len(tail) :].startswith(stop)):
        return None
    out = list(placed.offsets)
    for text in texts[i:]:
        out.append(pos)
        pos += len(text)
    return out


def pinned_stop(
    texts: list[str], target: str, placed: Placed, stop: str | int | None, last_id: int | None
) -> list[int] | None:
    """The offsets of every token when those from ``placed.stopped`` on are what the server cut
    from the end of the text (SGLang keeps their ids and logprobs): the stop string ``stop`` (or
    byte pieces of it), the stop token id ``stop`` as the last id, or special tokens; the token
    where the text ends may straddle it. They sit at the text's end. ``None`` when they are not."""
    rest = texts[placed.stopped :]
    end = placed.end
    if end == len(target) and _cut_tail(rest, stop, last_id):
        return [*placed.offsets, *([len(target)] * len(rest))]
    if rest and end < len(target) and rest[0].startswith(target[end:]):
        spill = [rest[0][len(target) - end :], *rest[1:]]
        if _cut_tail(spill, stop, last_id, straddle=True):
            return [*placed.offsets, end, *([len(target)] * (len(rest) - 1))]
    return None


def _cut_tail(
    rest: list[str], stop: str | int | None, last_id: int | None, straddle: bool = False
) -> bool:
    spoken = [t for t in rest if not SPECIAL.match(t)]
    if not spoken:
        return True
    if isinstance(stop, str):
        return "".join(spoken).startswith(stop) or all(map(is_piece, spoken))
    if isinstance(stop, int) and last_id is not None:
        return len(rest) == 1 and not straddle and last_id == stop
    return False


def by_bytes(
    texts: Sequence[str], raw: Sequence[list[int] | None], target: str
) -> list[int] | None:
    """Offsets from each token's bytes when those are its true bytes (OpenAI's split characters):
    joined they must decode to the target, and a token whose bytes decode alone must read as its
    text. vLLM's bytes encode the decoded text instead, so they never help there."""
    pieces: list[bytes] = []
    for text, numbers in zip(texts, raw, strict=True):
        if numbers is None or not all(0 <= b < 256 for b in numbers):
            return None
        piece = bytes(numbers)
        try:
            if piece.decode("utf-8") != text:
                return None
        except UnicodeDecodeError:
            pass  # part of a character: its text is the server's escape
        pieces.append(piece)
    try:
        if not pieces or b"".join(pieces).decode("utf-8") != target:
            return None
    except UnicodeDecodeError:
        return None
    out: list[int] = []
    done = b""
    for piece in pieces:
        out.append(len(done.decode("utf-8", "ignore")))
        done += piece
    return out


def located_whole(texts: list[str], given: list[int], target: str, base: int) -> list[int] | None:
    """``located``'s usual reply, checked whole: the tokens spell the target (after a leading
    special token it leaves out, the echoed BOS) and each given offset is where the token before
    it ends. The offsets re-based on the target, or ``None`` when ``located`` must walk them."""
    lead = 1 if texts and SPECIAL.match(texts[0]) and not target.startswith(texts[0]) else 0
    if "".join(texts[lead:]) != target:
        return None
    lengths = list(map(len, texts))
    ends = list(accumulate(lengths, initial=base))
    ends.pop()
    if given != ends:
        return None
    if not lead and not base:
        return ends
    inner = list(accumulate(lengths[lead:], initial=0))
    inner.pop()
    return [0, *inner] if lead else inner


def located(
    check: Checker, where: str, texts: list[str], given: list[int], target: str, base: int
) -> list[int]:
    """Offsets a wire gives (``given``, counted from ``base``) re-based on ``target``, each token
    checked against the slice it claims (``located_whole`` first). vLLM counts offsets over token
    strings, so a special token the text leaves out (``<bos>`` before an echoed prompt) shifts
    every later offset by its length (wire reference 1.4): such a token covers no text, and a
    byte piece none either."""
    whole = None if walking() else located_whole(texts, given, target, base)
    if whole is not None:
        return whole
    out: list[int] = []
    shift = base
    for i, token in enumerate(texts):
        offset = given[i] - shift
        inside = 0 <= offset <= len(target) and (not out or offset >= out[-1])
        if inside and target.startswith(token, offset):
            out.append(offset)
        elif inside and SPECIAL.match(token):
            out.append(offset)
            shift += len(token)
        elif inside and is_piece(token):
            out.append(offset)
        else:
            found = target[max(offset, 0) : max(offset, 0) + len(token)]
            raise check.violation(
                f"{where}.text_offset[{i}]",
                f"{where}.text_offset[{i}]={given[i]} does not locate token {token!r} in the text "
                f"(found {found!r}): offsets cannot be trusted",
            )
    return out


def covered(texts: list[str], offsets: list[int], target: str) -> int:
    """How far from the start the tokens at ``offsets`` spell ``target`` without a gap (a special
    token the text leaves out covers nothing); ``len(target)`` when a byte piece is among them,
    which has no length to add up."""
    if any(map(is_piece, texts)) or not target:
        return len(target)
    reached = 0
    for offset, token in zip(offsets, texts, strict=False):
        if SPECIAL.match(token) and not target.startswith(token, offset):
            continue
        if offset != reached:
            break
        reached = offset + len(token)
    return reached


# -- exact top-k --------------------------------------------------------------------------------


def descending_rows(values: Sequence[float], width: int) -> bool:
    """Whether ``values``, rows of ``width`` laid end to end, is non-increasing within each row:
    compared column against next column, in C, not position by position."""
    return all(
        all(map(operator.ge, values[j::width], values[j + 1 :: width])) for j in range(width - 1)
    )


def best_first(
    rows: Sequence[Sequence[R]],
    flat: Sequence[float],
    width: int | None,
    k: int,
    logprob: Callable[[R], float],
) -> list[Sequence[R]]:
    """Each row's ``k`` most likely alternatives, most likely first: the rows as listed when they
    already descend (all ``width`` long, their logprobs laid end to end in ``flat``), as vLLM and
    Gemini list them; else sorted, stably (ties keep the wire's order)."""
    if width is not None and descending_rows(flat, width):
        return [row[:k] for row in rows]
    return [sorted(row, key=logprob, reverse=True)[:k] for row in rows]


@dataclass(frozen=True)
class TopK:
    """What makes a wire's list of alternatives for a position an exact top-k.

    Alternatives and scored tokens are read by ``.token`` and ``.logprob`` (and ``.token_id``
    with ``ids``): a wire's reply Struct names its fields so. The scored token is matched by id
    when it has one, else by text (``checks.top_contradiction``).
    """

    extra: int = 0
    """The wire is asked for k + ``extra`` and must list exactly that many: vLLM's chat and
    responses routes list the sampled token first and cut there, so sieval asks for k + 1 and
    keeps the k best (exact whether or not the sampled token is among them)."""
    at_least: bool = False
    """The wire may list more than k (Google): sorted and cut to k."""
    presorted: bool = False
    """The wire lists exactly k, most likely first, each id once (SGLang): that is checked, the
    list kept as listed, and the scored token ranked by id."""
    ids: bool = False
    """Alternatives carry ``.token_id`` (``None`` for absent), kept in each ``TopEntry``; their
    ``.logprob`` (and ``.token``) may be ``None`` on the wire, which is refused."""
    texts: bool = True
    """With ``ids``: an alternative must have its text (SGLang's may not: it reads "")."""
    field: str = ".logprob"
    """How the wire names an alternative's logprob, for the path of a bad one."""
    short: str = "{path} lists {n} alternatives for top-k={k}: the reply is short"
    """The refusal of a list that is not as long as the rule says (``{path}``, ``{n}``, ``{k}``,
    ``{asked}``)."""


def top_k(
    check: Checker,
    path: str,
    scored: Sequence[Any],
    lists: Sequence[Sequence[Any] | None],
    k: int,
    rule: TopK,
    first: int = 0,
) -> tuple[list[tuple[TopEntry, ...]], list[int]]:
    """Each position's exact top-k, most likely first, and the scored token's rank in it (-1
    when it is not among them). ``path`` names position ``i`` with ``{i}`` (counted from
    ``first``). The whole channel is checked first (lengths, logprobs sound, each list agreeing
    with its scored token); any doubt walks it, and the walk names the first bad position."""
    whole = _top_k_whole(scored, lists, k, rule)
    if whole is not None:
        return whole
    tops: list[tuple[TopEntry, ...]] = []
    ranks: list[int] = []
    for i, (s, alts) in enumerate(zip(scored, lists, strict=True)):
        top, rank = _top_k_one(check, path.format(i=i + first), s, alts or [], k, rule)
        tops.append(top)
        ranks.append(rank)
    return tops, ranks


_TOKEN, _TOKEN_ID, _LOGPROB = attrgetter("token"), attrgetter("token_id"), attrgetter("logprob")


def _entries(row: Sequence[Any], ids: bool) -> tuple[TopEntry, ...]:
    if not ids:
        return tuple([TopEntry(token=a.token, logprob=a.logprob) for a in row])
    return tuple(
        [
            TopEntry(
                token=a.token if a.token is not None else "",
                logprob=a.logprob,
                token_id=UNSET if a.token_id is None else a.token_id,
            )
            for a in row
        ]
    )


def _key(s: Any, ids: bool) -> Any:
    """What a scored token is matched by: its id when it has one, else its text."""
    if ids:
        tid = s.token_id
        if isinstance(tid, int):
            return tid
    return s.token


def _rank(s: Any, ranked: Sequence[Any], by_id: bool) -> int:
    if by_id:
        return next((j for j, a in enumerate(ranked) if a.token_id == s.token_id), -1)
    return next(
        (j for j, a in enumerate(ranked) if a.token == s.token and a.logprob == s.logprob), -1
    )


def _top_k_whole(
    scored: Sequence[Any], lists: Sequence[Sequence[Any] | None], k: int, rule: TopK
) -> tuple[list[tuple[TopEntry, ...]], list[int]] | None:
    if walking() or None in lists:
        return None
    rows: Sequence[Sequence[Any]] = lists  # type: ignore[assignment]
    lengths = list(map(len, rows))
    if rule.at_least:
        if min(lengths, default=k) < k:
            return None
    elif lengths.count(k + rule.extra) != len(lengths):
        return None
    flat = [a.logprob for alts in rows for a in alts]
    if rule.ids and (
        None in flat or (rule.texts and None in [a.token for alts in rows for a in alts])
    ):
        return None
    if not sound(flat) or (rule.presorted and not descending_rows(flat, k)):
        return None
    if not all(lengths):
        return None
    firsts = [alts[0] for alts in rows]
    own = [s.logprob for s in scored]
    keys: list[Any] = [s.token for s in scored]
    if rule.ids:
        ids = [s.token_id for s in scored]
        by_id = UNSET not in ids and None not in ids
        keys = (
            ids
            if by_id
            else [i if isinstance(i, int) else t for i, t in zip(ids, keys, strict=True)]
        )
    else:
        by_id = False
    first_keys = [a.token_id for a in firsts] if by_id else [a.token for a in firsts]
    if not sampled_first(keys, own, first_keys, [a.logprob for a in firsts]):
        for key, logprob, alts in zip(keys, own, rows, strict=True):
            what = _TOKEN_ID if rule.ids and isinstance(key, int) else _TOKEN
            if top_contradiction(key, logprob, alts, what, _LOGPROB):
                return None
    if rule.presorted:
        row_ids = [[a.token_id for a in alts] for alts in rows]
        if any(len(set(r)) != k for r in row_ids):
            return None
        tops = [_entries(r, True) for r in rows]
        tids = [s.token_id for s in scored]  # ranked by id, as _rank does
        ranks = [r.index(t) if t in r else -1 for t, r in zip(tids, row_ids, strict=True)]
        return tops, ranks
    width = lengths[0] if lengths and lengths.count(lengths[0]) == len(lengths) else None
    ranked = best_first(rows, flat, width, k, _LOGPROB)
    if rule.ids:
        tops = [_entries(r, True) for r in ranked]
    else:  # inline: the usual chat and Responses reply, hundreds of positions
        tops = [tuple([TopEntry(token=a.token, logprob=a.logprob) for a in r]) for r in ranked]
    ranks = [
        0 if r[0].token == s.token and r[0].logprob == s.logprob else _rank(s, r, False)
        for s, r in zip(scored, ranked, strict=True)
    ]
    return tops, ranks


def _top_k_one(
    check: Checker, path: str, s: Any, alts: Sequence[Any], k: int, rule: TopK
) -> tuple[tuple[TopEntry, ...], int]:
    asked = k + rule.extra
    n = len(alts)
    if (n < k) if rule.at_least else (n != asked):
        raise check.violation(
            path,
            rule.short.format(path=path, n=n, k=k, asked=asked),
            expected=asked,
            received=n,
        )
    if rule.ids:
        name = rule.field.lstrip(".") if rule.field.startswith(".") else "logprob"
        for j, a in enumerate(alts):
            if (rule.texts and a.token is None) or a.logprob is None:
                missing = "token" if rule.texts and a.token is None else name
                raise check.violation(f"{path}[{j}]", f"{path}[{j}] has no {missing}")
    values = [a.logprob for a in alts]
    check.logprobs(path, values, rule.field)
    if rule.presorted:
        if any(a < b for a, b in itertools.pairwise(values)):
            raise check.violation(path, f"{path} is not sorted most likely first: {values}")
        ids = [a.token_id for a in alts]
        if len(set(ids)) != k:
            raise check.violation(path, f"{path} lists a token id twice: {ids}")
    key = _key(s, rule.ids)
    what = _TOKEN_ID if isinstance(key, int) and rule.ids else _TOKEN
    check.sampled_in_top(path, key, s.logprob, alts, what, _LOGPROB)
    if rule.presorted:
        return _entries(alts, True), _rank(s, alts, True)
    ranked = sorted(alts, key=_NEGATIVE_LOGPROB)[:k]
    return _entries(ranked, rule.ids), _rank(s, ranked, False)


def _NEGATIVE_LOGPROB(a: Any) -> float:
    return float(-a.logprob)


_KEY, _VALUE = itemgetter(0), itemgetter(1)


def top_k_map(
    check: Checker, path: str, entries: Mapping[str, float], text: str, logprob: float, k: int
) -> tuple[tuple[TopEntry, ...], int]:
    """A position's alternatives as a map keyed by text: exactly k entries, or k + 1 with the
    scored token outside the top-k (OpenAI's completions). The k alternatives, most likely first,
    and the scored token's index among them, or -1.

    A map short of k, or one holding another value for the scored token, means distinct tokens
    collapsed onto one text key (wire reference 7.8): refused. A collision that still leaves k
    entries cannot be detected from the map alone. With k + 1 the scored token is outside the
    top-k, so its logprob must not exceed the k-th's (``sampled_in_top``).
    """
    check.logprobs(path, list(entries.values()), keys=entries)
    n = len(entries)
    scored_in = text in entries
    if not scored_in or n not in (k, k + 1):
        raise check.violation(
            path,
            f"{path} lists {n} alternatives for top-k={k} (scored token {text!r} "
            f"{'present' if scored_in else 'absent'}); expected k, or k+1 with the scored "
            "token: tokens that decode alike collapsed, so this position cannot be trusted",
            expected=k,
            received=n,
        )
    if abs(entries[text] - logprob) > SAME_LOGPROB:
        raise check.violation(
            path,
            f"{path} gives {text!r} the logprob {entries[text]} but the token's own logprob is "
            f"{logprob}: another token with the same text overwrote it",
        )
    items = sorted(entries.items(), key=lambda kv: -kv[1])
    if n == k + 1:
        items = [kv for kv in items if kv[0] != text]
        if logprob > items[-1][1] + LOGPROB_TOLERANCE:  # above the k-th: refused
            check.sampled_in_top(path, text, logprob, items, _KEY, _VALUE)
        rank = -1
    else:
        rank = next(i for i, kv in enumerate(items) if kv[0] == text)
    return tuple(TopEntry(token=t, logprob=lp) for t, lp in items), rank


def mapped_tokens(
    check: Checker, path: str, positions: Any, offsets: list[Any], k: int
) -> tuple[Token, ...]:
    """One Token per position of parallel lists (``positions.tokens``, ``.token_logprobs``,
    ``.top_logprobs``: OpenAI's completions); with ``k``, each scored position's top-k from its
    map keyed by text (``top_k_map``; ``{path}[i]`` names it)."""
    texts, logprobs, maps = positions.tokens, positions.token_logprobs, positions.top_logprobs
    if not k:
        return tuple(map(_plain, texts, logprobs, offsets))
    out = []
    for i, (text, logprob, offset) in enumerate(zip(texts, logprobs, offsets, strict=True)):
        top: Any = UNSET
        rank: Any = UNSET
        if logprob is not None:
            at = f"{path}[{i}]"
            entries = check.present(maps[i] if maps is not None else None, at, f"for top-k={k}")
            top, rank = top_k_map(check, at, entries, text, logprob, k)
        out.append(Token(text=text, logprob=logprob, offset=offset, top=top, scored_rank=rank))
    return tuple(out)


def _plain(text: str, logprob: float | None, offset: Any) -> Token:
    return Token(text=text, logprob=logprob, offset=offset)


def top_k_by_id(
    check: Checker, path: str, entries: Mapping[int, Any], token_id: int, k: int
) -> tuple[Any, Any, Any]:
    """A position's alternatives as a map keyed by token id, each with ``.logprob``, ``.rank``
    and ``.decoded_token`` (vLLM's ``prompt_logprobs``): k entries, or k + 1 with the scored token
    outside the top-k; ranks exactly 1..k. The scored entry, the k alternatives ranked (``UNSET``
    for k = 0) and the scored token's index among them, or -1."""
    check.logprobs(path, [e.logprob for e in entries.values()], ".logprob", list(entries))
    n = len(entries)
    if token_id not in entries or n not in (k, k + 1):
        raise check.violation(
            path,
            f"{path} lists {n} entries for top-k={k} (scored id {token_id} "
            f"{'present' if token_id in entries else 'absent'}); expected k, or k+1 with the "
            "scored token",
            expected=k,
            received=n,
        )
    scored = entries[token_id]
    if not k:
        return scored, UNSET, UNSET
    others = sorted(
        ((tid, e) for tid, e in entries.items() if n == k or tid != token_id),
        key=lambda item: item[1].rank,
    )
    ranks = [e.rank for _, e in others]
    if ranks != list(range(1, k + 1)):
        raise check.violation(path, f"{path} has ranks {ranks}; expected 1..{k}")
    if n == k + 1 and scored.logprob > others[-1][1].logprob + LOGPROB_TOLERANCE:
        # the scored token is outside the top-k yet above the k-th (rank k): refused
        check.sampled_in_top(path, token_id, scored.logprob, others, _KEY, _item_logprob)
    top = tuple(TopEntry(token=e.decoded_token, logprob=e.logprob, token_id=t) for t, e in others)
    rank = next((j for j, (t, _) in enumerate(others) if t == token_id), -1)
    return scored, top, rank


def ranked_by_id(
    check: Checker, path: str, rows: list[dict[int, Any]], ids: list[int], k: int
) -> tuple[list[Any], list[Any] | None, list[Any] | None]:
    """``top_k_by_id`` for every position (``path`` names position ``i`` with ``{i}``, counted
    from 1: position 0 of a prompt is unscored): the scored entries, and each position's top-k and
    rank (``None`` for k = 0). With k = 0 the channel is checked whole first: every position lists
    its scored token alone, with a sound logprob."""
    if not k and not walking() and sum(map(len, rows)) == len(rows):
        try:
            entries: list[Any] = list(map(dict.__getitem__, rows, ids))
        except KeyError:
            entries = []
        if len(entries) == len(rows) and sound([e.logprob for e in entries]):
            return entries, None, None
    ranked = [
        top_k_by_id(check, path.format(i=i + 1), row, tid, k)
        for i, (row, tid) in enumerate(zip(rows, ids, strict=True))
    ]
    if not k:
        return [e for e, _, _ in ranked], None, None
    return [e for e, _, _ in ranked], [t for _, t, _ in ranked], [n for _, _, n in ranked]


def _item_logprob(item: tuple[int, Any]) -> float:
    return float(item[1].logprob)


# -- candidates ---------------------------------------------------------------------------------


def candidate_rows(
    check: Checker,
    where: str,
    rows: Sequence[Sequence[Any] | None] | None,
    n: int,
    asked: Sequence[int],
) -> list[Sequence[Any]]:
    """The rows of the candidate ids a request asked for (``.token_id``, ``.logprob``, ``.token``
    per entry), one per sampled token (``n``), each holding exactly the ids asked in their
    order, every logprob sound."""
    if rows is None:
        raise check.violation(where, f"{where} is missing although token_ids_logprob was sent")
    if n == 0 and len(rows) <= 1:
        return []
    if len(rows) != n:
        raise check.violation(
            where, f"{where} has {len(rows)} rows for {n} sampled tokens", expected=n
        )
    out: list[Sequence[Any]] = []
    for j, row in enumerate(rows):
        at = f"{where}[{j}]"
        ids = [e.token_id for e in row] if row is not None else []
        if ids != list(asked):
            raise check.violation(
                at,
                f"{at} scores ids {ids}, not the candidates asked for {list(asked)} in their order",
                expected=list(asked),
                received=ids,
            )
        assert row is not None
        values = [e.logprob for e in row]
        if None in values:
            raise check.violation(at, f"{at} holds a null logprob")
        check.logprobs(at, values, "[0]")
        out.append(row)
    return out


def with_candidates(
    check: Checker, where: str, tokens: list[Token], rows: list[Sequence[Any]]
) -> list[Token]:
    """Each token with its row of candidates (``candidate_rows``). The candidates are no top-k:
    only a candidate that is the sampled token is checked against it (``exact=False``)."""
    out = []
    for j, (token, row) in enumerate(zip(tokens, rows, strict=True)):
        entries = tuple(
            TopEntry(
                token=e.token if e.token is not None else "",
                logprob=float(e.logprob or 0.0),
                token_id=e.token_id,
            )
            for e in row
        )
        if isinstance(token.logprob, float) and isinstance(token.token_id, int):
            check.sampled_in_top(
                f"{where}[{j}]", token.token_id, token.logprob, entries, _TOKEN_ID, _LOGPROB, False
            )
        out.append(msgspec.structs.replace(token, candidates=entries))
    return out


# -- usage --------------------------------------------------------------------------------------


def count(value: int | None) -> Any:
    """A reported count, or ``UNSET`` for one the server did not report (never 0)."""
    return UNSET if value is None else value


Path = str | tuple[str, ...]
"""Where a count sits in the wire's usage Struct: a dotted attribute path, or several whose
counts add up (the first decides whether the sum is reported: Anthropic's input is its
``input_tokens`` plus the cache reads and writes it reports)."""


@dataclass(frozen=True)
class UsageAt:
    """Where each usage count sits in a wire's usage Struct (``None``: the wire has none), and
    how its total relates to the others.

    Usage is a contract like log-probabilities (``lift_usage``): every count the wire reports is
    a whole number from 0 to ``MAX_TOKEN_COUNT``, the cached part of the input is at most the
    input, the reasoning part of the output at most the output, and the total is what
    ``total_covers`` says.
    """

    input: Path | None = None
    output: Path | None = None
    cached: Path | None = None
    reasoning: Path | None = None
    total: Path | None = None
    """The server's own total, kept only when it disagrees with input + output."""
    total_covers: tuple[str, ...] | None = None
    """``None``: the total is exactly input + output, and one that is not is refused (the OpenAI
    family's ``total_tokens``, Responses'). Else the counts the total must at least cover, when
    the wire's total may count more (Google's adds tool-use prompt tokens, and a proxy may leave
    thoughts out of it): a total above them is kept as reported, one below is refused."""
    where: str = "usage"
    """How the wire names its usage object, for the path of a bad count (``usageMetadata``)."""


Getter = Callable[[Any], Any]


class _Plan(NamedTuple):
    """How ``lift_usage`` reads one ``UsageAt``, worked out once: a getter per attribute path,
    and which of them each count adds up (``None``: the wire has no such count)."""

    leaves: tuple[str, ...]
    getters: tuple[Getter, ...]
    input: tuple[int, ...] | None
    output: tuple[int, ...] | None
    cached: tuple[int, ...] | None
    reasoning: tuple[int, ...] | None
    total: tuple[int, ...] | None
    covers: tuple[int, ...] | None


def _plan(at: UsageAt) -> _Plan:
    leaves: list[str] = []
    for path in (at.input, at.output, at.cached, at.reasoning, at.total, at.total_covers):
        for leaf in (path,) if isinstance(path, str) else (path or ()):
            if leaf not in leaves:
                leaves.append(leaf)

    def ids(path: Path | None) -> tuple[int, ...] | None:
        if path is None:
            return None
        return tuple(leaves.index(leaf) for leaf in ((path,) if isinstance(path, str) else path))

    return _Plan(
        tuple(leaves),
        tuple(map(_getter, leaves)),
        ids(at.input),
        ids(at.output),
        ids(at.cached),
        ids(at.reasoning),
        ids(at.total),
        ids(at.total_covers),
    )


def _getter(path: str) -> Getter:
    """A function reading one count where ``path`` says (``None`` where a node is absent)."""
    names = path.split(".")
    if len(names) == 1:
        return attrgetter(path)
    return lambda wire: _walk(wire, names)


def _walk(node: Any, names: list[str]) -> Any:
    for name in names:
        if node is None:
            return None
        node = getattr(node, name)
    return node


def _added(values: list[Any], ids: tuple[int, ...] | None) -> Any:
    """The count ``ids`` name: one value, or the sum of several (unreported when the first is)."""
    if ids is None:
        return None
    first = values[ids[0]]
    if first is None or len(ids) == 1:
        return first
    return first + sum(values[i] for i in ids[1:] if values[i] is not None)


def _wire_path(wire: Any, at: UsageAt, leaf: str) -> str:
    """``leaf`` (attribute names) as the wire spells it: ``usageMetadata.promptTokenCount``."""
    node, out = wire, [at.where]
    for name in leaf.split("."):
        fields = {f.name: f.encode_name for f in msgspec.structs.fields(node)} if node else {}
        out.append(fields.get(name, name))
        node = getattr(node, name, None) if node is not None else None
    return ".".join(out)


def _named(wire: Any, at: UsageAt, path: Path | None) -> str:
    """The wire's name of a count (several joined by ``+``)."""
    leaves = (path,) if isinstance(path, str) else (path or ())
    return " + ".join(_wire_path(wire, at, leaf) for leaf in leaves)


def lift_usage(check: Checker, wire: Any, at: UsageAt) -> Usage:
    """A wire's usage as the IR's, checked: "not reported" stays ``UNSET``; each count reported
    is a token count (``Checker.count``), the parts fit in their wholes (``checked_usage``), and
    the server's total is what ``at.total_covers`` says, kept only when it is not input +
    output. The wire's names of the counts are looked up only for an error's message."""
    if wire is None:
        return Usage()
    plan = _PLANS.get(id(at))
    if plan is None or plan[0] is not at:
        plan = _PLANS[id(at)] = (at, _plan(at))
    p = plan[1]
    values = [read(wire) for read in p.getters]
    for value in values:
        if value is not None and (type(value) is not int or not 0 <= value <= MAX_TOKEN_COUNT):
            _refuse_count(check, wire, at, p, values)
    inputs, outputs = _added(values, p.input), _added(values, p.output)
    cached, reasoning = _added(values, p.cached), _added(values, p.reasoning)
    if (inputs is not None and inputs > MAX_TOKEN_COUNT) or (
        outputs is not None and outputs > MAX_TOKEN_COUNT
    ):  # a sum of counts in range
        big = "input" if inputs is not None and inputs > MAX_TOKEN_COUNT else "output"
        check.count(_named(wire, at, getattr(at, big)), inputs if big == "input" else outputs)
    if cached is not None and inputs is not None and cached > inputs:
        raise _bigger_part(
            check, _named(wire, at, at.cached), cached, _named(wire, at, at.input), inputs
        )
    if reasoning is not None and outputs is not None and reasoning > outputs:
        raise _bigger_part(
            check, _named(wire, at, at.reasoning), reasoning, _named(wire, at, at.output), outputs
        )
    lifted = Usage(
        input_tokens=UNSET if inputs is None else inputs,
        output_tokens=UNSET if outputs is None else outputs,
        cached_tokens=UNSET if cached is None else cached,
        reasoning_tokens=UNSET if reasoning is None else reasoning,
    )
    total = _added(values, p.total)
    if total is None or (inputs is not None and outputs is not None and total == inputs + outputs):
        return lifted
    if p.covers is None:
        if inputs is not None and outputs is not None:
            shown = _named(wire, at, at.total)
            raise check.violation(
                shown,
                f"{shown} is {total} but the input and output counts add up to "
                f"{inputs + outputs} ({_named(wire, at, at.input)} {inputs} + "
                f"{_named(wire, at, at.output)} {outputs}): the reply's usage is not believed",
                expected=inputs + outputs,
                received=total,
            )
        covered = (inputs or 0) + (outputs or 0)
    else:
        covered = sum(values[i] or 0 for i in p.covers)
    if total < covered:
        shown = _named(wire, at, at.total)
        raise check.violation(
            shown,
            f"{shown} is {total}, less than the {covered} tokens it must cover: the reply's "
            "usage is not believed",
            expected=f">= {covered}",
            received=total,
        )
    return msgspec.structs.replace(lifted, reported_total_tokens=total)


def _refuse_count(check: Checker, wire: Any, at: UsageAt, p: _Plan, values: list[Any]) -> None:
    """Raise for the first value that is no token count, naming it as the wire spells it."""
    for leaf, value in zip(p.leaves, values, strict=True):
        if value is not None:
            check.count(_wire_path(wire, at, leaf), value)


_PLANS: dict[int, tuple[UsageAt, _Plan]] = {}
"""Each ``UsageAt``'s plan, by identity (the declarations are module constants: no hashing of
the dataclass on every reply; the ``UsageAt`` kept beside it guards a reused id)."""


def _bigger_part(check: Checker, part: str, small: int, whole: str, big: int) -> ContractViolation:
    return check.violation(
        part,
        f"{part} is {small}, more than the {big} of {whole} it is part of: the reply's usage is "
        "not believed",
        expected=f"<= {big}",
        received=small,
    )


_IR_NAMES = {
    "input": "usage.input_tokens",
    "output": "usage.output_tokens",
    "cached": "usage.cached_tokens",
    "reasoning": "usage.reasoning_tokens",
}


def checked_usage(check: Checker, usage: Usage, names: Mapping[str, str] | None = None) -> Usage:
    """``usage`` when it holds together: every count a token count (``Checker.count``), the
    cached tokens at most the input, the reasoning tokens at most the output. ``names`` spells
    the counts as the wire does (``input``, ``output``, ``cached``, ``reasoning``; the IR's names
    otherwise). The check of a wire that lifts its usage with its own reader (SGLang's), and of
    every such reader (``reading.py``)."""
    name = {**_IR_NAMES, **(names or {})}
    inputs, outputs = usage.input_tokens, usage.output_tokens
    cached, reasoning = usage.cached_tokens, usage.reasoning_tokens
    for key, value in (
        ("input", inputs),
        ("output", outputs),
        ("cached", cached),
        ("reasoning", reasoning),
    ):
        if value is not UNSET:
            check.count(name[key], value)
    if isinstance(cached, int) and isinstance(inputs, int) and cached > inputs:
        raise _bigger_part(check, name["cached"], cached, name["input"], inputs)
    if isinstance(reasoning, int) and isinstance(outputs, int) and reasoning > outputs:
        raise _bigger_part(check, name["reasoning"], reasoning, name["output"], outputs)
    return usage


# -- the clamp warning ---------------------------------------------------------------------------

_CUT = " (prompt {prompt} tokens), so this generation is cut by the context"


def clamp_warning(
    dialect: str,
    who: str,
    finish: str,
    made: int,
    asked: int,
    server: str = "the server",
    field: str = "max_tokens",
    prompt: Any = None,
) -> str:
    """The warning for a generation that ended for ``finish`` after ``made`` of the ``asked``
    tokens: a server that shortened the budget to fit its context window (vLLM 0.32 to
    max_model_len - prompt_tokens, wire reference 7.6; SGLang's scheduler) says so only by ending
    early, and the reader must know that this generation is cut by the context. ``prompt`` is the
    prompt's size as reported (``None``: not said)."""
    said = (
        f"{dialect}: {who} ended for {finish} after {made} of max_tokens={asked} tokens: "
        f"{server} shortened {field} to fit its context window"
    )
    return said if prompt is None else said + _CUT.format(prompt=prompt)


def echoed_clamp_warning(dialect: str, field: str, asked: int, applied: int, prompt: Any) -> str:
    """The clamp warning of a wire that echoes the budget it applied (Responses'
    ``max_output_tokens``)."""
    said = f"{dialect}: the server shortened {field} from {asked} to {applied} to fit its context"
    return said + " window" + _CUT.format(prompt=prompt)


# -- tool arguments -----------------------------------------------------------------------------


def tool_arguments(check: Checker, where: str, name: str, text: str) -> dict[str, Any]:
    """A function call's arguments, parsed from their JSON text into an object (a function takes
    named arguments); anything else is refused, naming the call."""
    try:
        arguments = msgspec.json.decode(text)
    except RecursionError as exc:
        raise check.violation(where, f"{where} {DEEP}: the call {name!r} cannot be run") from exc
    except msgspec.DecodeError as exc:
        raise check.violation(
            where, f"{where} is not valid JSON ({text[:60]!r}): the call {name!r} cannot be run"
        ) from exc
    if not isinstance(arguments, dict):
        raise check.violation(
            where,
            f"{where} is JSON but not an object ({text[:60]!r}): a function takes named arguments",
            received=type(arguments).__name__,
        )
    return arguments
