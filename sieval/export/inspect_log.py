"""An Inspect eval log per (model, task): what ``inspect view``, VS Code and ``evals_df`` open.

Built with ``inspect_ai``'s own log types and written by its ``write_eval_log`` (the ``.eval``
zip), so the format is Inspect's by construction; ``inspect_ai`` is an optional extra
(``pip install 'sieval[export]'``), imported only here.

What goes where: the eval spec names the task, the model (``sieval/<model id>``, Inspect's
``provider/model`` form), the server's base URL, the shots (``task_args.num_fewshot``) and the
protocol and run identity (``metadata``); the results hold each of the report's metrics as a
score with ``mean`` and ``stderr`` and the 95% interval's bounds (``ci_low``, ``ci_high``); each
sample holds the exact inputs sent (every request's prompt or chat messages, in order, with the
reply's text where one was generated), its scores, the tokens it used, and, for a failed sample,
the error instead of any score.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .extras import need
from .source import Sample, Source, TaskRun, generation_of, plain

__all__ = ["export_inspect"]


def export_inspect(source: Source, dest: Path) -> list[Path]:
    need("inspect_ai", "Inspect logs")
    from inspect_ai.log import write_eval_log

    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for unit in source.units:
        log = _log(source, unit)
        stamp = datetime.fromtimestamp(source.started, tz=UTC).strftime("%Y-%m-%dT%H-%M-%S+00-00")
        path = dest / f"{stamp}_{unit.task}_{_id(source, unit)[:22]}.eval"
        write_eval_log(log, path, format="eval")
        written.append(path)
    return written


def _id(source: Source, unit: TaskRun) -> str:
    digest = hashlib.sha256(f"{source.identity}/{unit.model}/{unit.task}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4)).replace("-", "")


def _log(source: Source, unit: TaskRun) -> Any:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )
    from inspect_ai.model import ModelUsage

    model = f"sieval/{source.model_id(unit.model)}"
    provenance = source.provenance(unit.model)
    samples = [_sample(source, unit, s, model) for s in unit.samples]
    scores = []
    for metric, value in unit.scalar_metrics().items():
        spread = unit.spread(metric)
        metrics = {"mean": EvalMetric(name="mean", value=value)}
        if isinstance(spread.get("se"), int | float):
            metrics["stderr"] = EvalMetric(name="stderr", value=float(spread["se"]))
        ci = spread.get("ci")
        if isinstance(ci, list) and len(ci) == 2 and None not in ci:
            metrics["ci_low"] = EvalMetric(name="ci_low", value=float(ci[0]))
            metrics["ci_high"] = EvalMetric(name="ci_high", value=float(ci[1]))
        scores.append(
            EvalScore(
                name=metric,
                scorer=metric,
                scored_samples=unit.result.samples.scored,
                unscored_samples=unit.result.samples.failed,
                metrics=metrics,
                metadata={"estimator": spread.get("estimator"), "n": spread.get("n")},
            )
        )
    usage: dict[str, int] = {}
    for sample in unit.samples:
        for key, value in sample.usage.items():
            usage[key] = usage.get(key, 0) + value
    started = source.iso_started()
    wall = source.report.timings.wall_s
    completed = datetime.fromtimestamp(source.started + wall, tz=UTC).isoformat()
    counts = unit.result.samples
    return EvalLog(
        status="success",
        eval=EvalSpec(
            eval_id=_id(source, unit),
            run_id=source.identity.removeprefix("sha256:")[:22],
            created=started,
            task=unit.task,
            task_version=0,
            task_args={"num_fewshot": unit.shots},
            dataset=EvalDataset(
                name=unit.task,
                samples=counts.total,
                sample_ids=[s.record.sample_id for s in unit.samples],
            ),
            model=model,
            model_base_url=provenance.get("endpoint"),
            config=EvalConfig(limit=source.task_config(unit.task).get("n")),
            metadata={
                "sieval_version": source.version,
                "run": source.identity,
                "protocol": source.protocol(unit.task),
                "headline": unit.headline,
                "dialect": provenance.get("dialect"),
                "shots": unit.shots,
            },
        ),
        results=EvalResults(
            total_samples=counts.total,
            completed_samples=counts.scored,
            scores=scores,
        ),
        stats=EvalStats(
            started_at=started,
            completed_at=completed,
            model_usage={model: _usage(ModelUsage, usage)},
        ),
        samples=samples,
    )


def _usage(cls: Any, usage: dict[str, int]) -> Any:
    i, o = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    return cls(input_tokens=i, output_tokens=o, total_tokens=i + o)


def _sample(source: Source, unit: TaskRun, sample: Sample, model: str) -> Any:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.scorer import Score

    record = sample.record
    messages = _messages(sample)
    text = generation_of(sample)
    usage = _usage(ModelUsage, sample.usage)
    finish = next((f for r in sample.requests.values() for f in r.finish), "")
    output = ModelOutput(
        model=model,
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content=text or "", model=model),
                stop_reason="max_tokens" if finish.startswith("length") else "stop",
            )
        ],
        usage=usage,
    )
    choices = (record.sample or {}).get("choices")
    error = None
    scores = None
    if record.status == "ok":
        answer = None if record.prediction is None else str(record.prediction)
        figures = unit.sample_metrics(sample)
        scores = {m: Score(value=v, answer=answer) for m, v in figures.items()}
    else:
        err = record.error or {}
        error = EvalError(
            message=f"{err.get('class', 'Unknown')}: {err.get('message', '')}",
            traceback="",
            traceback_ansi="",
        )
    return EvalSample(
        id=record.sample_id,
        epoch=1,
        # the question as the task states it (a choice task sends one prompt per option)
        input=str((record.sample or {}).get("query") or sample.prompt or ""),
        choices=[str(c) for c in choices] if isinstance(choices, list) else None,
        target="" if record.gold is None else str(record.gold),
        messages=messages,
        output=output,
        scores=scores,
        metadata={
            "sieval_status": record.status,
            "prediction": plain(record.prediction),
            "replicas": sample.replicas,
            "group": record.group,
        },
        model_usage={model: usage},
        total_time=record.duration_s,
        error=error,
    )


def _messages(sample: Sample) -> list[Any]:
    """Every request's input as sent (chat messages as they were, a prompt as one user
    message), each followed by the text the model generated for it, if any."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    from ..results.explain import prompt_text

    out: list[Any] = []
    kinds = {
        "system": ChatMessageSystem,
        "user": ChatMessageUser,
        "assistant": ChatMessageAssistant,
    }
    for request in sample.requests.values():
        body = request.body or {}
        turns = body.get("messages")
        if isinstance(turns, list):
            for turn in turns:
                role = turn.get("role") if isinstance(turn, dict) else None
                kind = kinds.get(str(role), ChatMessageUser)
                out.append(kind(content=_text(turn.get("content"))))
        else:
            out.append(ChatMessageUser(content=prompt_text(request) or ""))
        said = [o.get("text") for o in (getattr(request, "output", None) or []) if o]
        for text in said:
            if isinstance(text, str):
                out.append(ChatMessageAssistant(content=text))
    text = generation_of(sample)
    if text is not None and not any(isinstance(m, ChatMessageAssistant) for m in out):
        out.append(ChatMessageAssistant(content=text))
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)
