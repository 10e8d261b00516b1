"""Live probe cases for sglang_native (``sieval probe --dialect sglang_native``).

Input scoring from the BOS, candidate ids, n = 2, cumulative streaming and structured output
against a real SGLang ``/generate``; what the route cannot honour is refused before I/O (the seed,
chat input, an engine option SGLang would reject); the server's own limits come back as its words.
The cases hold on the reference server too, whose vocabulary differs: candidate ids are small
numbers that both vocabularies have.
"""

from __future__ import annotations

from ...ir.request import (
    ChatInput,
    Message,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
    TextPart,
)
from ...model import Call
from ..corpus import GREEDY_1, QA
from ..probe import ProbeCase

__all__ = ["CASES"]

CANDIDATES = (100, 200, 300, 400)


def _input_top3(calls: list[Call]) -> str:
    r = calls[0].result()
    toks = r.input_tokens
    assert isinstance(toks, tuple) and len(toks) == r.usage.input_tokens
    assert toks[0].logprob is None and all(isinstance(t.logprob, float) for t in toks[1:])
    assert all(isinstance(t.top, tuple) and len(t.top) == 3 for t in toks[1:])
    starts = [t.offset if isinstance(t.offset, int) else -1 for t in toks]
    ends = [*starts[1:], len(QA)]
    assert "".join(QA[a:b] for a, b in zip(starts, ends, strict=True)) == QA
    return (
        f"{len(toks)} positions = prompt_tokens, first {toks[0].text!r} unscored and covering no "
        "text; texts rebuild the prompt; top-3 exact"
    )


def _candidates(calls: list[Call]) -> str:
    token = calls[0].result().choices[0].tokens
    assert isinstance(token, tuple) and len(token) == 1
    cands = token[0].candidates
    assert isinstance(cands, tuple) and [e.token_id for e in cands] == list(CANDIDATES)
    return f"candidates {list(CANDIDATES)} in the order asked, beside the sampled {token[0].text!r}"


def _n2(calls: list[Call]) -> str:
    choices = calls[0].result().choices
    assert len(choices) == 2
    for c in choices:
        assert isinstance(c.tokens, tuple) and "".join(t.text for t in c.tokens) == c.text
        assert all(isinstance(t.top, tuple) and len(t.top) == 2 for t in c.tokens)
    return f"2 choices with their own tokens; texts differ: {choices[0].text != choices[1].text}"


def _stream_equals_plain(calls: list[Call]) -> str:
    plain, streamed = (call.result() for call in calls)
    assert plain.choices[0].text == streamed.choices[0].text
    a, b = plain.choices[0].tokens, streamed.choices[0].tokens
    assert isinstance(a, tuple) and isinstance(b, tuple)
    assert [(t.text, t.token_id) for t in a] == [(t.text, t.token_id) for t in b]
    # a radix-cache hit moves SGLang's logprobs in the 7th digit (sglang-server-notes item 10)
    drift = max(
        (abs(float(x.logprob or 0.0) - float(y.logprob or 0.0)) for x, y in zip(a, b, strict=True)),
        default=0.0,
    )
    assert drift < 1e-4, drift
    assert plain.usage.output_tokens == streamed.usage.output_tokens
    shown = plain.choices[0].text
    return f"same text {shown!r} and tokens streamed or not (logprob drift {drift:.1e})"


def _prefill_only(calls: list[Call]) -> str:
    r = calls[0].result()
    assert isinstance(r.input_tokens, tuple) and len(r.input_tokens) == r.usage.input_tokens
    assert r.choices[0].text == "" and r.usage.output_tokens == 0
    return f"{len(r.input_tokens)} prompt positions scored with no token generated"


def _json(calls: list[Call]) -> str:
    parsed = calls[0].result().choices[0].structured_output
    value = getattr(parsed, "value", None)
    assert isinstance(value, dict), parsed
    return f"parsed {value!r}"


GEN_TOP2 = Request.completion(
    "The capital of France is",
    sampling=Sampling(temperature=0.0, max_tokens=6),
    scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
)

CASES: list[ProbeCase] = [
    ProbeCase(
        "input scoring from the BOS with top-3",
        "ok",
        (
            Request.completion(
                QA, sampling=GREEDY_1, scoring=Scoring(input_logprobs=True, input_top_k=3)
            ),
        ),
        _input_top3,
    ),
    ProbeCase(
        "prefill-only input scoring (max_tokens 0)",
        "ok",
        (
            Request.completion(
                QA,
                sampling=Sampling(temperature=0.0, max_tokens=0),
                scoring=Scoring(input_logprobs=True),
            ),
        ),
        _prefill_only,
    ),
    ProbeCase(
        "candidate token ids in the order asked",
        "ok",
        (
            Request.completion(
                "Answer:",
                sampling=GREEDY_1,
                scoring=Scoring(
                    sampled_logprobs=True, sampled_top_k=5, candidate_token_ids=CANDIDATES
                ),
            ),
        ),
        _candidates,
    ),
    ProbeCase(
        "n = 2 with per-choice top-2",
        "ok",
        (
            Request.completion(
                "Once upon a time",
                sampling=Sampling(n=2, temperature=1.0, max_tokens=6),
                scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
            ),
        ),
        _n2,
    ),
    ProbeCase(
        "cumulative stream and non-stream give the same Response",
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
    ProbeCase(
        'json_object as json_schema {"type": "object"}',
        "ok",
        (
            Request.completion(
                "A JSON object:",
                sampling=Sampling(temperature=0.0, max_tokens=24),
                structured_output=StructuredOutput(format="json_object"),
            ),
        ),
        _json,
    ),
    ProbeCase(
        "sampling seed (ignored outside deterministic mode)",
        "Refused",
        (Request.completion(QA, sampling=Sampling(seed=11, max_tokens=1)),),
    ),
    ProbeCase(
        "chat input",
        "Refused",
        (
            Request(
                input=ChatInput(messages=(Message(role="user", content=(TextPart(text="hi"),)),))
            ),
        ),
    ),
    ProbeCase(
        "sampling_params key not forwarded (no_stop_trim)",
        "Refused",
        (Request.completion(QA, options={"no_stop_trim": True}),),
    ),
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
        "regex option with json_object (one constraint only)",
        "ServerRejected",
        (
            Request.completion(
                QA,
                sampling=GREEDY_1,
                options={"regex": " (yes|no)"},
                structured_output=StructuredOutput(format="json_object"),
            ),
        ),
    ),
    ProbeCase(
        "context overflow",
        "ServerRejected",
        (Request.completion("hello " * 4200, sampling=GREEDY_1),),
    ),
]
