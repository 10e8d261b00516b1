"""Rerunnable live probes: each dialect claim exercised against a real server, with its outcome.

``sieval probe --dialect vllm_native --endpoint URL --model ID`` runs every case below and prints
what happened: a reply that passed all checks, a refusal before I/O, a server rejection (with the
server's words) or a contract violation. The evidence in ``docs/evidence/`` is this output.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, SievalError, TransportError
from ..ir.request import (
    CompletionInput,
    Request,
    Sampling,
    Scoring,
    StructuredOutput,
)
from ..ir.response import Response
from ..model import Model
from ..transport import HttpTransport, Limits, get_json

__all__ = ["CASES", "ProbeCase", "ProbeResult", "run_probe"]

QA = "Question: What is the capital of France?\nAnswer: Paris"
GREEDY_1 = Sampling(temperature=0.0, max_tokens=1)
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "enum": ["Ann", "Bob", "Eve"]},
        "adult": {"type": "boolean"},
    },
    "required": ["name", "adult"],
    "additionalProperties": False,
}

Check = Callable[[list[Response]], str]


@dataclass(frozen=True)
class ProbeCase:
    name: str
    expect: str
    """``ok``, ``Refused``, ``ServerRejected`` or ``ContractViolation``."""
    requests: tuple[Request, ...]
    check: Check | None = None
    """Turns the responses into a one-line finding; raises AssertionError when the claim fails."""


@dataclass
class ProbeResult:
    case: str
    expect: str
    outcome: str
    detail: str
    body: dict[str, Any] | None = None
    reported_model: str | None = None

    @property
    def passed(self) -> bool:
        return self.outcome == self.expect


def _input_top3(rs: list[Response]) -> str:
    toks = rs[0].input_tokens
    assert isinstance(toks, tuple) and len(toks) == rs[0].usage.input_tokens
    assert all(t.token_id is not None for t in toks)
    assert all(isinstance(t.top, tuple) and len(t.top) == 3 for t in toks[1:])
    assert all(all(isinstance(e.token_id, int) for e in t.top) for t in toks[1:])  # type: ignore[union-attr]
    return f"{len(toks)} positions = usage.prompt_tokens, ids on every token and top-3 entry"


def _cjk(rs: list[Response]) -> str:
    toks = rs[0].input_tokens
    assert isinstance(toks, tuple)
    texts = [t.text for t in toks]
    assert "".join(texts) == "中国的首都是北京。", texts
    return f"token texts {texts} rebuild the prompt"


def _n2(rs: list[Response]) -> str:
    choices = rs[0].choices
    assert len(choices) == 2
    for c in choices:
        assert isinstance(c.token_ids, tuple) and isinstance(c.tokens, tuple)
        assert [t.token_id for t in c.tokens] == list(c.token_ids)
    return f"2 choices, {[len(c.token_ids or ()) for c in choices]} ids each, texts differ: " + str(
        choices[0].text != choices[1].text
    )


def _seed(rs: list[Response]) -> str:
    a, b, c = (r.choices[0].text for r in rs)
    assert a == b, (a, b)
    assert a != c, (a, c)
    return f"seed 11 twice: {a!r} == {b!r}; seed 12: {c!r}"


def _json(rs: list[Response]) -> str:
    value = rs[0].choices[0].structured_output
    assert not isinstance(value, type(None))
    data = getattr(value, "value", None)
    assert isinstance(data, dict) and data["name"] in ("Ann", "Bob", "Eve"), data
    return f"parsed {data}"


def _options(rs: list[Response]) -> str:
    ledger = {d.leaf: d.detail for d in rs[0].ledger}
    assert ledger["options.min_p"] == "min_p" and ledger["options.repetition_penalty"]
    return f"forwarded as top-level fields; text {rs[0].choices[0].text!r}"


def _prefix(rs: list[Response]) -> str:
    first, second = (r.input_tokens for r in rs)
    assert isinstance(first, tuple) and isinstance(second, tuple)
    assert len(first) == len(second) == rs[0].usage.input_tokens
    diff = max(
        abs((a.logprob or 0.0) - (b.logprob or 0.0)) for a, b in zip(first, second, strict=True)
    )
    cached = rs[1].usage.cached_tokens
    return f"both calls keep all {len(first)} positions; max |diff| {diff:.3g}; cached {cached}"


CASES: dict[str, list[ProbeCase]] = {
    "vllm_native": [
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
    ],
}


async def _run_case(model: Model, case: ProbeCase) -> ProbeResult:
    responses: list[Response] = []
    body: dict[str, Any] | None = None
    try:
        for request in case.requests:
            _, lowered = model.prepare(request)
            body = lowered.body
            responses.append(await model.run(request))
    except SievalError as exc:
        return ProbeResult(case.name, case.expect, exc.error_class, exc.message, body)
    try:
        detail = case.check(responses) if case.check else "reply accepted"
    except AssertionError as exc:
        return ProbeResult(case.name, case.expect, "claim failed", repr(exc), body)
    reported = responses[0].model if responses else None
    return ProbeResult(
        case.name, case.expect, "ok", detail, body, reported if isinstance(reported, str) else None
    )


async def run_probe(
    dialect: str,
    endpoint: str,
    model_id: str,
    *,
    api_key: str | None = None,
    wire_log: Path | None = None,
    on_result: Callable[[ProbeResult], Awaitable[None] | None] | None = None,
) -> tuple[dict[str, Any], list[ProbeResult]]:
    """Run the dialect's cases one at a time; return server facts and one result per case."""
    if dialect not in CASES:
        raise ConfigError(
            f"no probe cases for {dialect!r}; probes exist for: {', '.join(CASES)}", path="dialect"
        )
    facts: dict[str, Any] = {"endpoint": endpoint, "requested_model": model_id}
    async with HttpTransport(limits=Limits(retries=0)) as transport:
        for key, path in (("version", "/version"), ("models", "/v1/models")):
            try:
                facts[key] = await get_json(transport, endpoint.rstrip("/") + path)
            except TransportError as exc:
                raise ConfigError(
                    f"cannot reach {endpoint}: {exc.message}", path="endpoint"
                ) from None
            except SievalError as exc:
                facts[key] = f"unavailable: {exc.message}"
    results: list[ProbeResult] = []
    async with Model(
        dialect=dialect,
        base_url=endpoint,
        model_id=model_id,
        api_key=api_key,
        concurrency=1,
        limits=Limits(concurrency=1, retries=0),
        wire_log=wire_log,
    ) as model:
        for case in CASES[dialect]:
            result = await _run_case(model, case)
            results.append(result)
            if on_result is not None:
                maybe = on_result(result)
                if asyncio.iscoroutine(maybe):
                    await maybe
    return facts, results
