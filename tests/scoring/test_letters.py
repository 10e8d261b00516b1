"""Letter log-probabilities from a top-k list: spellings, max over variants, missing letters."""

from __future__ import annotations

import pytest

from sieval.errors import ContractViolation
from sieval.ir.response import Choice, Response, Token, TopEntry
from sieval.scoring import letter_logprobs, spelled_letter

ABCD = ("A", "B", "C", "D")


def reply(top: list[tuple[str, float]], sampled: tuple[str, float] = (" A", -0.5)) -> Response:
    entries = tuple(TopEntry(token=t, logprob=lp) for t, lp in top)
    rank = next((i for i, (t, _) in enumerate(top) if t == sampled[0]), -1)
    token = Token(text=sampled[0], logprob=sampled[1], top=entries, scored_rank=rank)
    return Response(choices=(Choice(index=0, text=sampled[0], tokens=(token,)),))


def test_spellings() -> None:
    assert [spelled_letter(t) for t in ("A", " A", "▁A", "\nA", " A ")] == ["A"] * 4 + ["A "]


def test_every_spelling_counts_and_the_max_wins() -> None:
    top = [(" A", -0.5), ("B", -1.0), ("▁C", -2.0), (" D", -3.0), ("A", -4.0), (" B", -0.75)]
    got = letter_logprobs(reply(top), ABCD)
    assert got == {"A": -0.5, "B": -0.75, "C": -2.0, "D": -3.0}
    assert list(got) == list(ABCD)


def test_the_sampled_token_counts_when_outside_the_top_k() -> None:
    top = [(" A", -0.5), (" B", -1.0), (" C", -2.0)]
    assert letter_logprobs(reply(top, sampled=(" D", -5.0)), ABCD)["D"] == -5.0


def test_a_missing_letter_fails_with_the_letters_and_k() -> None:
    top = [(" A", -0.5), (" B", -1.0), (" the", -1.5)]
    with pytest.raises(ContractViolation, match=r"letters C, D .* top-3") as info:
        letter_logprobs(reply(top), ABCD)
    assert info.value.received == ["A", "B"]


@pytest.mark.parametrize(
    "response",
    [
        Response(choices=()),
        Response(choices=(Choice(index=0, text="A"),)),
        Response(choices=(Choice(index=0, text="A", tokens=(Token(text="A", logprob=-1.0),)),)),
    ],
)
def test_no_top_k_list(response: Response) -> None:
    with pytest.raises(ContractViolation, match="no top-k list"):
        letter_logprobs(response, ABCD)


def test_an_unscored_sampled_token_is_ignored() -> None:
    entries = tuple(TopEntry(token=t, logprob=-1.0) for t in ABCD)
    token = Token(text="A", top=entries, scored_rank=0)
    response = Response(choices=(Choice(index=0, text="A", tokens=(token,)),))
    assert letter_logprobs(response, ABCD) == dict.fromkeys(ABCD, -1.0)
