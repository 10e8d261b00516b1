"""The serving checks' probe requests: fixed prompts, shaped for whatever the wire can carry.

Every check sends fixed prompts (never a task's data, so a probe's numbers are comparable across
runs, tasks and harness versions):

* ``SHORT``: about 25 tokens; the fingerprint, determinism and defaults probes. Shorter than any
  prefix cache's block (vLLM's is 16 to 128 tokens), so sending it again never reads it from the
  cache.
* ``LONG``: about 250 tokens after a per-run nonce; the cache probe, which asks for the next
  tokens' scores only: vLLM never reads its prefix cache for a request that asks for the prompt's
  log-probabilities, so a probe that did would never meet the cache.
* ``BATCH``: ``LONG`` twice (449 of Gemma 3's tokens) after a nonce; the batch probe, with the
  prompt's log-probabilities. Its copies (``suite.DEFAULT_COPIES``) hold more tokens than vLLM's
  scheduler takes in one step on a CPU (2048), so one is split across steps, as a run's batches
  of few-shot prompts are: that is where vLLM 0.32 on CPU moves a batched request's numbers
  (docs/evidence/probe.md).

A probe asks for as much as the wire gives, in this order: the prompt's own log-probabilities
(completion wires), the generated tokens' log-probabilities with their top-k, the generated text
alone. ``shape`` lowers each candidate and keeps the first the dialect does not refuse, so a
probe never sends what the wire would drop.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import msgspec

from ..dialects.vocabulary import Lowered
from ..errors import Refused
from ..ir.request import (
    ChatInput,
    CompletionInput,
    Message,
    Request,
    Sampling,
    Scoring,
    TextPart,
)
from ..model import Model, prepare

__all__ = [
    "BATCH",
    "GREEDY_TOKENS",
    "LONG",
    "SHORT",
    "TOP_K",
    "Probe",
    "is_probe",
    "lowered",
    "nonce",
    "shape",
    "with_sampling",
]


def lowered(model: Model, request: Request) -> Lowered:
    """``request`` as ``model`` sends a probe (its defaults applied, not the run's overrides:
    ``Model.probing``, lowered): no I/O, ``Refused`` when the wire cannot carry it."""
    return prepare(model.dialect, request, model.model_id, model.request_defaults)


SHORT = (
    "Water boils at one hundred degrees at sea level. On a high mountain the air is thinner, "
    "so water boils at a"
)

LONG = (
    "The lighthouse keeper wrote the same three lines in the log every evening: the time the "
    "lamp was lit, the direction of the wind, and the ships that passed before dark. In winter "
    "the entries were short, because the sea was empty and the wind came only from the north. "
    "In summer the pages filled with the names of fishing boats, ferries and the occasional "
    "sailing yacht that came too close to the rocks. The keeper's daughter, who learned to read "
    "from those pages, later counted every ship in forty years of logs and found that the "
    "busiest day had been a calm morning in June, when twenty-three boats passed the point "
    "before noon. She also noticed that her father never once wrote about the weather being "
    "beautiful; he wrote only what a sailor would need to know. When the light was automated, "
    "the last log book was sent to the museum in the harbour town, where it lies open at the "
    "final page. The last entry gives the time the lamp was lit, a light wind from the west, "
    "and one line more than usual: the keeper wrote that the sea was"
)

BATCH = LONG + "\n\n" + LONG

GREEDY_TOKENS = 8
"""Tokens a greedy probe generates: enough for a batch or a cache to change a choice."""

TOP_K = 5
"""Alternatives read at each generated position (a next-token score, as a CLP task reads)."""


def is_probe(body: object) -> bool:
    """Whether a wire body is one of the serving checks' probes (its prompt holds a probe text)."""
    text = repr(body)
    return any(probe[:60] in text for probe in (SHORT, LONG))


def nonce(rng: random.Random | None = None) -> str:
    """A fresh line before ``LONG``: its first send cannot be in any cache."""
    return f"Log {(rng or random.SystemRandom()).randrange(10**9):09d}.\n"


@dataclass(frozen=True)
class Probe:
    """A probe request the wire accepts, and what its replies can be compared on."""

    request: Request
    scores_prompt: bool
    """The reply holds the prompt's log-probabilities."""
    scores_tokens: bool
    """The reply holds each generated token's log-probability and top-k."""

    @property
    def numeric(self) -> bool:
        return self.scores_prompt or self.scores_tokens


def _inputs(text: str) -> tuple[CompletionInput | ChatInput, ...]:
    chat = ChatInput(messages=(Message(role="user", content=(TextPart(text=text),)),))
    return (CompletionInput(text=text), chat)


def shape(model: Model, text: str, sampling: Sampling, *, prompt: bool = True) -> Probe | None:
    """The most informative probe of ``text`` with ``sampling`` that ``model``'s dialect accepts
    (``prompt``: ask for the prompt's log-probabilities where the wire scores prompts), or None
    when it accepts no form (a wire that refuses the sampling itself)."""
    scorings = [
        (Scoring(sampled_logprobs=True, sampled_top_k=TOP_K), False, True),
        (Scoring(), False, False),
    ]
    if prompt:
        # one wire field can carry both top-ks (OpenAI's completions ``logprobs``): ask the same
        full = Scoring(
            input_logprobs=True, input_top_k=TOP_K, sampled_logprobs=True, sampled_top_k=TOP_K
        )
        scorings.insert(0, (full, True, True))
    for given in _inputs(text):
        for scoring, scores_prompt, scores_tokens in scorings:
            request = Request(input=given, sampling=sampling, scoring=scoring)
            try:
                lowered(model, request)
            except Refused:
                continue
            return Probe(request, scores_prompt, scores_tokens)
    return None


def with_sampling(probe: Probe, **fields: object) -> Request:
    """The probe's request with some sampling fields replaced."""
    sampling = msgspec.structs.replace(probe.request.sampling, **fields)
    return msgspec.structs.replace(probe.request, sampling=sampling)
