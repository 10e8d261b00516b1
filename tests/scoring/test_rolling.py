"""Rolling windows (lm-eval's rules): every token of a document predicted exactly once, each
window within the server's length, each from the tokens just before it; and a window's score."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sieval.errors import ContractViolation
from sieval.ir.response import Response, Token
from sieval.scoring.rolling import rolling_windows, window_logprob

PREFIX = -1


@given(
    tokens=st.lists(st.integers(min_value=0, max_value=50), max_size=300),
    max_seq_len=st.integers(min_value=1, max_value=64),
)
def test_windows_cover_every_token_exactly_once(tokens: list[int], max_seq_len: int) -> None:
    windows = list(rolling_windows(tokens, PREFIX, max_seq_len))
    predicted = [t for _, p in windows for t in p]
    assert predicted == tokens  # every token once, in order
    stream = [PREFIX, *tokens]
    at = 0  # tokens predicted so far
    for i, (context, pred) in enumerate(windows):
        assert 1 <= len(pred) <= max_seq_len and len(context) >= 1
        assert len(context) + len(pred) <= max_seq_len + 1
        # the prompt is a contiguous run of [prefix] + tokens ending at the last predicted token
        end = at + len(pred) + 1
        assert context + pred == stream[end - len(context) - len(pred) : end]
        if i == 0:
            assert context == [PREFIX]
        else:  # later windows are full: as much context as the length allows
            assert len(context) + len(pred) == max_seq_len + 1
        at += len(pred)


def test_windows_by_hand() -> None:
    """lm-eval's docstring example: 10 tokens, max_seq_len 4 (context_len 1)."""
    assert list(rolling_windows(list(range(10)), PREFIX, 4)) == [
        ([PREFIX], [0, 1, 2, 3]),
        ([3], [4, 5, 6, 7]),
        ([5, 6, 7], [8, 9]),
    ]
    assert list(rolling_windows([], PREFIX, 4)) == []
    with pytest.raises(ValueError, match=">= 1"):
        list(rolling_windows([1], PREFIX, 0))


def reply(ids: list[int], logprobs: list[float | None]) -> Response:
    tokens = tuple(
        Token(text=str(i), token_id=i, logprob=lp) for i, lp in zip(ids, logprobs, strict=True)
    )
    return Response(choices=(), input_tokens=tokens)


def test_a_window_sums_its_predicted_tail_and_checks_the_ids() -> None:
    sent = [7, 8, 9, 10]
    assert window_logprob(reply(sent, [None, -1.0, -0.5, -0.25]), sent, 2) == -0.75
    assert window_logprob(reply(sent, [None, -1.0, -0.5, -0.25]), sent, 3) == -1.75
    with pytest.raises(ContractViolation, match="3 prompt tokens but 4"):
        window_logprob(reply(sent[:3], [None, -1.0, -0.5]), sent, 2)
    with pytest.raises(ContractViolation, match="scored as token 11, but 10"):
        window_logprob(reply([7, 8, 9, 11], [None, -1.0, -0.5, -0.25]), sent, 2)
    with pytest.raises(ContractViolation, match="no logprob"):
        window_logprob(reply(sent, [None, -1.0, None, -0.25]), sent, 2)


def test_a_window_on_vllm_as_recorded() -> None:
    """A window sent as a token prompt to the real vLLM 0.32.0 (``echo_token_window``, recorded
    by hand from the dialect's own body): no BOS is added to a token prompt, every position comes
    back, and the window scores the logprobs of its predicted tail in order."""
    from conftest import load_fixture, reply_bytes

    from sieval.dialects.registry import get_dialect
    from sieval.dialects.table import lift, lower
    from sieval.ir.request import CompletionInput, Request, Sampling, Scoring

    fixture = load_fixture("openai_completions", "echo_token_window")
    window = fixture["window"]
    assert list(rolling_windows(window["document_tokens"], 2, 8))[1] == (
        window["context"],
        window["predicted"],
    )
    sent = window["context"] + window["predicted"]
    request = Request(
        input=CompletionInput(token_ids=tuple(sent)),
        sampling=Sampling(temperature=0.0, max_tokens=1),
        scoring=Scoring(input_logprobs=True),
    )
    dialect = get_dialect("openai_completions")
    lowered = lower(dialect, request, "gemma-3-270m")
    assert lowered.body == fixture["request"]
    response = lift(dialect, lowered, fixture["status"], {}, reply_bytes(fixture))
    logprobs = fixture["reply"]["choices"][0]["logprobs"]["token_logprobs"]
    expected = 0.0
    for lp in logprobs[len(window["context"]) : len(sent)]:
        expected += lp
    assert window_logprob(response, sent, len(window["predicted"])) == expected
