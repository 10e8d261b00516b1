"""The contract every task follows: data -> samples -> ``solve(sample, ctx)`` -> aggregate.

A task speaks only the IR. Its unit of work is one coroutine, ``solve(sample, ctx)``: it asks the
model through the call context (``ctx.call(name, request)``; ``tasks/context.py``), as many
times as it needs (a second turn after the first reply, a tool loop, a judge by role), and
returns the sample's result. Every other hook is a method or attribute with a safe default. A
task whose calls are all known before I/O is *static* (``StaticTask``: ``requests`` + ``score``,
every task of the lm-eval kind); its requests are what the plan lowers, the checks send, the
forecast counts. A task that is not static says what planning may know of its calls
(``calls``: the first turn as sent, later turns as a bound).

A task declares what it needs from a dialect (``requirements``) so a run can be refused before
its first request when the chosen dialect cannot serve it, and the model roles it calls
(``roles``) so a run whose config lacks one is refused before I/O.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

import msgspec

from ..ir.request import Request
from ..ir.response import Response
from ..scoring.uncertainty import Derived

if TYPE_CHECKING:
    from .context import Context

__all__ = [
    "COMPLETION_MODEL",
    "ModelFacts",
    "PlannedCall",
    "Readiness",
    "Requirement",
    "Sample",
    "SampleResult",
    "StaticTask",
    "Task",
    "TaskConfig",
    "Tokenizer",
    "chat_facts",
    "describe",
]


@dataclass(frozen=True)
class Requirement:
    """A capability key the dialect must support (see ``ir/capabilities.py``), with a reason."""

    capability: str
    why: str
    min_top_k: int = 0
    """For ``input_top_k`` / ``sampled_top_k``: the smallest k the task will ask for."""


class Readiness(msgspec.Struct, frozen=True, kw_only=True):
    """What a task's check before the run found (``Task.check_ready``): it raises
    ``ConfigError`` naming the fix when the task cannot be scored here."""

    said: tuple[str, ...] = ()
    """Lines the run prints before its first request."""
    warnings: tuple[str, ...] = ()
    """Lines the run warns of, before its first request and in its report."""
    record: dict[str, Any] = {}
    """What the report keeps of it, under the task's name (``report.json``: ``ready``)."""


class TaskConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a config's ``tasks:`` entry may set; everything that can change a score."""

    name: str
    n: int | float | None = None
    """How many samples to evaluate (the first n in the task's fixed order); a fraction below 1
    takes that share of the task's rows, rounded up (lm-eval's ``--limit 0.1``); None = all."""
    samples: list[str] | None = None
    """Only the samples with these ids (``--samples test/3,test/7``), in the task's order; a
    repeated row's id selects all its repeats. None = every sample."""
    num_fewshot: int | None = None
    """Shots per prompt; None = the task's default."""
    seed: int = 1234
    """Seed for shot sampling and any other draw the task makes."""
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    """Task-specific options, e.g. ``top_k`` for CLP."""
    fewshot_as_multiturn: bool = False
    """On a chat wire, each shot a user turn (its text) and an assistant turn (its answer), the
    description the system message, before the row's user turn (lm-eval's
    ``--fewshot_as_multiturn``); refused on a completion wire. False: the shots are text in the one
    user message."""
    apply_chat_template: bool = False
    """On a completion wire, the task's chat prompt (the system instruction, the shots as turns
    when asked, the question) rendered by the server's own chat template and sent as token ids
    (lm-eval's ``--apply_chat_template``; ``Model(chat_template=True)``); the task runs as it
    does on a chat wire (``chat_facts``). On a chat wire the server applies its template anyway:
    nothing changes."""


class ModelFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What a task may know of the model it asks, resolved by the runner before the first sample
    (from the model's dialect table and, for ``token_ids``, the server's tokenizer)."""

    input_kind: Literal["completion", "chat"] = "completion"
    """``chat`` when the model's dialect takes only chat input: the prompt becomes one user
    message (through the model's chat template)."""
    capabilities: frozenset[str] = frozenset()
    """The capability keys the model's dialect supports (``sieval dialects``)."""
    token_ids: dict[str, int] = {}
    """The texts of the task's ``token_texts`` that are one token of the model's tokenizer, with
    that token's id (choice scoring by id needs no top-k)."""
    max_length: int | None = None
    """The server's maximum model length (prompt and generated tokens), when it reports one."""
    prefix_token_id: int | None = None
    """The BOS the server's tokenizer puts before a text prompt, when it adds one."""
    documents: dict[str, tuple[int, ...]] | None = None
    """The token ids (no special tokens) of the texts a task's ``documents`` names, read through
    the server's tokenizer before the run; None until then."""
    tool_results: Literal["apart", "together"] = "apart"
    """How the dialect takes the results of several tool calls made in one turn: one tool
    message each (OpenAI's chat), or ``together`` in one turn (Anthropic's, Google's)."""
    generated: dict[str, Any] | None = None
    """What each task generated through the server's tokenizer before the run, by task name
    (``Task.generate``: RULER's samples at each length); None until then."""


class Tokenizer(Protocol):
    """The server's tokenizer as a task's ``generate`` asks it (``runner/tokenizer.py``)."""

    max_length: int | None
    """The server's maximum model length (prompt and generated tokens), when it reports one."""
    chat: bool
    """A prompt goes as one user message through the chat template (a chat wire)."""

    async def count(self, text: str) -> int:
        """The tokens of ``text``, special tokens off."""
        ...

    async def overhead(self) -> int:
        """The tokens a prompt is sent with beyond its own: the BOS of a text prompt, or the
        chat template around one user message."""
        ...

    async def sent(self, text: str) -> int:
        """The tokens of ``text`` sent as the prompt, as the reply's usage counts them: with the
        special tokens of a text prompt, or as one user message through the chat template."""
        ...


COMPLETION_MODEL = ModelFacts()
"""The facts assumed when a caller gives none: a raw-text completion model."""


def chat_facts(config: TaskConfig, facts: ModelFacts) -> ModelFacts:
    """The facts a task is given for a model: ``facts``, but a chat model when the task's
    prompt goes through the server's chat template on a completion wire
    (``TaskConfig.apply_chat_template``), so that it builds its chat prompt."""
    if config.apply_chat_template and facts.input_kind == "completion":
        return msgspec.structs.replace(facts, input_kind="chat")
    return facts


class Sample(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    """Stable across runs: the resume key."""
    data: dict[str, Any]
    gold: Any
    group: str | None = None
    """For tasks reported per group (MMLU subject)."""


class SampleResult(msgspec.Struct, kw_only=True):
    prediction: Any
    gold: Any
    metrics: dict[str, float]
    channels: dict[str, Any] = msgspec.field(default_factory=dict)
    """The response channels the score used (e.g. continuation token logprobs and offsets)."""


SHARED_FIELDS = ("fewshot", "shot_ids")
"""Sample data that is the same for every sample of a run (the shots): not repeated in records;
each request's body holds the prompt as sent."""


@dataclass(frozen=True)
class PlannedCall:
    """One call of a sample as planning may know it before any I/O: what the dry run lowers,
    the pre-run and serving checks read, the forecast counts and a budget holds."""

    name: str
    """The name the task calls it by (``ctx.call(name, ...)``)."""
    request: Request
    """The request as sent (``exact``), or one standing for it: a later turn with what it
    depends on (earlier answers, tool results) left out."""
    role: str | None = None
    """The model role that answers it (``ctx.role(name)``); None: the evaluated model."""
    exact: bool = True
    """``request`` is exactly what the run sends under ``name`` (a static task's requests, a
    conversation's first turn): the checks may send it and the run then uses their answer."""
    times: int = 1
    """At most this many calls like it (a tool loop's later turns)."""
    unseen_tokens: int = 0
    """The most prompt tokens each such call may hold beyond ``request``'s own: the answers and
    tool results it leaves out (a bound: a generated answer re-tokenised in a prompt may differ
    by a token at its edges)."""
    prompt_tokens: int | None = None
    """The request's prompt tokens as the server counts them, where the task counted them
    through the server's tokenizer before the run (RULER's generated prompts, on a chat wire
    too): the forecast takes them as exact. None: the forecast counts them itself."""


class Task(abc.ABC):
    """The contract: ``load`` the samples, ``solve`` one over a call context, ``aggregate``.

    Everything else has a safe default, overridden where a task differs:

    * ``requirements_for(model)``: requirements that depend on the model (a chat model needs
      ``chat`` instead of ``text_prompt``); ``protocol_for(model)``: the protocol as run for it;
    * ``token_texts(config)``: texts whose single-token ids the runner resolves into
      ``ModelFacts.token_ids`` through the server's tokenizer;
    * ``documents(samples, config)``: texts the runner tokenises whole into
      ``ModelFacts.documents`` before the run (rolling log-likelihood);
    * ``describe(sample)``: what a record keeps of the sample;
    * ``check_ready(allow_unsafe_code)``: a ``Readiness``, before the run's first request (the
      code tasks choose their sandbox and run a trivial program in it; a checked task imports
      what its checker needs, ``scoring.dependencies``), or ``ConfigError`` naming the fix;
    * ``samples_per_row(config)``: how many samples each row is (repeats); the config's ``n``
      then counts rows;
    * ``keeps_predictions``: ``aggregate`` also reads each sample's prediction (maj@k);
    * ``cluster_by``: ``"group"``, samples of one group are not independent draws (MMLU's
      subjects, standard errors clustered by group); ``"item"``, a row's repeats are clustered;
    * ``requests(sample, config, model)``: a static task's calls, all known before I/O; None
      for a task that is not static, which says what is known in ``calls``;
    * ``roles``: the model roles ``solve`` calls besides the evaluated model (``judge``);
    * ``metric_ranges``: ``{metric: (lowest, highest)}`` for per-sample metrics with a range
      other than a 0/1 proportion's (TruthfulQA MC2's probability mass in [0, 1], a
      log-likelihood at most 0): it picks the metric's interval, which stays in it
      (``scoring/uncertainty.py``);
    * ``derived``: ``{figure: uncertainty.Derived}`` for figures ``aggregate`` computes from sums
      of per-sample metrics (a perplexity, bits per byte), so that the report gives them an
      interval too.
    """

    name: str
    protocol: str
    """The scoring protocol in one line, recorded with every result."""
    headline: str
    """The metric reported first."""
    requirements: Sequence[Requirement] = ()
    defaults: Mapping[str, Any] = MappingProxyType({})
    """What ``num_fewshot`` and the task's options default to (shown by ``sieval tasks``)."""
    keeps_predictions: bool = False
    cluster_by: Literal["group", "item"] | None = None
    roles: tuple[str, ...] = ()
    """The model roles ``solve`` asks through ``ctx.role(name)``; a run whose config names no
    model for one of them is refused before any I/O."""
    metric_ranges: Mapping[str, tuple[float, float]] = MappingProxyType({})
    derived: Mapping[str, Derived] = MappingProxyType({})
    static: ClassVar[bool] = False
    """Whether every call of a sample is known before I/O (``requests``)."""
    long_runs: ClassVar[bool] = False
    """Whether a run of it is long (RULER's): its forecast, tokens and time at the server's
    measured rate, is shown before the first request unasked (``--no-forecast``: not)."""
    listing: tuple[str, str] | None = None
    """The family and the data ``sieval tasks`` lists for a task that is not a spec (a spec's
    own say it): ``("tool calls", "bfcl-eval")``."""
    pairs_with: str | None = None
    """A task over the same samples under another protocol (BFCL's FC and Prompt columns):
    ``sieval compare`` pairs a run of one with a run of the other, sample by sample."""

    # -- what every task has ------------------------------------------------------------------

    @abc.abstractmethod
    def load(self, data_dir: Path, config: TaskConfig) -> Iterable[Sample]:
        """All evaluation samples in a fixed order (shots already drawn into ``data``). It may
        yield them one at a time: the plan stores each as it comes (``plan/samples.py``) and
        stops reading at the config's ``n``."""

    @abc.abstractmethod
    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        """One sample: its calls through ``ctx`` (each decided before its I/O, checked after,
        recorded), then its metrics. Raise a ``SievalError`` when they cannot be trusted (a
        failed sample is recorded as failed, never as wrong); a call that failed fails the
        sample whatever ``solve`` returns."""

    def data_files(self, data_dir: Path) -> list[Path]:
        """The files this task reads (their checksums enter the run identity)."""
        return []

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        """Run-level metrics from each sample's ``metrics`` and ``group``: the report passes, in
        the task's sample order, samples that hold only their ``id`` and ``group`` and results
        that hold only their metrics (and their prediction with ``keeps_predictions``).
        Iterate ``results`` rather than index it: it may be a view built as it is read. The
        default: each metric's mean, and ``n``."""
        from ._shared import means

        return means(results)

    # -- what planning asks (safe defaults) -----------------------------------------------------

    def requirements_for(self, model: ModelFacts) -> Sequence[Requirement]:
        return self.requirements

    def protocol_for(self, model: ModelFacts) -> str:
        return self.protocol

    def token_texts(self, config: TaskConfig) -> Sequence[str]:
        return ()

    def documents(self, samples: Sequence[Sample], config: TaskConfig) -> Iterable[str]:
        return ()

    def samples_per_row(self, config: TaskConfig) -> int:
        return 1

    def check_ready(self, allow_unsafe_code: bool = False) -> Readiness:
        """The task's own check before the run's first request; the default: nothing to check."""
        return Readiness()

    async def generate(
        self, samples: Sequence[Sample], config: TaskConfig, tokenizer: Tokenizer, data_dir: Path
    ) -> Any:
        """What the task generates through the server's tokenizer before the run (its
        ``ModelFacts.generated`` entry: RULER's samples), or None: nothing to generate."""
        return None

    def describe(self, sample: Sample) -> dict[str, Any]:
        """What a record keeps of its sample: its data without the shots, plus the gold."""
        out = {k: v for k, v in sample.data.items() if k not in SHARED_FIELDS}
        out["gold"] = sample.gold
        return out

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request] | None:
        """A static task's named requests for one sample (they may run concurrently); None: the
        calls depend on replies (``calls`` says what is known)."""
        return None

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        """What is known of the sample's calls before I/O: a static task's requests exactly;
        a task that is not static overrides it with its first turn and a bound on the rest
        (none known: the plan lowers nothing of it and the forecast has no bound)."""
        named = self.requests(sample, config, model)
        return () if named is None else [PlannedCall(n, r) for n, r in named.items()]


class StaticTask(Task):
    """A task whose calls are all known before I/O: ``requests`` then ``score``.

    ``solve`` sends every request at once through the context and scores the replies; a request
    that failed fails the sample with its error (the first, in request order), unscored."""

    static: ClassVar[bool] = True

    @abc.abstractmethod
    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        """Named requests for one sample; they may run concurrently."""

    @abc.abstractmethod
    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        """Metrics of one sample from its responses; raise a ``SievalError`` if they cannot be
        trusted."""

    async def score_async(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        """``score`` as ``solve`` awaits it; a task whose checker is a coroutine (running the
        answer's code) overrides this one."""
        return self.score(sample, responses, config, model)

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        responses = await answered(ctx, self.requests(sample, ctx.config, ctx.facts))
        return await self.score_async(sample, responses, ctx.config, ctx.facts)


async def answered(ctx: Context, requests: Mapping[str, Request]) -> dict[str, Response]:
    """The replies to ``requests``, sent at once through ``ctx``; the first failed call's error
    (in request order) is raised: its sample fails, unscored."""
    calls = await ctx.gather(requests)
    for call in calls.values():
        if call.error is not None:
            raise call.error
    return {name: call.result() for name, call in calls.items()}


def describe(task: Task, sample: Sample) -> dict[str, Any]:
    """What a record keeps of its sample (``task.describe``)."""
    return task.describe(sample)
