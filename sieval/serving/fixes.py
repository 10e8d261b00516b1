"""What to do about a failed serving check, for the engine the fingerprint found.

The server flags named here were read in vLLM 0.32.0's and SGLang 0.5.23's sources and tried on
their CPU builds (docs/evidence/probe.md): what each changes on CPU is measured there.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..setting_names import setting

__all__ = ["batch_fix", "cache_fix", "defaults_fix", "determinism_fix", "seed_fix"]


def batch_fix(engine: str | None) -> str:
    modes = {
        "vllm": "start vLLM with --max-num-seqs 1 (one sequence a step; VLLM_BATCH_INVARIANT=1 is "
        "vLLM's batch-invariant mode, for GPUs: its CPU build does not start with it)",
        "sglang": "start SGLang with --max-running-requests 1 (--enable-deterministic-inference "
        "needs a GPU attention backend: fa3, fa4, flashinfer or triton)",
    }
    server = modes.get(engine or "", "use a server mode that does not batch requests")
    return (
        "log-likelihoods and greedy answers depend on what shares the batch, so a figure depends "
        "on the run's concurrency and on other traffic to the server: for parity run at "
        f"concurrency 1 ({setting('concurrency_limit', '1')}) on a server no one else uses, or "
        f"{server}"
    )


def cache_fix(engine: str | None) -> str:
    flags = {
        "vllm": "start vLLM with --no-enable-prefix-caching",
        "sglang": "start SGLang with --disable-radix-cache",
    }
    server = flags.get(engine or "", "turn the server's prefix cache off")
    return (
        "a prompt whose start the server has seen is scored differently, so few-shot prompts and "
        "the choices of one question (which share their context) depend on what ran before: "
        f"{server}"
    )


def determinism_fix(engine: str | None) -> str:
    return (
        "the same request alone gives other numbers each time, so no figure of this run can be "
        "reproduced exactly; rerun to see how far scores move, and report that spread"
    )


def seed_fix(engine: str | None) -> str:
    why = {
        "sglang": "SGLang honours sampling_seed only with --enable-deterministic-inference",
    }.get(engine or "", "the server ignores the seed or samples nondeterministically")
    return f"sampled answers cannot be reproduced from their seeds ({why})"


def defaults_fix(engine: str | None, leaves: Sequence[str], *, proven: bool = True) -> str:
    names = ", ".join(leaf.rpartition(".")[2] for leaf in leaves)
    server = {
        "vllm": "start vLLM with --generation-config vllm (its own neutral defaults instead of "
        "the model's generation_config.json)",
        "sglang": "start SGLang with --sampling-defaults openai",
    }.get(engine or "", "set the server's defaults to neutral values")
    send = setting("request_defaults.sampling.top_p", "1.0")
    said = (
        f"the server applies its own {names} to requests that leave them out, which changes answers"
        if proven
        else f"whether the server applies its own {names} to requests that leave them out "
        "cannot be told on this wire"
    )
    return (
        f"{said}: send them explicitly (e.g. {send}; penalties and min_p as options, on "
        f"vllm_native or sglang_native), or {server}"
    )
