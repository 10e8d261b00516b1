"""What to do about a failed serving check, for the engine the fingerprint found.

The server flags named here were read in vLLM 0.32.0's and SGLang 0.5.23's sources and tried on
their CPU builds (docs/evidence/probe.md): what each changes on CPU is measured there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..setting_names import form, setting

__all__ = ["Exposure", "batch_fix", "cache_fix", "defaults_fix", "determinism_fix", "seed_fix"]


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


@dataclass(frozen=True)
class Exposure:
    """A sampling field a run leaves to the server, and how it could be settled."""

    leaf: str
    value: Any = None
    """A neutral value the run's requests can carry (None: its wire cannot send the field)."""
    wires: tuple[tuple[str, Any], ...] = ()
    """When ``value`` is None: each dialect that can carry the field for those requests, with the
    neutral value it takes."""
    raw_wires: tuple[tuple[str, Any], ...] = ()
    """When no dialect can with the requests' chat prompt: those that can with a raw-text one."""


_SERVER_FLAGS = {
    "vllm": "start vLLM with --generation-config vllm (its own neutral defaults instead of the "
    "model's generation_config.json), which settles every field at once",
    "sglang": "start SGLang with --sampling-defaults openai, which settles every field at once",
}


def defaults_fix(
    engine: str | None,
    differs: Sequence[Exposure],
    unsure: Sequence[Exposure],
    *,
    length: bool = False,
) -> str:
    """What the server's defaults do to the run (``differs``: proven to change answers;
    ``unsure``: cannot be told on this wire) and every fix that covers them."""
    said = []
    if differs:
        said.append(
            f"the server applies its own {_names(differs)} to requests that leave them out, "
            "which changes answers"
        )
    if unsure:
        said.append(
            f"whether the server applies its own {_names(unsure)} to requests that leave them "
            "out cannot be told on this wire, so the results of the tasks named are exposed to "
            "its defaults (vLLM and SGLang read them from the model's generation_config.json)"
        )
    if length:
        said.append(
            "requests that leave max_tokens out let the server decide how long answers are: set "
            + setting("request_defaults.sampling.max_tokens", "N")
        )
    exposures = [*differs, *unsure]
    if not exposures:
        return "; ".join(said)
    server = _SERVER_FLAGS.get(
        engine or "",
        "set the server's defaults to neutral values"
        + (" (vLLM: --generation-config vllm; SGLang: --sampling-defaults openai)" if engine is None
           else "")
        + ", which settles every field at once",
    )  # fmt: skip
    if unsure:  # a server flag is seen by no wire: the config says it, and the mark goes
        server += (
            f", then declare it with {setting('server_defaults', 'neutral')} (no wire shows a "
            "server's flags)"
        )
    fixes = [server]
    sendable = [e for e in exposures if e.value is not None]
    if sendable:
        sent = _send([(e.leaf, e.value) for e in sendable])
        fixes.append(f"send {_names(sendable)} explicitly: {sent}")
    by_wires: dict[tuple[tuple[str, Any], ...], list[Exposure]] = {}
    for e in exposures:
        if e.value is None:
            by_wires.setdefault(e.wires, []).append(e)
    for wires, group in by_wires.items():
        if not wires:
            raw = sorted({wire for e in group for wire, _ in e.raw_wires})
            fixes.append(
                f"no dialect can send {_names(group)} with these tasks' prompt"
                + (f" ({', '.join(raw)} can with a raw-text prompt, for a task that takes one)"
                   if raw else "")
                + ": only the server's setting settles them here"
            )  # fmt: skip
            continue
        on = ", ".join(
            f"{wire} with {_send([(e.leaf, value) for e in group])}" for wire, value in wires
        )
        fixes.append(f"this wire cannot send {_names(group)}: use a dialect that can ({on})")
    return "; ".join(said) + ". To settle them: " + "; or ".join(fixes)


def _send(pairs: Sequence[tuple[str, Any]]) -> str:
    """The request defaults that send ``pairs`` (leaf, value), as the user would write them."""
    if form() == "flags":
        return "--gen-kwargs " + ",".join(f"{leaf}={_shown(v)}" for leaf, v in pairs)
    return "request_defaults: {" + ", ".join(f"{leaf}: {_shown(v)}" for leaf, v in pairs) + "}"


def _names(exposures: Sequence[Exposure]) -> str:
    return ", ".join(e.leaf.rpartition(".")[2] for e in exposures)


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
