"""Client CPU per 256-token generation with top-5 logprobs: sieval's chat-shaped dialects
against the official SDKs and the raw floor.

Usage: python bench/generation_overhead.py [--requests 2000] [--rounds 3] [--concurrency 1 16 128]
       [--against CHECKOUT] [--dialects ...]

The server is ``bench/instant.py``'s, in its own process: it answers at once with a reply in the
recorded shape of each route (``tests/fixtures``: vLLM 0.32.0's chat and responses routes and its
messages route, SGLang 0.5.23's /generate; Google's generateContent in the shape the reference
server and the google-genai types give, since the recorded proxy drops logprobs) holding a
256-token greedy generation with 5 alternatives per token (6 on vLLM's routes, where sieval asks
k + 1; none on the messages wire, which has no logprobs). The clients, each in a fresh process:

* ``sieval <dialect>``: ``Model.call()`` on a chat request (``sglang_native``: a prompt) with
  ``max_tokens=256`` and ``Scoring(sampled_logprobs=True, sampled_top_k=5)`` (no scoring for
  ``anthropic_messages``), lowering, transport and lifting with every check;
* the SDK loop of the wire: ``openai`` chat.completions and responses, ``anthropic`` messages,
  ``google-genai`` generate_content (the SDKs of ``/work/main/.venv``'s dev extra), each reading
  the text, tokens and alternatives from its parsed reply; SGLang has no SDK;
* ``raw <dialect>``: aiohttp POST + ``json.loads`` + reading the same fields, the floor.

Runs, rounds and ratios as in ``bench/scoring_overhead.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import functools
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import instant  # standard library only, shared with the other benchmarks

ROOT = instant.ROOT
FIXTURES = ROOT / "tests/fixtures"
STEPS = 256
K = 5
MODEL_ID = "gemma-3-270m"
QUESTION = "Write a long story about a cat who travels the world."
DIALECTS = [
    "openai_chat",
    "openai_responses",
    "anthropic_messages",
    "google_genai",
    "sglang_native",
]

# -- the generation: STEPS greedy steps, each with its alternatives, most likely first -----------

_WORDS = [" The", " cat", " travels", " the", " world", " and", " sees", " many", " places", ","]
_WORDS += [" a", " new", " city", " every", " day", ".", " She", " likes", " trains", " boats"]


def _steps() -> list[list[tuple[str, int, float]]]:
    """Per step ``(token, id, logprob)`` for the chosen token and the next ones down."""
    out = []
    for j in range(STEPS):
        first = j % len(_WORDS)
        alts = [
            (_WORDS[(first + a) % len(_WORDS)], 100 + (first + a) % len(_WORDS))
            for a in range(K + 1)
        ]
        out.append([(t, i, -0.05 - 0.01 * (j % 7) - 0.6 * a) for a, (t, i) in enumerate(alts)])
    return out


STEP_LIST = _steps()
TEXT = "".join(s[0][0] for s in STEP_LIST)


def _record(dialect: str, version: str, name: str) -> dict[str, Any]:
    path = FIXTURES / dialect / version / f"{name}.json"
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return copy.deepcopy(record["reply"])


def _openai_entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode())}


def chat_reply() -> bytes:
    reply = _record("openai_chat", "0.32.0", "logprobs_greedy")
    choice = reply["choices"][0]
    choice["message"]["content"] = TEXT
    choice["logprobs"]["content"] = [
        {
            **_openai_entry(s[0][0], s[0][2]),
            "top_logprobs": [_openai_entry(t, lp) for t, _, lp in s],
        }
        for s in STEP_LIST
    ]
    choice["finish_reason"] = "length"
    reply["usage"].update(
        completion_tokens=STEPS, total_tokens=reply["usage"]["prompt_tokens"] + STEPS
    )
    return json.dumps(reply).encode()


def responses_reply() -> bytes:
    reply = _record("openai_responses", "0.32.0", "logprobs_top3")
    part = reply["output"][0]["content"][0]
    part["text"] = TEXT
    part["logprobs"] = [
        {
            "token": s[0][0],
            "bytes": list(s[0][0].encode()),
            "logprob": s[0][2],
            "top_logprobs": [
                {"token": t, "bytes": list(t.encode()), "logprob": lp} for t, _, lp in s
            ],
        }
        for s in STEP_LIST
    ]
    reply["max_output_tokens"] = STEPS
    reply["temperature"] = 0.0
    reply["top_logprobs"] = K + 1
    usage = reply["usage"]
    usage.update(output_tokens=STEPS, total_tokens=usage["input_tokens"] + STEPS)
    return json.dumps(reply).encode()


def messages_reply() -> bytes:
    reply = _record("anthropic_messages", "0.32.0", "max_tokens")
    reply["content"][0]["text"] = TEXT
    reply["usage"]["output_tokens"] = STEPS
    return json.dumps(reply).encode()


def google_reply() -> bytes:
    chosen = [
        {"token": t, "tokenId": i, "logProbability": lp} for t, i, lp in (s[0] for s in STEP_LIST)
    ]
    top = [
        {"candidates": [{"token": t, "tokenId": i, "logProbability": lp} for t, i, lp in s[:K]]}
        for s in STEP_LIST
    ]
    total = sum(c["logProbability"] for c in chosen)
    reply = {
        "candidates": [
            {
                "content": {"parts": [{"text": TEXT}], "role": "model"},
                "finishReason": "MAX_TOKENS",
                "index": 0,
                "avgLogprobs": total / STEPS,
                "logprobsResult": {
                    "chosenCandidates": chosen,
                    "topCandidates": top,
                    "logProbabilitySum": total,
                },
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 16,
            "candidatesTokenCount": STEPS,
            "totalTokenCount": 16 + STEPS,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 16}],
        },
        "modelVersion": MODEL_ID,
        "responseId": "4ed315827f724e7593c4ad",
    }
    return json.dumps(reply).encode()


def sglang_reply() -> bytes:
    reply = _record("sglang_native", "0.5.23", "gen_top2")
    reply["text"] = TEXT
    reply["output_ids"] = [s[0][1] for s in STEP_LIST]
    meta = reply["meta_info"]
    meta["output_token_logprobs"] = [[lp, i, t] for t, i, lp in (s[0] for s in STEP_LIST)]
    meta["output_top_logprobs"] = [[[lp, i, t] for t, i, lp in s[:K]] for s in STEP_LIST]
    meta["output_token_logprobs_length"] = STEPS
    meta["completion_tokens"] = STEPS
    meta["finish_reason"] = {"type": "length", "length": STEPS}
    return json.dumps(reply).encode()


def replies() -> dict[str, bytes]:
    return {
        "chat": chat_reply(),
        "responses": responses_reply(),
        "messages": messages_reply(),
        "google": google_reply(),
        "sglang": sglang_reply(),
    }


ROUTES: list[instant.Route] = [
    ("/v1/chat/completions", None, "chat"),
    ("/v1/responses", None, "responses"),
    ("/v1/messages", None, "messages"),
    ("/v1beta/models/", None, "google"),
    ("/generate", None, "sglang"),
]

# -- the clients (each runs in its own process: ``--client NAME``) -------------------------------


def _sieval_client(args: argparse.Namespace) -> dict[str, float]:
    instant.sieval_path(args.checkout)
    from sieval import Limits, Model
    from sieval.ir.request import (
        ChatInput,
        CompletionInput,
        Message,
        Request,
        Sampling,
        Scoring,
        TextPart,
    )

    chat = ChatInput(messages=(Message(role="user", content=(TextPart(text=QUESTION),)),))
    request = Request(
        input=CompletionInput(text=QUESTION) if args.dialect == "sglang_native" else chat,
        sampling=Sampling(temperature=0.0, max_tokens=STEPS),
        scoring=Scoring()
        if args.dialect == "anthropic_messages"
        else Scoring(sampled_logprobs=True, sampled_top_k=K),
    )

    async def main() -> dict[str, float]:
        limits = Limits(concurrency=args.conc)
        async with Model(
            dialect=args.dialect, base_url=args.url, model_id=MODEL_ID, limits=limits
        ) as model:

            async def one(i: int) -> None:
                choice = (await model.call(request)).result().choices[0]
                assert choice.text == TEXT

            return await instant.drive(args.n, args.conc, one)

    return asyncio.run(main())


_RAW_BODY: dict[str, tuple[str, dict[str, Any]]] = {
    "openai_chat": (
        "/v1/chat/completions",
        {
            "model": MODEL_ID,
            "messages": [{"role": "user", "content": QUESTION}],
            "max_completion_tokens": STEPS,
            "logprobs": True,
            "top_logprobs": K + 1,
        },
    ),
    "openai_responses": (
        "/v1/responses",
        {
            "model": MODEL_ID,
            "input": QUESTION,
            "max_output_tokens": STEPS,
            "include": ["message.output_text.logprobs"],
            "top_logprobs": K + 1,
        },
    ),
    "anthropic_messages": (
        "/v1/messages",
        {
            "model": MODEL_ID,
            "messages": [{"role": "user", "content": QUESTION}],
            "max_tokens": STEPS,
        },
    ),
    "google_genai": (
        f"/v1beta/models/{MODEL_ID}:generateContent",
        {
            "contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
            "generationConfig": {"maxOutputTokens": STEPS, "responseLogprobs": True, "logprobs": K},
        },
    ),
    "sglang_native": (
        "/generate",
        {
            "text": QUESTION,
            "sampling_params": {"max_new_tokens": STEPS},
            "return_logprob": True,
            "top_logprobs_num": K,
            "return_text_in_logprobs": True,
        },
    ),
}


def _raw_read(dialect: str, reply: Any) -> tuple[str, list[Any]]:
    """The text and, per token, (token, logprob, alternatives): what the sieval client reads."""
    if dialect == "openai_chat":
        c = reply["choices"][0]
        steps = [(e["token"], e["logprob"], e["top_logprobs"]) for e in c["logprobs"]["content"]]
        return c["message"]["content"], steps
    if dialect == "openai_responses":
        part = reply["output"][0]["content"][0]
        return part["text"], [
            (e["token"], e["logprob"], e["top_logprobs"]) for e in part["logprobs"]
        ]
    if dialect == "anthropic_messages":
        return reply["content"][0]["text"], []
    if dialect == "google_genai":
        c = reply["candidates"][0]
        result = c["logprobsResult"]
        steps = list(
            zip(
                result["chosenCandidates"],
                (t["candidates"] for t in result["topCandidates"]),
                strict=True,
            )
        )
        return c["content"]["parts"][0]["text"], steps
    meta = reply["meta_info"]
    return reply["text"], list(
        zip(meta["output_token_logprobs"], meta["output_top_logprobs"], strict=True)
    )


def _raw_client(args: argparse.Namespace) -> dict[str, float]:
    import aiohttp

    route, body = _RAW_BODY[args.dialect]

    async def main() -> dict[str, float]:
        connector = aiohttp.TCPConnector(limit=args.conc)
        async with aiohttp.ClientSession(connector=connector) as session:
            data, headers = json.dumps(body).encode(), {"Content-Type": "application/json"}

            async def one(i: int) -> None:
                async with session.post(args.url + route, data=data, headers=headers) as r:
                    text, _ = _raw_read(args.dialect, json.loads(await r.read()))
                    assert text == TEXT

            return await instant.drive(args.n, args.conc, one)

    return asyncio.run(main())


def _sdk_call(args: argparse.Namespace) -> Any:
    """A coroutine function making one SDK call and reading what the sieval client reads."""
    messages: Any = [{"role": "user", "content": QUESTION}]
    if args.dialect == "openai_chat":
        import openai

        client = openai.AsyncOpenAI(base_url=args.url + "/v1", api_key="unused", max_retries=0)

        async def chat() -> str:
            r = await client.chat.completions.create(
                model=MODEL_ID,
                messages=messages,
                max_completion_tokens=STEPS,
                logprobs=True,
                top_logprobs=K + 1,
                temperature=0.0,
            )
            c = r.choices[0]
            assert c.logprobs is not None and c.logprobs.content is not None
            steps = [
                (e.token, e.logprob, [(a.token, a.logprob) for a in e.top_logprobs])
                for e in c.logprobs.content
            ]
            assert len(steps) == STEPS
            return c.message.content or ""

        return chat
    if args.dialect == "openai_responses":
        import openai

        client = openai.AsyncOpenAI(base_url=args.url + "/v1", api_key="unused", max_retries=0)

        async def responses() -> str:
            r = await client.responses.create(
                model=MODEL_ID,
                input=QUESTION,
                max_output_tokens=STEPS,
                include=["message.output_text.logprobs"],
                top_logprobs=K + 1,
                temperature=0.0,
            )
            part = r.output[0].content[0]  # type: ignore[union-attr]
            steps = [
                (e.token, e.logprob, [(a.token, a.logprob) for a in e.top_logprobs])
                for e in part.logprobs
            ]  # type: ignore[union-attr]
            assert len(steps) == STEPS
            return part.text  # type: ignore[union-attr,no-any-return]

        return responses
    if args.dialect == "anthropic_messages":
        import anthropic

        aclient = anthropic.AsyncAnthropic(base_url=args.url, api_key="unused", max_retries=0)

        async def messages_call() -> str:
            r = await aclient.messages.create(model=MODEL_ID, max_tokens=STEPS, messages=messages)
            return r.content[0].text  # type: ignore[union-attr]

        return messages_call
    if args.dialect == "google_genai":
        from google import genai
        from google.genai import types

        gclient = genai.Client(
            api_key="unused",
            http_options=types.HttpOptions(base_url=args.url, api_version="v1beta"),
        )
        config = types.GenerateContentConfig(
            temperature=0.0, max_output_tokens=STEPS, response_logprobs=True, logprobs=K
        )

        async def generate() -> str:
            r = await gclient.aio.models.generate_content(
                model=MODEL_ID, contents=QUESTION, config=config
            )
            c = r.candidates[0]  # type: ignore[index]
            result = c.logprobs_result
            assert result is not None and result.chosen_candidates and result.top_candidates
            steps = [
                (
                    e.token,
                    e.log_probability,
                    [(a.token, a.log_probability) for a in t.candidates or []],
                )
                for e, t in zip(result.chosen_candidates, result.top_candidates, strict=True)
            ]
            assert len(steps) == STEPS
            return r.text or ""

        return generate
    raise SystemExit(f"no SDK for {args.dialect}")


def _sdk_client(args: argparse.Namespace) -> dict[str, float]:
    call = _sdk_call(args)

    async def main() -> dict[str, float]:
        gate = asyncio.Semaphore(args.conc)

        async def one(i: int) -> None:
            async with gate:
                assert await call() == TEXT

        return await instant.drive(args.n, args.conc, one)

    return asyncio.run(main())


CLIENTS = {"sieval": _sieval_client, "raw": _raw_client, "sdk": _sdk_client}
SDK_NAMES = {
    "openai_chat": "openai SDK chat.completions",
    "openai_responses": "openai SDK responses",
    "anthropic_messages": "anthropic SDK messages",
    "google_genai": "google-genai SDK generate_content",
}


def main() -> None:
    parser = instant.parser(__doc__, CLIENTS)
    parser.add_argument("--dialects", nargs="+", default=DIALECTS)
    args = parser.parse_args()
    if args.client:
        print(json.dumps(CLIENTS[args.client](args)))
        return

    argv = functools.partial(instant.client_argv, sys.executable, __file__)
    clients: list[instant.Client] = []
    for d in args.dialects:
        clients += instant.sieval_and_raw(argv, d, args.against)
        if d in SDK_NAMES:
            clients.append(instant.Client(SDK_NAMES[d], argv("sdk", "--dialect", d), d))
    bodies = replies()
    started = time.perf_counter()
    print(
        f"client CPU per {STEPS}-token generation with top-{K} logprobs; {args.requests} "
        f"requests per run, {args.rounds} interleaved rounds; python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs; load before: {instant.load()}\n"
        f"replies: {', '.join(f'{k} {len(v):,} B' for k, v in bodies.items())}",
        flush=True,
    )
    with instant.Server(bodies, ROUTES) as url:
        runs = instant.rounds(clients, url, args.concurrency, args.requests, args.rounds)
    concs = args.concurrency
    instant.print_medians(runs, clients, concs)
    print("\nratios, per round then median (goal: <= 0.1 SDK, <= 1 raw)")
    for d in args.dialects:
        sides = [f"sieval {d}"] + ([f"sieval {d} (against)"] if args.against else [])
        others = [*([SDK_NAMES[d]] if d in SDK_NAMES else []), f"raw {d}"]
        for side, other in itertools.product(sides, others):
            cells = "".join(f"{instant.ratio(runs, side, other, c):10.3f}" for c in concs)
            print(f"{side + ' / ' + other:<70}{cells}")
    print(f"\nload after: {instant.load()}; total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
