"""The server's measured rate, and the time a forecast's tokens take at it.

Before a run (and in ``--dry-run``), a small probe of greedy requests measures how fast the
server reads a prompt (prefill, prompt tokens a second) and writes an answer (decode, generated
tokens a second), the token counts taken from each reply's ``usage``, the seconds from the
transport's own timing of the exchange:

* ``short``: a prompt of about ``SHORT_TOKENS`` tokens, ``max_tokens`` 1;
* ``medium``: about ``MEDIUM_TOKENS`` tokens, ``max_tokens`` 1: the two give the prefill rate
  (the difference in tokens over the difference in seconds) and the fixed cost of a request (what
  ``short`` took beyond its tokens);
* ``decode``: a short prompt asking for ``DECODE_TOKENS`` tokens: the tokens after the first over
  the time beyond ``short``'s prefill;
* ``long``, only when the run's prompts are longer (prefill slows with length where attention's
  cost grows with it, as on a CPU) and the run is long enough to pay for it: one more prompt at the
  run's typical length, at most ``LONG_SHARE`` of the run's forecast time and ``LONG_MOST_S``
  seconds; the prefill rate is then measured between ``short`` and it.

Every probe prompt begins with a fresh random word, so no prefix cache answers it. The
time of a unit is ``requests × per-request cost + prompt tokens / prefill + output tokens /
decode``: the requests one at a time (the run sends several at once where it may: a batching
server then generates faster, a compute-bound one reads prompts no faster), the output at its
maximum (``max_tokens × n``, which the model may not reach), the prefill at the length it was
measured at (longer prompts may read slower: the time is then a lower figure for them).

A rate is kept in ``$SIEVAL_CACHE/rates.json`` (``~/.cache/sieval``) under the server's identity
(its URL, model, dialect, engine, version and listing: the serving fingerprint's facts) and used
again within ``REUSE_S`` when it was measured at a prompt length at least half the one wanted.

The probe is sent by default only to a model with no ``price:`` on this machine or a private
network (a hosted API's probe may cost money): ``--rate-probe`` measures any model,
``--no-rate-probe`` none (the forecast then has no time).
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

import msgspec
from msgspec import UNSET

from ..ir.request import (
    ChatInput,
    CompletionInput,
    Message,
    Request,
    Sampling,
    Scheduling,
    TextPart,
)
from ..store.files import write_atomic

if TYPE_CHECKING:
    from ..model import Model
    from ..plan.plan import PlannedModel
    from ..tasks.base import ModelFacts
    from .forecast import Forecast, UnitForecast

__all__ = [
    "DECODE_TOKENS",
    "MEDIUM_TOKENS",
    "SHORT_TOKENS",
    "Observed",
    "ProbeFailed",
    "ServerRate",
    "duration",
    "limits",
    "local",
    "measure",
    "probe",
    "rate_from",
    "rate_line",
    "reach",
    "typical_prompt",
    "why_not",
]

SHORT_TOKENS = 32
MEDIUM_TOKENS = 256
DECODE_TOKENS = 16
LONG_SHARE = 0.05
"""The most of the run's forecast time the ``long`` probe may take."""
LONG_MOST_S = 60.0
"""The most the ``long`` probe may take, however long the run."""
REUSE_S = 1800.0
"""How long a measured rate is used again for the same server."""
RATES_FILE = "rates.json"

_WORDS = (
    "apple", "river", "stone", "cloud", "green", "seven", "table", "music", "paper", "window",
    "garden", "little", "bright", "morning", "yellow", "silver", "letter", "summer", "winter",
)  # fmt: skip


class Observed(msgspec.Struct, frozen=True):
    """One probe request: its prompt and output tokens as the server counted them, and the
    seconds the exchange took."""

    prompt_tokens: int
    output_tokens: int
    seconds: float


class ServerRate(msgspec.Struct, kw_only=True):
    """A model's server rate as measured (or why there is none): what ``forecast.json`` keeps."""

    model: str
    prefill: float | None = None
    """Prompt tokens read a second (None: not measured, ``note`` says why)."""
    decode: float | None = None
    """Tokens generated a second after the first (None: the probe's answer was one token)."""
    latency: float = 0.0
    """Seconds a request takes beyond its tokens (connection, scheduling, the first token)."""
    at_tokens: int = 0
    """The prompt length (tokens) the prefill rate was measured at: its longer probe's."""
    requests: int = 0
    """Probe requests sent (0: reused or not measured)."""
    seconds: float = 0.0
    """The probe's wall time."""
    measured: float = 0.0
    """When it was measured (Unix time)."""
    reused: bool = False
    """Taken from an earlier measurement of the same server (``rates.json``)."""
    server: str = ""
    """The server identity it was kept under (a sha256 of the serving facts)."""
    note: str = ""
    """Why there is no rate, or what limits it."""

    @property
    def known(self) -> bool:
        return self.prefill is not None

    def seconds_of(self, requests: int, prompt: int, output: int) -> float | None:
        """The seconds ``requests`` requests take one at a time with these tokens (None with no
        rate); with no decode rate, the output tokens count nothing (a lower figure)."""
        if self.prefill is None:
            return None
        out = output / self.decode if self.decode else 0.0
        return requests * self.latency + prompt / self.prefill + out

    def said(self, now: float) -> str:
        """How it was come by, for a reader: ``measured just now on this server (3 requests,
        2.9 s)`` or ``measured 12 min ago on this server (same URL, engine, version and model),
        used again``."""
        if not self.known:
            return self.note
        if self.reused:
            return (
                f"measured {duration(now - self.measured)} ago on this server (same URL, engine, "
                "version and model), used again"
            )
        return f"measured just now on this server ({self.requests} requests, {self.seconds:.1f} s)"


def rate_from(
    short: Observed, medium: Observed, decode: Observed | None
) -> tuple[float, float | None, float]:
    """``(prefill, decode, latency)`` from the probe's observations: prefill between ``short``
    and ``medium`` (the longer one's own tokens over its seconds when the difference is not
    positive: a lower figure), the latency what ``short`` took beyond its prefill (never below
    0), decode the tokens after the first over the time beyond prefill and latency (None when
    the answer was one token)."""
    tokens = medium.prompt_tokens - short.prompt_tokens
    spent = medium.seconds - short.seconds
    if tokens > 0 and spent > 0:
        prefill = tokens / spent
    else:
        prefill = medium.prompt_tokens / max(medium.seconds, 1e-9)
    latency = max(0.0, short.seconds - short.prompt_tokens / prefill)
    rate: float | None = None
    if decode is not None and decode.output_tokens > 1:
        extra = decode.output_tokens - 1
        beyond = decode.seconds - latency - decode.prompt_tokens / prefill
        rate = extra / beyond if beyond > 0 else extra / max(decode.seconds, 1e-9)
    return prefill, rate, latency


def duration(seconds: float) -> str:
    """``<1 s``, ``42 s``, ``7.5 min``, ``2.3 h``."""
    if seconds < 0.5:
        return "<1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min" if seconds < 600 else f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def typical_prompt(units: Sequence[UnitForecast]) -> int:
    """The prompt length (tokens) of the request the run's typical prompt token is in: each
    unit's mean prompt, weighted by its tokens (the long prompts weigh most, as in the time)."""
    total = sum(u.prompt_tokens for u in units if u.requests)
    if not total:
        return 0
    return round(sum(u.prompt_tokens**2 / u.requests for u in units if u.requests) / total)


def local(url: str) -> bool:
    """The URL's host is this machine or a private network (where a probe costs nothing)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


class Ask(Protocol):
    """Send a probe of about ``tokens`` prompt tokens asking ``max_tokens`` (within
    ``timeout_s``); what it took, or ``ProbeFailed``."""

    def __call__(
        self, tokens: int, max_tokens: int, timeout_s: float | None = None
    ) -> Awaitable[Observed]: ...


async def probe(ask: Ask, typical: int, run_tokens: float) -> tuple[ServerRate, list[Observed]]:
    """The probe through ``ask``: ``short``, ``medium``, ``decode`` and, for a run whose typical
    prompt is longer than ``medium`` and whose time (``run_tokens`` prompt tokens at the first
    rate) pays for it, ``long``. The rate has no model label nor times yet."""
    short = await ask(SHORT_TOKENS, 1)
    medium = await ask(MEDIUM_TOKENS, 1)
    decode = await ask(SHORT_TOKENS, DECODE_TOKENS)
    seen = [short, medium, decode]
    prefill, generated, latency = rate_from(short, medium, decode)
    at = medium.prompt_tokens
    if typical > 1.5 * medium.prompt_tokens:
        length = reach(typical, run_tokens, prefill)
        if length > 1.5 * medium.prompt_tokens:
            try:  # a prompt reading slower than at half the speed is cut at the budget
                long = await ask(length, 1, 2 * LONG_MOST_S)
            except ProbeFailed:
                pass  # the medium prompt's rate stands, said a lower figure for longer ones
            else:
                seen.append(long)
                prefill, generated, latency = rate_from(short, long, decode)
                at = long.prompt_tokens
    rate = ServerRate(
        model="",
        prefill=prefill,
        decode=generated,
        latency=latency,
        at_tokens=at,
        requests=len(seen),
    )
    return rate, seen


def limits(rate: ServerRate, typical: int) -> str:
    """What limits the time at ``rate`` for a run whose typical prompt is ``typical`` tokens."""
    said = []
    if rate.at_tokens < 0.9 * typical:
        said.append(
            f"the run's prompts are longer (about {typical:,} tokens): where attention's cost "
            "grows with length (a CPU) they read slower, and the time is a lower figure"
        )
    if rate.decode is None:
        said.append("the probe's answer was one token: no decode rate, the output counts no time")
    return "; ".join(said)


def reach(typical: int, run_tokens: float, prefill: float) -> int:
    """The prompt length the probe measures prefill at, for a run of ``run_tokens`` prompt
    tokens whose typical prompt is ``typical`` tokens, on a server reading ``prefill`` a
    second: ``MEDIUM_TOKENS``, or a longer prompt the run pays for (``LONG_SHARE``)."""
    if typical <= 1.5 * MEDIUM_TOKENS:
        return MEDIUM_TOKENS
    budget = min(LONG_MOST_S, LONG_SHARE * run_tokens / prefill)
    length = min(typical, int(budget * prefill / 2))  # it may read at half the speed there
    return length if length > 1.5 * MEDIUM_TOKENS else MEDIUM_TOKENS


def probe_text(tokens: int) -> str:
    """About ``tokens`` tokens of common words, after a random word no cache has seen."""
    words = [_WORDS[(i * 7) % len(_WORDS)] for i in range(max(tokens - 4, 1))]
    return f"{secrets.token_hex(4)} " + " ".join(words)


def asker(model: Model, chat: bool) -> Ask:
    """``Ask`` through ``model``: a raw text prompt (one user message on a chat wire), greedy."""

    async def ask(tokens: int, max_tokens: int, timeout_s: float | None = None) -> Observed:
        text = probe_text(tokens)
        if max_tokens > 1:
            text += "\nCount from 1 to 100, separated by commas: 1, 2, 3,"
        given: ChatInput | CompletionInput = (
            ChatInput(messages=(Message(role="user", content=(TextPart(text=text),)),))
            if chat
            else CompletionInput(text=text)
        )
        sampling = Sampling(temperature=0.0, max_tokens=max_tokens)
        within = Scheduling(timeout_s=timeout_s) if timeout_s is not None else Scheduling()
        request = Request(input=given, sampling=sampling, scheduling=within)
        call = await model.probing().call(request)  # greedy, max_tokens as asked: no --gen-kwargs
        usage = call.response.usage if call.response is not None else None
        if call.error is not None or usage is None or call.timings is None:
            raise ProbeFailed(call.error.message if call.error else "no usage in the reply")
        if usage.input_tokens is UNSET or usage.output_tokens is UNSET:
            raise ProbeFailed("the reply's usage has no token counts")
        return Observed(int(usage.input_tokens), int(usage.output_tokens), call.timings.total_s)

    return ask


class ProbeFailed(Exception):
    """A probe request failed or its reply did not count its tokens."""


def _cache_file() -> Path:
    root = os.environ.get("SIEVAL_CACHE") or str(Path.home() / ".cache" / "sieval")
    return Path(root) / RATES_FILE


def _kept() -> dict[str, ServerRate]:
    try:
        return msgspec.json.decode(_cache_file().read_bytes(), type=dict[str, ServerRate])
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return {}


def _keep(key: str, rate: ServerRate) -> None:
    """``rate`` kept under ``key``, the rates too old to be used again dropped (the file stays
    small however many servers were probed)."""
    kept = {k: r for k, r in _kept().items() if rate.measured - r.measured < REUSE_S}
    kept[key] = rate
    path = _cache_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, msgspec.json.encode(kept))
    except OSError:
        pass  # a rate not kept is measured again next time


async def _server_key(model: Model) -> str:
    from ..serving.fingerprint import server_facts

    facts = await server_facts(model)
    said = msgspec.json.encode(
        [model.base_url, model.model_id, facts.dialect, facts.engine, facts.version, facts.model]
    )
    return hashlib.sha256(said).hexdigest()[:16]


def why_not(choice: bool | None, pm: PlannedModel, url: str) -> str | None:
    """Why ``pm`` is not probed, or None: ``choice`` True (``--rate-probe``) probes any model,
    False (``--no-rate-probe``) none, None one with no price on this machine or a private
    network."""
    if choice is True:
        return None
    if choice is False:
        return "no time: the server's rate was not measured (--no-rate-probe)"
    if pm.config.price is not None:
        return "no time: the model has a price, so its rate is not probed (--rate-probe does)"
    if not local(url):
        return "no time: a hosted server's rate is not probed (a probe may cost; --rate-probe does)"
    return None


async def measure(
    forecast: Forecast,
    models: Sequence[PlannedModel],
    clients: Mapping[str, Model],
    facts: Mapping[str, ModelFacts],
    choice: bool | None,
    stage: Callable[[str], None],
    now: Callable[[], float] = time.time,
) -> None:
    """Each model's rate into ``forecast.rates`` (reused, measured, or why not), and each of its
    units' ``seconds`` at that rate, with a stage line a model."""
    for pm in models:
        model = clients[pm.label]
        units = [u for u in forecast.units if u.model == pm.label and u.role is None]
        typical = typical_prompt(units)
        tokens = sum(u.prompt_tokens for u in units)
        why = why_not(choice, pm, model.base_url)
        rate = ServerRate(model=pm.label, note=why or "")
        if why is None:
            chat = facts[pm.label].input_kind == "chat"
            rate = await _rate_of(pm, model, chat, typical, tokens, choice, stage, now)
        if rate.known:
            rate.note = limits(rate, typical)
        forecast.rates.append(rate)
        for u in units:
            u.seconds = rate.seconds_of(u.requests, u.prompt_tokens, u.max_output_tokens)
        if rate.known:
            total = sum(u.seconds or 0.0 for u in units)
            stage(f"time for {pm.label}: about {duration(total)}, {rate_line(rate, now())}")
        else:
            stage(f"time for {pm.label}: {rate.note}")


async def _rate_of(
    pm: PlannedModel,
    model: Model,
    chat: bool,
    typical: int,
    tokens: int,
    choice: bool | None,
    stage: Callable[[str], None],
    now: Callable[[], float],
) -> ServerRate:
    from ..errors import SievalError

    try:
        key = await _server_key(model)
    except SievalError:
        key = ""
    if key and choice is None:
        kept = _kept().get(key)
        if (
            kept is not None
            and kept.prefill is not None
            and now() - kept.measured < REUSE_S
            and kept.at_tokens >= 0.5 * reach(typical, tokens, kept.prefill)
        ):
            return msgspec.structs.replace(kept, model=pm.label, reused=True, requests=0)
    stage(f"measuring {pm.label}'s rate: a few greedy requests of known length")
    started = time.perf_counter()
    try:
        rate, _ = await probe(asker(model, chat), typical, tokens)
    except ProbeFailed as exc:
        return ServerRate(model=pm.label, note=f"no time: the rate probe failed ({exc})")
    rate.model, rate.server, rate.measured = pm.label, key, round(now(), 3)
    rate.seconds = round(time.perf_counter() - started, 3)
    if key:
        _keep(key, rate)
    return rate


def rate_line(rate: ServerRate, now: float) -> str:
    """``190 prompt tokens/s (at 256-token prompts) and 12 tokens/s generated, 0.1 s a request;
    measured just now on this server (3 requests, 2.9 s)``."""
    generated = f"{rate.decode:,.1f} tokens/s generated" if rate.decode else "no decode rate"
    return (
        f"{rate.prefill or 0:,.0f} prompt tokens/s (at {rate.at_tokens:,}-token prompts) and "
        f"{generated}, {rate.latency:.2f} s a request; {rate.said(now)}"
    )
