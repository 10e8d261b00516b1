"""``Model`` = dialect + transport: ``await model.call(Request) -> Call``.

Typical use, one ``Model`` for the whole run:

    async with Model(dialect="openai_completions", base_url="http://127.0.0.1:8000",
                     model_id="gemma-3-270m") as model:
        call = await model.call(Request.completion("2+2=", sampling=Sampling(max_tokens=4)))
        print(call.body, call.ledger)        # what was sent, and why each leaf went where
        response = call.result()             # the checked Response, or the typed error raised

Every active request leaf is decided before a byte is sent (``Refused`` otherwise), the reply is
checked before it is believed (``ContractViolation``), and the ``Call`` keeps what happened either
way: the lowering, the redacted body, the status, attempts and timings, the response or the error.
``run()`` is ``call()`` followed by ``result()``.

The model id the server reports is pinned by the first reply that names one: a later reply naming
another model (a proxy that switched deployments mid-run) is a ``ContractViolation``, so one
run's figures never merge two models. Every dialect passes through ``call()``, so the check is
made here once, not per wire.

With ``chat_template=True`` a model on a completion wire takes a chat request as a chat wire
would (``--apply-chat-template``): its messages are rendered by the server's own chat template
through its tokenize route (vLLM's ``POST /tokenize`` with ``messages`` and the generation
prompt), and the token ids it answers are sent as the prompt. Token ids, not text: the template
writes the BOS itself, and a text prompt would be given a second one by the completions route,
while a prompt of ids is sent as it is. A model without the flag refuses a chat request on a
completion wire, as the dialect's table says.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from .dialects.auth_hint import rejected_key
from .dialects.registry import get_dialect
from .dialects.table import lift, lower
from .dialects.vocabulary import (
    Auth,
    Dialect,
    Lowered,
    Refuse,
    chat_tokenize_body,
    tokenized,
)
from .errors import ConfigError, ContractViolation, Refused, ServerRejected, SievalError
from .ir.defaults import with_defaults, with_overrides
from .ir.request import ChatInput, CompletionInput, Message, Request, TextPart
from .ir.response import Decision, Response
from .setting_names import named, setting
from .transport import (
    HttpReply,
    HttpRequest,
    HttpTransport,
    Limits,
    Timeouts,
    Timings,
    Transport,
    WireLog,
)
from .transport.redaction import redact_json, redact_url
from .transport.refused_reply import kept_reply

__all__ = ["RENDERED_KEPT", "Call", "Model", "prepare"]

RENDERED_KEPT = 4096
"""Chat prompts whose rendering (``Model.render_chat``) a model keeps, the latest: the forecast's
count and the call then ask the server once, and a replay finds the ids sent."""


@dataclass(frozen=True)
class Call:
    """One model call as it happened: what was decided and sent, and what came back."""

    request: Request
    """The request with the model's defaults applied (what was lowered)."""
    dialect: str
    url: str
    """The URL posted to, secrets redacted (empty when refused before I/O)."""
    body: dict[str, Any] | None
    """The wire body sent, secrets redacted (``None`` when refused before it was complete)."""
    ledger: tuple[Decision, ...]
    """The dialect's decision for every active leaf (up to the refusal, when refused)."""
    response: Response | None = None
    error: SievalError | None = None
    status: int | None = None
    """The HTTP status of the last attempt (``None`` when nothing was answered)."""
    attempts: int = 0
    timings: Timings | None = None
    reported_model: str | None = None
    """The model id the reply named (kept when the reply was refused for naming another)."""
    reply: str | None = None
    """A refused reply's bytes (``ContractViolation``), bounded and redacted (``kept_reply``)."""
    replica: str | None = None
    """The replica that answered (its base URL redacted), for a model served by several."""
    raw: bytes | None = field(default=None, repr=False)
    """The reply's body as received (``None`` when nothing was answered): what a call journal
    keeps so that a resumed run lifts it again (``Model.replay``). Not redacted: write it only
    through ``redact``."""

    @property
    def ok(self) -> bool:
        return self.response is not None

    def result(self) -> Response:
        """The response, or the call's error raised."""
        if self.response is None:
            assert self.error is not None
            raise self.error
        return self.response


def prepare(
    dialect: Dialect,
    request: Request,
    model_id: str,
    defaults: Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
) -> Lowered:
    """A request with a model's defaults and overrides applied, lowered (pure, no I/O;
    ``Refused`` on refusal)."""
    return lower(
        dialect, with_overrides(with_defaults(request, defaults), overrides or {}), model_id
    )


class Model:
    """One model behind one endpoint, reached through one dialect.

    Made alone, it opens its own transport, which caps its requests on the wire at
    ``limits.concurrency``. Given a ``transport``, it sends through that one (``limits`` is then
    unused): in a run, every model that reaches one server sends through a transport on that
    server's shared pool, and the scheduler holds the server's budget (``runner/endpoints.py``).
    """

    def __init__(
        self,
        *,
        dialect: str | Dialect,
        base_url: str,
        model_id: str,
        api_key: str | None = None,
        limits: Limits | None = None,
        timeouts: Timeouts | None = None,
        request_defaults: Mapping[str, Any] | None = None,
        request_overrides: Mapping[str, Any] | None = None,
        wire_log: WireLog | str | Path | None = None,
        transport: Transport | None = None,
        headers: Mapping[str, str] | None = None,
        auth: Auth | None = None,
        chat_template: bool = False,
    ) -> None:
        self.chat_template = chat_template and not self.takes_chat(dialect)
        """A chat request is rendered by the server's chat template and sent as token ids."""
        self._rendered: dict[bytes, tuple[int, ...]] = {}
        self.dialect = get_dialect(dialect) if isinstance(dialect, str) else dialect
        self.base_url = base_url.rstrip("/")
        self.model_id = model_id
        self._secrets = (api_key,) if api_key else ()
        self.request_defaults = dict(request_defaults or {})
        self.request_overrides = dict(request_overrides or {})
        self.auth = auth or self.dialect.auth
        self.headers = {**dict(headers or {}), **self.auth.headers(api_key)}
        self.timeouts = timeouts or Timeouts()
        self.limits = limits or Limits()
        self._transport = transport or HttpTransport(
            timeouts=self.timeouts, limits=self.limits, wire_log=wire_log
        )
        self._shown = redact_url(self.base_url, self._secrets)
        self.reported_model: str | None = None
        """The model id the first reply named; every later reply must name the same."""

    @staticmethod
    def takes_chat(dialect: str | Dialect) -> bool:
        """Whether ``dialect``'s wire takes chat messages (a chat wire)."""
        table = get_dialect(dialect) if isinstance(dialect, str) else dialect
        return not isinstance(table.row_for("input.chat.messages"), Refuse)

    def probing(self) -> Model:
        """This model sending each request as it is given, its ``request_overrides``
        (``--gen-kwargs``) left off: a probe (the serving checks, the rate probe) decides its own
        sampling. A run's ``temperature=0.7`` over the greedy probes made them sampled, and the
        checks' findings (server defaults, determinism, the numerics fingerprint) false."""
        if not self.request_overrides:
            return self
        view = copy.copy(self)
        view.request_overrides = {}
        return view

    def pin_reported(self, model: str) -> None:
        """Expect every reply to name ``model`` (a resumed run's earlier replies named it)."""
        self.reported_model = model

    @property
    def secrets(self) -> tuple[str, ...]:
        """The strings redacted from everything this model writes or raises."""
        return self._secrets

    def __repr__(self) -> str:
        return (
            f"Model(dialect={self.dialect.id!r}, base_url={self._shown!r}, "
            f"model_id={self.model_id!r})"
        )

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def run(self, request: Request) -> Response:
        """Decide, send, check: the Response, or the error the call earned (``Refused`` before
        any I/O)."""
        return (await self.call(request)).result()

    async def call(self, request: Request) -> Call:
        """Decide, send, check, and keep what happened; sieval errors are kept, not raised."""
        request = self._as_sent(request)
        if self.chat_template and isinstance(request.input, ChatInput):
            try:
                request = await self._templated(request)
            except SievalError as exc:
                return Call(request, self.dialect.id, "", None, (), error=self._own(exc))
        try:
            lowered = lower(self.dialect, request, self.model_id)
        except Refused as exc:
            return Call(request, self.dialect.id, "", None, tuple(exc.ledger), error=self._own(exc))
        url = self.base_url + lowered.path
        timeout: Timeouts | None = None
        if request.scheduling.timeout_s is not msgspec.UNSET:
            budget = float(request.scheduling.timeout_s)
            timeout = msgspec.structs.replace(self.timeouts, total=budget, read=budget)
        http = HttpRequest(
            url=url,
            method=lowered.method,
            headers=self.headers,
            body=msgspec.json.encode(lowered.body),
            stream=lowered.stream,
            secrets=self._secrets,
            timeout=timeout,
            overload=self.dialect.retry.overload,
            in_band=self.dialect.retry.in_band if lowered.stream else None,  # errors ride streams
        )
        try:
            reply = await self._transport.send(http)
        except SievalError as exc:
            return self._answered(request, lowered, None, exc)
        return self._answered(request, lowered, reply, None)

    def replay(self, request: Request, reply: HttpReply) -> Call:
        """A reply received earlier (a call journal's) to ``request``, decided and checked again
        exactly as ``call`` decides and checks a fresh one; nothing is sent."""
        request = self._as_sent(request)
        if self.chat_template and isinstance(request.input, ChatInput):
            ids = self._rendered.get(_messages_key(request.input))
            if ids is not None:  # rendered before by this model; else refused, and sent again
                request = msgspec.structs.replace(request, input=CompletionInput(token_ids=ids))
        try:
            lowered = lower(self.dialect, request, self.model_id)
        except Refused as exc:
            return Call(request, self.dialect.id, "", None, tuple(exc.ledger), error=self._own(exc))
        return self._answered(request, lowered, reply, None)

    def _as_sent(self, request: Request) -> Request:
        """``request`` with this model's defaults filled and its overrides set: what ``call``
        lowers, and so what ``replay`` must lower to find the same body."""
        return with_overrides(with_defaults(request, self.request_defaults), self.request_overrides)

    def _answered(
        self,
        request: Request,
        lowered: Lowered,
        reply: HttpReply | None,
        error: SievalError | None,
    ) -> Call:
        """The ``Call`` of an exchange: the reply lifted and its model checked (this is the
        per-request hot path: one ``Call`` built once)."""
        response: Response | None = None
        reported: str | None = None
        if reply is not None:
            try:
                response = lift(self.dialect, lowered, reply.status, reply.headers, reply.body)
                if isinstance(response.model, str):
                    reported = response.model
                    self._check_reported(reported)
            except SievalError as exc:
                error = exc
                response = None
        if error is not None:
            error = self._own(error)
            if isinstance(error, ServerRejected) and error.status in (401, 403):
                self._explain_auth(error)
        return Call(
            request=request,
            dialect=self.dialect.id,
            url=self._shown + lowered.path,  # the base URL redacted once; paths hold no secret
            body=redact_json(lowered.body, self._secrets) if self._secrets else lowered.body,
            ledger=lowered.ledger,
            response=response,
            error=error,
            status=reply.status if reply is not None else None,
            attempts=reply.attempts if reply is not None else getattr(error, "attempts", 1),
            timings=reply.timings if reply is not None else None,
            reported_model=reported,
            reply=(
                kept_reply(reply.body, self._secrets)
                if reply is not None and isinstance(error, ContractViolation)
                else None
            ),
            replica=reply.replica if reply is not None else None,
            raw=reply.body if reply is not None else None,
        )

    def _explain_auth(self, exc: ServerRejected) -> None:
        """A refused key's message says how it was sent and the other scheme to try."""
        fix = rejected_key(self.auth, self.dialect.auth, key_sent=bool(self._secrets))
        exc.message = f"{exc.message}; {fix}"
        exc.args = (exc.message,)

    def _check_reported(self, reported: str) -> None:
        if self.reported_model is None:
            self.reported_model = reported
            return
        if reported != self.reported_model:
            raise ContractViolation(
                f"the server reported model {reported!r} but earlier replies reported "
                f"{self.reported_model!r} (requested {self.model_id!r}): the model behind the "
                "endpoint changed mid-run, so this reply is not scored; pin the deployment (or "
                "the model version) and resume, or start a fresh run",
                dialect=self.dialect.id,
                path="model",
                expected=self.reported_model,
                received=reported,
            )

    async def fetch(self, path: str, body: Any = None) -> tuple[int, Any]:
        """A side route of the same server with this model's auth (``/tokenize``): the status
        and the decoded JSON body (``None`` when it is not JSON, or nested too deep to decode).
        POST with a body, else GET."""
        reply = await self._transport.send(
            HttpRequest(
                url=self.base_url + path,
                method="GET" if body is None else "POST",
                headers=self.headers,
                body=None if body is None else msgspec.json.encode(body),
                secrets=self._secrets,
            )
        )
        try:
            return reply.status, msgspec.json.decode(reply.body)
        except (msgspec.DecodeError, RecursionError):  # not JSON, or too deep to read
            return reply.status, None

    @property
    def tokenize_route(self) -> str:
        """The server's tokenize route: the dialect's, else vLLM's ``/tokenize``."""
        return str(self.dialect.endpoint.tokenize or "/tokenize")

    async def render_chat(self, chat: ChatInput) -> tuple[int, ...]:
        """The token ids of ``chat`` through the server's chat template with the generation
        prompt (``chat_tokenize_body``); ``Refused`` before I/O for a part the template is not
        given here (an image, a tool call or result), ``ContractViolation`` when the route
        answers no token ids."""
        key = _messages_key(chat)
        known = self._rendered.get(key)
        if known is not None:
            return known
        messages: list[dict[str, str]] = []
        for message in chat.messages:
            if not all(isinstance(p, TextPart) for p in message.content):
                raise Refused(
                    f"{named('apply_chat_template')} renders text messages through the server's "
                    "tokenize route; this request holds an image, a tool call or a tool result: "
                    f"run it on a chat wire with {setting('kind', 'chat')}",
                    dialect=self.dialect.id,
                    path="input.chat.messages",
                )
            text = "".join(p.text for p in message.content if isinstance(p, TextPart))
            messages.append({"role": message.role, "content": text})
        route = self.tokenize_route
        status, data = await self.fetch(route, chat_tokenize_body(self.model_id, messages))
        ids = tokenized(data, "x") if status == 200 else None
        if ids is None:
            raise ContractViolation(
                f"the chat template was asked of the server's tokenize route (POST {route} with "
                f"messages) and it answered HTTP {status} without token ids: "
                f"{str(data)[:200]!r}; run on a chat wire with {setting('kind', 'chat')}, or "
                f"drop {named('apply_chat_template')}",
                dialect=self.dialect.id,
                path="tokenize",
            )
        if len(self._rendered) >= RENDERED_KEPT:
            self._rendered.pop(next(iter(self._rendered)))  # the oldest: memory stays bounded
        self._rendered[key] = rendered = tuple(ids)
        return rendered

    async def check_chat_template(self) -> None:
        """``ConfigError`` naming the fix when the server renders no chat template through its
        tokenize route (asked with one user message, before the run's first request)."""
        probe = ChatInput(messages=(Message(role="user", content=(TextPart(text="x"),)),))
        try:
            await self.render_chat(probe)
        except SievalError as exc:
            raise ConfigError(
                f"{named('apply_chat_template')} renders each prompt with the server's own chat "
                f"template through its tokenize route (vLLM's POST {self.tokenize_route} with "
                f"messages), and that failed: {exc.message.split('; run on a chat wire')[0]}; "
                f"run it on a chat wire with {setting('kind', 'chat')} (the server applies its "
                f"template there), or drop {named('apply_chat_template')}",
                dialect=self.dialect.id,
                path="apply_chat_template",
            ) from exc

    async def _templated(self, request: Request) -> Request:
        """``request`` with its chat input rendered by the server's template, as token ids."""
        assert isinstance(request.input, ChatInput)
        if request.tools.functions:
            raise Refused(
                f"{named('apply_chat_template')} renders text messages through the server's "
                "tokenize route and offers no tools there: run a tool task on a chat wire with "
                f"{setting('kind', 'chat')}",
                dialect=self.dialect.id,
                path="tools.functions",
            )
        ids = await self.render_chat(request.input)
        return msgspec.structs.replace(request, input=CompletionInput(token_ids=ids))

    def _own(self, exc: SievalError) -> SievalError:
        if exc.server is None:
            exc.server = self._shown
        return exc


def _messages_key(chat: ChatInput) -> bytes:
    return msgspec.json.encode(chat.messages)
