"""Live probe cases for openai_completions (``sieval probe --dialect openai_completions``).

Echo scoring, sampled top-k, seeds and streaming against a real server; what OpenAI's completions
wire cannot express is refused before I/O; the server's own limits come back as its words.
"""

from __future__ import annotations

from ...ir.request import Request, Sampling, Scheduling, Scoring, StructuredOutput
from ...model import Call
from ..corpus import GREEDY_1, QA
from ..probe import ProbeCase

__all__ = ["CASES"]


def _echo_top3(calls: list[Call]) -> str:
    r = calls[0].result()
    toks = r.input_tokens
    assert isinstance(toks, tuple) and len(toks) == r.usage.input_tokens
    assert toks[0].logprob is None and all(isinstance(t.logprob, float) for t in toks[1:])
    assert all(isinstance(t.top, tuple) and len(t.top) == 3 for t in toks[1:])
    starts = [t.offset if isinstance(t.offset, int) else -1 for t in toks]
    ends = [*starts[1:], len(QA)]
    pieces = [QA[a:b] for a, b in zip(starts, ends, strict=True)]
    assert "".join(pieces) == QA, pieces
    return f"{len(toks)} positions = usage.prompt_tokens; offsets rebuild the prompt; top-3 exact"


def _n2(calls: list[Call]) -> str:
    choices = calls[0].result().choices
    assert len(choices) == 2
    for c in choices:
        assert isinstance(c.tokens, tuple) and "".join(t.text for t in c.tokens) == c.text
        assert all(isinstance(t.top, tuple) and len(t.top) == 2 for t in c.tokens)
    return f"2 choices with their own tokens; texts differ: {choices[0].text != choices[1].text}"


def _seed(calls: list[Call]) -> str:
    a, b, c = (call.result().choices[0].text for call in calls)
    assert a == b, (a, b)
    assert a != c, (a, c)
    return f"seed 11 twice: {a!r} == {b!r}; seed 12: {c!r}"


def _stream_equals_plain(calls: list[Call]) -> str:
    plain, streamed = (call.result() for call in calls)
    assert plain.choices[0].text == streamed.choices[0].text
    a, b = plain.choices[0].tokens, streamed.choices[0].tokens
    assert isinstance(a, tuple) and isinstance(b, tuple)
    assert [(t.text, t.logprob) for t in a] == [(t.text, t.logprob) for t in b]
    assert plain.usage == streamed.usage
    return f"same text {plain.choices[0].text!r}, tokens and usage streamed or not"


GEN_TOP2 = Request.completion(
    "The capital of France is",
    sampling=Sampling(temperature=0.0, max_tokens=6),
    scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
)

CASES: list[ProbeCase] = [
    ProbeCase(
        "echo scoring with top-3",
        "ok",
        (
            Request.completion(
                QA, sampling=GREEDY_1, scoring=Scoring(input_logprobs=True, input_top_k=3)
            ),
        ),
        _echo_top3,
    ),
    ProbeCase(
        "n = 2 with per-choice top-2",
        "ok",
        (
            Request.completion(
                "Once upon a time",
                sampling=Sampling(n=2, temperature=1.0, seed=5, max_tokens=6),
                scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
            ),
        ),
        _n2,
    ),
    ProbeCase(
        "seed repeat at temperature 1",
        "ok",
        tuple(
            Request.completion(
                "Once upon a time", sampling=Sampling(temperature=1.0, seed=s, max_tokens=12)
            )
            for s in (11, 11, 12)
        ),
        _seed,
    ),
    ProbeCase(
        "stream and non-stream give the same Response",
        "ok",
        (
            GEN_TOP2,
            Request.completion(
                "The capital of France is",
                sampling=GEN_TOP2.sampling,
                scoring=GEN_TOP2.scoring,
                scheduling=Scheduling(stream=True),
            ),
        ),
        _stream_equals_plain,
    ),
    ProbeCase("token ids", "Refused", (Request.completion(QA, scoring=Scoring(token_ids=True)),)),
    ProbeCase("top_k", "Refused", (Request.completion(QA, sampling=Sampling(top_k=5)),)),
    ProbeCase(
        "structured output",
        "Refused",
        (Request.completion(QA, structured_output=StructuredOutput(format="json_object")),),
    ),
    ProbeCase("vLLM option min_p", "Refused", (Request.completion(QA, options={"min_p": 0.1}),)),
    ProbeCase(
        "different top-k for input and sampled positions",
        "Refused",
        (
            Request.completion(
                QA,
                scoring=Scoring(
                    input_logprobs=True, input_top_k=2, sampled_logprobs=True, sampled_top_k=5
                ),
            ),
        ),
    ),
    ProbeCase(
        "top-k 101 > --max-logprobs",
        "ServerRejected",
        (
            Request.completion(
                QA, sampling=GREEDY_1, scoring=Scoring(input_logprobs=True, input_top_k=101)
            ),
        ),
    ),
    ProbeCase(
        "context overflow",
        "ServerRejected",
        (Request.completion("hello " * 4200, sampling=GREEDY_1),),
    ),
]
