"""Live probe cases for vllm_native (``sieval probe --dialect vllm_native``).

Each claim of ``docs/evidence/vllm_native.md`` is one case: a reply that must pass every check
(with a finding in one line), a refusal before I/O, or the server's own rejection.
"""

from __future__ import annotations

from ...ir.request import CompletionInput, Request, Sampling, Scoring, StructuredOutput
from ...model import Call
from ..corpus import GREEDY_1, PERSON, QA
from ..probe import ProbeCase

__all__ = ["CASES"]


def _input_top3(calls: list[Call]) -> str:
    rs = [c.result() for c in calls]
    toks = rs[0].input_tokens
    assert isinstance(toks, tuple) and len(toks) == rs[0].usage.input_tokens
    assert all(t.token_id is not None for t in toks)
    assert all(isinstance(t.top, tuple) and len(t.top) == 3 for t in toks[1:])
    assert all(all(isinstance(e.token_id, int) for e in t.top) for t in toks[1:])  # type: ignore[union-attr]
    return f"{len(toks)} positions = usage.prompt_tokens, ids on every token and top-3 entry"


def _cjk(calls: list[Call]) -> str:
    rs = [c.result() for c in calls]
    toks = rs[0].input_tokens
    assert isinstance(toks, tuple)
    texts = [t.text for t in toks]
    assert "".join(texts) == "中国的首都是北京。", texts
    return f"token texts {texts} rebuild the prompt"


def _n2(calls: list[Call]) -> str:
    rs = [c.result() for c in calls]
    choices = rs[0].choices
    assert len(choices) == 2
    for c in choices:
        assert isinstance(c.token_ids, tuple) and isinstance(c.tokens, tuple)
        assert [t.token_id for t in c.tokens] == list(c.token_ids)
    return f"2 choices, {[len(c.token_ids or ()) for c in choices]} ids each, texts differ: " + str(
        choices[0].text != choices[1].text
    )


def _seed(calls: list[Call]) -> str:
    rs = [c.result() for c in calls]
    a, b, c = (r.choices[0].text for r in rs)
    assert a == b, (a, b)
    assert a != c, (a, c)
    return f"seed 11 twice: {a!r} == {b!r}; seed 12: {c!r}"


def _json(calls: list[Call]) -> str:
    rs = [c.result() for c in calls]
    value = rs[0].choices[0].structured_output
    assert not isinstance(value, type(None))
    data = getattr(value, "value", None)
    assert isinstance(data, dict) and data["name"] in ("Ann", "Bob", "Eve"), data
    return f"parsed {data}"


def _options(calls: list[Call]) -> str:
    rs = [c.result() for c in calls]
    ledger = {d.leaf: d.path for d in calls[0].ledger}
    assert ledger["options.min_p"] == "min_p" and ledger["options.repetition_penalty"]
    return f"forwarded as top-level fields; text {rs[0].choices[0].text!r}"


def _prefix(calls: list[Call]) -> str:
    rs = [c.result() for c in calls]
    first, second = (r.input_tokens for r in rs)
    assert isinstance(first, tuple) and isinstance(second, tuple)
    assert len(first) == len(second) == rs[0].usage.input_tokens
    diff = max(
        abs((a.logprob or 0.0) - (b.logprob or 0.0)) for a, b in zip(first, second, strict=True)
    )
    cached = rs[1].usage.cached_tokens
    return f"both calls keep all {len(first)} positions; max |diff| {diff:.3g}; cached {cached}"


CASES: list[ProbeCase] = [
    ProbeCase(
        "input top-3 with token ids",
        "ok",
        (
            Request.completion(
                QA,
                sampling=GREEDY_1,
                scoring=Scoring(input_logprobs=True, input_top_k=3, token_ids=True),
            ),
        ),
        _input_top3,
    ),
    ProbeCase(
        "CJK input",
        "ok",
        (
            Request.completion(
                "中国的首都是北京。", sampling=GREEDY_1, scoring=Scoring(input_logprobs=True)
            ),
        ),
        _cjk,
    ),
    ProbeCase(
        "n = 2 with per-choice token ids",
        "ok",
        (
            Request.completion(
                "Once upon a time",
                sampling=Sampling(n=2, temperature=1.0, seed=5, max_tokens=6),
                scoring=Scoring(sampled_logprobs=True, sampled_top_k=2, token_ids=True),
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
        "JSON schema output",
        "ok",
        (
            Request.completion(
                "A person as JSON:",
                sampling=Sampling(temperature=0.0, max_tokens=40),
                structured_output=StructuredOutput(format="json_schema", schema=PERSON),
            ),
        ),
        _json,
    ),
    ProbeCase(
        "options min_p + repetition_penalty",
        "ok",
        (
            Request.completion(
                "Once upon a time",
                sampling=Sampling(temperature=1.0, seed=3, max_tokens=8),
                options={"min_p": 0.1, "repetition_penalty": 1.3},
            ),
        ),
        _options,
    ),
    ProbeCase(
        "prefix caching: a repeated prompt keeps its scored positions",
        "ok",
        tuple(
            Request.completion(QA * 3, sampling=GREEDY_1, scoring=Scoring(input_logprobs=True))
            for _ in range(2)
        ),
        _prefix,
    ),
    ProbeCase(
        "max_tokens: 0",
        "Refused",
        (Request.completion(QA, sampling=Sampling(max_tokens=0)),),
    ),
    ProbeCase(
        "suffix",
        "Refused",
        (Request(input=CompletionInput(text="def f(", suffix="return x")),),
    ),
    ProbeCase(
        "unknown option guided_json",
        "Refused",
        (Request.completion(QA, options={"guided_json": {"type": "object"}}),),
    ),
    ProbeCase(
        "strict: false",
        "Refused",
        (
            Request.completion(
                QA,
                structured_output=StructuredOutput(
                    format="json_schema", schema=PERSON, strict=False
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
    ProbeCase(
        "structured output cut at max_tokens",
        "ContractViolation",
        (
            Request.completion(
                "A person as JSON:",
                sampling=Sampling(temperature=0.0, max_tokens=3),
                structured_output=StructuredOutput(format="json_schema", schema=PERSON),
            ),
        ),
    ),
]
