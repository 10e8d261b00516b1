"""Model.run: decided before I/O, checked after, with ledger, body and timings; faults."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator

import pytest
from conftest import load_fixture

from sieval.errors import (
    ContractViolation,
    Refused,
    ServerRejected,
    TransportError,
    TransportTimeout,
)
from sieval.ir.request import Request, Sampling, Scheduling, Scoring
from sieval.model import Model
from sieval.reference import ReferenceServer
from sieval.transport import FakeTransport, HttpReply, Limits, Timeouts, json_reply

QA = "Question: What is the capital of France?\nAnswer: Paris"
SECRET = "sk-test-SECRETSECRET123"


def fake_model(handler, **kw) -> tuple[Model, FakeTransport]:
    transport = FakeTransport(handler)
    model = Model(
        dialect="openai_completions",
        base_url="http://127.0.0.1:9",
        model_id="gemma-3-270m",
        transport=transport,
        **kw,
    )
    return model, transport


def recorded(name: str):
    fixture = load_fixture("openai_completions", name)
    return lambda request: json_reply(fixture["reply"], status=fixture["status"])


@pytest.mark.parametrize(
    "request_",
    [
        Request.completion("x", scoring=Scoring(token_ids=True)),
        Request.completion("x", options={"guided_json": {}}),
        Request.completion("x", sampling=Sampling(n=0)),
    ],
)
async def test_refusal_opens_no_connection(request_: Request) -> None:
    model, transport = fake_model(recorded("echo_top3"))
    with pytest.raises(Refused):
        await model.run(request_)
    assert transport.calls == []


async def test_the_call_keeps_ledger_body_status_and_timings() -> None:
    model, transport = fake_model(recorded("echo_top3"), api_key=SECRET)
    request = Request.completion(
        QA,
        sampling=Sampling(temperature=0.0, max_tokens=1),
        scoring=Scoring(input_logprobs=True, input_top_k=3),
    )
    call = await model.call(request)
    assert len(transport.calls) == 1
    sent = transport.calls[0]
    assert sent.url == "http://127.0.0.1:9/v1/completions" == call.url
    assert sent.headers["Authorization"] == f"Bearer {SECRET}"
    assert json.loads(sent.body) == call.body
    assert call.body["echo"] is True and call.body["logprobs"] == 3
    assert {d.leaf: d.path for d in call.ledger}["scoring.input_top_k"] == "logprobs"
    assert call.status == 200 and call.attempts == 1 and call.error is None
    assert call.timings is not None and call.timings.total_s >= 0
    response = call.result()
    assert response.model == "gemma-3-270m" and response.dialect == "openai_completions"
    assert len(response.input_tokens) == 14


async def test_a_failed_call_keeps_what_was_sent_and_the_error() -> None:
    model, _ = fake_model(lambda request: json_reply({"error": {"message": "no"}}, 400))
    call = await model.call(Request.completion(QA, sampling=Sampling(max_tokens=1)))
    assert call.status == 400 and call.response is None
    assert isinstance(call.error, ServerRejected) and call.body["max_tokens"] == 1
    assert call.ledger and call.error.server == "http://127.0.0.1:9"
    with pytest.raises(ServerRejected):
        call.result()


async def test_a_refused_call_sends_nothing_and_keeps_the_partial_ledger() -> None:
    model, transport = fake_model(recorded("echo_top3"))
    call = await model.call(Request.completion(QA, sampling=Sampling(top_k=3, seed=1)))
    assert transport.calls == [] and call.body is None and isinstance(call.error, Refused)
    assert {d.leaf: d.outcome for d in call.ledger} == {
        "input.completion.text": "consumed",
        "sampling.top_k": "refused",
        "sampling.seed": "consumed",
    }


async def test_request_defaults_fill_only_unset_leaves() -> None:
    model, transport = fake_model(
        recorded("gen_top5"),
        request_defaults={"sampling.temperature": 0.7, "sampling.max_tokens": 8},
    )
    await model.run(
        Request.completion(
            "The capital of France is",
            sampling=Sampling(temperature=0.0),
            scoring=Scoring(sampled_logprobs=True, sampled_top_k=5),
        )
    )
    body = json.loads(transport.calls[0].body)
    assert body["temperature"] == 0.0  # the request's own value wins
    assert body["max_tokens"] == 8  # the default filled an unset leaf


async def test_a_replay_lowers_the_body_the_call_sent() -> None:
    # a resume replays a journaled reply only when the body it lowers is the one sent: a model
    # with overrides (--gen-kwargs, --system-instruction) must lower them on replay too
    model, transport = fake_model(
        recorded("gen_top5"),
        request_defaults={"sampling.max_tokens": 8},
        request_overrides={"sampling.temperature": 0.5},
    )
    request = Request.completion("The capital of France is", sampling=Sampling(temperature=0.0))
    sent = await model.call(request)
    assert sent.raw is not None
    reply = HttpReply(status=200, headers={}, body=sent.raw)
    replayed = model.replay(request, reply)
    assert sent.body["temperature"] == 0.5 and replayed.body == sent.body
    assert len(transport.calls) == 1  # nothing sent


async def test_secret_never_reaches_errors_or_bodies(caplog) -> None:
    def leak(request):
        return HttpReply(status=401, headers={}, body=f'{{"error": "bad key {SECRET}"}}'.encode())

    model, _ = fake_model(leak, api_key=SECRET)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ServerRejected) as info:
        await model.run(Request.completion("x", sampling=Sampling(max_tokens=1)))
    assert info.value.server == "http://127.0.0.1:9"
    assert SECRET not in repr(model)
    # the server echoed the key; sieval's own fields never add it
    assert SECRET not in json.dumps(info.value.to_record()).replace(info.value.message, "")
    assert SECRET not in caplog.text


async def test_timeout_s_becomes_the_per_call_budget() -> None:
    model, transport = fake_model(recorded("gen_top5"))
    await model.run(
        Request.completion(
            "The capital of France is",
            sampling=Sampling(temperature=0.0, max_tokens=8),
            scoring=Scoring(sampled_logprobs=True, sampled_top_k=5),
            scheduling=Scheduling(timeout_s=2.5),
        )
    )
    assert transport.calls[0].timeout.total == 2.5


# -- against the reference server, with injected faults ----------------------------------------


@pytest.fixture(scope="module")
async def reference() -> AsyncIterator[ReferenceServer]:
    async with ReferenceServer(port=0) as server:
        yield server


def live_model(server: ReferenceServer, fault: str | None = None, **kw) -> Model:
    headers = {"x-sieval-fault": fault, "x-sieval-fault-key": f"{fault}-{id(kw)}"} if fault else {}
    return Model(
        dialect="openai_completions",
        base_url=server.url,
        model_id=server.model_name,
        headers=headers,
        limits=kw.pop("limits", Limits(retries=2, backoff_base_s=0.01, backoff_max_s=0.02)),
        **kw,
    )


SCORE = Request.completion(
    "The sky is blue.",
    sampling=Sampling(temperature=0.0, max_tokens=1),
    scoring=Scoring(input_logprobs=True, input_top_k=2),
)


async def test_scoring_round_trip_agrees_with_the_reference_model(reference) -> None:
    async with live_model(reference) as model:
        response = await model.run(SCORE)
    tokens = response.input_tokens
    assert tokens[0].logprob is None
    direct = reference.model.continuation_logprob("The sky is", " blue.")
    boundary = len("The sky is")
    wire = sum(t.logprob for t in tokens if t.offset >= boundary and t.logprob is not None)
    assert wire == pytest.approx(direct, abs=1e-9)


async def test_429_with_retry_after_is_retried_then_succeeds(reference) -> None:
    async with live_model(reference, "429; times=1; retry-after=0") as model:
        call = await model.call(SCORE)
    assert call.ok and call.attempts == 2


async def test_500_is_retried_then_transport_error(reference) -> None:
    async with live_model(reference, "500") as model:
        with pytest.raises(TransportError) as info:
            await model.run(SCORE)
    assert info.value.status == 500 and info.value.attempts == 3


async def test_503_once_then_success(reference) -> None:
    async with live_model(reference, "503; times=1") as model:
        assert (await model.call(SCORE)).attempts == 2


async def test_reset_mid_body_is_a_transport_error(reference) -> None:
    async with live_model(reference, "reset") as model:
        with pytest.raises(TransportError):
            await model.run(SCORE)


async def test_delay_past_the_timeout_is_a_timeout(reference) -> None:
    async with live_model(
        reference, "delay; seconds=2", timeouts=Timeouts(total=0.5, connect=0.5, read=0.3)
    ) as model:
        with pytest.raises(TransportTimeout):
            await model.run(SCORE)


@pytest.mark.parametrize(
    ("fault", "needle"),
    [
        ("truncate", "not valid JSON"),
        ("html; status=200", "not valid JSON"),
        ("nan", "non-finite"),
        ("usage-off", "usage"),
        ("topk-short", "alternatives for top-k=2"),
    ],
)
async def test_malformed_replies_are_contract_violations(reference, fault: str, needle: str):
    async with live_model(reference, fault) as model:
        with pytest.raises(ContractViolation, match=needle):
            await model.run(SCORE)


async def test_html_error_page_is_a_transport_error(reference) -> None:
    async with live_model(reference, "html") as model:
        with pytest.raises(TransportError, match="502"):
            await model.run(SCORE)


async def test_400_is_never_retried(reference) -> None:
    request = Request.completion(
        "x",
        sampling=Sampling(max_tokens=1),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=101),
    )
    async with live_model(reference) as model:
        with pytest.raises(ServerRejected, match="greater than max allowed") as info:
            await model.run(request)
    assert info.value.status == 400


async def test_short_prompt_logprobs_is_refused_by_vllm_native(reference) -> None:
    model = Model(
        dialect="vllm_native",
        base_url=reference.url,
        model_id=reference.model_name,
        headers={"x-sieval-fault": "short-prompt-logprobs"},
    )
    async with model:
        with pytest.raises(ContractViolation, match="counted differently"):
            await model.run(SCORE)


async def test_a_deep_json_reply_fails_the_call_as_a_contract_violation() -> None:
    """A 100,000-deep reply was an InternalError (msgspec's RecursionError) in the sample's
    record; it is a reply not believed. A side route gets no JSON from it."""
    deep = b'{"unknown": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    model, _ = fake_model(lambda r: HttpReply(status=200, headers={}, body=deep))
    call = await model.call(Request.completion("2+2=", sampling=Sampling(max_tokens=1)))
    assert isinstance(call.error, ContractViolation) and "nested deeper" in str(call.error)
    assert await model.fetch("/tokenize", {"prompt": "x"}) == (200, None)
