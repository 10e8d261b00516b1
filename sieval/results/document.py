"""``report.json`` as typed structures: the report, a (model, task) unit's entry, its sample
counts, metric intervals, failures, provenance and cost, the timings, a budget and a partial run.

``report.py`` builds a ``Report`` and writes it; every reader (``sieval report``, ``samples``,
``compare``, ``finalize``, the HTML view) decodes it with ``load_report`` and reads attributes,
never string keys. The file's bytes are what they were when the report was a dict: the fields
are declared in the order the keys were written, and a key written only sometimes (``stopped``,
``cache``, ``budget``, ``partial``, a sharded run's ``shards``, a clustered interval's
``clusters``, a unit's ``censored``) is ``UNSET`` when absent, so it is left out as before. A
report written by an earlier sieval decodes too: a key it lacks takes its default (a version 1
report has no ``intervals``; one made before costs were reported has no ``cost``).

Three sections stay plain data, as their writers shape them: ``preflight`` (each model's pre-run
check results, ``runner/checks.py``), ``serving`` (the serving checks' findings,
``serving.fingerprint_history.report_section``) and ``ready`` (the tasks' own checks,
``Task.check_ready``); a unit's ``metrics`` are what its task's ``aggregate`` returns (numbers,
and groups of them such as MMLU's ``by_subject``).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ..cost.budget import BudgetSummary
from ..plan.config import Price

__all__ = [
    "CacheUse",
    "Censored",
    "CostActual",
    "CostForecast",
    "FailureExample",
    "Interval",
    "Mark",
    "Partial",
    "Report",
    "RerunCounts",
    "RoleCost",
    "RunInfo",
    "SampleCounts",
    "Server",
    "Session",
    "Timings",
    "UnitCost",
    "UnitProvenance",
    "UnitResult",
]


class Server(msgspec.Struct, kw_only=True):
    """What a server said about itself, as a report names it (the pre-flight's ``Provenance``
    is one, with what the run needs beside it)."""

    endpoint: str
    """The base URL, redacted (``embedded`` for the reference server)."""
    server_version: Any = None
    """The ``/version`` reply, when the server has one."""
    served_models: list[str] = msgspec.field(default_factory=list)
    """The ids ``/v1/models`` lists."""
    checked_by: str = ""
    """The route that answered the pre-flight (``GET /v1/models``, Google's ``GET
    /v1beta/models/{model}``, or a first request of 1 token where the server lists nothing)."""


class SampleCounts(msgspec.Struct, kw_only=True):
    """A unit's samples: planned, scored, failed (never scored) and with no record yet."""

    total: int
    scored: int
    failed: int
    missing: int


class Interval(msgspec.Struct, kw_only=True):
    """One metric's uncertainty (``tally.intervals``, ``scoring/uncertainty.py``)."""

    value: float | None
    """The mean (None where it was not finite: JSON has no nan)."""
    se: float | None
    """The standard error (None: it cannot be estimated)."""
    ci: list[float | None]
    """The 95% interval, ``[low, high]``."""
    n: int
    estimator: str
    """What produced ``se`` and ``ci`` (``scoring/uncertainty.py`` names each)."""
    effective_n: float | UnsetType = UNSET
    """The n of independent 0/1 samples the interval was computed at (Clopper–Pearson)."""
    clusters: int | UnsetType | None = UNSET
    """With clustered samples: how many clusters."""
    se_iid: float | UnsetType | None = UNSET
    """With clustered samples: the error as if they were independent."""


class FailureExample(msgspec.Struct, kw_only=True):
    """One failed sample: its id and its error as recorded (``SievalError.to_record``)."""

    sample_id: str
    error_class: str = msgspec.field(name="class", default="Unknown")
    message: str = ""
    dialect: str | UnsetType = UNSET
    path: str | UnsetType = UNSET
    server: str | UnsetType = UNSET
    attempts: int | UnsetType = UNSET
    status: int | UnsetType | None = UNSET


class RerunCounts(msgspec.Struct, kw_only=True):
    """A unit's re-runs of censored samples (``--rerun-censored``, ``runner/rerun.py``): how
    many, how they ended, and the budgets and factors they ran at."""

    samples: int
    answered: int
    still_censored: int
    failed: int
    max_tokens: list[int] = msgspec.field(default_factory=list)
    factors: list[float] = msgspec.field(default_factory=list)


class Censored(msgspec.Struct, kw_only=True):
    """A generation task's answers the token budget cut before they gave one
    (``tally.censored_figures``, ``scoring/censored.py``): how many of how many, and the headline
    with them counted wrong and left out (None when every sample was censored)."""

    count: int
    of: int
    share: float
    as_wrong: Interval
    left_out: Interval | None
    reruns: RerunCounts | UnsetType = UNSET
    """Absent until ``--rerun-censored`` re-ran some of them."""


class UnitProvenance(msgspec.Struct, kw_only=True):
    """Who answered a unit: the model asked for and the ones the replies named, the dialect, the
    server, and what the run knew of the model (its input kind, token ids)."""

    requested_model: str
    reported_models: list[str]
    dialect: str
    endpoint: str | None = None
    server_version: Any = None
    served_models: list[str] = msgspec.field(default_factory=list)
    checked_by: str = ""
    input_kind: str = "completion"
    token_ids: dict[str, int] = msgspec.field(default_factory=dict)


class CostForecast(msgspec.Struct, kw_only=True):
    """A unit's forecast (``cost.forecast.UnitForecast`` without its model and task), whether
    its prompt count is exact, and the most it may cost at the price."""

    samples: int
    requests: int
    prompt_tokens: int
    exact_requests: int
    max_output_tokens: int
    unbounded_requests: int = 0
    method: str = ""
    role: str | UnsetType | None = UNSET
    """The role whose calls these are (a judge's); None: the evaluated model's. This and the
    next two are absent from a report written before roles were forecast."""
    bound: bool | UnsetType = UNSET
    """The task is not static: the figures are the most its calls may take, not a count."""
    answered_by: str | UnsetType | None = UNSET
    """With ``role``: the label of the model playing it."""
    exact: bool = True
    cost: float | None = None


class CostActual(msgspec.Struct, kw_only=True):
    """What a unit's records say was spent (``cost.spent.Spent``'s figures) and what that cost."""

    records: int = 0
    requests: int = 0
    answered: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    without_usage: int = 0
    retries: int = 0
    cost: float | None = None


class RoleCost(msgspec.Struct, kw_only=True):
    """What a role's calls in a unit (a judge's) cost, at the price of the model playing it."""

    model: str | None
    """The label of the model playing the role (None: the plan no longer names it)."""
    forecast: CostForecast | None = None
    actual: CostActual = msgspec.field(default_factory=CostActual)
    price: Price | None = None


class UnitCost(msgspec.Struct, kw_only=True):
    """A unit's forecast (None when the run made none), what it spent, and the price of both."""

    forecast: CostForecast | None = None
    actual: CostActual = msgspec.field(default_factory=CostActual)
    price: Price | None = None
    roles: dict[str, RoleCost] | UnsetType = UNSET
    """The roles' calls (a judge's), each apart; absent when no role made one."""


class Mark(msgspec.Struct, kw_only=True):
    """A mark on a headline (``marks.py``): which, why, and what to do."""

    mark: str
    why: str
    fix: str


class UnitResult(msgspec.Struct, kw_only=True):
    """One (model, task) of a run."""

    model: str
    task: str
    protocol: str = ""
    headline: str
    """The metric the summary shows (``Task.headline``)."""
    metrics: dict[str, Any] = msgspec.field(default_factory=dict)
    """The task's figures over the scored samples: numbers, and groups of them (a subject's)."""
    intervals: dict[str, Interval] = msgspec.field(default_factory=dict)
    samples: SampleCounts
    failures: dict[str, int] = msgspec.field(default_factory=dict)
    """Failed samples by error class."""
    failure_examples: list[FailureExample] = msgspec.field(default_factory=list)
    finish_reasons: dict[str, int] = msgspec.field(default_factory=dict)
    empty_answers: int = 0
    generates: bool = True
    """Whether the answers are generated text (a scoring task's one-token probe is not)."""
    censored: Censored | UnsetType = UNSET
    """A generation task's censored answers; absent for a task that does not generate, and in
    a report of records written before they were counted."""
    provenance: UnitProvenance
    cost: UnitCost | UnsetType = UNSET
    """Absent from a report written before costs were reported."""
    marks: list[Mark] | UnsetType = UNSET
    """What a reader must know before trusting the headline (``marks.py``); absent from a
    report written before marks existed (``marks.result_marks`` computes them)."""

    @property
    def value(self) -> Any:
        """The headline metric's value (None before any sample is scored)."""
        return self.metrics.get(self.headline)

    @property
    def spread(self) -> Interval | None:
        """The headline metric's interval."""
        return self.intervals.get(self.headline)


class RunInfo(msgspec.Struct, kw_only=True):
    dir: str = ""
    identity: str
    inputs: dict[str, Any] = msgspec.field(default_factory=dict)
    """What the identity hashes (``run.json``'s ``inputs``)."""
    resumed: bool = False
    shards: int | UnsetType = UNSET
    """A sharded run's shards (``sieval finalize``)."""


class Session(msgspec.Struct, kw_only=True):
    """One session of a run: the first, and each resume."""

    started: float = 0.0
    wall_s: float = 0.0
    requests: int = 0
    requests_per_s: float = 0.0
    samples_run: int = 0
    shard: int | UnsetType = UNSET
    """A sharded run's session: the shard's (``sieval finalize``)."""


class Timings(msgspec.Struct, kw_only=True):
    """Totals over every session of a run, and the sessions."""

    started: float = 0.0
    wall_s: float = 0.0
    """From the first start to the last end (a sharded run's shards overlap)."""
    busy_s: float | UnsetType = UNSET
    """A sharded run's: the sum of its sessions' walls."""
    requests: int = 0
    requests_per_s: float = 0.0
    samples_run: int = 0
    sessions: list[Session] = msgspec.field(default_factory=list)


class Partial(msgspec.Struct, kw_only=True):
    """A report built from the records of a run that has no current ``report.json`` (never
    written to disk: ``snapshot``)."""

    total: int
    recorded: int
    missing: int
    running: bool
    """Whether a process is writing the run now."""
    data_changed: bool
    """Whether the task's data files changed since the run started."""


class CacheUse(msgspec.Struct, kw_only=True):
    """What one model's ``--cache`` did (``runner/reply_cache.py``)."""

    dir: str
    hits: int
    """Requests answered from the cache."""
    sent: int
    """Requests sent to the server."""
    kept: int
    """Replies kept for a later run."""


class Report(msgspec.Struct, kw_only=True):
    """``report.json``."""

    report_version: int = 1
    records_schema_version: int = 0
    sieval_version: str = ""
    run: RunInfo
    denominator: str = ""
    """What the metrics are computed over (``report.DENOMINATOR``)."""
    results: list[UnitResult]
    timings: Timings = msgspec.field(default_factory=Timings)
    warnings: list[str] = msgspec.field(default_factory=list)
    preflight: dict[str, list[dict[str, Any]]] = msgspec.field(default_factory=dict)
    """Each model's pre-run check results, as plain data."""
    serving: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    """What the serving checks found, per model, as plain data."""
    ready: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    """What the tasks' own checks found, per task, as plain data (``Task.check_ready``: the code
    tasks' sandbox, ``{"sandbox": {"mode", "unsafe", "memory", ...}}``)."""
    stopped: str | UnsetType = UNSET
    """Why the run stopped before its last sample (``--max-failures``, a budget)."""
    cache: dict[str, CacheUse] | UnsetType = UNSET
    """Per model, what ``--cache`` did (with ``--cache`` only)."""
    budget: BudgetSummary | UnsetType = UNSET
    partial: Partial | UnsetType = UNSET

    @property
    def failed(self) -> int:
        """Failed samples over every unit."""
        return sum(r.samples.failed for r in self.results)
