"""The eval config: a YAML file of ``models:`` and ``tasks:``, decoded strictly.

Example::

    concurrency: 64                 # overall cap on requests in flight (all models)
    out: results                    # where run directories are created
    models:
      - name: ref                   # label used in results/<run>/<name>/ (default: the model id)
        endpoint: embedded          # or a base URL, http://127.0.0.1:8000 (required); or
                                    # replicas of one model: [http://a:8000, http://b:8000]
        model: sieval-reference     # the model id sent on the wire
        kind: completion            # completion | chat: picks the default dialect
        dialect: openai_completions # default: openai_completions (completion), openai_chat (chat)
        api_key_env: MY_KEY         # name of an env var holding the key (or api_key_file: path)
        auth: default               # how the key is sent: default (the dialect's), bearer,
                                    # x-api-key, x-goog-api-key
        retries: 4                  # extra attempts after connect errors, timeouts, 429, 5xx
        concurrency_limit: 16       # requests in flight to this model's server (entries
                                    # on one server share it: the largest is its budget)
        timeout_s: 120              # per-request budget
        server_defaults: unknown    # neutral: the server applies no sampling defaults of its own
        retry_after_max_s: 60       # longest Retry-After honoured (a longer one is cut, said)
        outage_s: 300               # how long a server that answered may be away (a restart)
        request_defaults:
          sampling.temperature: 0.0 # leaf path -> value; never overrides what a task sets
        price: {input: 0.15, output: 0.60, currency: USD}   # per million tokens (forecast.py)
    tasks:
      - name: arc_easy
        n: 100
        num_fewshot: 25
        seed: 1234
        options: {}
    roles:                          # second models a task calls by role (a judge), each a
      judge: ref                    # models entry's name, or an inline entry like the above

A key is never a literal in the file: ``api_key:`` is refused. An unknown key is an error with a
close-match suggestion; a malformed file is an error with its line and column.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from pathlib import Path
from typing import Any, Literal

import msgspec
import yaml

from ..errors import ConfigError
from ..ir.defaults import check_default_leaf, check_default_value
from ..ir.ranges import INT64_MAX, INT64_MIN
from ..setting_names import form, named, setting
from ..store.paths import results_dirname, segment
from ..tasks.base import TaskConfig
from ..transport.config import MAX_REPLY_BYTES
from ..transport.redaction import redact_url
from .urls import base_url, check_endpoint_url, provider_key

__all__ = [
    "EMBEDDED",
    "ONE_LINE",
    "EvalConfig",
    "ModelConfig",
    "Price",
    "base_url",
    "check_config",
    "check_endpoint_url",
    "load_config",
    "parse_config",
    "provider_key",
    "results_dirname",
]

EMBEDDED = "embedded"
"""The ``endpoint`` value that starts sieval's in-process reference server."""

REFERENCE_MODEL = "sieval-reference"
"""The model id the embedded reference server serves (``reference.server.DEFAULT_MODEL_NAME``)."""

DEFAULT_DIALECT = {"completion": "openai_completions", "chat": "openai_chat"}

MAX_CONCURRENCY = 65_535
"""The most requests ``concurrency`` and ``concurrency_limit`` may keep in flight: each holds a
connection, and a client has at most this many ports to reach one server from."""

MAX_RETRIES = 100
"""The most ``retries``: at the transport's 30 s backoff ceiling, most of an hour for one request
(a larger number never gives up)."""

ONE_LINE = "the command line"
"""The ``source`` of a config built from ``sieval eval --endpoint ...`` (its errors name flags)."""


class Price(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a model's tokens cost, per million tokens: ``price: {input: 0.15, output: 0.60,
    currency: USD}``. It changes no score, so it is not in the run identity (a resume may
    change it)."""

    input: float
    """The price of a million prompt (input) tokens."""
    output: float
    """The price of a million generated (output) tokens."""
    currency: str = ""
    """Shown beside every cost as given (``USD``, ``EUR``, ``credits``); empty: no unit."""

    def cost(self, input_tokens: float, output_tokens: float) -> float:
        """What ``input_tokens`` prompt and ``output_tokens`` generated tokens cost."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


class ModelConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One ``models:`` entry."""

    name: str = ""
    """The label in results paths and reports; defaults to ``model``."""
    endpoint: str = ""
    """A base URL (``http://host:port``; a trailing ``/v1`` is dropped: ``base_url``) or
    ``embedded`` for the reference server; required (an entry without one is an error, never
    the reference model under the entry's label)."""
    model: str = ""
    """The model id sent on the wire; with ``endpoint: embedded`` it defaults to the reference
    server's own id (the only one it answers to)."""
    kind: Literal["completion", "chat"] = "completion"
    """The input kind; picks the default dialect."""
    dialect: str = ""
    """A dialect id from ``sieval dialects``; defaults from ``kind``."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key."""
    api_key_file: str | None = None
    """Path of a file whose stripped content is the API key."""
    concurrency_limit: int = 32
    """Requests in flight at once to this model's server. Entries that reach the same server
    (scheme, host, port and credentials) share one budget, the largest of their limits
    (``endpoints.py``)."""
    retries: int = 4
    """Extra attempts after a connect error, a timeout, HTTP 429 or 5xx (never another 4xx)."""
    auth: Literal["default", "bearer", "x-api-key", "x-goog-api-key"] = "default"
    """How the key is sent: the dialect's own scheme (``default``: Bearer on OpenAI wires,
    ``x-api-key`` + ``anthropic-version`` on Anthropic's, ``x-goog-api-key`` on Google's), or
    another one the endpoint needs (vLLM's ``/v1/messages`` takes only ``bearer``)."""
    request_defaults: dict[str, Any] = msgspec.field(default_factory=dict)
    """Leaf path -> value (``sampling.temperature: 0.0``), applied where a task sets nothing."""
    request_overrides: dict[str, Any] = msgspec.field(default_factory=dict)
    """Leaf path -> value, applied whatever a task sets (the one-line form's ``--gen-kwargs``, as
    lm-eval's); the run says what each overrode."""
    system_instruction: str | None = None
    """A system message put first in every chat request (``--system-instruction``, as lm-eval's
    ``--system_instruction``); chat wires, or a completion wire whose task applies the server's
    chat template (``apply_chat_template``). In the identity when set."""

    @property
    def overrides(self) -> dict[str, Any]:
        """What is set over every request: ``request_overrides`` and the system instruction."""
        system = {"input.system": self.system_instruction} if self.system_instruction else {}
        return {**self.request_overrides, **system}

    timeout_s: float = 600.0
    """Client-side budget per request in seconds."""
    retry_after_max_s: float = 60.0
    """Longest wait honoured from a server's ``Retry-After`` (seconds); a server asking for more
    is waited this long, and the run says so."""
    outage_s: float = 300.0
    """How long (seconds) a server that has answered may refuse connections, as while it is
    restarted, before a request fails: its connect errors are retried past ``retries``."""
    max_reply_mib: float = MAX_REPLY_BYTES / 2**20
    """The most one reply may hold, in MiB (64: a 32k-token prompt scored with top-20
    alternatives fits; ``transport.config.MAX_REPLY_BYTES`` says why), counted compressed as it
    arrives and decompressed as it is read, a stream's whole body included. A larger reply fails
    its sample as a ``ContractViolation`` naming this setting, before it can fill the memory."""
    price: Price | None = None
    """Per million input and output tokens: the forecast and the report show costs, and
    ``--budget-cost`` can stop the run (``runner/forecast.py``, ``runner/stopping.py``)."""
    server_defaults: Literal["unknown", "neutral"] = "unknown"
    """What the server puts in the sampling fields a request leaves out. ``neutral``: you started
    it with no defaults of its own (vLLM ``--generation-config vllm``, SGLang
    ``--sampling-defaults openai``). No wire shows a server flag, so a field the wire cannot send
    is then taken as neutral, said as declared (not verified) in the serving checks; ``unknown``
    leaves such a field's results marked ``exposed`` (``serving/defaults.py``)."""
    replicas: list[str] = msgspec.field(default_factory=list)
    """Every base URL of a model served by several replicas (``endpoint: [URL, URL, ...]`` or
    ``--endpoint`` repeated is read into it; ``endpoint`` is then its first). Each is checked and
    fingerprinted before the run; requests go to the least-loaded healthy one, within the
    model's one ``concurrency_limit`` (``runner/replicas.py``). Empty: one endpoint."""
    allow_mixed_replicas: bool = False
    """Run on replicas whose serving fingerprints differ (another build, dtype or GPU: their
    numbers differ), instead of refusing them before the first sample; the report says so."""
    replica_concurrency_limit: int | None = None
    """Requests in flight per replica: the model's budget is then this times the replicas (and
    no replica takes more); None: the model's one ``concurrency_limit``, spread over them."""

    @property
    def dialect_id(self) -> str:
        return self.dialect or DEFAULT_DIALECT[self.kind]

    @property
    def max_reply_bytes(self) -> int:
        """``max_reply_mib`` in bytes, as the transport's ``Limits`` takes it."""
        return max(1, int(self.max_reply_mib * 2**20))

    @property
    def label(self) -> str:
        return self.name or self.model or "reference"

    @property
    def base_url(self) -> str:
        """The URL the dialects' paths are added to (``endpoint`` without ``/v1``)."""
        return base_url(self.endpoint)

    @property
    def endpoint_note(self) -> str | None:
        """What was dropped from ``endpoint`` to make the base URL, said once before a run."""
        if self.endpoint == EMBEDDED or self.base_url == self.endpoint.rstrip("/"):
            return None
        return (
            f"model {self.label!r}: using {redact_url(self.base_url)} as the base URL (the /v1 "
            "of the endpoint is dropped: each dialect adds its own path, such as /v1/completions)"
        )

    def api_key(self) -> str | None:
        """The key from ``api_key_env`` / ``api_key_file`` (``ConfigError`` when unreadable)."""
        if self.api_key_env:
            value = os.environ.get(self.api_key_env)
            if not value:
                raise ConfigError(
                    f"model {self.label!r}: environment variable {self.api_key_env!r} "
                    f"({named('api_key_env')}) is not set; export it before running",
                    path="api_key_env",
                )
            return value
        if self.api_key_file:
            try:
                value = Path(self.api_key_file).expanduser().read_text().strip()
            except OSError as exc:
                raise ConfigError(
                    f"model {self.label!r}: cannot read {named('api_key_file')} "
                    f"{self.api_key_file!r} ({exc.strerror}); check the path",
                    path="api_key_file",
                ) from exc
            if not value:
                raise ConfigError(
                    f"model {self.label!r}: {named('api_key_file')} {self.api_key_file!r} is empty",
                    path="api_key_file",
                )
            return value
        return provider_key(self.endpoint)

    def identity(self) -> dict[str, Any]:
        """What of this model can change a score: no secrets, no key names, no limits."""
        found: dict[str, Any] = {
            "endpoint": redact_url(self.base_url),
            "model": self.model,
            "dialect": self.dialect_id,
            "request_defaults": dict(sorted(self.request_defaults.items())),
        }
        # only when set: a run planned before these existed keeps its identity
        if self.request_overrides:
            found["request_overrides"] = dict(sorted(self.request_overrides.items()))
        if self.system_instruction:
            found["system_instruction"] = self.system_instruction
        if len(self.replicas) > 1:  # absent for one endpoint
            found["replicas"] = [redact_url(base_url(url)) for url in self.replicas]
            found["allow_mixed_replicas"] = self.allow_mixed_replicas
        return found


class EvalConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A whole config file."""

    models: list[ModelConfig]
    tasks: list[TaskConfig]
    concurrency: int = 64
    """Overall cap on requests in flight across every model."""
    out: str = "results"
    """Directory under which a run directory is created."""
    data_dir: str | None = None
    """Dataset directory (relative to the config file); ``--data-dir`` and ``SIEVAL_DATA_DIR``
    take precedence."""
    include_path: list[str] = []
    """Folders of task files (relative to the config file), searched beside the stock tasks
    (``tasks/catalogue.py``); ``--include-path`` and ``SIEVAL_INCLUDE_PATH`` add to them. A run
    stores them absolute, so ``--resume`` finds its task files from any folder."""
    roles: dict[str, str | ModelConfig] = msgspec.field(default_factory=dict)
    """The models a task calls by role (``judge``, ``user``, ``grader``): a ``models:`` entry's
    name, or an entry of its own. Checked, each role is the whole entry. A role's model is
    planned, checked, forecast and budgeted like the evaluated models, its calls recorded with
    the sample that made them; a ``models:`` entry named here is still evaluated too (declare
    the judge inline to only judge)."""

    def role_models(self) -> dict[str, ModelConfig]:
        """Each role's model entry (``check_config`` resolved names to entries)."""
        return {r: m for r, m in self.roles.items() if isinstance(m, ModelConfig)}


def load_config(path: str | Path) -> EvalConfig:
    """Read and check a YAML config; every problem is a ``ConfigError`` naming where it is."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(
            f"cannot read config {str(path)!r} ({exc.strerror})", path=str(path)
        ) from exc
    config = parse_config(text, source=str(path))
    if config.data_dir and not Path(config.data_dir).expanduser().is_absolute():
        # a relative data_dir means "relative to this file", so the command works from any cwd
        anchored = str((path.parent / config.data_dir).resolve())
        config = msgspec.structs.replace(config, data_dir=anchored)
    if config.include_path:
        folders = [str((path.parent / p).expanduser().resolve()) for p in config.include_path]
        config = msgspec.structs.replace(config, include_path=folders)
    return config


def parse_config(text: str, *, source: str = "<config>") -> EvalConfig:
    """Decode a YAML config held in ``text`` (``source`` names it in errors)."""
    try:
        raw = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise ConfigError(
            f"{where}: malformed YAML ({exc.problem or exc.context}); fix the syntax there",
            path=where,
        ) from exc
    except yaml.YAMLError as exc:  # pragma: no cover - every PyYAML parse error is marked
        raise ConfigError(f"{source}: malformed YAML ({exc})", path=source) from exc
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{source}: expected a mapping with 'models:' and 'tasks:', got {type(raw).__name__}",
            path=source,
        )
    roles = raw.get("roles")
    inline = [
        (f"{source}: roles.{role}", entry)
        for role, entry in (roles.items() if isinstance(roles, dict) else ())
    ]
    for where, entry in [
        *((f"{source}: models[{i}]", e) for i, e in enumerate(raw.get("models") or [])),
        *inline,
    ]:
        if isinstance(entry, dict):
            _refuse_literal_key(entry, where)
            if isinstance(entry.get("endpoint"), list):  # replicas of one model
                entry["replicas"] = entry["endpoint"]
                entry["endpoint"] = entry["endpoint"][0] if entry["endpoint"] else ""
            for key in ("request_defaults", "request_overrides"):
                if isinstance(entry.get(key), dict):
                    entry[key] = _flatten(entry[key])
    try:
        config = msgspec.convert(raw, EvalConfig)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{source}: {_explain(str(exc))}", path=source) from exc
    return check_config(config, source)


def _refuse_literal_key(entry: dict[str, Any], where: str) -> None:
    for key in entry:
        if isinstance(key, str) and key.lower() in {"api_key", "apikey", "key", "token"}:
            raise ConfigError(
                f"{where}: a literal {key!r} is refused so keys never land in files or results; "
                "put the key in an environment variable and name it with 'api_key_env: VAR' "
                "(or use 'api_key_file: PATH')",
                path=f"{where}.{key}",
            )


def _flatten(tree: dict[str, Any]) -> dict[str, Any]:
    """``{sampling: {temperature: 0}}`` and ``{sampling.temperature: 0}`` both become the latter
    (one level: an ``options.*`` value may itself be a mapping)."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and "." not in str(key):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[str(key)] = value
    return flat


_UNKNOWN = re.compile(r"Object contains unknown field `([^`]*)`(?: - at `\$(.*)`)?")


def _explain(message: str) -> str:
    """msgspec's message, with a close-match suggestion for an unknown field."""
    match = _UNKNOWN.match(message)
    if not match:
        return message.replace(" - at `$", " (at `")
    field, where = match.group(1), match.group(2) or ""
    struct = _struct_at(where)
    known = [f.name for f in msgspec.structs.fields(struct)]
    close = difflib.get_close_matches(field, known, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    at = where.lstrip(".") or "top level"
    return f"unknown key {field!r} in {at}.{hint} Known keys: {', '.join(known)}."


def _price_problems(price: Price | None) -> list[tuple[str, str | bool]]:
    """``(key, what it must be)`` for each price field out of range (none without a price)."""
    if price is None:
        return []
    return [
        (f"price.{key}", "a finite number >= 0")
        for key in ("input", "output")
        if not 0 <= getattr(price, key) < math.inf
    ]


def _struct_at(where: str) -> type[msgspec.Struct]:
    if where.startswith((".models", ".roles")) and ".price" in where:
        return Price
    if where.startswith((".models", ".roles")):
        return ModelConfig
    if where.startswith(".tasks"):
        return TaskConfig
    return EvalConfig


def _check_replicas(model: ModelConfig, where: str) -> ModelConfig:
    """A replicated entry checked: URLs, each once, no ``embedded`` (``endpoint`` its first)."""
    if not model.replicas:
        for key in ("allow_mixed_replicas", "replica_concurrency_limit"):
            if getattr(model, key) not in (False, None):
                listed = (
                    "--endpoint URL repeated"
                    if form() == "flags"
                    else setting("endpoint", "[URL, URL, ...]")
                )
                raise ConfigError(
                    f"{where}{named(key)} is for a model served by several replicas; list them "
                    f"with {listed}, or drop it",
                    path=key,
                )
        return model
    if EMBEDDED in model.replicas:
        raise ConfigError(
            f"{where}'embedded' cannot be a replica (it starts one in-process server per model); "
            "start reference servers with 'sieval serve --port N' and list their URLs",
            path="endpoint",
        )
    bases = [base_url(url) for url in model.replicas]
    twice = sorted({redact_url(b) for b in bases if bases.count(b) > 1})
    if twice:
        raise ConfigError(
            f"{where}replica {twice[0]} is listed twice; list each replica once", path="endpoint"
        )
    for url in model.replicas:
        check_endpoint_url(url, where=where)
    limit = model.replica_concurrency_limit
    if limit is not None and not 1 <= limit <= MAX_CONCURRENCY:
        raise ConfigError(
            f"{where}{named('replica_concurrency_limit')} must be an integer in "
            f"[1, {MAX_CONCURRENCY}]",
            path="replica_concurrency_limit",
        )
    if model.endpoint not in ("", model.replicas[0]):
        raise ConfigError(
            f"{where}set the replicas in {named('endpoint')} alone (a list), not also in "
            "'replicas'",
            path="endpoint",
        )
    if len(model.replicas) == 1:  # one URL in a list: one endpoint
        return msgspec.structs.replace(model, endpoint=model.replicas[0], replicas=[])
    return msgspec.structs.replace(model, endpoint=model.replicas[0])


def check_config(config: EvalConfig, source: str) -> EvalConfig:
    """``config`` with its defaults resolved, once every field is checked (``ConfigError`` naming
    ``source`` and the key); a config read from a run's ``run.json`` passes it again."""
    head = "" if source == ONE_LINE else f"{source}: "
    if not config.models:
        raise ConfigError(f"{source}: 'models:' is empty; list at least one model", path="models")
    if not config.tasks:
        raise ConfigError(f"{source}: 'tasks:' is empty; list at least one task", path="tasks")
    if not 1 <= config.concurrency <= MAX_CONCURRENCY:
        raise ConfigError(
            f"{head}{named('concurrency')} must be an integer in [1, {MAX_CONCURRENCY}]",
            path="concurrency",
        )
    labels: set[str] = set()
    models: list[ModelConfig] = []
    dirnames: dict[str, str] = {}
    for i, model in enumerate(config.models):
        # the one-line form's errors name flags, which need no place in a file before them
        where = "" if source == ONE_LINE else f"{source}: models[{i}]: "
        model = _checked_model(model, where)
        models.append(model)
        if model.label in labels:
            raise ConfigError(
                f"{where}two models are named {model.label!r}; give each a distinct 'name:'",
                path="name",
            )
        labels.add(model.label)
        key = named("name") if source == ONE_LINE else f"{head}models[{i}].name"
        directory = results_dirname(model.label, key=key)
        if directory in dirnames:
            raise ConfigError(
                f"{where}models {dirnames[directory]!r} and {model.label!r} would share the "
                f"results directory {directory!r} (labels are made file-safe); rename one",
                path="name",
            )
        dirnames[directory] = model.label
    from ..tasks.registry import SUITES  # the suites a task entry may name
    from ..tasks.suite import expand

    tasks = expand(config.tasks, SUITES, source)
    names: set[str] = set()
    for i, task in enumerate(tasks):
        segment(task.name, key=f"{head}tasks[{i}].name", fix="use a task from 'sieval tasks'")
        if task.name in names:
            raise ConfigError(f"{head}task {task.name!r} is listed twice", path="tasks")
        names.add(task.name)
        if task.n is not None and not (
            (isinstance(task.n, int) and task.n >= 1)
            or (isinstance(task.n, float) and 0 < task.n < 1)
        ):
            raise ConfigError(
                f"{head}task {task.name!r}: {named('n')} must be a whole number >= 1 or a "
                f"fraction between 0 and 1 (0.1: a tenth of the task), got {task.n!r}",
                path="n",
            )
        if task.samples is not None and not task.samples:
            raise ConfigError(
                f"{head}task {task.name!r}: samples is empty; list sample ids or drop it",
                path="samples",
            )
        if not INT64_MIN <= task.seed <= INT64_MAX:
            raise ConfigError(
                f"{head}task {task.name!r}: {named('seed')} must be an integer in "
                f"[{INT64_MIN}, {INT64_MAX}] (seeds reach the wire as 64-bit integers)",
                path="seed",
            )
    roles = _checked_roles(config.roles, models, source)
    return msgspec.structs.replace(config, models=models, tasks=tasks, roles=roles)


def _checked_roles(
    roles: dict[str, str | ModelConfig], models: list[ModelConfig], source: str
) -> dict[str, str | ModelConfig]:
    """Each role resolved to its whole model entry: a name to the ``models:`` entry it names,
    an inline entry checked as one."""
    head = "" if source == ONE_LINE else f"{source}: "
    by_label = {m.label: m for m in models}
    out: dict[str, str | ModelConfig] = {}
    for role, entry in roles.items():
        segment(role, key=f"{head}roles", fix="name a role by a word, such as judge")
        if isinstance(entry, str):
            if entry not in by_label:
                raise ConfigError(
                    f"{head}roles.{role} names model {entry!r}, which no models: entry is "
                    f"named; models: {', '.join(by_label)}. Name one of them, or give the "
                    f"role its own entry (roles: {{{role}: {{endpoint: URL, model: ID}}}})",
                    path=f"roles.{role}",
                    received=entry,
                )
            out[role] = by_label[entry]
            continue
        model = _checked_model(entry, f"{head}roles.{role}: ")
        same = by_label.get(model.label)
        if same is not None and same != model:
            raise ConfigError(
                f"{head}roles.{role}'s model is labelled {model.label!r} like a models: entry "
                f"that differs from it; give it its own name: (roles.{role}.name), or name "
                f"that entry instead (roles: {{{role}: {model.label}}})",
                path=f"roles.{role}.name",
            )
        out[role] = model
    return out


def _checked_model(model: ModelConfig, where: str) -> ModelConfig:
    """One model entry with its defaults resolved, once every field is checked (``where``
    names it in the errors)."""
    if not model.endpoint:
        # no default endpoint: an entry that forgot it would evaluate the reference model
        # under the label it gives (``{name: gpt-4o}`` scoring a trigram model)
        who = f"model {model.model or model.name!r}" if model.model or model.name else "the entry"
        what = "has no endpoint" if model.model else "has no endpoint and no model id"
        raise ConfigError(
            f"{where}{who} {what}; set {setting('endpoint', 'URL')} to your server's "
            f"base URL (e.g. http://127.0.0.1:8000)"
            + ("" if model.model else f" and {setting('model', 'ID')}")
            + f", or {setting('endpoint', 'embedded')} to evaluate sieval's built-in "
            "reference model instead",
            path="endpoint",
        )
    model = _check_replicas(model, where)
    if model.endpoint != EMBEDDED:
        check_endpoint_url(model.endpoint, where=where)
    if model.endpoint != EMBEDDED and not model.model:
        raise ConfigError(
            f"{where}{setting('model', 'ID')} (the model id) is required", path="model"
        )
    if not model.model:
        model = msgspec.structs.replace(model, model=REFERENCE_MODEL)
    if model.api_key_env and model.api_key_file:
        raise ConfigError(
            f"{where}set one of {named('api_key_env')} and {named('api_key_file')}, not both",
            path="api_key_env",
        )
    for key, bad in (
        (
            "concurrency_limit",
            not 1 <= model.concurrency_limit <= MAX_CONCURRENCY
            and f"an integer in [1, {MAX_CONCURRENCY}]",
        ),
        ("timeout_s", not (0 < model.timeout_s < math.inf) and "a finite number > 0"),
        (
            "retries",
            not 0 <= model.retries <= MAX_RETRIES and f"an integer in [0, {MAX_RETRIES}]",
        ),
        (
            "retry_after_max_s",
            not (0 < model.retry_after_max_s < math.inf) and "a finite number > 0",
        ),
        ("outage_s", not (0 < model.outage_s < math.inf) and "a finite number > 0"),
        ("max_reply_mib", not (0 < model.max_reply_mib < math.inf) and "a finite number > 0"),
        *_price_problems(model.price),
    ):
        if bad:
            raise ConfigError(f"{where}{named(key)} must be {bad}", path=key)
    for leaf, value in model.request_defaults.items():
        check_default_leaf(leaf, where=where)
        check_default_value(leaf, value, where=where)
    for leaf, value in model.request_overrides.items():
        check_default_leaf(leaf, where=where, key="request_overrides")
        check_default_value(leaf, value, where=where, key="request_overrides")
    return model
