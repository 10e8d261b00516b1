"""continuation_score against hand-computed sums over hand-built input tokens."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sieval.errors import ContractViolation
from sieval.ir.response import Choice, Response, Token, TopEntry
from sieval.scoring import continuation_score


def reply(*tokens: Token) -> Response:
    return Response(choices=(Choice(index=0, text="x"),), input_tokens=tokens)


def tok(text: str, offset: int, logprob: float | None, rank: int | None = None) -> Token:
    if rank is None:
        return Token(text=text, offset=offset, logprob=logprob)
    top = (TopEntry(token="?", logprob=-0.1), TopEntry(token=text, logprob=-0.2))
    return Token(text=text, offset=offset, logprob=logprob, top=top, scored_rank=rank)


# prompt "Answer: yes" = context "Answer:" (7 chars) + continuation " yes"
BOS = tok("<bos>", 0, None)


def test_leading_space_continuation_after_bos() -> None:
    score = continuation_score(
        reply(BOS, tok("Answer", 0, -1.0), tok(":", 6, -0.5), tok(" yes", 7, -2.0)), 7, " yes"
    )
    assert score.logprob_sum == -2.0
    assert (score.n_tokens, score.n_chars, score.n_bytes) == (1, 4, 4)
    assert score.is_greedy is None


def test_multi_token_continuation_sums_only_the_continuation() -> None:
    # "Answer: photosynthesis": " photo"(7) "syn"(13) "thesis"(16) -> -1.5 - 0.25 - 0.125
    tokens = (tok("Answer", 0, None), tok(":", 6, -0.5), tok(" photo", 7, -1.5))
    tokens += (tok("syn", 13, -0.25), tok("thesis", 16, -0.125))
    score = continuation_score(reply(*tokens), 7, " photosynthesis")
    assert score.logprob_sum == -1.875
    assert score.n_tokens == 3


def test_without_bos_and_without_leading_space() -> None:
    # context "Answer: " (8) + "yes": the tokenizer kept " " with "yes" -> " yes" straddles.
    tokens = (tok("Answer", 0, None), tok(":", 6, -0.5), tok(" yes", 7, -2.0))
    with pytest.raises(ContractViolation, match="leading space") as info:
        continuation_score(reply(*tokens), 8, "yes")
    assert info.value.path == "input_tokens[2]"


def test_context_ending_with_space_when_tokenizer_splits_there() -> None:
    tokens = (tok("Answer", 0, None), tok(": ", 6, -0.5), tok("yes", 8, -3.0))
    assert continuation_score(reply(*tokens), 8, "yes").logprob_sum == -3.0


def test_bytes_count_utf8() -> None:
    score = continuation_score(reply(tok("Q", 0, None), tok(" café", 1, -4.0)), 1, " café")
    assert (score.n_chars, score.n_bytes) == (5, 6)


def test_zero_width_byte_token_inside_continuation_is_counted() -> None:
    # a character split over two byte tokens: the first covers no text of its own
    tokens = (tok("Q", 0, None), tok("", 1, -1.0), tok("é", 1, -0.5))
    assert continuation_score(reply(*tokens), 1, "é").n_tokens == 2


def test_greedy_flags() -> None:
    greedy = (BOS, tok("Q", 0, -1.0, 0), tok(" a", 1, -0.1, 0), tok(" b", 3, -0.2, 0))
    assert continuation_score(reply(*greedy), 1, " a b").is_greedy is True
    not_greedy = (*greedy[:3], tok(" b", 3, -0.2, 1))
    assert continuation_score(reply(*not_greedy), 1, " a b").is_greedy is False
    partly = (*greedy[:3], tok(" b", 3, -0.2))
    assert continuation_score(reply(*partly), 1, " a b").is_greedy is None


def test_a_tie_with_the_top_one_is_greedy_as_lm_eval_counts_it() -> None:
    # seen live on LAMBADA test/49: " platform" and " black" both -1.103890061378479, the
    # server listing " black" first; lm-eval's is_greedy compares values, so the tie is greedy
    tie = (TopEntry(token=" black", logprob=-1.1), TopEntry(token=" platform", logprob=-1.1))
    tied = Token(text=" platform", offset=1, logprob=-1.1, top=tie, scored_rank=1)
    assert continuation_score(reply(BOS, tok("Q", 0, -1.0, 0), tied), 1, " platform").is_greedy
    below = (TopEntry(token=" black", logprob=-1.0), TopEntry(token=" platform", logprob=-1.1))
    beaten = Token(text=" platform", offset=1, logprob=-1.1, top=below, scored_rank=1)
    score = continuation_score(reply(BOS, tok("Q", 0, -1.0, 0), beaten), 1, " platform")
    assert score.is_greedy is False


@pytest.mark.parametrize(
    ("tokens", "message"),
    [
        ((), "no scored input tokens"),
        ((Token(text="Q", logprob=None), Token(text=" a", logprob=-1.0)), "no character offset"),
        ((tok("Q", 0, None), tok(" a", 1, None)), "has no logprob"),
        ((tok("Q", 0, None), tok(" a", 5, -1.0)), "within the prompt"),
        ((tok("Q", 1, None), tok(" a", 1, -1.0)), "start at 0"),
        ((tok("Q", 0, None), tok("x", 1, -1.0), tok(" a", 0, -1.0)), "never decrease"),
    ],
)
def test_untrustworthy_replies_raise(tokens: tuple[Token, ...], message: str) -> None:
    with pytest.raises(ContractViolation, match=message):
        continuation_score(reply(*tokens), 1, " a")


def test_unset_input_tokens_and_empty_continuation() -> None:
    with pytest.raises(ContractViolation):
        continuation_score(Response(choices=()), 1, " a")
    with pytest.raises(ValueError):
        continuation_score(reply(tok("Q", 0, None)), 1, "")


pieces = st.lists(st.text(alphabet="abc é", min_size=1, max_size=4), min_size=2, max_size=8)


@given(pieces=pieces, cut=st.integers(min_value=1), data=st.data())
def test_sum_is_exactly_the_tokens_after_a_token_boundary(
    pieces: list[str], cut: int, data: st.DataObject
) -> None:
    cut = 1 + cut % (len(pieces) - 1)  # the continuation starts at token `cut` (never the first)
    logprobs = data.draw(st.lists(st.floats(-20, 0), min_size=len(pieces), max_size=len(pieces)))
    offsets = [sum(len(p) for p in pieces[:i]) for i in range(len(pieces))]
    tokens = tuple(
        tok(p, o, None if i == 0 else lp)
        for i, (p, o, lp) in enumerate(zip(pieces, offsets, logprobs, strict=True))
    )
    continuation = "".join(pieces[cut:])
    score = continuation_score(reply(*tokens), offsets[cut], continuation)
    assert math.isclose(score.logprob_sum, sum(logprobs[cut:]), abs_tol=1e-9)
    assert score.n_tokens == len(pieces) - cut
    assert score.n_bytes == len(continuation.encode())
    # moving the boundary one character into a multi-character token must be refused
    inside = next((i for i in range(1, cut) if len(pieces[i]) > 1), None)
    if inside is not None:
        at = offsets[inside] + 1
        with pytest.raises(ContractViolation, match="merged"):
            continuation_score(reply(*tokens), at, "".join(pieces)[at:])


def test_greedy_stays_unknown_once_a_token_lacks_top() -> None:
    tokens = (tok("Q", 0, None), tok(" a", 1, -0.1), tok(" b", 3, -0.2, 0))
    assert continuation_score(reply(*tokens), 1, " a b").is_greedy is None
