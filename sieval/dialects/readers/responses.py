"""The Responses reply's channels: the answer and refusals of its message items, the sampled tokens
of their ``output_text`` parts, and its reasoning items (wire reference 3.2, 3.5)."""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from ...ir.response import Token
from ..channels import SPECIAL, place, top_k
from ..reply import Read
from ..wire import openai_responses as wire

__all__ = ["message", "reasoning", "sampled"]


def message(reply: wire.Reply) -> tuple[str, list[str]]:
    """The answer (the ``output_text`` parts of every message item, in order; the SDK's
    ``output_text`` is not on the wire) and the refusal texts."""
    texts: list[str] = []
    refusals: list[str] = []
    for item in reply.output:
        if isinstance(item, wire.MessageItem):
            for part in item.content:
                if isinstance(part, wire.OutputText):
                    texts.append(part.text)
                else:
                    refusals.append(part.refusal)
    return "".join(texts), refusals


def sampled(r: Read, reply: wire.Reply, i: int) -> tuple[Token, ...] | Any:
    """The answer's sampled tokens with offsets into it and the exact top-k; each part's tokens
    must spell its text. A special token the text leaves out (``<eos>``) covers no text, and one
    that ends the answer is dropped: vLLM lists the stop token in a non-stream reply and never
    streams it. ``UNSET`` when the output holds a function call and no text."""
    check, k = r.check, r.request.scoring.sampled_top_k
    tokens: list[Token] = []
    base = parts = 0
    for n, item in enumerate(reply.output):
        if not isinstance(item, wire.MessageItem):
            continue
        for j, part in enumerate(item.content):
            if not isinstance(part, wire.OutputText):
                continue
            parts += 1
            where = f"output[{n}].content[{j}].logprobs"
            entries = check.present(part.logprobs, where, "although logprobs were requested")
            check.logprobs(where, [e.logprob for e in entries], ".logprob")
            texts = [e.token for e in entries]
            placed = place(texts, part.text)
            if placed.stopped < len(texts):
                m, pos = placed.stopped, placed.end
                raise check.violation(
                    f"{where}[{m}]",
                    f"{where}[{m}] is {texts[m]!r} but the text continues "
                    f"{part.text[pos : pos + 12]!r}: the logprobs do not spell the answer",
                )
            if placed.end != len(part.text):
                raise check.violation(
                    where,
                    f"{where} spell {placed.end} of the {len(part.text)} characters of the "
                    "answer: positions are missing",
                    expected=len(part.text),
                    received=placed.end,
                )
            tops: list[Any] = [UNSET] * len(entries)
            ranks: list[Any] = [UNSET] * len(entries)
            if k:
                lists = [e.top_logprobs for e in entries]
                tops, ranks = top_k(check, where + "[{i}].top_logprobs", entries, lists, k, r.top_k)
            tokens += [
                Token(text=t, logprob=e.logprob, offset=base + o, top=top, scored_rank=rank)
                for t, e, o, top, rank in zip(
                    texts, entries, placed.offsets, tops, ranks, strict=True
                )
            ]
            base += len(part.text)
    if not parts and any(isinstance(item, wire.FunctionCallItem) for item in reply.output):
        return UNSET
    while tokens and tokens[-1].offset == base and SPECIAL.match(tokens[-1].text):
        tokens.pop()
    _positions_complete(r, reply)
    return tuple(tokens)


def _token(text: str, entry: Any, offset: int, top: Any, rank: Any) -> Token:
    return Token(text=text, logprob=entry.logprob, offset=offset, top=top, scored_rank=rank)


def _positions_complete(r: Read, reply: wire.Reply) -> None:
    """The logprobs cover every output token (counted against ``usage.output_tokens``, less its
    reasoning tokens). A stream may lack one, the stop token, when the response completed: vLLM
    streams no event, and so no logprob, for a token that adds no text, which also loses every
    byte-fallback piece that decodes to "" (they are all in a non-stream reply)."""
    usage, streamed = r.usage, r.lowered.stream
    if not isinstance(usage.output_tokens, int):
        return
    listed = sum(
        len(part.logprobs or [])
        for item in reply.output
        if isinstance(item, wire.MessageItem)
        for part in item.content
        if isinstance(part, wire.OutputText)
    )
    reasoning = usage.reasoning_tokens if isinstance(usage.reasoning_tokens, int) else 0
    expected = usage.output_tokens - reasoning
    allowed = {expected, expected - 1} if streamed and reply.status == "completed" else {expected}
    if listed not in allowed:
        fix = " (vLLM streams no logprob for a token without text: ask without streaming)"
        raise r.check.violation(
            "output[].content[].logprobs",
            f"the reply lists logprobs for {listed} positions but generated {expected} output "
            f"tokens: positions are missing or extra{fix if streamed else ''}",
            expected=expected,
            received=listed,
        )


def reasoning(reply: wire.Reply) -> str | Any:
    """Reasoning items as text: the raw ``reasoning_text`` content when present (vLLM), else the
    summary (OpenAI); never part of the answer. ``UNSET`` without reasoning items."""
    texts = []
    seen = False
    for item in reply.output:
        if isinstance(item, wire.ReasoningItem):
            seen = True
            pieces = item.content if item.content else item.summary
            texts += [p.text for p in pieces if p.text]
    return "\n\n".join(texts) if seen else UNSET
