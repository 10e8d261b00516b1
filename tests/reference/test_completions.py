"""/v1/completions on the wire, checked against the model computed directly."""

from __future__ import annotations

import json
import math
from typing import Any

import aiohttp

from sieval.reference import ReferenceServer
from sieval.reference.lm import ReferenceModel
from sieval.reference.tokenizer import EOS_ID

from .conftest import post

CHOICE_KEYS = {
    "index",
    "text",
    "logprobs",
    "finish_reason",
    "stop_reason",
    "token_ids",
    "prompt_logprobs",
    "prompt_token_ids",
    "routed_experts",
}
TOP_KEYS = {
    "id",
    "object",
    "created",
    "model",
    "choices",
    "service_tier",
    "system_fingerprint",
    "usage",
    "kv_transfer_params",
    "ec_transfer_params",
    "metrics",
}


async def test_echo_scoring_equals_direct_model(
    client: aiohttp.ClientSession, server: ReferenceServer, model: ReferenceModel
) -> None:
    ctx, cont = "Question: What is the closest star to the earth?\nAnswer:", " The sun."
    status, reply = await post(
        client,
        server,
        {"prompt": ctx + cont, "echo": True, "logprobs": 1, "max_tokens": 0, "temperature": 0},
    )
    assert status == 200
    assert set(reply) == TOP_KEYS
    choice = reply["choices"][0]
    assert set(choice) == CHOICE_KEYS
    n_ctx = len(model.tokenize(ctx))
    wire = choice["logprobs"]["token_logprobs"]
    assert len(wire) == len(model.tokenize(ctx + cont))
    assert abs(math.fsum(wire[n_ctx:]) - model.continuation_logprob(ctx, cont)) < 1e-9
    # max_tokens 0 with echo: one hidden token generated, prompt only shown
    assert choice["text"] == ctx + cont
    hidden = model.greedy(model.tokenize(ctx + cont), 1)[0]
    assert choice["finish_reason"] == ("stop" if hidden == EOS_ID else "length")
    assert reply["usage"]["completion_tokens"] == 1
    assert reply["usage"]["prompt_tokens"] == len(wire)


async def test_bos_shift_and_null_first_position(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    prompt = "The sun is a star."
    _, reply = await post(
        client,
        server,
        {"prompt": prompt, "echo": True, "logprobs": 0, "max_tokens": 1, "temperature": 0},
    )
    lp = reply["choices"][0]["logprobs"]
    assert lp["tokens"][0] == "<bos>"
    assert lp["token_logprobs"][0] is None and lp["top_logprobs"][0] is None
    text = reply["choices"][0]["text"]
    assert text.startswith(prompt)
    for tok, off in zip(lp["tokens"][1:], lp["text_offset"][1:], strict=True):
        assert text[off - len("<bos>") : off - len("<bos>") + len(tok)] == tok
    # cumulative over token strings
    for i in range(1, len(lp["tokens"])):
        assert lp["text_offset"][i] == lp["text_offset"][i - 1] + len(lp["tokens"][i - 1])
    # logprobs=0: only the actual token in each dict; echo+logprobs also fills prompt_logprobs
    assert all(len(d) == 1 for d in lp["top_logprobs"][1:])
    assert reply["choices"][0]["prompt_logprobs"][0] is None


async def test_top_k_has_k_plus_one_when_actual_outside(
    client: aiohttp.ClientSession, server: ReferenceServer, model: ReferenceModel
) -> None:
    prompt, k = "Once upon a time the zebra ate 中 soup", 3
    _, reply = await post(
        client,
        server,
        {"prompt": prompt, "echo": True, "logprobs": k, "max_tokens": 1, "temperature": 0},
    )
    lp = reply["choices"][0]["logprobs"]
    ids = model.tokenize(prompt)
    seen_outside = seen_inside = False
    for i in range(1, len(ids)):
        dist = model.distribution(ids[:i])
        texts = {
            model.tokenizer.decoded_token(t, ids[max(1, i - 4) : i]) for t in [ids[i], *dist.top(k)]
        }
        d = lp["top_logprobs"][i]
        assert len(d) == len(texts)  # k or k+1 unless keys collide
        if dist.rank(ids[i]) > k:
            seen_outside = True
            if len(texts) == k + 1:
                assert len(d) == k + 1
        else:
            seen_inside = True
        assert lp["token_logprobs"][i] == dist.logprobs[ids[i]]
    assert seen_outside and seen_inside


async def test_top_k_key_collapse_later_wins(
    client: aiohttp.ClientSession, wide_server: ReferenceServer, model: ReferenceModel
) -> None:
    prompt = "The sun"
    _, reply = await post(
        client,
        wide_server,
        {"prompt": prompt, "echo": True, "logprobs": -1, "max_tokens": 1, "temperature": 0},
    )
    ids = model.tokenize(prompt)
    dist = model.distribution(ids[:1])
    d = reply["choices"][0]["logprobs"]["top_logprobs"][1]
    expected: dict[str, float] = {}
    for t in [ids[1], *dist.order]:
        expected[model.tokenizer.decoded_token(t, [])] = dist.logprobs[t]
    assert d == expected
    assert len(d) < model.vocab_size  # distinct ids collapsed
    the_ids = sorted(
        (i for i in range(model.vocab_size) if model.token_text(i) == " the"), key=dist.rank
    )
    assert d[" the"] == dist.logprobs[the_ids[-1]] != dist.logprobs[the_ids[0]]
    # id-keyed alternatives do not collapse
    _, reply2 = await post(
        client,
        wide_server,
        {
            "prompt": prompt,
            "echo": True,
            "logprobs": -1,
            "max_tokens": 1,
            "temperature": 0,
            "return_tokens_as_token_ids": True,
        },
    )
    d2 = reply2["choices"][0]["logprobs"]["top_logprobs"][1]
    assert len(d2) == model.vocab_size
    assert reply2["choices"][0]["logprobs"]["tokens"][0] == "token_id:2"


async def test_prompt_logprobs_shape(
    client: aiohttp.ClientSession, server: ReferenceServer, model: ReferenceModel
) -> None:
    prompt, k = "Lily has 3 apples.", 2
    _, reply = await post(
        client, server, {"prompt": prompt, "prompt_logprobs": k, "max_tokens": 1, "temperature": 0}
    )
    plp = reply["choices"][0]["prompt_logprobs"]
    ids = model.tokenize(prompt)
    assert len(plp) == len(ids) and plp[0] is None
    for i in range(1, len(ids)):
        entry = plp[i]
        keys = list(entry)
        assert keys[0] == str(ids[i])  # actual token first
        dist = model.distribution(ids[:i])
        assert entry[keys[0]]["rank"] == dist.rank(ids[i])
        ranks = [v["rank"] for key, v in entry.items() if key != str(ids[i])]
        assert ranks == sorted(ranks) and all(1 <= r <= k for r in ranks)
        assert set(entry[keys[0]]) == {"logprob", "rank", "decoded_token"}
        assert len(entry) in (k, k + 1)
    assert reply["choices"][0]["logprobs"] is None


async def test_return_token_ids_and_echo_drops_prompt(
    client: aiohttp.ClientSession, server: ReferenceServer, model: ReferenceModel
) -> None:
    prompt = "Once upon a time"
    _, reply = await post(
        client,
        server,
        {
            "prompt": prompt,
            "max_tokens": 4,
            "temperature": 0,
            "return_token_ids": True,
            "echo": True,
        },
    )
    choice = reply["choices"][0]
    assert choice["prompt_token_ids"] == model.tokenize(prompt)
    assert choice["token_ids"] == model.greedy(model.tokenize(prompt), 4)
    assert choice["text"] == model.decode(choice["token_ids"])  # prompt dropped from text


async def test_token_id_prompt_has_no_bos(
    client: aiohttp.ClientSession, server: ReferenceServer, model: ReferenceModel
) -> None:
    ids = model.tokenize("The sun", add_bos=False)
    _, reply = await post(
        client,
        server,
        {"prompt": ids, "max_tokens": 2, "temperature": 0, "echo": True, "logprobs": 0},
    )
    assert reply["usage"]["prompt_tokens"] == len(ids)
    assert reply["choices"][0]["logprobs"]["tokens"][0] == "The"


async def test_greedy_is_argmax_on_wire(
    client: aiohttp.ClientSession, server: ReferenceServer, model: ReferenceModel
) -> None:
    prompt = "Question: Ben has 4 cards."
    _, reply = await post(
        client,
        server,
        {
            "prompt": prompt,
            "max_tokens": 12,
            "temperature": 0,
            "return_token_ids": True,
            "logprobs": 1,
        },
    )
    choice = reply["choices"][0]
    assert choice["token_ids"] == model.greedy(model.tokenize(prompt), 12)
    for d, lp in zip(
        choice["logprobs"]["top_logprobs"], choice["logprobs"]["token_logprobs"], strict=True
    ):
        assert lp == max(d.values())


async def test_seeded_sampling_reproducible(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    body: dict[str, Any] = {
        "prompt": "Once upon a time",
        "max_tokens": 24,
        "temperature": 1.0,
        "seed": 7,
    }
    _, a = await post(client, server, body)
    _, b = await post(client, server, body)
    _, c = await post(client, server, {**body, "seed": 8})
    assert a["choices"][0]["text"] == b["choices"][0]["text"]
    assert a["choices"][0]["text"] != c["choices"][0]["text"]
    _, n2 = await post(
        client,
        server,
        {
            **body,
            "n": 2,
            "top_p": 0.9,
            "top_k": 50,
            "min_p": 0.01,
            "presence_penalty": 0.5,
            "frequency_penalty": 0.5,
            "repetition_penalty": 1.2,
            "min_tokens": 3,
        },
    )
    assert [ch["index"] for ch in n2["choices"]] == [0, 1]
    # unseeded sampling uses the server's generator
    _, u = await post(client, server, {**body, "seed": None})
    assert u["choices"][0]["finish_reason"] in ("stop", "length")


async def test_penalised_greedy_and_stop(
    client: aiohttp.ClientSession, server: ReferenceServer, model: ReferenceModel
) -> None:
    _, r = await post(
        client,
        server,
        {
            "prompt": "The sun is",
            "max_tokens": 30,
            "temperature": 0,
            "repetition_penalty": 1.5,
            "temperature_ignored": 1,
        },
    )
    assert r["choices"][0]["finish_reason"] in ("length", "stop")
    greedy = model.decode(model.greedy(model.tokenize("The sun is"), 30))
    word = greedy.split()[2]
    _, s = await post(
        client, server, {"prompt": "The sun is", "max_tokens": 30, "temperature": 0, "stop": [word]}
    )
    ch = s["choices"][0]
    assert ch["finish_reason"] == "stop" and ch["stop_reason"] == word
    assert ch["text"] == greedy[: greedy.index(word)]
    _, s2 = await post(
        client,
        server,
        {
            "prompt": "The sun is",
            "max_tokens": 30,
            "temperature": 0,
            "stop": word,
            "include_stop_str_in_output": True,
        },
    )
    assert s2["choices"][0]["text"].endswith(word)
    first = model.greedy(model.tokenize("The sun is"), 3)[2]
    _, s3 = await post(
        client,
        server,
        {"prompt": "The sun is", "max_tokens": 30, "temperature": 0, "stop_token_ids": [first]},
    )
    assert s3["choices"][0]["stop_reason"] == first


async def test_eos_finishes_with_stop(
    client: aiohttp.ClientSession, server: ReferenceServer, model: ReferenceModel
) -> None:
    prompt = "Question: What is the closest star to the earth?\nAnswer: The sun is the closest"
    out = model.greedy(model.tokenize(prompt), 200)
    _, r = await post(
        client,
        server,
        {"prompt": prompt, "max_tokens": 200, "temperature": 0, "return_token_ids": True},
    )
    ch = r["choices"][0]
    if out[-1] == EOS_ID:
        assert ch["finish_reason"] == "stop" and ch["stop_reason"] is None
        assert ch["token_ids"][-1] == EOS_ID
    _, r2 = await post(
        client, server, {"prompt": prompt, "max_tokens": 20, "temperature": 0, "ignore_eos": True}
    )
    assert r2["usage"]["completion_tokens"] == 20


SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "ok": {"type": "boolean"},
        },
        "required": ["name", "age"],
    },
    {
        "type": "object",
        "properties": {
            "color": {"enum": ["red", "green", "blue"]},
            "score": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "nums": {"type": "array", "items": {"type": "integer"}},
        },
    },
    {
        "type": "object",
        "properties": {
            "inner": {
                "type": "object",
                "properties": {
                    "x": {"type": ["integer", "null"]},
                    "k": {"const": "fixed"},
                    "n": {"type": "null"},
                },
            }
        },
    },
]


def _matches(value: Any, schema: dict[str, Any]) -> bool:
    if "const" in schema:
        return bool(value == schema["const"])
    if "enum" in schema:
        return value in schema["enum"]
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        return any(_matches(value, {**schema, "type": k}) for k in kind)
    if kind == "object":
        props = schema.get("properties", {})
        return (
            isinstance(value, dict)
            and set(schema.get("required", [])) <= set(value)
            and all(_matches(value[k], props[k]) for k in value)
        )
    if kind == "array":
        return isinstance(value, list) and all(_matches(v, schema["items"]) for v in value)
    checks = {
        "string": str,
        "integer": int,
        "number": int | float,
        "boolean": bool,
        "null": type(None),
    }
    return isinstance(value, checks[kind]) and not (
        kind in ("integer", "number") and isinstance(value, bool)
    )


async def test_structured_json_output(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    for i, schema in enumerate(SCHEMAS):
        for temperature, spec in ((0, schema), (1.0, json.dumps(schema))):
            _, r = await post(
                client,
                server,
                {
                    "prompt": "Data:",
                    "max_tokens": 200,
                    "seed": i,
                    "temperature": temperature,
                    "structured_outputs": {"json": spec},
                },
            )
            ch = r["choices"][0]
            value = json.loads(ch["text"])
            assert _matches(value, schema), (schema, value)
            assert ch["finish_reason"] == "stop"
    _, r = await post(
        client,
        server,
        {
            "prompt": "x",
            "max_tokens": 50,
            "temperature": 0,
            "structured_outputs": {"json_object": True},
        },
    )
    assert isinstance(json.loads(r["choices"][0]["text"]), dict)
    _, r = await post(
        client,
        server,
        {
            "prompt": "x",
            "max_tokens": 50,
            "temperature": 0,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "s", "schema": SCHEMAS[0]},
            },
        },
    )
    assert _matches(json.loads(r["choices"][0]["text"]), SCHEMAS[0])
    _, r = await post(
        client,
        server,
        {
            "prompt": "x",
            "max_tokens": 50,
            "temperature": 0,
            "response_format": {"type": "json_object"},
        },
    )
    assert isinstance(json.loads(r["choices"][0]["text"]), dict)
    _, r = await post(
        client,
        server,
        {
            "prompt": "x",
            "max_tokens": 5,
            "temperature": 0,
            "structured_outputs": {"choice": ["yes", "no"]},
        },
    )
    assert r["choices"][0]["text"] in ("yes", "no")
    _, r = await post(
        client,
        server,
        {
            "prompt": "x",
            "max_tokens": 4,
            "temperature": 0,
            "structured_outputs": {"json": SCHEMAS[0]},
        },
    )
    assert r["choices"][0]["finish_reason"] == "length"
    assert r["usage"]["completion_tokens"] == 4


def _sse(text: str) -> list[Any]:
    events = [line[len("data: ") :] for line in text.split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    return [json.loads(e) for e in events[:-1]]


async def _stream(
    client: aiohttp.ClientSession, server: ReferenceServer, body: dict[str, Any]
) -> list[Any]:
    async with client.post(server.url + "/v1/completions", json={**body, "stream": True}) as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/event-stream")
        return _sse(await r.text())


async def test_stream_concatenates_to_non_stream(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    bodies: list[dict[str, Any]] = [
        {"prompt": "Once upon a time", "max_tokens": 20, "temperature": 0},
        {"prompt": "The sun is", "max_tokens": 20, "temperature": 0, "stop": [" the"]},
        {"prompt": "中国的 sun", "max_tokens": 8, "temperature": 0, "echo": True, "logprobs": 2},
        {
            "prompt": "Once",
            "max_tokens": 6,
            "temperature": 1.0,
            "seed": 3,
            "n": 2,
            "return_token_ids": True,
        },
        {"prompt": "The sun", "max_tokens": 0, "echo": True, "logprobs": 1},
    ]
    for body in bodies:
        _, whole = await post(client, server, body)
        chunks = await _stream(client, server, body)
        for ch in whole["choices"]:
            parts = [c["choices"][0] for c in chunks if c["choices"][0]["index"] == ch["index"]]
            assert "".join(p["text"] for p in parts) == ch["text"]
            assert parts[-1]["finish_reason"] == ch["finish_reason"]
            assert all(
                set(p)
                == {
                    "index",
                    "text",
                    "logprobs",
                    "finish_reason",
                    "stop_reason",
                    "prompt_token_ids",
                    "token_ids",
                }
                for p in parts
            )
            if body.get("logprobs") is not None:
                toks = [t for p in parts for t in p["logprobs"]["tokens"]]
                offs = [o for p in parts for o in p["logprobs"]["text_offset"]]
                assert toks == ch["logprobs"]["tokens"]
                assert offs == ch["logprobs"]["text_offset"]
            if body.get("return_token_ids"):
                assert parts[0]["prompt_token_ids"] == ch["prompt_token_ids"]
                assert [t for p in parts for t in p["token_ids"]] == ch["token_ids"]
        assert set(chunks[0]) == {"id", "object", "created", "model", "choices"}


async def test_stream_usage_chunk(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    body = {
        "prompt": "The sun",
        "max_tokens": 3,
        "temperature": 0,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    chunks = await _stream(client, server, body)
    last = chunks[-1]
    assert last["choices"] == [] and set(last["usage"]) == {
        "prompt_tokens",
        "total_tokens",
        "completion_tokens",
    }
    assert last["usage"]["completion_tokens"] == 3
    assert chunks[0]["usage"]["completion_tokens"] == 1


async def test_multiple_prompts_prompt_major(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    _, r = await post(
        client,
        server,
        {"prompt": ["The sun", "Once"], "max_tokens": 2, "n": 2, "temperature": 0.7, "seed": 1},
    )
    assert [c["index"] for c in r["choices"]] == [0, 1, 2, 3]
    assert r["usage"]["completion_tokens"] == 8


async def test_max_tokens_clamped_to_context(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    prompt = [300] * 4090
    _, r = await post(
        client, server, {"prompt": prompt, "max_tokens": 16, "temperature": 0, "ignore_eos": True}
    )
    assert r["usage"]["completion_tokens"] == 6
    assert r["choices"][0]["finish_reason"] == "length"


async def test_echo_top_k_capped_by_logprobs_not_prompt_logprobs(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    _, r = await post(
        client,
        server,
        {
            "prompt": "Once upon a time",
            "echo": True,
            "logprobs": 1,
            "prompt_logprobs": 5,
            "max_tokens": 1,
            "temperature": 0,
        },
    )
    ch = r["choices"][0]
    assert all(len(d) <= 2 for d in ch["logprobs"]["top_logprobs"][1:])
    assert any(len(d) >= 5 for d in ch["prompt_logprobs"][1:])
