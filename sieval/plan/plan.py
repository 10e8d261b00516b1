"""The plan: everything decided before the first request, with no network I/O.

``plan_run`` selects models and tasks, resolves every task by name and every model's dialect
(once), checks every (model, task) pair's requirements against the dialect's capabilities, loads
every task's samples, hashes its data files, plans the model of every role a task calls
(``roles:``; a role the config lacks stops the run here), lowers the first sample's known calls
for each pair through the model that answers each (a ``Refused`` stops the run here, with zero
requests sent), and computes the run identity (a role's model in it). Any problem is a
``ConfigError``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import msgspec

from ..dialects.registry import get_dialect, registry
from ..dialects.vocabulary import Auth, Dialect, Refuse
from ..errors import ConfigError, Refused, did_you_mean
from ..ir.defaults import overridden, with_defaults, with_overrides
from ..ir.request import (
    ChatInput,
    CompletionInput,
    FunctionTool,
    Message,
    Request,
    Sampling,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Tools,
)
from ..model import Model, prepare
from ..setting_names import named, setting
from ..store.identity import file_sha256, fingerprint, sieval_version
from ..store.paths import results_dirname, segment
from ..store.records import SCHEMA_VERSION
from ..tasks.base import (
    ModelFacts,
    PlannedCall,
    Readiness,
    Requirement,
    Sample,
    Task,
    TaskConfig,
    chat_facts,
)
from ..tasks.judging import JUDGE_SELF
from ..tasks.registry import TASKS
from ..transport import Limits, Timeouts, Transport
from .config import EvalConfig, ModelConfig
from .samples import DuplicateSampleId, Samples

__all__ = [
    "Plan",
    "PlannedModel",
    "PlannedTask",
    "check_capabilities",
    "check_ready",
    "model_facts",
    "plan_run",
    "protocol",
    "requirements",
    "select",
]


@dataclass(frozen=True)
class PlannedModel:
    config: ModelConfig
    dialect: Dialect
    """Resolved once, here; the engine, the pre-flight and the Model all use this one."""
    api_key: str | None = field(default=None, repr=False)
    chat_template: bool = False
    """A task of the run renders its chat prompt with the server's chat template on this
    completion wire (``apply_chat_template``): the model's chat requests become token ids."""

    @property
    def facts(self) -> ModelFacts:
        """What tasks may know of this model before the run (input kind, capabilities); the
        engine adds the token ids it resolves through the server's tokenizer."""
        return model_facts(self.dialect)

    @property
    def auth(self) -> Auth:
        """How this endpoint takes the key: the dialect's scheme or the config's ``auth:``."""
        return self.dialect.auth.with_scheme(self.config.auth)

    @property
    def label(self) -> str:
        return self.config.label

    @property
    def dirname(self) -> str:
        return results_dirname(self.config.label)

    def timeouts(self, most_s: float | None = None) -> Timeouts:
        """The config's ``timeout_s`` as a request's timeouts (connect at most 10 s, a read at
        most 300 s), capped at ``most_s`` when given (a tokenize request needs no more)."""
        total = self.config.timeout_s if most_s is None else min(most_s, self.config.timeout_s)
        return Timeouts(total=total, connect=min(10.0, total), read=min(300.0, total))

    def limits(self, concurrency: int = 1) -> Limits:
        """The config's retry policy and reply cap, ``concurrency`` requests at once on a
        transport of its own (a model given a shared transport never reads it)."""
        cfg = self.config
        return Limits(
            concurrency=concurrency,
            retries=cfg.retries,
            retry_after_max_s=cfg.retry_after_max_s,
            outage_s=cfg.outage_s,
            max_reply_bytes=cfg.max_reply_bytes,
        )

    def model(
        self,
        base_url: str,
        transport: Transport | None,
        timeouts: Timeouts,
        *,
        limits: Limits | None = None,
    ) -> Model:
        """This model at ``base_url`` (the embedded server's is known once it runs): its dialect,
        id, key, auth, request defaults and overrides, sending through ``transport`` (None: one
        of its own, with ``limits``)."""
        return Model(
            dialect=self.dialect,
            base_url=base_url,
            model_id=self.config.model,
            api_key=self.api_key,
            auth=self.auth,
            timeouts=timeouts,
            limits=limits,
            request_defaults=self.config.request_defaults,
            request_overrides=self.config.overrides,
            transport=transport,
            chat_template=self.chat_template,
        )


@dataclass(frozen=True)
class PlannedTask:
    task: Task
    config: TaskConfig
    samples: Samples
    """Held compactly (``samples.py``): read them by iterating or by position."""
    checksums: dict[str, str]

    @property
    def name(self) -> str:
        return self.config.name

    def calls(
        self, sample: Sample, facts: ModelFacts, role: str | None = None
    ) -> list[PlannedCall]:
        """What is known before I/O of ``sample``'s calls to the model playing ``role`` (None:
        the evaluated model, whose ``facts`` the task builds its calls for)."""
        calls = self.task.calls(sample, self.config, chat_facts(self.config, facts))
        return [c for c in calls if c.role == role]

    def requests(self, sample: Sample, facts: ModelFacts) -> dict[str, Request]:
        """The sample's calls to the evaluated model that are known exactly before I/O (a
        static task's requests; a conversation's first turn), by name."""
        return {c.name: c.request for c in self.calls(sample, facts) if c.exact}


@dataclass(frozen=True)
class Plan:
    models: list[PlannedModel]
    tasks: list[PlannedTask]
    data_dir: Path
    identity: str
    inputs: dict[str, Any]
    """What the identity hashes (secret-free), stored in ``run.json`` and ``report.json``."""
    notes: list[str] = field(default_factory=list)
    """Facts a user must know before the run (a task with fewer samples than asked for)."""
    overrides: list[str] = field(default_factory=list)
    """What a model's ``request_overrides`` (``--gen-kwargs``) overrode of what a task sets, a
    line per model and task: said as the run starts, kept in the report's warnings."""
    roles: dict[str, PlannedModel] = field(default_factory=dict)
    """The model playing each role a task calls (``roles:``), planned like the models."""

    @property
    def role_models(self) -> list[PlannedModel]:
        """The roles' models that are not evaluated models too (each once): reached, checked
        and forecast beside them."""
        labels = {pm.label for pm in self.models}
        out: dict[str, PlannedModel] = {}
        for pm in self.roles.values():
            if pm.label not in labels:
                out.setdefault(pm.label, pm)
        return list(out.values())

    def roles_of(self, pm: PlannedModel) -> list[str]:
        """The roles ``pm`` plays."""
        return [role for role, played in self.roles.items() if played.label == pm.label]


def _pick(kind: str, wanted: Sequence[str], known: Sequence[str]) -> list[str]:
    for name in wanted:
        if name not in known:
            raise ConfigError(
                f"unknown {kind} {name!r}.{did_you_mean(name, known)} Known: "
                f"{', '.join(known) or '(none)'}.",
                path=kind,
                received=name,
            )
    return list(wanted)


def select(config: EvalConfig, models: Sequence[str] = (), tasks: Sequence[str] = ()) -> EvalConfig:
    """Keep only the named models (by label) and tasks of ``config``; empty keeps all."""
    from ..tasks.registry import SUITES

    labels = [m.label for m in config.models]
    names = [t.name for t in config.tasks]
    tasks = [n for t in tasks for n in ([m.name for m in SUITES[t].tasks] if t in SUITES else [t])]
    keep_models = set(_pick("model", models, labels)) if models else set(labels)
    keep_tasks = set(_pick("task", tasks, names)) if tasks else set(names)
    return msgspec.structs.replace(
        config,
        models=[m for m in config.models if m.label in keep_models],
        tasks=[t for t in config.tasks if t.name in keep_tasks],
    )


def resolve_task(name: str, tasks: Mapping[str, Task]) -> Task:
    if name not in tasks:
        from ..tasks.aliases import ALIASES
        from ..tasks.registry import SUITES

        problems: list[str] = list(getattr(getattr(tasks, "catalogue", None), "problems", []))
        unread = (
            f" {len(problems)} task file(s) of the include path could not be read, so any task "
            f"they hold is unknown: {'; '.join(problems[:3])}"
            + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
            + "."
            if problems
            else ""
        )
        raise ConfigError(
            f"unknown task {name!r}.{did_you_mean(name, [*tasks, *SUITES, *ALIASES])}{unread} "
            f"Known tasks: {', '.join(sorted(tasks)) or '(none)'}; suites: {', '.join(SUITES)}; "
            "lm-eval's gsm8k, mmlu_<subject> and mmlu_<group> (see 'sieval tasks').",
            path="tasks",
            received=name,
        )
    return tasks[name]


def model_facts(dialect: Dialect) -> ModelFacts:
    """A model's facts from its dialect's table: chat when it takes no raw text prompt; tool
    results together in one turn when the table lowers them so."""
    known = _FACTS.get(dialect.id)
    if known is not None and known[0] is dialect:
        return known[1]
    row = registry()[dialect.id]
    text = not isinstance(dialect.row_for("input.completion.text"), Refuse)
    capabilities = frozenset(k for k, v in row.capabilities.items() if v == "supported")
    together = "tool_history" in capabilities and _lowers(dialect, _TWO_RESULTS)
    facts = ModelFacts(
        input_kind="completion" if text else "chat",
        capabilities=capabilities,
        tool_results="together" if together else "apart",
    )
    _FACTS[dialect.id] = (dialect, facts)
    return facts


_FACTS: dict[str, tuple[Dialect, ModelFacts]] = {}
"""``model_facts`` of each dialect, derived once (``PlannedModel.facts`` asks often)."""


_TWO_RESULTS = Request(
    input=ChatInput(
        messages=(
            Message(role="user", content=(TextPart(text="x"),)),
            Message(
                role="assistant",
                content=tuple(ToolCallPart(call_id=i, name="f", arguments={}) for i in "ab"),
            ),
            Message(
                role="tool",
                content=tuple(ToolResultPart(call_id=i, result={}) for i in "ab"),
            ),
        )
    ),
    sampling=Sampling(max_tokens=1),
    tools=Tools(functions=(FunctionTool(name="f", parameters={"type": "object"}),)),
)
"""Two tool calls answered in one tool message: a table that lowers it takes results together."""


def _lowers(dialect: Dialect, request: Request) -> bool:
    try:
        prepare(dialect, request, "m", {})
    except Refused:
        return False
    return True


def requirements(task: Task, facts: ModelFacts) -> Sequence[Requirement]:
    """The task's requirements for this model."""
    return task.requirements_for(facts)


def protocol(task: Task, facts: ModelFacts, config: TaskConfig | None = None) -> str:
    """The protocol as the task runs for this model (and with ``config``'s shots as turns, its
    prompt through the server's chat template)."""
    text = task.protocol_for(facts if config is None else chat_facts(config, facts))
    sampled = {
        k: v
        for k, v in (config.options.items() if config is not None else ())
        if k in ("temperature", "repeats") and task.defaults.get(k, v) != v
    }
    if sampled and "the options temperature" not in text:  # said where the protocol says it
        text += "; " + ", ".join(f"{k} {v}" for k, v in sampled.items()) + " (options, set)"
    if config is not None and config.fewshot_as_multiturn:
        text += (
            "; fewshot_as_multiturn: each shot a user turn and an assistant turn, the "
            "description the system message"
        )
    if config is not None and config.apply_chat_template and facts.input_kind == "completion":
        text += (
            "; apply_chat_template: the chat prompt rendered by the server's own chat template "
            "(its tokenize route, messages with the generation prompt), sent as token ids"
        )
    return text


def check_capabilities(model: ModelConfig, task: Task, config: TaskConfig | None = None) -> None:
    """Refuse a (model, task) pair whose dialect cannot serve one of the task's requirements
    (a chat prompt is served on a completion wire through the server's chat template when the
    task's ``config`` applies it)."""
    dialect = model.dialect_id
    row = registry().get(dialect)
    if row is None or row.dialect is None:
        get_dialect(dialect)  # raises the registry's own message (unknown / not implemented)
    assert row is not None and row.dialect is not None
    facts = model_facts(row.dialect)
    templated = facts is not chat_facts(config, facts) if config is not None else False
    for req in requirements(task, chat_facts(config, facts) if config is not None else facts):
        if row.capabilities.get(req.capability) == "supported":
            continue
        if templated and req.capability == "chat":  # the server's template makes the prompt
            continue
        others = [
            r.id for r in registry().values() if r.capabilities.get(req.capability) == "supported"
        ]
        outcome = row.capabilities.get(req.capability, "no")
        verb = "supports only partly" if outcome == "partial" else "does not support"
        fix = f"dialects that do: {', '.join(others) or 'none yet'}"
        if req.capability == "chat" and "openai_chat" in others:
            fix = f"run it on a chat wire with {setting('kind', 'chat')} (openai_chat; {fix})"
        elif req.capability in ("text_prompt", "input_logprobs") and model.kind == "chat":
            fix = f"run it on a completion wire with {setting('kind', 'completion')} ({fix})"
        raise ConfigError(
            f"{task.name} needs {req.capability} ({req.why}), which {dialect} {verb} "
            f"(model {model.label!r}); {fix}",
            dialect=dialect,
            path=req.capability,
        )


def _dry_lower(
    model: PlannedModel, planned: PlannedTask, roles: Mapping[str, PlannedModel]
) -> None:
    """Lower the first sample's known calls, each through the model that answers it: a
    refusal stops the run before any I/O."""
    if not planned.samples:
        return
    sample = planned.samples[0]
    templated = chat_facts(planned.config, model.facts) is not model.facts
    for call in planned.task.calls(sample, planned.config, chat_facts(planned.config, model.facts)):
        answering = model if call.role is None else roles[call.role]
        cfg = answering.config
        request, defaults, overrides = call.request, cfg.request_defaults, cfg.overrides
        if templated and call.role is None:  # the defaults (a system message) go in the template
            request = with_overrides(with_defaults(request, defaults), overrides)
            request, defaults, overrides = _templated_stand_in(planned, call.name, request), {}, {}
        try:
            prepare(answering.dialect, request, cfg.model, defaults, overrides)
        except Refused as exc:
            who = f"model {cfg.label!r}" + (f" (role {call.role})" if call.role else "")
            raise ConfigError(
                f"{who} cannot run task {planned.name!r}: request {call.name!r} of "
                f"sample {sample.id!r} was refused before I/O: {exc.message}"
                f"{_option_hint(planned, exc.path)}",
                dialect=answering.dialect.id,
                path=exc.path,
            ) from exc


def _templated_stand_in(planned: PlannedTask, name: str, request: Request) -> Request:
    """What the dry run lowers for a request whose chat prompt the server's template renders
    (``apply_chat_template``): the same request with one token id as its prompt (the ids are
    known only from the server); a raw-text request (a continuation scored after its context)
    is refused here, before any I/O."""
    if not isinstance(request.input, ChatInput):
        raise ConfigError(
            f"{named('apply_chat_template')} renders a chat prompt to generate from with the "
            f"server's chat template, and task {planned.name!r} sends raw text (request "
            f"{name!r}: a continuation's log-likelihood after its context, which lm-eval scores "
            "by appending the continuation raw after the templated context; not done here, so "
            "that no score rests on a token split sieval cannot check): drop "
            f"{named('apply_chat_template')} for this task, or run a generation task",
            path="apply_chat_template",
        )
    return msgspec.structs.replace(request, input=CompletionInput(token_ids=(0,)))


def _overrode(model: PlannedModel, planned: PlannedTask, several: bool) -> str:
    """The line saying what the model's overrides change of what the task sets (read on the
    first sample's requests), or ``""`` when they change nothing the task set."""
    cfg = model.config
    if not cfg.overrides or not planned.samples:
        return ""
    changed: dict[str, tuple[Any, Any]] = {}
    for call in planned.calls(planned.samples[0], model.facts):
        if call.role is not None:  # a role's calls are its model's, which has its own overrides
            continue
        sent = with_defaults(call.request, cfg.request_defaults)
        for path, had, new in overridden(sent, cfg.overrides):
            changed.setdefault(path, (had, new))
    if not changed:
        return ""
    said = ", ".join(f"{path} {had!r} -> {new!r}" for path, (had, new) in changed.items())
    who = f"{cfg.label}/{planned.name}" if several else planned.name
    return f"{named('request_overrides')} overrides what {who} sets: {said}"


def _plan_roles(
    config: EvalConfig,
    resolved: Sequence[tuple[Task, TaskConfig]],
    models: Sequence[PlannedModel],
    keys: bool,
    notes: list[str],
) -> dict[str, PlannedModel]:
    """The model of each role a task calls; a role the config lacks is refused here, one it
    has that no task calls is said and left unreached."""
    given = config.role_models()
    wanted: dict[str, str] = {}
    for task, _ in resolved:
        for role in task.roles:
            wanted.setdefault(role, task.name)
    for role, task_name in wanted.items():
        if role not in given:
            raise ConfigError(
                f"task {task_name!r} calls a model in the role {role!r}, which the config does "
                f"not set; add roles: {{{role}: LABEL}} naming a models: entry, or an entry of "
                f"its own (roles: {{{role}: {{endpoint: URL, model: ID}}}})",
                path=f"roles.{role}",
            )
    for role in sorted(set(given) - set(wanted)):
        notes.append(f"roles.{role} is set but no task of this run calls it: it is not reached")
    by_label = {pm.label: pm for pm in models}
    planned: dict[str, PlannedModel] = {}
    for role in wanted:
        cfg = given[role]
        same = by_label.get(cfg.label)
        if same is None or same.config != cfg:
            same = by_label[cfg.label] = PlannedModel(
                config=cfg,
                dialect=get_dialect(cfg.dialect_id),
                api_key=cfg.api_key() if keys else None,
            )
        planned[role] = same
    _check_self_judging(resolved, models, planned, notes)
    return planned


def _check_self_judging(
    resolved: Sequence[tuple[Task, TaskConfig]],
    models: Sequence[PlannedModel],
    roles: Mapping[str, PlannedModel],
    notes: list[str],
) -> None:
    """A judged task (one offering ``judge_self``) whose judge serves the model id of an
    evaluated model is refused, unless its ``judge_self`` option allows it (then said)."""
    judge = roles.get("judge")
    if judge is None:
        return
    for task, tc in resolved:
        if "judge" not in task.roles or JUDGE_SELF not in task.defaults:
            continue
        for pm in models:
            if pm.config.model != judge.config.model:
                continue
            if tc.options.get(JUDGE_SELF) is not True:
                raise ConfigError(
                    f"task {task.name!r} would be judged by the model it evaluates "
                    f"({judge.label!r} serves {judge.config.model!r}, as {pm.label!r} does); "
                    f"set roles: {{judge: LABEL}} to another model, or allow it explicitly "
                    f"(tasks: [{{name: {task.name}, options: {{{JUDGE_SELF}: true}}}}]), "
                    "which the report then names",
                    path="roles.judge",
                )
            notes.append(
                f"{task.name}: the judge {judge.label!r} is the evaluated model {pm.label!r} "
                f"({JUDGE_SELF}: true)"
            )


def _option_hint(planned: PlannedTask, leaf: str | None) -> str:
    """Where a refused value came from, when a task option sets it (``top_k`` for MMLU)."""
    option = (leaf or "").rsplit(".", 1)[-1].removeprefix("sampled_")
    if option not in planned.task.defaults:
        return ""
    return (
        f" (the task's {option} option sets it: {setting(f'options.{option}')} for {planned.name})"
    )


def _limited(config: TaskConfig, limit: int | float | None) -> TaskConfig:
    """The task entry with ``--limit`` applied: a count caps ``n``; a fraction (``0.1``) is the
    entry's ``n`` unless it sets a count of its own (then the smaller cannot be told apart before
    the rows are read: refused)."""
    if limit is None:
        return config
    fraction = isinstance(limit, float)
    if (fraction and not 0 < limit < 1) or (not fraction and limit < 1):
        raise ConfigError(
            f"--limit must be a whole number >= 1 or a fraction between 0 and 1, got {limit}",
            path="limit",
        )
    if config.n is None:
        return msgspec.structs.replace(config, n=limit)
    if isinstance(config.n, float) or fraction:
        if config.n == limit:
            return config
        raise ConfigError(
            f"task {config.name!r} sets n: {config.n} and --limit is {limit}: one of them is a "
            "fraction; give one",
            path="limit",
        )
    return msgspec.structs.replace(config, n=min(config.n, limit))


def _load(task: Task, config: TaskConfig, data_dir: Path, notes: list[str]) -> PlannedTask:
    per = task.samples_per_row(config)  # n counts rows; a repeated row is k samples
    rows = config.n
    if isinstance(rows, float):  # a fraction of the task's rows, rounded up, as lm-eval's
        total = sum(1 for _ in _chosen(task, task.load(data_dir, config), config)) // per
        rows = max(1, math.ceil(rows * total))
        notes.append(f"task {task.name}: n={config.n} of its {total:,} rows is {rows:,}")
    loaded: Iterable[Sample] = _chosen(task, task.load(data_dir, config), config)
    if config.samples is not None:  # read to the end: an id the task lacks is refused, n or not
        loaded = list(loaded)
    count = None if rows is None else rows * per
    try:
        samples = Samples(loaded if count is None else islice(loaded, count))
    except DuplicateSampleId as exc:
        raise ConfigError(
            f"task {task.name!r} produced sample id {exc.sample_id!r} twice; ids are the resume "
            "key",
            path="tasks",
        ) from exc
    if count is not None and count > len(samples) and not isinstance(config.n, float):
        notes.append(
            f"task {task.name!r}: n={config.n} but the dataset has {len(samples)} samples; "
            f"all {len(samples)} are evaluated"
        )
    checksums: dict[str, str] = {}
    for path in task.data_files(data_dir):
        key = str(path.relative_to(data_dir)) if path.is_relative_to(data_dir) else str(path)
        checksums[key] = file_sha256(path) if path.is_file() else "missing"
    return PlannedTask(task=task, config=config, samples=samples, checksums=checksums)


def _chosen(task: Task, samples: Iterable[Sample], config: TaskConfig) -> Iterator[Sample]:
    """The samples ``config.samples`` names (a row's id stands for its repeats ``id#rK``), in
    the task's order; an id the task does not have is refused, with the closest it has."""
    if config.samples is None:
        yield from samples
        return
    wanted = set(config.samples)
    found: set[str] = set()
    seen: list[str] = []
    for sample in samples:
        row = sample.id.split("#r", 1)[0]
        key = sample.id if sample.id in wanted else row if row in wanted else None
        if key is None:
            if len(seen) < 5000:
                seen.append(row)
            continue
        found.add(key)
        yield sample
    missing = [i for i in config.samples if i not in found]
    if missing:
        shown = f"{seen[0]}, {seen[1]}, ..." if len(seen) > 1 else "none"
        raise ConfigError(
            f"task {task.name} has no sample {missing[0]!r}{did_you_mean(missing[0], seen)} "
            f"(its ids are like {shown}; 'sieval samples RUN_DIR' lists a run's)",
            path="samples",
            received=missing[0],
        )


def _task_inputs(planned: PlannedTask) -> dict[str, Any]:
    """What the identity holds of one task: its config, protocol and data; a task from a task
    file also its ``source`` (the file's hashes and its resolved keys), so a changed file is
    refused on resume with the key that changed."""
    out: dict[str, Any] = {
        "config": _entry_identity(planned.config),
        "protocol": planned.task.protocol,
        "data": planned.checksums,
    }
    source = getattr(planned.task, "source", None)
    if isinstance(source, dict):
        out["source"] = source
    return out


def plan_run(
    config: EvalConfig,
    *,
    data_dir: Path,
    limit: int | float | None = None,
    tasks: Mapping[str, Task] | None = None,
    keys: bool = True,
) -> Plan:
    """Check and load everything a run needs; raises ``ConfigError`` on the first problem.
    ``keys=False`` reads no API key (a plan that sends nothing: a partial run's report)."""
    known = tasks if tasks is not None else TASKS
    for m in config.models:  # every name that becomes a directory, checked before any I/O
        results_dirname(m.label)
    for tc in config.tasks:
        segment(tc.name, key="tasks[].name", fix="use a task from 'sieval tasks'")
    resolved = [(resolve_task(tc.name, known), _limited(tc, limit)) for tc in config.tasks]
    for model in config.models:
        for task, tc in resolved:
            check_capabilities(model, task, tc)
    templated = [tc.name for _, tc in resolved if tc.apply_chat_template]
    models = [
        PlannedModel(
            config=m,
            dialect=get_dialect(m.dialect_id),
            api_key=m.api_key() if keys else None,
            chat_template=bool(templated) and not Model.takes_chat(m.dialect_id),
        )
        for m in config.models
    ]
    notes: list[str] = []
    for pm in models:
        if templated and Model.takes_chat(pm.dialect):
            notes.append(
                f"{named('apply_chat_template')} ({', '.join(templated)}) changes nothing for "
                f"model {pm.label!r}: its chat wire ({pm.dialect.id}) has the server apply the "
                "model's chat template to every request anyway"
            )
    roles = _plan_roles(config, resolved, models, keys, notes)
    planned = [_load(task, tc, data_dir, notes) for task, tc in resolved]
    for pm in models:
        for p in planned:
            _dry_lower(pm, p, roles)
    overrides = [
        line for pm in models for p in planned if (line := _overrode(pm, p, len(models) > 1))
    ]
    inputs: dict[str, Any] = {
        "sieval_version": sieval_version(),
        "records_schema_version": SCHEMA_VERSION,
        "models": {m.label: m.config.identity() for m in models},
        "tasks": {p.name: _task_inputs(p) for p in planned},
    }
    if roles:  # only then: a run without roles keeps the identity it always had
        inputs["roles"] = {role: pm.config.identity() for role, pm in roles.items()}
    return Plan(
        models=models,
        tasks=planned,
        data_dir=data_dir,
        identity=fingerprint(inputs),
        inputs=inputs,
        notes=notes,
        overrides=overrides,
        roles=roles,
    )


def _entry_identity(config: TaskConfig) -> dict[str, Any]:
    """A task entry as the identity holds it; ``samples`` and ``fewshot_as_multiturn`` only when
    set, so that a run planned before the fields existed keeps its identity."""
    out: dict[str, Any] = msgspec.to_builtins(config)
    if out.get("samples") is None:
        out.pop("samples", None)
    for flag in ("fewshot_as_multiturn", "apply_chat_template"):
        if not out.get(flag):
            out.pop(flag, None)
    return out


def check_ready(plan: Plan, allow_unsafe_code: bool = False) -> Readiness:
    """Each task's own check before the first request (``Task.check_ready``: the code tasks'
    sandbox), gathered: a task that cannot be scored here raises ``ConfigError`` naming the fix,
    before any request is sent or paid for."""
    said: list[str] = []
    warnings: list[str] = []
    record: dict[str, Any] = {}
    for pt in plan.tasks:
        found = pt.task.check_ready(allow_unsafe_code)
        said += [line for line in found.said if line not in said]
        warnings += [line for line in found.warnings if line not in warnings]
        if found.record:
            record[pt.name] = found.record
    return Readiness(said=tuple(said), warnings=tuple(warnings), record=record)
