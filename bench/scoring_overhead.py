"""Client CPU per 500-position scoring reply: sieval's scoring dialects against other clients.

Usage: python bench/scoring_overhead.py [--requests 2000] [--rounds 3] [--concurrency 1 16 128]
       [--against CHECKOUT] [--no-lm-eval] [--lm-eval-venv DIR]

The server is ``bench/instant.py``'s purpose-built one, in its own process: it answers at once
with a recorded reply (``tests/fixtures``, vLLM 0.32.0 and SGLang 0.5.23) whose positional lists
are tiled to a 500-token prompt, so every client reads the same bytes for its route. The clients,
each in a fresh process per run:

* ``sieval <dialect>``: ``Model.call()`` on the IR scoring request the PPL tasks send (lowering
  with the decision ledger, transport, lifting with every reply check), for openai_completions
  (echo), vllm_native (prompt_logprobs) and sglang_native (/generate input logprobs);
* ``lm-eval``: lm-evaluation-harness 0.4.13's ``local-completions`` ``loglikelihood`` (its own
  tokenisation of context and continuation included, as in a run), installed by this program in
  its own venv under ``~/.cache/sieval/bench/lm-eval-0.4.13``, tokenizer from the local Gemma 3
  checkpoint (``~/.cache/sieval/models/gemma-3-270m-bf16``, or ``--tokenizer``);
* ``openai SDK``: ``AsyncOpenAI().completions.create(echo=True, logprobs=0)`` and reading the
  tokens and logprobs from the parsed reply;
* ``raw <route>``: aiohttp POST + ``json.loads`` + ``zip`` of tokens and logprobs, the floor.

Each run sends ``--requests`` requests after a warm-up and reports its process CPU time per
request; rounds interleave every (client, concurrency) pair, flipping the order each round (the
machine is shared and noisy). Printed: the medians, and per round then median, each sieval
dialect's ratio to lm-eval, the SDK and its own raw floor. ``--against`` adds the same sieval
clients from another checkout (e.g. ``git worktree add /tmp/before <commit>``).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import functools
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import instant  # standard library only, shared with the other benchmarks

ROOT = instant.ROOT
FIXTURES = ROOT / "tests/fixtures"
POSITIONS = 500
MODEL_ID = "gemma-3-270m"
LM_EVAL = "0.4.13"
VENV = Path.home() / ".cache/sieval/bench" / f"lm-eval-{LM_EVAL}"
TOKENIZER = Path.home() / ".cache/sieval/models/gemma-3-270m-bf16"

# -- the replies: recorded ones, positional lists tiled to POSITIONS prompt tokens ---------------


def _record(dialect: str, version: str, name: str) -> dict[str, Any]:
    path = FIXTURES / dialect / version / f"{name}.json"
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record


def _pieces() -> list[tuple[str, int, float]]:
    """(text, id, logprob) of the recorded prompt's tokens after the BOS."""
    echo = _record("openai_completions", "0.32.0", "echo_score")["reply"]["choices"][0]
    ids = _record("vllm_native", "0.32.0", "prompt_logprobs_top3_ids")["reply"]["choices"][0]
    lp = echo["logprobs"]
    return list(
        zip(
            lp["tokens"][1:14],
            ids["prompt_token_ids"][1:14],
            lp["token_logprobs"][1:14],
            strict=True,
        )
    )


PIECES = list(itertools.islice(itertools.cycle(_pieces()), POSITIONS - 1))
PROMPT = "".join(t for t, _, _ in PIECES)
BOS, BOS_ID = "<bos>", 2
NEXT = ("\n", 107, -0.9887235164642334)  # the one generated token


def completions_reply() -> bytes:
    """``echo`` + ``logprobs: 0`` (vLLM gives prompt_logprobs as well under echo)."""
    reply = copy.deepcopy(_record("openai_completions", "0.32.0", "echo_score")["reply"])
    choice = reply["choices"][0]
    tokens = [(BOS, BOS_ID, None), *PIECES, NEXT]
    offsets = list(itertools.accumulate((len(t) for t, _, _ in tokens), initial=0))[:-1]
    choice["text"] = PROMPT + NEXT[0]
    choice["logprobs"] = {
        "text_offset": offsets,
        "token_logprobs": [lp for _, _, lp in tokens],
        "tokens": [t for t, _, _ in tokens],
        "top_logprobs": [None if lp is None else {t: lp} for t, _, lp in tokens],
    }
    choice["prompt_logprobs"] = [None] + [
        {str(i): {"logprob": lp, "rank": 1, "decoded_token": t}} for t, i, lp in PIECES
    ]
    reply["usage"].update(prompt_tokens=POSITIONS, completion_tokens=1, total_tokens=POSITIONS + 1)
    return json.dumps(reply).encode()


def vllm_native_reply() -> bytes:
    """``prompt_logprobs: 0`` + ``return_token_ids`` (no echo, no sampled logprobs)."""
    reply = copy.deepcopy(_record("vllm_native", "0.32.0", "prompt_logprobs_top3_ids")["reply"])
    choice = reply["choices"][0]
    choice["prompt_logprobs"] = [None] + [
        {str(i): {"logprob": lp, "rank": 1, "decoded_token": t}} for t, i, lp in PIECES
    ]
    choice["prompt_token_ids"] = [BOS_ID] + [i for _, i, _ in PIECES]
    reply["usage"].update(prompt_tokens=POSITIONS, completion_tokens=1, total_tokens=POSITIONS + 1)
    return json.dumps(reply).encode()


def sglang_reply() -> bytes:
    """``logprob_start_len: 0`` + ``return_text_in_logprobs``, ``top_logprobs_num: 0``."""
    reply = copy.deepcopy(_record("sglang_native", "0.5.23", "score_only")["reply"])
    meta = reply["meta_info"]
    meta["input_token_logprobs"] = [[None, BOS_ID, BOS]] + [[lp, i, t] for t, i, lp in PIECES]
    meta["prompt_tokens"] = POSITIONS
    return json.dumps(reply).encode()


ROUTES: list[instant.Route] = [
    ("/v1/completions", '"prompt_logprobs"', "vllm_native"),
    ("/v1/completions", None, "completions"),
    ("/generate", None, "sglang"),
]

# -- the clients (each runs in its own process: ``--client NAME``) -------------------------------


def _sieval_client(args: argparse.Namespace) -> dict[str, float]:
    instant.sieval_path(args.checkout)
    from sieval import Limits, Model
    from sieval.ir.request import CompletionInput, Request, Sampling, Scoring

    # what the PPL tasks send (tasks/_shared.py scoring_request), built here so that an older
    # checkout is measured on the same request
    request = Request(
        input=CompletionInput(text=PROMPT),
        sampling=Sampling(temperature=0.0, max_tokens=1),
        scoring=Scoring(input_logprobs=True),
    )

    async def main() -> dict[str, float]:
        limits = Limits(concurrency=args.conc)
        async with Model(
            dialect=args.dialect, base_url=args.url, model_id=MODEL_ID, limits=limits
        ) as model:

            async def one(i: int) -> None:
                response = (await model.call(request)).result()
                assert len(response.input_tokens) == POSITIONS

            return await instant.drive(args.n, args.conc, one)

    return asyncio.run(main())


def _raw_client(args: argparse.Namespace) -> dict[str, float]:
    import aiohttp

    route, body = {
        "openai_completions": (
            "/v1/completions",
            {"model": MODEL_ID, "prompt": PROMPT, "echo": True, "logprobs": 0, "max_tokens": 1},
        ),
        "vllm_native": (
            "/v1/completions",
            {"model": MODEL_ID, "prompt": PROMPT, "prompt_logprobs": 0, "max_tokens": 1},
        ),
        "sglang_native": (
            "/generate",
            {"text": PROMPT, "return_logprob": True, "logprob_start_len": 0},
        ),
    }[args.dialect]

    def floor(reply: Any) -> list[tuple[Any, Any]]:
        if args.dialect == "openai_completions":
            lp = reply["choices"][0]["logprobs"]
            return list(zip(lp["tokens"], lp["token_logprobs"], strict=True))
        if args.dialect == "vllm_native":
            c = reply["choices"][0]
            return list(zip(c["prompt_token_ids"], c["prompt_logprobs"], strict=True))
        return list(zip(reply["meta_info"]["input_token_logprobs"], itertools.repeat(None)))

    async def main() -> dict[str, float]:
        connector = aiohttp.TCPConnector(limit=args.conc)
        async with aiohttp.ClientSession(connector=connector) as session:
            data, headers = json.dumps(body).encode(), {"Content-Type": "application/json"}

            async def one(i: int) -> None:
                async with session.post(args.url + route, data=data, headers=headers) as r:
                    pairs = floor(json.loads(await r.read()))
                    assert len(pairs) >= POSITIONS

            return await instant.drive(args.n, args.conc, one)

    return asyncio.run(main())


def _sdk_client(args: argparse.Namespace) -> dict[str, float]:
    import openai

    async def main() -> dict[str, float]:
        client = openai.AsyncOpenAI(base_url=args.url + "/v1", api_key="unused", max_retries=0)
        gate = asyncio.Semaphore(args.conc)

        async def one(i: int) -> None:
            async with gate:
                c = await client.completions.create(
                    model=MODEL_ID,
                    prompt=PROMPT,
                    echo=True,
                    logprobs=0,
                    max_tokens=1,
                    temperature=0.0,
                )
            lp = c.choices[0].logprobs
            assert lp is not None and lp.tokens is not None and lp.token_logprobs is not None
            pairs = list(zip(lp.tokens, lp.token_logprobs, strict=True))
            assert len(pairs) > POSITIONS

        result = await instant.drive(args.n, args.conc, one)
        await client.close()
        return result

    return asyncio.run(main())


def _lm_eval_client(args: argparse.Namespace) -> dict[str, float]:
    import logging

    logging.disable(logging.WARNING)
    from lm_eval.api.instance import Instance
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    model = LocalCompletionsAPI(
        base_url=args.url + "/v1/completions",
        model=MODEL_ID,
        tokenizer=args.tokenizer,
        tokenizer_backend="huggingface",
        num_concurrent=args.conc,
        max_length=4096,
        max_retries=1,
    )
    context, continuation = PROMPT[: -len(PIECES[-1][0])], PIECES[-1][0]

    def requests(n: int, base: int) -> list[Any]:
        # distinct contexts, as a task's are (a number in front), so no layer can dedupe them
        return [
            Instance("loglikelihood", {}, (f"{base + i} {context}", continuation), base + i)
            for i in range(n)
        ]

    model.loglikelihood(requests(2 * args.conc, 10**6), disable_tqdm=True)  # warm-up
    batch = requests(args.n, 0)
    cpu0, t0 = time.process_time(), time.perf_counter()
    out = model.loglikelihood(batch, disable_tqdm=True)
    result = instant.measured(args.n, cpu0, t0)
    assert len(out) == args.n
    return result


CLIENTS = {
    "sieval": _sieval_client,
    "raw": _raw_client,
    "sdk": _sdk_client,
    "lm-eval": _lm_eval_client,
}

# -- the orchestration --------------------------------------------------------------------------


def lm_eval_python(venv: Path) -> str:
    """The venv's python, creating the venv (lm_eval[api] 0.4.13 + transformers) on first use."""
    python = venv / "bin/python"
    if not (venv / ".complete").exists():
        print(f"creating {venv} (lm_eval[api]=={LM_EVAL}, transformers) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"lm_eval[api]=={LM_EVAL}", "transformers"],
            check=True,
        )
        (venv / ".complete").write_text(LM_EVAL)
    return str(python)


def main() -> None:
    parser = instant.parser(__doc__, CLIENTS)
    parser.add_argument("--no-lm-eval", action="store_true", help="skip lm-evaluation-harness")
    parser.add_argument("--no-sdk", action="store_true", help="skip the openai SDK loop")
    parser.add_argument("--lm-eval-venv", type=Path, default=VENV)
    parser.add_argument("--tokenizer", default=str(TOKENIZER), help="HF tokenizer dir for lm-eval")
    parser.add_argument(
        "--dialects", nargs="+", default=["openai_completions", "vllm_native", "sglang_native"]
    )
    args = parser.parse_args()
    if args.client:
        print(json.dumps(CLIENTS[args.client](args)))
        return

    argv = functools.partial(instant.client_argv, sys.executable, __file__)
    clients: list[instant.Client] = []
    for d in args.dialects:
        clients += instant.sieval_and_raw(argv, d, args.against)
    if not args.no_lm_eval:
        lm_py = lm_eval_python(args.lm_eval_venv)
        lm = instant.client_argv(lm_py, __file__, "lm-eval", "--tokenizer", args.tokenizer)
        clients.append(instant.Client(f"lm-eval {LM_EVAL} local-completions", lm, "all"))
    if not args.no_sdk:
        clients.append(instant.Client("openai SDK completions", argv("sdk"), "all"))

    replies = {
        "completions": completions_reply(),
        "vllm_native": vllm_native_reply(),
        "sglang": sglang_reply(),
    }
    started = time.perf_counter()
    print(
        f"client CPU per {POSITIONS}-position scoring reply; {args.requests} requests per run, "
        f"{args.rounds} interleaved rounds; python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs; load before: {instant.load()}\n"
        f"replies: {', '.join(f'{k} {len(v):,} B' for k, v in replies.items())}",
        flush=True,
    )
    with instant.Server(replies, ROUTES) as url:
        runs = instant.rounds(clients, url, args.concurrency, args.requests, args.rounds)
    report(runs, clients, args)
    print(f"\nload after: {instant.load()}; total {time.perf_counter() - started:.0f} s")


def report(
    runs: dict[tuple[str, int], list[float]], clients: list[instant.Client], args: Any
) -> None:
    concs = args.concurrency
    instant.print_medians(runs, clients, concs)
    print("\nratios, per round then median (goal: <= 0.2 lm-eval, <= 0.1 SDK, <= 1 raw)")
    others = [c.name for c in clients if c.group == "all"]
    for d in args.dialects:
        sides = [f"sieval {d}"] + ([f"sieval {d} (against)"] if args.against else [])
        for side in sides:
            for other in [*others, f"raw {d}"]:
                cells = "".join(f"{instant.ratio(runs, side, other, c):10.3f}" for c in concs)
                print(f"{side + ' / ' + other.split(' local')[0]:<58}{cells}")
    if args.against:
        for d in args.dialects:
            a, b = f"sieval {d}", f"sieval {d} (against)"
            cells = "".join(f"{instant.ratio(runs, a, b, c):10.3f}" for c in concs)
            print(f"{'new / against ' + d:<58}{cells}")


if __name__ == "__main__":
    main()
