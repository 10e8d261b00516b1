"""An instant OpenAI-completions server for benchmarks, meant to run in its own process.

``python bench/instant_server.py PORT`` answers ``POST /v1/completions`` at once with a
vLLM-shaped echo-scoring reply for whatever prompt it is sent (the prompt split into word
tokens after a ``<bos>``, every logprob -1, one generated token), and ``GET /v1/models``. No
model runs: what a client spends per request is all that is left to measure.
"""

from __future__ import annotations

import json
import re
import sys

from aiohttp import web

MODEL = "instant"
_TOKEN = re.compile(r"\s*\S+|\s+")


def completion(body: dict) -> dict:
    prompt = body["prompt"]
    tokens = ["<bos>", *_TOKEN.findall(prompt), "\n"]
    offsets, at = [0], len("<bos>")  # vLLM's offsets count the BOS's text
    for token in tokens[1:]:
        offsets.append(at)
        at += len(token)
    logprobs = [None] + [-1.0] * (len(tokens) - 1)
    top = [None] + [{t: -1.0} for t in tokens[1:]]
    return {
        "id": "cmpl-instant",
        "object": "text_completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "text": prompt + "\n",
                "logprobs": {
                    "text_offset": offsets,
                    "token_logprobs": logprobs,
                    "tokens": tokens,
                    "top_logprobs": top,
                },
                "finish_reason": "length",
                "stop_reason": None,
            }
        ],
        "usage": {
            "prompt_tokens": len(tokens) - 1,
            "completion_tokens": 1,
            "total_tokens": len(tokens),
        },
    }


async def completions(request: web.Request) -> web.Response:
    body = json.loads(await request.read())
    return web.Response(body=json.dumps(completion(body)).encode(), content_type="application/json")


async def models(_: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})


def main() -> None:
    app = web.Application()
    app.router.add_post("/v1/completions", completions)
    app.router.add_get("/v1/models", models)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)


if __name__ == "__main__":
    main()
