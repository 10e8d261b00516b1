"""The reference server's Google wire: google-genai 3.6.1 parses every reply it gives, and the SDK,
pointed at it, gets the same answers as the google_genai dialect for the same requests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from google import genai
from google.genai import errors, types

from sieval.audit.cases.google_genai import CASES as PROBE_CASES
from sieval.audit.probe import run_probe
from sieval.dialects.google_genai import DIALECT
from sieval.dialects.table import lower
from sieval.errors import ContractViolation, ServerRejected
from sieval.ir.request import (
    ChatInput,
    FunctionTool,
    Message,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
    TextPart,
    Tools,
)
from sieval.ir.response import Response
from sieval.model import Model
from sieval.reference import ReferenceServer
from sieval.transport import Limits

CAPITAL = "What is the capital of France? Answer in one word."
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "adult": {"type": "boolean"}},
    "required": ["name", "adult"],
}
WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
KEY = "test-key-not-a-secret"


def chat(text: str, system: str | None = None) -> ChatInput:
    messages = [Message(role="system", content=(TextPart(text=system),))] if system else []
    messages.append(Message(role="user", content=(TextPart(text=text),)))
    return ChatInput(messages=tuple(messages))


def greedy(max_tokens: int) -> Sampling:
    return Sampling(temperature=0.0, top_p=1.0, max_tokens=max_tokens)


@pytest.fixture(scope="module")
async def keyed() -> AsyncIterator[ReferenceServer]:
    async with ReferenceServer(port=0, api_key=KEY) as srv:
        yield srv


def sdk(server: ReferenceServer) -> genai.Client:
    return genai.Client(
        api_key=KEY, http_options=types.HttpOptions(base_url=server.url, api_version="v1beta")
    )


async def dialect(server: ReferenceServer, request: Request) -> Response:
    async with Model(
        dialect=DIALECT, base_url=server.url, model_id=server.model_name, api_key=KEY
    ) as model:
        return await model.run(request)


async def raw(
    client: aiohttp.ClientSession, server: ReferenceServer, path: str, body: Any, key: str | None
) -> tuple[int, str]:
    headers = {"x-goog-api-key": key} if key else {}
    async with client.post(server.url + path, data=body, headers=headers) as r:
        return r.status, await r.text()


def route(server: ReferenceServer, stream: bool = False) -> str:
    verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return f"/v1beta/models/{server.model_name}:{verb}"


# -- the SDK gets what the dialect gets -------------------------------------------------------


async def test_greedy_text_finish_and_usage_agree(keyed: ReferenceServer) -> None:
    config = types.GenerateContentConfig(
        temperature=0.0, top_p=1.0, max_output_tokens=8, system_instruction="Be brief."
    )
    theirs = await sdk(keyed).aio.models.generate_content(
        model=keyed.model_name, contents=CAPITAL, config=config
    )
    ours = await dialect(keyed, Request(input=chat(CAPITAL, "Be brief."), sampling=greedy(8)))
    assert theirs.text == ours.choices[0].text and ours.choices[0].text
    assert theirs.candidates[0].finish_reason.value == ours.choices[0].finish_reason
    usage = theirs.usage_metadata
    assert (usage.prompt_token_count, usage.candidates_token_count) == (
        ours.usage.input_tokens,
        ours.usage.output_tokens,
    )
    assert theirs.model_version == ours.model == keyed.model_name


async def test_logprobs_agree_step_by_step(keyed: ReferenceServer) -> None:
    config = types.GenerateContentConfig(
        temperature=0.0, top_p=1.0, max_output_tokens=6, response_logprobs=True, logprobs=3
    )
    theirs = await sdk(keyed).aio.models.generate_content(
        model=keyed.model_name, contents=CAPITAL, config=config
    )
    ours = await dialect(
        keyed,
        Request(
            input=chat(CAPITAL),
            sampling=greedy(6),
            scoring=Scoring(sampled_logprobs=True, sampled_top_k=3, token_ids=True),
        ),
    )
    result = theirs.candidates[0].logprobs_result
    tokens = ours.choices[0].tokens
    assert [(c.token, c.token_id, c.log_probability) for c in result.chosen_candidates] == [
        (t.text, t.token_id, t.logprob) for t in tokens
    ]
    for step, t in zip(result.top_candidates, tokens, strict=True):
        assert [c.token_id for c in step.candidates] == [e.token_id for e in t.top]
    assert ours.choices[0].token_ids == tuple(c.token_id for c in result.chosen_candidates)
    assert result.log_probability_sum == pytest.approx(sum(t.logprob for t in tokens))


async def test_candidates_seed_and_top_k_agree(keyed: ReferenceServer) -> None:
    config = types.GenerateContentConfig(
        temperature=1.0, top_p=1.0, top_k=5, max_output_tokens=6, candidate_count=2, seed=11
    )
    theirs = await sdk(keyed).aio.models.generate_content(
        model=keyed.model_name, contents=CAPITAL, config=config
    )
    ours = await dialect(
        keyed,
        Request(
            input=chat(CAPITAL),
            sampling=Sampling(temperature=1.0, top_p=1.0, top_k=5, max_tokens=6, n=2, seed=11),
        ),
    )
    assert [c.content.parts[0].text for c in theirs.candidates] == [c.text for c in ours.choices]
    assert [c.index for c in theirs.candidates] == [0, 1]


async def test_json_schema_output_agrees(keyed: ReferenceServer) -> None:
    config = types.GenerateContentConfig(
        temperature=0.0,
        max_output_tokens=40,
        response_mime_type="application/json",
        response_json_schema=PERSON,
    )
    prompt = 'Return this JSON: {"name": "Ann", "adult": true}'
    theirs = await sdk(keyed).aio.models.generate_content(
        model=keyed.model_name, contents=prompt, config=config
    )
    ours = await dialect(
        keyed,
        Request(
            input=chat(prompt),
            sampling=Sampling(temperature=0.0, max_tokens=40),
            structured_output=StructuredOutput(format="json_schema", schema=PERSON),
        ),
    )
    assert theirs.parsed == ours.choices[0].structured_output.value
    assert set(ours.choices[0].structured_output.value) == {"name", "adult"}


async def test_streams_agree(keyed: ReferenceServer) -> None:
    config = types.GenerateContentConfig(temperature=0.0, top_p=1.0, max_output_tokens=8)
    chunks = [
        chunk
        async for chunk in await sdk(keyed).aio.models.generate_content_stream(
            model=keyed.model_name, contents=CAPITAL, config=config
        )
    ]
    ours = await dialect(
        keyed,
        Request(input=chat(CAPITAL), sampling=greedy(8), scheduling=Scheduling(stream=True)),
    )
    assert len(chunks) > 1
    assert "".join(c.text or "" for c in chunks) == ours.choices[0].text
    assert chunks[-1].candidates[0].finish_reason.value == ours.choices[0].finish_reason
    assert chunks[-1].usage_metadata.candidates_token_count == ours.usage.output_tokens


async def test_a_forced_function_call_agrees(keyed: ReferenceServer) -> None:
    declaration = types.FunctionDeclaration(name="get_weather", parameters_json_schema=WEATHER)
    config = types.GenerateContentConfig(
        temperature=0.0,
        max_output_tokens=40,
        tools=[types.Tool(function_declarations=[declaration])],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(mode="ANY")
        ),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    theirs = await sdk(keyed).aio.models.generate_content(
        model=keyed.model_name, contents="Weather in Paris?", config=config
    )
    ours = await dialect(
        keyed,
        Request(
            input=chat("Weather in Paris?"),
            sampling=Sampling(temperature=0.0, max_tokens=40),
            tools=Tools(
                functions=(FunctionTool(name="get_weather", parameters=WEATHER),),
                choice="required",
            ),
        ),
    )
    call = ours.choices[0].tool_calls[0]
    assert theirs.function_calls[0].name == call.name == "get_weather"
    assert theirs.function_calls[0].args == call.arguments and "city" in call.arguments


async def test_a_rejection_reads_the_same(keyed: ReferenceServer) -> None:
    with pytest.raises(errors.ClientError) as theirs:
        await sdk(keyed).aio.models.generate_content(
            model=keyed.model_name,
            contents=CAPITAL,
            config=types.GenerateContentConfig(temperature=3.0),
        )
    with pytest.raises(ServerRejected) as ours:
        await dialect(keyed, Request(input=chat(CAPITAL), sampling=Sampling(temperature=3.0)))
    assert theirs.value.code == ours.value.status == 400
    assert theirs.value.status == "INVALID_ARGUMENT"
    assert theirs.value.message == ours.value.server_message


# -- every reference reply parses as the SDK's response ---------------------------------------

FORCED = Tools(functions=(FunctionTool(name="f", parameters=WEATHER),), choice="required")
REQUESTS = [
    Request(input=chat(CAPITAL), sampling=greedy(8)),
    Request(
        input=chat(CAPITAL),
        sampling=greedy(5),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=20),
    ),
    Request(input=chat(CAPITAL), sampling=Sampling(temperature=1.0, n=3, seed=2, max_tokens=4)),
    Request(input=chat("x"), sampling=greedy(30), tools=FORCED),
    Request(input=chat("x"), sampling=greedy(3), tools=FORCED),  # cut: MALFORMED_FUNCTION_CALL
    Request(
        input=chat("x"),
        sampling=greedy(20),
        structured_output=StructuredOutput(format="json_object"),
    ),
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("request_", REQUESTS)
async def test_reference_replies_parse_as_the_sdks_response(
    client: aiohttp.ClientSession, server: ReferenceServer, request_: Request, stream: bool
) -> None:
    body = json.dumps(lower(DIALECT, request_, server.model_name).body)
    status, text = await raw(client, server, route(server, stream), body, None)
    assert status == 200, text
    bodies = (
        [json.loads(b[6:]) for b in text.split("\n\n") if b.startswith("data: ")]
        if stream
        else [json.loads(text)]
    )
    assert bodies and not text.rstrip().endswith("[DONE]")
    for data in bodies:
        parsed = types.GenerateContentResponse.model_validate(data)
        assert parsed.candidates
    assert bodies[-1]["candidates"][0]["finishReason"]


# -- Google's envelope, auth and strictness ---------------------------------------------------


def _envelope(text: str) -> dict[str, Any]:
    error = json.loads(text)["error"]
    assert set(error) == {"code", "message", "status"}
    return dict(error)


@pytest.mark.parametrize("key", [None, "wrong"])
async def test_a_missing_or_wrong_key_is_googles_400(
    client: aiohttp.ClientSession, keyed: ReferenceServer, key: str | None
) -> None:
    status, text = await raw(client, keyed, route(keyed), b'{"contents": []}', key)
    assert status == 400
    assert _envelope(text) == {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
    }


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"contents": [{"parts": [{"text": "x"}]}], "bogus": 1}, 'Unknown name "bogus"'),
        (
            {"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"maxTokens": 3}},
            "Unknown name \"maxTokens\" at 'generation_config'",
        ),
        ({"contents": [{"parts": [{"txt": "x"}]}]}, 'Unknown name "txt"'),
        ({"contents": []}, "contents is not specified"),
        ({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]}, "valid role"),
        (
            {
                "contents": [{"parts": [{"text": "x"}]}],
                "generationConfig": {"responseLogprobs": True, "logprobs": 21},
            },
            "[0, 20]",
        ),
        (
            {"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"logprobs": 2}},
            "only valid when responseLogprobs",
        ),
        (
            {"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"topK": 0}},
            "positive",
        ),
        (
            {
                "contents": [{"parts": [{"text": "x"}]}],
                "generationConfig": {"stopSequences": list("abcdef")},
            },
            "at most 5",
        ),
        (
            {"contents": [{"parts": [{"inlineData": {"mimeType": "image/png", "data": "AA"}}]}]},
            "text only",
        ),
    ],
)
async def test_what_google_rejects_the_reference_rejects(
    client: aiohttp.ClientSession, server: ReferenceServer, body: Any, needle: str
) -> None:
    status, text = await raw(client, server, route(server), json.dumps(body), None)
    assert status == 400
    error = _envelope(text)
    assert error["status"] == "INVALID_ARGUMENT" and needle in error["message"]


async def test_snake_case_names_are_accepted(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": CAPITAL}]}],
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "generation_config": {"max_output_tokens": 4, "temperature": 0.0},
    }
    status, text = await raw(client, server, route(server), json.dumps(body), None)
    assert status == 200 and json.loads(text)["usageMetadata"]["candidatesTokenCount"] <= 4


@pytest.mark.parametrize("body", [b'{"contents": [', b"[1, 2]"])
async def test_a_body_that_is_not_a_json_object(
    client: aiohttp.ClientSession, server: ReferenceServer, body: bytes
) -> None:
    status, text = await raw(client, server, route(server), body, None)
    assert status == 400 and _envelope(text)["message"].startswith("Invalid JSON payload")


# -- body faults reach the dialect's checks ---------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "needle"),
    [
        ("topk-short", "lists 2 alternatives for top-k=3"),
        ("nan", "finite"),
        ("usage-off", "counted differently"),
        ("short-prompt-logprobs", "counted differently"),
    ],
)
async def test_body_faults_are_contract_violations(
    server: ReferenceServer, fault: str, needle: str
) -> None:
    async with Model(
        dialect=DIALECT,
        base_url=server.url,
        model_id=server.model_name,
        headers={"x-sieval-fault": fault},
        limits=Limits(retries=0),
    ) as model:
        call = await model.call(
            Request(
                input=chat(CAPITAL),
                sampling=greedy(5),
                scoring=Scoring(sampled_logprobs=True, sampled_top_k=3),
            )
        )
    assert isinstance(call.error, ContractViolation), call.error
    assert needle in call.error.message


async def test_an_injected_rate_limit_carries_googles_envelope(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    async with client.post(
        server.url + route(server),
        json={"contents": [{"parts": [{"text": "x"}]}]},
        headers={"x-sieval-fault": "429; retry-after=0"},
    ) as r:
        assert r.status == 429
        assert _envelope(await r.text())["status"] == "RESOURCE_EXHAUSTED"


# -- every probe case holds on the reference server -------------------------------------------


async def test_every_probe_case_holds_on_the_reference(server: ReferenceServer) -> None:
    facts, results = await run_probe("google_genai", server.url, server.model_name)
    # Google's wire has no version route; its listing names the served model
    assert set(facts) == {"endpoint", "requested_model", "models"}
    assert [m["name"] for m in facts["models"]["models"]] == [f"models/{server.model_name}"]
    assert [(r.case, r.outcome, r.detail) for r in results if not r.passed] == []
    assert [r.case for r in results] == [c.name for c in PROBE_CASES]
    assert {"ok", "Refused", "ServerRejected", "ContractViolation"} == {r.outcome for r in results}
    assert {r.reported_model for r in results if r.outcome == "ok"} == {server.model_name}
