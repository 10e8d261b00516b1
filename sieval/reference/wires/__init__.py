"""The wires the reference server speaks, one module per family, composed by ``server.py``.

A wire is data: its routes (each a pure ``render(body, context) -> Reply``), how it checks a key,
its error envelope, and the faults that alter its replies. The server applies auth, faults and
replay as middleware parameterised by the wire, so a new wire never copies a handler.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..lm import ReferenceModel

__all__ = ["Context", "Reply", "Route", "Wire", "WireError"]


class WireError(Exception):
    """An error reply to send: the HTTP status and the wire's own envelope."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(str(body))
        self.status = status
        self._body = body

    def body(self) -> Any:
        return self._body


@dataclass
class Context:
    """What a route may read: the server's settings and its model."""

    served_model: str
    model: ReferenceModel
    max_model_len: int = 4096
    max_logprobs: int = 100
    server_rng: random.Random = field(default_factory=lambda: random.Random(0))
    sampling_defaults: Mapping[str, float] = field(default_factory=dict)
    """The server's own values for sampling fields a request leaves out (the
    ``sampling-default`` fault; a real server's come from the model's generation config)."""
    tool_fault: str | None = None
    """A tool-call parser fault (``tool_calls.PARSER_FAULTS``): calls come back lost."""
    judge_fault: bool = False
    """The ``judge-unparseable`` fault: a judge's verdict comes back in no parseable form."""


@dataclass(frozen=True)
class Reply:
    """A route's answer: one JSON body, or SSE events (``(event name or None, data)``)."""

    body: Any = None
    events: list[tuple[str | None, Any]] | None = None
    terminator: bytes | None = b"data: [DONE]\n\n"
    """Written after the events (OpenAI-style ``[DONE]``; ``None`` for typed-event wires)."""
    status: int = 200
    content_type: str = "application/json"


Render = Callable[[Any, Context], Reply]


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    render: Render
    """``body`` is the decoded JSON object of a POST, ``None`` for a GET."""
    faults: bool = True
    """Whether injected faults apply (a model route); off for side routes such as tokenize."""
    model_param: str | None = None
    """The path parameter naming the model (Google's ``{model}``): the server answers only to its
    own model id there, with the wire's ``unknown_model`` error otherwise."""


@dataclass(frozen=True)
class Wire:
    """One wire family as the server composes it."""

    name: str
    routes: tuple[Route, ...]
    error: Callable[[int, str, str], Any]
    """``(status, message, kind) -> envelope``: the body of an error this wire sends."""
    bad_json: Callable[[str | None], WireError]
    """The error for a body that is not JSON (the decode error) or not an object (None)."""
    guarded: tuple[str, ...] = ()
    """Path prefixes that need the key when the server has one."""
    authorized: Callable[[Mapping[str, str], str], bool] = lambda headers, key: False
    unauthorized: tuple[int, Any] = (401, {"error": "Unauthorized"})
    alter: Callable[[Any, str], None] | None = None
    """Applies a body fault mode (``nan``, ``topk-short``, ...) to a reply body, in place."""
    unknown_model: Callable[[str, str], WireError] | None = None
    """``(model named in the path, route path) -> error``: a model the server does not serve."""
