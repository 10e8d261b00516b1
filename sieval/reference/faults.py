"""Fault injection for the reference server (off by default).

A fault is set for the whole server (``ReferenceServer(faults="...")`` / ``sieval serve
--fault``) or per request with a header; the header wins. Grammar::

    x-sieval-fault: MODE [; OPTION=VALUE]...
    x-sieval-fault-key: ANY-STRING        (optional; groups requests for ``times``)

MODE                    effect
``429``                 429 with a ``Retry-After`` header and an OpenAI-style error body
``500`` / ``503``       that status with vLLM's error envelope
``reset``               200 headers, half the body (half the events of a stream), then the TCP
                        connection is aborted
``delay``               sleep ``seconds`` (default 30) before serving normally
``truncate``            200 ``application/json`` whose body is the reply cut in half; on a
                        stream, half the events and a clean end without the wire's terminator
``html``                an HTML error page; ``status=502`` (default) or ``status=200``
``short-prompt-logprobs``  the last ``prompt_logprobs`` position is dropped, and with echo
                        logprobs one prompt position (index 1) is dropped from all four lists
``topk-short``          one entry is dropped from every top-k dict (``top_logprobs`` and
                        ``prompt_logprobs``) that has at least two
``nan``                 every non-null logprob becomes ``NaN`` (the bare JSON token, as
                        Python's ``json`` writes it)
``usage-off``           ``usage.prompt_tokens`` (and ``total_tokens``) is one more than the echo
``usage-negative``      the prompt's token count is -100000 (a total moved with it: only the
                        sign is wrong), on every wire
``no-bos``              text prompts are tokenized without the BOS (``/tokenize`` still adds it),
                        as a server that drops special tokens would, on every wire
``stream-error``        a 200 stream whose second half is replaced by one error event in the
                        wire's own shape; a whole reply is a 500 (no stream to break)
``batch-variant``       numbers depend on how many requests arrived together (a batch)
``cache-variant``       a prompt whose start was seen before gets other numbers (a cache hit)
``nondeterministic``    every request gets other numbers
``fingerprint-changing``  every number differs from the normal server's, the same way each time
                        (the same build on another machine)
``sampling-default``    sampling fields a request leaves out get the server's own values
                        (temperature 0.7, top_p 0.8, top_k 20, repetition_penalty 1.3)
``tool-calls-as-text``  the server's tool parser fails: a call comes back as its
                        ``<tool_call>`` text in the answer, no call in the reply
``tool-call-dropped``   the parser loses the last of two or more calls (one call is kept)
``tool-calls-empty``    the parser finds the calls but returns an empty list: the reply says it
                        called (``tool_calls`` finish, ``tool_use`` stop) and lists none
``judge-unparseable``   a judge's verdict comes back in no parseable form (``[[seven]]``,
                        ``[[A?B]]``, ``GRADE: unclear``, JSON without its verdict fields)

``batch-variant`` to ``sampling-default`` are the serving checks' faults (``numerics.py``); they
change the model's numbers, never a reply's shape, so every reply still passes every check a
single reply can get. The tool-call and judge faults act where the reply is made (the parser of
``tool_calls.py``, the judge of ``judge.py``), so a stream loses what a whole reply does; a
request that calls no tool or asks for no verdict is answered normally.

Every mode applies to every wire, streamed or not. On a stream the four body modes alter
each event (``short-prompt-logprobs``, with no prompt positions in a stream, drops the
logprobs of one sampled position instead); ``429``, ``5xx``, ``html`` and ``delay`` come before
the first event, as a server's do. A wire with no logprobs channel (Anthropic's) has nothing for
``nan``, ``topk-short`` or ``short-prompt-logprobs`` to alter.

OPTION                  meaning
``times=N``             only the first N requests with the same key fail; later ones are served
                        normally (the key is ``x-sieval-fault-key``, else the fault text itself)
``retry-after=S``       the ``Retry-After`` header value for 429 / 503 (default 1 for 429)
``seconds=S``           the ``delay`` length
``status=N``            the ``html`` status

Example: ``x-sieval-fault: 429; times=2; retry-after=0`` with ``x-sieval-fault-key: t1`` gives
429, 429, then normal replies.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .wires import Wire

__all__ = [
    "BODY_MODES",
    "CUTS",
    "MODES",
    "NEGATIVE",
    "Fault",
    "FaultBook",
    "WithoutBos",
    "alter_events",
    "negative_count",
    "parse_fault",
]

MODES = frozenset(
    {
        "429",
        "500",
        "503",
        "reset",
        "delay",
        "truncate",
        "html",
        "short-prompt-logprobs",
        "topk-short",
        "nan",
        "usage-off",
        "usage-negative",
        "no-bos",
        "stream-error",
        "batch-variant",
        "cache-variant",
        "nondeterministic",
        "fingerprint-changing",
        "sampling-default",
        "tool-calls-as-text",
        "tool-call-dropped",
        "tool-calls-empty",
        "judge-unparseable",
    }
)
#: Modes that alter a normal reply's JSON body rather than replacing it.
BODY_MODES = frozenset(
    {"short-prompt-logprobs", "topk-short", "nan", "usage-off", "usage-negative"}
)

NEGATIVE = -100_000
"""The count the ``usage-negative`` fault reports."""


def negative_count(usage: Any, key: str, total: str | None = None) -> None:
    """The ``usage-negative`` fault on one usage object, in place: ``key`` (when it is there)
    becomes ``NEGATIVE``, ``total`` moved with it, so only the sign is wrong."""
    if not isinstance(usage, dict) or not isinstance(usage.get(key), int):
        return
    if total is not None and isinstance(usage.get(total), int):
        usage[total] += NEGATIVE - usage[key]
    usage[key] = NEGATIVE


@dataclass(frozen=True)
class Fault:
    """One parsed fault specification."""

    mode: str
    text: str
    options: dict[str, str] = field(default_factory=dict)

    def number(self, key: str, default: float) -> float:
        """A numeric option, or ``default``."""
        value = self.options.get(key)
        return default if value is None else float(value)


def parse_fault(text: str) -> Fault:
    """Parse ``MODE[; k=v]...``; raises ValueError naming the problem."""
    parts = [p.strip() for p in text.split(";") if p.strip()]
    if not parts:
        raise ValueError("empty x-sieval-fault")
    mode = parts[0].lower()
    if mode not in MODES:
        raise ValueError(f"unknown fault mode {mode!r}; known: {', '.join(sorted(MODES))}")
    options: dict[str, str] = {}
    for part in parts[1:]:
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"fault option {part!r} is not KEY=VALUE")
        options[key.strip().lower()] = value.strip()
    for key in ("times", "retry-after", "seconds", "status"):
        if key in options:
            try:
                float(options[key])
            except ValueError as exc:
                raise ValueError(f"fault option {key}={options[key]!r} is not a number") from exc
    return Fault(mode, text.strip(), options)


class FaultBook:
    """Counts requests per fault key, so ``times=N`` can stop failing after N."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def fires(self, fault: Fault, key: str | None) -> bool:
        """Whether this request should get the fault (and count it)."""
        if "times" not in fault.options:
            return True
        limit = int(fault.number("times", 0))
        k = key or fault.text
        with self._lock:
            count = self._seen.get(k, 0) + 1
            self._seen[k] = count
        return count <= limit


class WithoutBos:
    """A reference model whose ``tokenize`` never prepends the BOS (the ``no-bos`` fault): every
    wire tokenizes through its model, so every wire gets the fault, whatever its body says."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def tokenize(self, text: str, *, add_bos: bool = True) -> list[int]:
        return list(self._model.tokenize(text, add_bos=False))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


#: Modes that cut a stream short (half its events are sent).
CUTS = frozenset({"reset", "truncate", "stream-error"})
_LOGPROB_KEYS = frozenset(
    {"logprobs", "logprobsResult", "output_token_logprobs", "output_top_logprobs"}
)


def alter_events(
    wire: Wire, events: list[tuple[str | None, Any]], mode: str
) -> list[tuple[str | None, Any]]:
    """A stream with a body fault: ``wire.alter`` on every event (and on a typed event's whole
    ``response``); ``short-prompt-logprobs`` instead strips the logprobs of the last event that
    carries any (a stream has no prompt positions to drop; the last is what a cumulative
    stream such as SGLang's is read from)."""
    events = json.loads(json.dumps(events))  # the renderers' objects stay untouched
    if mode == "short-prompt-logprobs":
        carrying = [data for _, data in events if _has_logprobs(data)]
        if carrying:
            _strip_logprobs(carrying[-1])
        return [(name, data) for name, data in events]
    if wire.alter is not None:
        for _, data in events:
            if isinstance(data, dict):
                wire.alter(data, mode)
                if isinstance(data.get("response"), dict):
                    wire.alter(data["response"], mode)
    return [(name, data) for name, data in events]


def _has_logprobs(value: Any) -> bool:
    if isinstance(value, dict):
        return any((k in _LOGPROB_KEYS and v) or _has_logprobs(v) for k, v in value.items())
    return isinstance(value, list) and any(_has_logprobs(v) for v in value)


def _strip_logprobs(value: Any) -> None:
    """Empty every logprob-carrying field inside ``value``, in place."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _LOGPROB_KEYS and item:
                value[key] = [] if isinstance(item, list) else None
            else:
                _strip_logprobs(item)
    elif isinstance(value, list):
        for item in value:
            _strip_logprobs(item)
