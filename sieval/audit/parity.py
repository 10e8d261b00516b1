"""Dialect parity: the same tasks through two dialects against one server, then the first again.

``run_parity`` runs three ordinary evaluations of one model (dialect A, dialect B, dialect A as a
control) with every token recorded, then compares them call by call: the input-token logprobs
(positions after the first, which no wire scores), their texts, the sampled tokens and their
top-k, and the generated texts. Two dialects reaching the same server must give identical scores;
the control pass shows how much the server itself varies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..plan.config import EvalConfig, results_dirname
from ..runner.engine import RunOptions, RunResult, run_eval
from ..runner.progress import ProgressSink
from ..scoring.uncertainty import quantiles
from ..store.records import Record, read_records, records_path
from ..tasks.base import Task

__all__ = ["CallDiff", "ParityResult", "TaskParity", "compare_records", "run_parity"]


@dataclass
class CallDiff:
    """How two passes' answers to the same calls differ."""

    calls: int = 0
    input_logprobs: int = 0
    """Input-token logprobs compared (the unscored first position excluded)."""
    sampled_logprobs: int = 0
    top_k_logprobs: int = 0
    max_abs_diff: float = 0.0
    texts_equal: bool = True
    """Every token text (input, sampled, top-k) and every generated text matched."""
    mismatches: list[str] = field(default_factory=list)
    """The first few differences, for a reader to look at."""
    diffs: list[float] = field(default_factory=list, repr=False)
    """Every |difference| compared (for the distribution; two different servers)."""
    samples: int = 0
    same_prediction: int = 0
    """Samples both passes scored, and how many of them got the same prediction."""

    def quantiles(self) -> dict[str, float]:
        """The |diff| distribution: p50, p90, p99 and max over every compared logprob."""
        return quantiles(self.diffs)

    def note(self, where: str) -> None:
        self.texts_equal = False
        if len(self.mismatches) < 5:
            self.mismatches.append(where)

    def logprob(self, a: float | None, b: float | None, where: str) -> None:
        if a is None or b is None:
            if a is not b:
                self.note(f"{where}: scored in one pass only")
            return
        diff = abs(a - b) if math.isfinite(a) and math.isfinite(b) else math.inf
        self.max_abs_diff = max(self.max_abs_diff, diff)
        self.diffs.append(diff)


@dataclass
class TaskParity:
    task: str
    headline: str
    metrics: list[float | None]
    """The headline metric of each pass."""
    failed: list[int]
    versus_b: CallDiff
    """Pass 1 (dialect A) against pass 2 (dialect B)."""
    control: CallDiff
    """Pass 1 against pass 3 (dialect A again): what the server itself varies."""
    adjacent: CallDiff
    """Pass 2 (B) against pass 3 (A): the two dialects on the same, later server state."""

    @property
    def identical(self) -> bool:
        d = self.versus_b
        return (
            len(set(self.metrics)) == 1
            and not any(self.failed)
            and d.max_abs_diff == 0.0
            and d.texts_equal
        )


@dataclass
class ParityResult:
    dialects: tuple[str, str, str]
    runs: list[RunResult]
    tasks: list[TaskParity]
    warmup: RunResult | None = None
    """An uncompared first pass of dialect A that brought the server to a steady state."""

    @property
    def identical(self) -> bool:
        return all(t.identical for t in self.tasks)

    def to_json(self) -> dict[str, Any]:
        return {
            "dialects": list(self.dialects),
            "runs": [str(r.run_dir) for r in self.runs],
            "warmup": str(self.warmup.run_dir) if self.warmup else None,
            "identical": self.identical,
            "tasks": [
                {
                    "task": t.task,
                    "headline": t.headline,
                    "metrics": t.metrics,
                    "failed": t.failed,
                    "identical": t.identical,
                    "versus_b": _diff_json(t.versus_b),
                    "control": _diff_json(t.control),
                    "adjacent": _diff_json(t.adjacent),
                }
                for t in self.tasks
            ],
        }


def _diff_json(diff: CallDiff) -> dict[str, Any]:
    data = {k: v for k, v in diff.__dict__.items() if k != "diffs"}
    data["abs_diff_quantiles"] = diff.quantiles()
    built: dict[str, Any] = msgspec.to_builtins(data)
    return built


def _rows(tokens: Any) -> list[list[Any]]:
    return list(tokens) if isinstance(tokens, list) else []


def _compare_tokens(
    diff: CallDiff, a: list[list[Any]], b: list[list[Any]], where: str, skip_first: bool
) -> int:
    """Compare token rows ``[text, logprob, id, top]``; return how many logprobs were compared."""
    if len(a) != len(b):
        diff.note(f"{where}: {len(a)} vs {len(b)} positions")
        return 0
    compared = 0
    for i, (ra, rb) in enumerate(zip(a, b, strict=True)):
        if skip_first and i == 0:
            continue  # no wire scores the first input position; its text differs by design
        if ra[0] != rb[0]:
            diff.note(f"{where}[{i}]: {ra[0]!r} vs {rb[0]!r}")
        diff.logprob(ra[1], rb[1], f"{where}[{i}]")
        compared += 1
        top_a, top_b = ra[3] or [], rb[3] or []
        if [t for t, _ in top_a] != [t for t, _ in top_b]:
            diff.note(f"{where}[{i}].top")
        for (_, la), (_, lb) in zip(top_a, top_b, strict=False):
            diff.logprob(la, lb, f"{where}[{i}].top")
            diff.top_k_logprobs += 1
    return compared


def compare_records(a: Mapping[str, Record], b: Mapping[str, Record]) -> CallDiff:
    """Compare two passes' records of one task, call by call (samples both passes scored)."""
    diff = CallDiff()
    for sample_id in sorted(set(a) & set(b)):
        ra, rb = a[sample_id], b[sample_id]
        diff.samples += 1
        diff.same_prediction += int(ra.prediction == rb.prediction)
        for name in sorted(set(ra.requests) & set(rb.requests)):
            ta, tb = ra.requests[name].tokens, rb.requests[name].tokens
            if ta is None or tb is None:
                continue
            diff.calls += 1
            where = f"{sample_id}/{name}"
            diff.input_logprobs += _compare_tokens(
                diff, _rows(ta.get("input")), _rows(tb.get("input")), f"{where}.input", True
            )
            choices_a, choices_b = ta.get("choices") or [], tb.get("choices") or []
            if len(choices_a) != len(choices_b):
                diff.note(f"{where}: {len(choices_a)} vs {len(choices_b)} choices")
                continue
            for j, (ca, cb) in enumerate(zip(choices_a, choices_b, strict=True)):
                if ca.get("text") != cb.get("text"):
                    diff.note(f"{where}.choices[{j}].text")
                diff.sampled_logprobs += _compare_tokens(
                    diff,
                    _rows(ca.get("tokens")),
                    _rows(cb.get("tokens")),
                    f"{where}.choices[{j}]",
                    False,
                )
    return diff


def _records(result: RunResult, model_dir: str, task: str) -> dict[str, Record]:
    path = records_path(result.run_dir, model_dir, task)
    return {i: r for i, r in read_records(path).records.items() if r.status == "ok"}


def _headline(result: RunResult, task: str) -> tuple[float | None, int, str]:
    for entry in result.report.results if result.report else []:
        if entry.task == task:
            value = entry.value
            return (
                (float(value) if value is not None else None),
                entry.samples.failed,
                entry.headline,
            )
    return None, 0, ""


def run_parity(
    config: EvalConfig,
    dialects: Sequence[str],
    options: RunOptions | None = None,
    *,
    tasks: Mapping[str, Task] | None = None,
    progress: ProgressSink | None = None,
    warmup: bool = False,
    endpoints: Sequence[str] = (),
) -> ParityResult:
    """Evaluate ``config``'s (single) model through dialect A, B, then A; compare the passes.

    ``warmup`` first runs dialect A once, uncompared: a server's caches (vLLM's prefix cache) can
    make the first pass differ from later ones, which the control pass would otherwise show.
    ``endpoints`` (two base URLs) puts A and B on different servers (vLLM against SGLang): the
    |diff| distribution and the prediction agreement then say how far two engines agree.
    """
    if endpoints and len(endpoints) != 2:
        raise ConfigError("--endpoints takes two base URLs, one per dialect", path="endpoints")
    two_servers = bool(endpoints) and endpoints[0] != endpoints[1]
    if len(dialects) != 2 or (dialects[0] == dialects[1] and not two_servers):
        raise ConfigError(
            "parity needs two different dialects, e.g. --dialects openai_completions,vllm_native "
            "(or one dialect on two servers: --endpoints URL_A,URL_B)",
            path="dialects",
        )
    options = options or RunOptions()
    models = [m for m in config.models if not options.models or m.label in options.models]
    if len(models) != 1:
        raise ConfigError(
            f"parity compares dialects on one model; the config selects {len(models)} "
            "(pick one with --model)",
            path="models",
        )
    a, b = dialects
    order = (a, b, a)
    out = Path(options.out or config.out)
    runs: list[RunResult] = []
    # (label, dialect, which side: 0 is A, 1 is B); a side picks its endpoint, so one dialect
    # can be compared across two servers
    passes = [(f"0-warmup-{a}", a, 0)] if warmup else []
    passes += [(f"{i + 1}-{d}", d, i % 2) for i, d in enumerate(order)]
    for label, dialect, side in passes:
        model = msgspec.structs.replace(models[0], dialect=dialect)
        if endpoints:
            model = msgspec.structs.replace(model, endpoint=endpoints[side])
        cfg = msgspec.structs.replace(config, models=[model])
        pass_options = RunOptions(
            out=out,
            data_dir=options.data_dir,
            limit=options.limit,
            concurrency=options.concurrency,
            tasks=options.tasks,
            wire_log=options.wire_log,
            run_name=f"{options.run_name or 'parity'}-{label}",
            record_tokens=True,
        )
        runs.append(run_eval(cfg, pass_options, tasks=tasks, progress=progress))
    warm = runs.pop(0) if warmup else None
    model_dir = results_dirname(models[0].label)
    task_names = [entry.task for entry in runs[0].report.results] if runs[0].report else []
    parity: list[TaskParity] = []
    for name in task_names:
        heads = [_headline(run, name) for run in runs]
        recs = [_records(run, model_dir, name) for run in runs]
        parity.append(
            TaskParity(
                task=name,
                headline=heads[0][2],
                metrics=[h[0] for h in heads],
                failed=[h[1] for h in heads],
                versus_b=compare_records(recs[0], recs[1]),
                control=compare_records(recs[0], recs[2]),
                adjacent=compare_records(recs[1], recs[2]),
            )
        )
    return ParityResult(dialects=order, runs=runs, tasks=parity, warmup=warm)
