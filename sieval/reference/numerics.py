"""Numeric faults: a reference server whose numbers depend on what they should not.

Real servers' numerics move with things a harness does not control: a request batched with
others (vLLM on CPU, bf16: 222 of 399 ARC log-likelihoods moved, up to 1.93 nats), a prefix read
from the cache, a kernel that is not deterministic, another machine. These modes make the
reference server do the same, so that each of sieval's serving checks can be seen to fail:

``batch-variant``         a request that arrives within ``BATCH_WINDOW_S`` of others is computed
                          "in a batch": its numbers depend on the batch's size
``cache-variant``         a prompt whose first ``CACHE_BLOCK`` characters the server has seen
                          before is computed "from the cache": its numbers differ from the first
                          (unless it asks for the prompt's log-probabilities: vLLM computes those
                          again)
``nondeterministic``      every request's numbers differ (a fresh perturbation each time)
``fingerprint-changing``  every number differs from the normal server's, the same way each time
                          (the same build on another machine)
``sampling-default``      fields a request leaves out get the server's own defaults
                          (``SAMPLING_DEFAULTS``), as vLLM applies a model's
                          ``generation_config.json``

A perturbed model shifts each next-token log-probability by up to ``SCALE`` nats (a fixed
pseudo-random amount per salt, context and token) and renormalises, so every reply stays a
valid distribution: log-probabilities at most 0, top-k lists sorted and consistent, greedy the
argmax. Only the distributions change; tokenization never does.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Sequence
from typing import Any, cast

from .lm import Distribution, ReferenceModel

__all__ = [
    "BATCH_WINDOW_S",
    "CACHE_BLOCK",
    "NUMERIC_MODES",
    "SAMPLING_DEFAULTS",
    "SCALE",
    "NumericFaults",
    "Perturbed",
]

NUMERIC_MODES = frozenset(
    {"batch-variant", "cache-variant", "nondeterministic", "fingerprint-changing"}
)

SCALE = 0.5
"""The largest shift of one log-probability before renormalising, in nats: enough to flip a
greedy choice between close candidates, as batching does on a real server."""

BATCH_WINDOW_S = 0.05
"""Requests arriving within this of each other share a batch (a scheduler's step)."""

CACHE_BLOCK = 200
"""Characters of a prompt that must have been seen before for a request to hit the cache (about
50 tokens: a prefix cache stores whole blocks, so a short prompt is never served from it)."""

SAMPLING_DEFAULTS: dict[str, float] = {
    "temperature": 0.7,
    "top_p": 0.8,
    "top_k": 20,
    "repetition_penalty": 1.3,
}
"""What ``sampling-default`` fills in for a field the request leaves out (the shape of a model's
``generation_config.json``; each value differs from the neutral one a harness assumes)."""

_CACHE_SIZE = 4096


class Perturbed:
    """A reference model whose every next-token distribution is shifted by a fixed pseudo-random
    amount per (salt, last two context tokens, token), then renormalised. Delegates the rest."""

    def __init__(self, model: ReferenceModel, salt: str, scale: float = SCALE) -> None:
        self._model = model
        self._salt = salt
        self._scale = scale
        self._cache: OrderedDict[tuple[int, ...], Distribution] = OrderedDict()
        self._lock = threading.Lock()

    def distribution(self, context: Sequence[int]) -> Distribution:
        key = tuple(context[-2:])
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        base = self._model.distribution(context).logprobs
        seed = hashlib.sha256(f"{self._salt}|{key}".encode()).digest()
        rng = random.Random(seed)
        shifted = [x + self._scale * (2.0 * rng.random() - 1.0) for x in base]
        top = max(shifted)
        log_total = top + math.log(math.fsum(math.exp(x - top) for x in shifted))
        dist = Distribution([min(0.0, x - log_total) for x in shifted])
        with self._lock:
            self._cache[key] = dist
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return dist

    def logprobs_next(self, context_ids: Sequence[int]) -> list[float]:
        return self.distribution(context_ids).logprobs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


_PROMPT_KEYS = ("prompt", "messages", "input", "text", "input_ids", "contents")


def prompt_material(body: Any) -> str:
    """The part of a request body that holds its prompt, as text (any wire)."""
    if not isinstance(body, dict):
        return ""
    for key in _PROMPT_KEYS:
        if key in body:
            value = body[key]
            return value if isinstance(value, str) else repr(value)
    return ""


def scores_prompt(body: Any) -> bool:
    """Whether a request asks for its prompt's log-probabilities, which vLLM 0.32 never reads
    from its prefix cache (it computes the prompt again): such a request never hits the cache."""
    if not isinstance(body, dict):
        return False
    echo = bool(body.get("echo")) and body.get("logprobs") is not None
    sglang = bool(body.get("return_logprob")) and body.get("logprob_start_len", -1) != -1
    return echo or body.get("prompt_logprobs") is not None or sglang


class NumericFaults:
    """The server-wide state the numeric modes need: recent arrivals (batches), prompts seen
    (the cache), and one perturbed model per salt."""

    def __init__(self) -> None:
        self._arrivals: deque[float] = deque()
        self._seen: set[str] = set()
        self._models: dict[str, Perturbed] = {}
        self._lock = threading.Lock()

    def _perturbed(self, model: ReferenceModel, salt: str) -> ReferenceModel:
        with self._lock:
            found = self._models.get(salt)
            if found is None or found._model is not model:
                found = self._models[salt] = Perturbed(model, salt)
            return cast(ReferenceModel, found)

    async def _batch_size(self) -> int:
        """How many requests arrived within ``BATCH_WINDOW_S`` of this one (itself included)."""
        now = time.monotonic()
        self._arrivals.append(now)
        await asyncio.sleep(BATCH_WINDOW_S)
        while self._arrivals and self._arrivals[0] < now - 2 * BATCH_WINDOW_S:
            self._arrivals.popleft()
        # sequential requests arrive at least a window apart; concurrent ones within half of it
        return sum(1 for t in self._arrivals if abs(t - now) <= BATCH_WINDOW_S / 2)

    def _cache_hit(self, body: Any) -> bool:
        text = prompt_material(body)
        if len(text) < CACHE_BLOCK:
            return False
        block = text[:CACHE_BLOCK]
        with self._lock:
            hit = block in self._seen
            self._seen.add(block)
        return hit and not scores_prompt(body)

    async def model_for(self, mode: str, body: Any, model: ReferenceModel) -> ReferenceModel:
        """The model that computes this request under ``mode`` (``model`` itself when the mode
        leaves this request's numbers alone)."""
        if mode == "batch-variant":
            size = await self._batch_size()
            return model if size <= 1 else self._perturbed(model, f"batch-{size}")
        if mode == "cache-variant":
            return self._perturbed(model, "cache") if self._cache_hit(body) else model
        if mode == "nondeterministic":
            return cast(ReferenceModel, Perturbed(model, uuid.uuid4().hex))
        if mode == "fingerprint-changing":
            return self._perturbed(model, "another-machine")
        return model
