"""The vocabulary of a dialect: what a dialect module declares (``table.py`` interprets it).

A dialect module declares data:

* ``Endpoint``, ``Auth`` and ``Stream``: where it posts (the path may hold ``{model}``; the
  models, health and version paths the pre-flight reads), how it authenticates, and how a
  streamed reply is framed and folded into the non-stream reply;
* ``rows``: for each request leaf, or a whole prefix (``"input.chat.*"``), one row:

  ``Field(path)``      the leaf's value, unchanged, at ``path``;
  ``Encode(fn, keys)`` ``fn(leaf)`` returns an outcome for one leaf;
  ``Group(fn, keys)``  ``fn(group)`` sees a whole group (``StructuredOutput``, the chat input) and
                       returns an outcome for each of its active leaves, list elements included
                       (a leaf with its own exact row is decided by that row: the group's outcome
                       for it is not used);
  ``Options(allowed)`` ``options.<name>`` forwarded when ``name`` is on the wire's allow-list;
  ``NoOp(reason)``     dropping the leaf changes nothing, and why;
  ``Refuse(reason)``   the wire cannot honour it, and what to do instead.

  An outcome is ``Write(path, value, also)`` (the leaf's wire evidence is ``path``),
  ``Evidence(path)`` (carried by what another leaf of the group wrote), ``NoOp`` or ``Refuse``.
  Encoders return writes; they never see a body, so no decision can depend on another's;
* ``rules``: the only cross-leaf logic, ``Excludes``, ``Requires`` and ``Below``;
* ``unset``: what the wire demands when the request leaves a leaf unset: ``Fill(path, value,
  reason)``, recorded in the ledger as ``defaulted``, or ``Demand(reason)``, a refusal;
* ``channels``: a ``Guarantee`` per response channel (unlisted channels are ``NEVER``);
* ``reply``: the reply declaration (``reply.Reply``): the reply Struct (decoded by a decoder built
  once) and where each value of the ``Response`` sits in it; ``reading.py`` walks it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

import msgspec

from ..errors import SievalError
from ..ir.channels import Guarantee
from ..ir.request import Request
from ..ir.response import Decision
from .body import top_key
from .envelopes import http_error
from .reply_checks import Checker

if TYPE_CHECKING:
    from .reply import Reply
    from .table import Compiled

__all__ = [
    "BEARER",
    "CLIENT_SIDE",
    "PREFIX",
    "Auth",
    "Below",
    "Demand",
    "Dialect",
    "Encode",
    "Endpoint",
    "Evidence",
    "Excludes",
    "Field",
    "Fill",
    "Group",
    "GroupInput",
    "Leaf",
    "Lowered",
    "NoOp",
    "OptionValue",
    "Options",
    "Outcome",
    "Refuse",
    "Requires",
    "Retry",
    "Row",
    "Rule",
    "Stream",
    "Write",
    "at_least",
    "at_most",
    "chat_tokenize_body",
    "model_length",
    "tokenized",
    "vllm_tokenize_body",
]

PREFIX = ".*"

# -- outcomes -----------------------------------------------------------------------------------


class Write(msgspec.Struct, frozen=True):
    """The leaf goes to ``path`` with ``value`` (its wire evidence); ``also`` holds further
    writes it needs (``stream_options`` with ``stream``)."""

    path: str
    value: Any
    also: dict[str, Any] = {}


class Evidence(msgspec.Struct, frozen=True):
    """The leaf is carried by what another leaf of its group wrote at ``path``."""

    path: str


class NoOp(msgspec.Struct, frozen=True):
    """Dropping the leaf changes nothing; ``reason`` says why."""

    reason: str


class Refuse(msgspec.Struct, frozen=True):
    """The wire cannot honour the leaf; ``reason`` says what to do instead."""

    reason: str


Outcome = Write | Evidence | NoOp | Refuse

# -- rows ---------------------------------------------------------------------------------------


class Leaf(msgspec.Struct, frozen=True):
    """What an ``Encode`` row sees: one active leaf and its value."""

    path: str
    value: Any

    @property
    def name(self) -> str:
        """The last part of the path (the option's name for ``options.min_p``)."""
        return self.path.rsplit(".", 1)[-1]


class GroupInput(msgspec.Struct, frozen=True):
    """What a ``Group`` row sees: the group's value and which of its leaves are active."""

    value: Any
    """The request's value at the group prefix (``request.structured_output``, the ChatInput)."""
    active: frozenset[str]
    """The active schema leaves under the prefix."""


@dataclass(frozen=True)
class Field:
    """The leaf's value written unchanged (a tuple as a list) at ``path``."""

    path: str

    @property
    def keys(self) -> tuple[str, ...]:
        return (top_key(self.path),)


@dataclass(frozen=True)
class Encode:
    """``fn(leaf)`` decides one leaf; ``keys`` are the top-level body keys it may write."""

    fn: Callable[[Leaf], Outcome]
    keys: tuple[str, ...]
    doc: str
    """One line for ``sieval dialects --leaf``: what the encoder writes, and when it refuses."""


@dataclass(frozen=True)
class Group:
    """``fn(group)`` decides every active leaf under the row's prefix at once.

    It returns ``{leaf: outcome}`` with absolute leaf names; elements of lists carry their
    index (``input.chat.messages[2].content[0].image``). Every active leaf of the group must
    get at least one outcome; ``keys`` are the top-level body keys it may write. A leaf of the
    group that the wire never takes gets its own ``Refuse`` row (an exact row wins over the
    prefix), so the capability matrix, derived from rows, stays exact.
    """

    fn: Callable[[GroupInput], Mapping[str, Outcome]]
    keys: tuple[str, ...]
    doc: str


@dataclass(frozen=True)
class OptionValue:
    """What an option's value must be (``check``), and how a refusal names it (``kind``)."""

    check: Callable[[Any], bool]
    kind: str


@dataclass(frozen=True)
class Options:
    """``options.<name>``: forwarded at ``at + name`` when ``name`` is on ``allowed`` (its value
    passing the ``OptionValue`` check, when one is given), else refused with ``refusal`` (which
    may name ``{allowed}``). A name the IR or the table owns is always refused: the table's own
    body keys, the IR's leaf names, and ``reserved`` (fields of the route the table leaves to
    other leaves, which an option must not set behind their back)."""

    allowed: Mapping[str, OptionValue | None]
    refusal: str
    doc: str
    at: str = ""
    """A body prefix such as ``"sampling_params."`` (SGLang); top-level names without one."""
    reserved: frozenset[str] = frozenset()

    @property
    def keys(self) -> tuple[str, ...]:
        return (top_key(self.at + "x"),) if self.at else tuple(sorted(self.allowed))


Row = Field | Encode | Group | Options | NoOp | Refuse


def at_least(path: str, minimum: int, reason: str, doc: str) -> Encode:
    """The leaf's value at ``path`` when it is at least ``minimum``; a smaller one is refused with
    ``reason`` (a wire's "at least one token", "a positive count")."""

    def encode(leaf: Leaf) -> Outcome:
        return Refuse(reason) if leaf.value < minimum else Write(path, leaf.value)

    return Encode(encode, (top_key(path),), doc)


def at_most(path: str, limit: int, reason: str, doc: str, items: bool = False) -> Encode:
    """The leaf's value at ``path`` (with ``items``, its items as a list) when it is (holds) at
    most ``limit``; more is refused with ``reason`` (a wire's cap on stop strings, on top-k)."""

    def encode(leaf: Leaf) -> Outcome:
        size = len(leaf.value) if items else leaf.value
        if size > limit:
            return Refuse(reason)
        return Write(path, list(leaf.value) if items else leaf.value)

    return Encode(encode, (top_key(path),), doc)


CLIENT_SIDE = NoOp("a client-side budget applied by sieval's transport, not sent")
"""The row for ``scheduling.timeout_s`` on every HTTP wire."""

# -- cross-leaf rules and unset leaves ----------------------------------------------------------


@dataclass(frozen=True)
class Excludes:
    """``leaf`` cannot be honoured together with ``other``: both active refuse ``leaf``."""

    leaf: str
    other: str
    reason: str


def _always(value: Any) -> bool:
    return True


@dataclass(frozen=True)
class Requires:
    """``leaf`` (when ``when(value)``) needs ``needs`` active, else ``leaf`` is refused."""

    leaf: str
    needs: str
    reason: str
    when: Callable[[Any], bool] = _always


@dataclass(frozen=True)
class Below:
    """``leaf``'s value must be below ``bound``'s when both are active, else ``leaf`` is refused
    (Anthropic's thinking budget must stay below ``max_tokens``)."""

    leaf: str
    bound: str
    reason: str


Rule = Excludes | Requires | Below


@dataclass(frozen=True)
class Fill:
    """The wire requires a field the request left unset: ``value`` at ``path``, recorded."""

    path: str
    value: Any
    reason: str


@dataclass(frozen=True)
class Demand:
    """The wire requires a field the request left unset and no default is safe: refuse."""

    reason: str


# -- wire facts ---------------------------------------------------------------------------------


def vllm_tokenize_body(model: str, text: str, special: bool) -> dict[str, Any]:
    """vLLM's ``POST /tokenize`` body: the ids, and each token's text (``return_token_strs``)."""
    return {
        "model": model,
        "prompt": text,
        "add_special_tokens": special,
        "return_token_strs": True,
    }


def chat_tokenize_body(model: str, messages: list[dict[str, str]]) -> dict[str, Any]:
    """vLLM's ``POST /tokenize`` body for a conversation: ``messages`` through the model's own
    chat template with the generation prompt (the prompt its chat route builds; special tokens
    only as the template writes them, vLLM's default for messages)."""
    return {"model": model, "messages": messages, "add_generation_prompt": True}


_MAX_TOKEN_ID = 2**31 - 1


def tokenized(data: Any, text: str) -> list[int] | None:
    """The token ids a tokenize route's reply (``data``, decoded JSON) gives for ``text``, or
    ``None`` when it gives none to believe: ``tokens`` must be a list of token ids (whole numbers
    from 0 to 2^31 - 1), and not empty for a text that is not (every character is spelled by some
    token); vLLM's ``count``, when present, must be their number. A reply not believed is no
    count: the caller estimates, or says the tokenizer did not answer, never "0 tokens"."""
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, list) or (text and not tokens):
        return None
    if not all(type(t) is int and 0 <= t <= _MAX_TOKEN_ID for t in tokens):
        return None
    said = data.get("count")
    if said is not None and said != len(tokens):
        return None
    return tokens


def model_length(value: Any) -> int | None:
    """A server's maximum model length as its listing or tokenizer reports it (vLLM's and
    SGLang's ``max_model_len``), or ``None`` for one not to believe (then it is not reported): a
    whole number from 1 to 10^9, as any token count (``checks.MAX_TOKEN_COUNT``)."""
    if type(value) is int and 1 <= value <= 10**9:
        return value
    return None


@dataclass(frozen=True)
class Endpoint:
    """Where a dialect posts, and the read-only routes the pre-flight asks first."""

    path: str
    """The request path; ``{model}`` is replaced by the URL-quoted model id."""
    stream_path: str | None = None
    """The path for a streamed call when it differs (Google's ``:streamGenerateContent``)."""
    model_field: str | None = "model"
    """The body field naming the model; ``None`` when the model is in the path (or absent)."""
    models: str | None = "/v1/models"
    """Lists the served model ids, or ``None`` when the wire has no such route."""
    model_info: str | None = None
    """Describes one model (Google's ``GET /v1beta/models/{model}``): a 404 naming the model
    says it is not served, whatever a paginated listing shows."""
    health: str | None = "/health"
    version: str | None = "/version"
    tokenize: str | None = None
    """The server's tokenizer route (vLLM and SGLang: ``/tokenize``), read by the BOS check."""
    tokenize_body: Callable[[str, str, bool], dict[str, Any]] = vllm_tokenize_body
    """The body the tokenizer route takes for ``(model id, text, add special tokens)``; vLLM's
    unless the wire says otherwise (SGLang's takes no ``return_token_strs``)."""
    method: str = "POST"

    def url_path(self, model_id: str, stream: bool) -> str:
        template = self.stream_path if stream and self.stream_path else self.path
        return _fill(template, model_id) if "{model}" in template else template

    def info_path(self, model_id: str) -> str | None:
        """The route describing ``model_id``, when the wire has one."""
        return _fill(self.model_info, model_id) if self.model_info else None


@dataclass(frozen=True)
class Auth:
    """How a key is sent: ``header: scheme key``; ``static`` headers go with or without one."""

    header: str = "Authorization"
    scheme: str | None = "Bearer"
    static: Mapping[str, str] = field(default_factory=dict)

    def headers(self, key: str | None) -> dict[str, str]:
        out = dict(self.static)
        if key:
            out[self.header] = f"{self.scheme} {key}" if self.scheme else key
        return out

    def with_scheme(self, name: str) -> Auth:
        """This auth with the key sent another way (``bearer``, ``x-api-key``,
        ``x-goog-api-key``; ``default`` keeps it), static headers kept."""
        if name == "default":
            return self
        header, scheme = _SCHEMES[name]
        return Auth(header, scheme, self.static)

    def describe(self) -> str:
        shown = f"{self.header}: {self.scheme + ' ' if self.scheme else ''}<key>"
        extra = "".join(f" + {name}: {value}" for name, value in self.static.items())
        return shown + extra


BEARER = Auth()
_SCHEMES = {
    "bearer": ("Authorization", "Bearer"),
    "x-api-key": ("x-api-key", None),
    "x-goog-api-key": ("x-goog-api-key", None),
}


@functools.lru_cache(maxsize=256)
def _fill(template: str, model_id: str) -> str:
    return template.replace("{model}", quote(model_id, safe=""))


class Framing(Protocol):
    """Splits a streamed body into events and checks that it ended where the wire says."""

    def events(self, body: bytes, check: Checker) -> list[Any]: ...


@dataclass(frozen=True)
class Stream:
    """A streamed reply: its framing, and the fold of its events into the reply Struct."""

    framing: Framing
    fold: Callable[[list[Any], Checker], Any]


@dataclass(frozen=True)
class Retry:
    """What a wire adds to the transport's retry rule (HTTP 429 and 5xx, on every wire).

    Safe by default: nothing is added. A wire that needs more declares it here, and ``Model``
    hands it to the transport with each request."""

    overload: frozenset[int] = frozenset()
    """The statuses the wire answers when it is overloaded (Anthropic's 529): retried as a rate
    limit is, and reported as one when the retries run out (lower the concurrency)."""
    in_band: Callable[[bytes], int | None] | None = None
    """The status an error event inside a stream stands for (the stream began with HTTP 200), or
    ``None`` when the body holds none: a retryable one is retried as that status would be; when
    the retries run out the body is read, and its error raised. Asked of streamed replies only."""


# -- a lowered call -------------------------------------------------------------------------


class Lowered(msgspec.Struct, frozen=True):
    """A wire call decided in full: the URL path, the body, and the ledger of every leaf."""

    dialect: str
    path: str
    """The URL path (``{model}`` filled, the stream variant when streamed)."""
    body: dict[str, Any]
    stream: bool
    ledger: tuple[Decision, ...]
    request: Request
    channels: frozenset[str] = frozenset()
    """The response channels the request asks for (decided with the leaves, checked by lift)."""
    method: str = "POST"


# -- the dialect --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dialect:
    """One wire protocol as data; support rows and capability outcomes are derived from it."""

    id: str
    endpoint: Endpoint
    rows: Mapping[str, Row]
    reply: Reply
    """Where each Response value sits in the reply Struct, and how it is read (``reply.py``)."""
    channels: Mapping[str, Guarantee] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()
    unset: Mapping[str, Fill | Demand] = field(default_factory=dict)
    auth: Auth = BEARER
    stream: Stream | None = None
    retry: Retry = Retry()
    """What this wire retries beyond HTTP 429 and 5xx (an error event inside a 200 stream, its
    own overload status)."""
    error: Callable[[str, int, bytes], SievalError] = http_error
    """The typed error for a non-2xx reply, from the wire's error envelope."""
    summary: str = ""
    """One line for ``sieval dialects``: the wire and the servers it was verified against."""

    @functools.cached_property
    def compiled(self) -> Compiled:
        from .table import compile_dialect  # the interpreter, which imports this vocabulary

        return compile_dialect(self)

    def guarantee(self, channel: str) -> Guarantee:
        return self.channels.get(channel, Guarantee.NEVER)

    def row_for(self, schema_leaf: str) -> Row:
        """The row that decides ``schema_leaf`` (an exact row wins over a prefix row)."""
        return self.compiled.rows[schema_leaf][1]

    def check(self) -> None:
        """The import-time self-check; raises AssertionError naming what is wrong."""
        self.compiled  # noqa: B018 - compiling checks rows, rules and channels
