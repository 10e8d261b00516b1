"""Live: google_genai against a real Gemini-wire server, LiteLLM 1.108.7's proxy in front of vLLM
0.32.0 serving Gemma 3 270M (``scripts/live-litellm.sh``); every probe case with the outcome the
proxy earns, the recorded greedy replies re-asked, and the google-genai SDK through the same proxy.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

from sieval.audit.cases.google_genai import CASES, PROXY_OUTCOMES
from sieval.audit.corpus import CAPITAL_ONE_WORD, HERMES_CALL, WEATHER
from sieval.audit.probe import run_probe
from sieval.dialects.google_genai import DIALECT
from sieval.dialects.table import lift
from sieval.ir.request import (
    ChatInput,
    Message,
    Request,
    Sampling,
    Scheduling,
    StructuredOutput,
    TextPart,
    Tools,
)
from sieval.model import Model, prepare
from sieval.transport import Limits

pytestmark = pytest.mark.live

MODEL = "gemma-3-270m"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "google_genai" / "litellm-1.108.7"


@pytest.fixture(scope="session")
def litellm() -> tuple[str, str]:
    """The proxy's base URL and key, from SIEVAL_LITELLM_URL and SIEVAL_LITELLM_KEY.

    Without them the live tests fail, unless SIEVAL_SKIP_LIVE=1 asks explicitly to skip them.
    """
    url, key = os.environ.get("SIEVAL_LITELLM_URL"), os.environ.get("SIEVAL_LITELLM_KEY")
    if url and key:
        return url.rstrip("/"), key
    if os.environ.get("SIEVAL_SKIP_LIVE") == "1":
        pytest.skip("live Gemini-wire tests skipped on request (SIEVAL_SKIP_LIVE=1)")
    pytest.fail(
        "live Gemini-wire tests need LiteLLM's proxy in front of a running vLLM: run "
        "scripts/live-litellm.sh setup, then SIEVAL_VLLM_URL=http://127.0.0.1:PORT "
        "scripts/live-litellm.sh start, and set SIEVAL_LITELLM_URL=$(scripts/live-litellm.sh url) "
        "and SIEVAL_LITELLM_KEY to the key it was started with; or SIEVAL_SKIP_LIVE=1 to skip "
        "them explicitly"
    )


def model(litellm: tuple[str, str]) -> Model:
    url, key = litellm
    return Model(
        dialect=DIALECT,
        base_url=url,
        model_id=MODEL,
        api_key=key,
        limits=Limits(concurrency=1, retries=0),
    )


def user(text: str) -> ChatInput:
    return ChatInput(messages=(Message(role="user", content=(TextPart(text=text),)),))


async def test_every_probe_case_earns_its_proxy_outcome(litellm: tuple[str, str]) -> None:
    url, key = litellm
    facts, results = await run_probe("google_genai", url, MODEL, api_key=key)
    # the proxy has no Google models listing (a FastAPI 404), recorded as unavailable
    assert set(facts) == {"endpoint", "requested_model", "models"}
    assert str(facts["models"]).startswith("unavailable") and "404" in str(facts["models"])
    want = {c.name: PROXY_OUTCOMES.get(c.name, (c.expect, ""))[0] for c in CASES}
    got = {r.case: r.outcome for r in results}
    assert got == want, [
        (r.case, r.outcome, r.detail) for r in results if r.outcome != want[r.case]
    ]
    assert {r.reported_model for r in results if r.outcome == "ok"} == {None}  # no modelVersion


GREEDY_8 = Sampling(temperature=0.0, top_p=1.0, max_tokens=8)
RECORDED = {  # the IR requests of four recorded fixtures (tests/dialects/test_google_genai.py)
    "plain": Request(input=user(CAPITAL_ONE_WORD), sampling=GREEDY_8),
    "stream": Request(
        input=user(CAPITAL_ONE_WORD), sampling=GREEDY_8, scheduling=Scheduling(stream=True)
    ),
    "json_schema": Request(
        input=user('Return this JSON: {"name": "Ann", "adult": true}'),
        sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=40),
        structured_output=StructuredOutput(
            format="json_schema",
            schema={
                "type": "object",
                "properties": {"name": {"type": "string"}, "adult": {"type": "boolean"}},
                "required": ["name", "adult"],
            },
        ),
    ),
    "tool_call_reply": Request(
        input=ChatInput(
            messages=(
                Message(role="user", content=(TextPart(text="Weather in Paris?"),)),
                Message(role="assistant", content=(TextPart(text=HERMES_CALL),)),
                Message(role="user", content=(TextPart(text="Weather in Paris?"),)),
            )
        ),
        sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=40, stop=("</tool_call>",)),
        tools=Tools(functions=(WEATHER,), choice="auto"),
    ),
}


def _recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


@pytest.mark.parametrize("name", ["plain", "json_schema", "tool_call_reply", "stream"])
async def test_recorded_greedy_replies_are_what_the_proxy_answers_now(
    litellm: tuple[str, str], name: str
) -> None:
    """The recorded request, sent by the dialect, lifts to the same Response as the recording."""
    recorded = _recorded(name)
    async with model(litellm) as m:
        call = await m.call(RECORDED[name])
    assert call.body == recorded["request"]
    reply = (recorded.get("reply_sse") or json.dumps(recorded["reply"])).encode()
    lowered = prepare(m.dialect, RECORDED[name], m.model_id, m.request_defaults)
    assert call.result() == lift(DIALECT, lowered, 200, {}, reply)


async def test_the_sdk_through_the_proxy_gets_the_dialects_answer(
    litellm: tuple[str, str],
) -> None:
    url, key = litellm
    client = genai.Client(
        api_key=key, http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    config = types.GenerateContentConfig(temperature=0.0, top_p=1.0, max_output_tokens=8)
    theirs = await client.aio.models.generate_content(
        model=MODEL, contents=CAPITAL_ONE_WORD, config=config
    )
    chunks = [
        c
        async for c in await client.aio.models.generate_content_stream(
            model=MODEL, contents=CAPITAL_ONE_WORD, config=config
        )
    ]
    sampling = Sampling(temperature=0.0, top_p=1.0, max_tokens=8)
    async with model(litellm) as m:
        ours = await m.run(Request(input=user(CAPITAL_ONE_WORD), sampling=sampling))
        streamed = await m.run(
            Request(
                input=user(CAPITAL_ONE_WORD), sampling=sampling, scheduling=Scheduling(stream=True)
            )
        )
    assert theirs.text == ours.choices[0].text == streamed.choices[0].text
    assert "".join(c.text or "" for c in chunks) == ours.choices[0].text
    assert theirs.candidates[0].finish_reason.value == ours.choices[0].finish_reason
    assert theirs.usage_metadata.candidates_token_count == ours.usage.output_tokens


# -- pre-run checks: the proxy serves no models route, so a first request of 1 token -------------


async def test_the_proxy_has_no_google_models_route(litellm: tuple[str, str]) -> None:
    """What LiteLLM 1.108.7 answers to Google's models routes (recorded in models.json and
    model_get.json): FastAPI's 404, so the pre-flight falls back to a first request."""
    import aiohttp

    url, key = litellm
    async with aiohttp.ClientSession(headers={"x-goog-api-key": key}) as session:
        for route in ("/v1beta/models", f"/v1beta/models/{MODEL}"):
            async with session.get(url + route) as reply:
                assert (reply.status, await reply.json()) == (404, {"detail": "Not Found"})


async def test_the_pre_flight_passes_with_a_first_request(litellm: tuple[str, str]) -> None:
    from sieval.runner.preflight import preflight

    url, key = litellm
    found = await preflight(url, dialect=DIALECT, api_key=key, model_id=MODEL)
    assert found.checked_by.startswith(f"POST /v1beta/models/{MODEL}:generateContent")


@pytest.mark.parametrize(
    ("model", "key", "needle"),
    [
        ("no-such-model", None, "does not serve model 'no-such-model'"),
        (MODEL, "sk-wrong-key-live", "refused the API key (HTTP 400 on the first request"),
        (MODEL, "", "no key was sent"),
    ],
)
async def test_the_pre_flight_stops_a_wrong_setting(
    litellm: tuple[str, str], model: str, key: str | None, needle: str
) -> None:
    from sieval.errors import ConfigError
    from sieval.runner.preflight import preflight

    url, right = litellm
    with pytest.raises(ConfigError) as info:
        await preflight(
            url, dialect=DIALECT, api_key=right if key is None else key or None, model_id=model
        )
    assert needle in str(info.value)
    assert right not in str(info.value)
