"""lm-evaluation-harness 0.4.13's result files, so tools that read lm-eval's read sieval's.

Per model, in ``DEST/<label>/`` (lm-eval's ``output_path/<model_name_sanitized>/``; the label,
as two entries of a run may send one model id):

- ``results_<stamp>.json``: ``results`` (per task ``alias`` and each ``metric,filter`` with its
  ``metric_stderr,filter``), ``group_subtasks``, ``configs``, ``versions``, ``n-shot``,
  ``higher_is_better``, ``n-samples`` (``original``: the samples planned, ``effective``: those
  scored), ``config``, ``date``, ``task_hashes``, ``total_evaluation_time_seconds``, the model's
  names; and a ``sieval`` key lm-eval does not have (the run identity, the protocol, the 95%
  intervals, the failed samples), which its readers skip;
- ``samples_<task>_<stamp>.jsonl``: one line per scored sample and filter, as lm-eval's
  ``EvaluationTracker.save_results_samples`` writes them (``doc_id``, ``doc``, ``target``,
  ``arguments`` as ``gen_args_i: {arg_0, arg_1}``, ``resps``/``filtered_resps`` as text,
  ``filter``, ``metrics``, the three hashes, each metric's value).

The format is lm-eval's ``lm_eval/result_schema.py`` (``EvalResults``, ``SampleResult``) and its
``evaluator.py``; the stamp is the run's start (UTC), so exporting twice writes the same names.
Metric names follow lm-eval's filters: a task that scores both a strict and a flexible answer
(GSM8K's ``exact_match`` and ``flexible_exact_match``) exports ``exact_match,strict-match`` and
``exact_match,flexible-extract``; every other metric is ``metric,none``. A failed sample is never
exported as a sample (lm-eval has no unscored row): the ``sieval`` key counts them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .source import Sample, Source, TaskRun, generation_of, plain, sha256

__all__ = ["export_lm_eval", "lm_metric"]

FLEXIBLE = "flexible_exact_match"


def lm_metric(metric: str, metrics: set[str]) -> tuple[str, str]:
    """sieval's metric name as lm-eval's ``(metric, filter)``."""
    if FLEXIBLE in metrics:
        if metric == FLEXIBLE:
            return "exact_match", "flexible-extract"
        if metric == "exact_match":
            return "exact_match", "strict-match"
    return metric, "none"


def _sanitized(name: str) -> str:
    """lm-eval's ``sanitize_model_name``."""
    return re.sub(r"[\"<>:/|\\?*\[\]]+", "__", name)


def _task_file(name: str) -> str:
    """lm-eval's ``sanitize_task_name``."""
    return re.sub(r"\W", "_", name)


def export_lm_eval(source: Source, dest: Path) -> list[Path]:
    written: list[Path] = []
    stamp = source.stamp()
    for model in source.models():
        folder = dest / _sanitized(model)  # the label: two entries may share a model id
        folder.mkdir(parents=True, exist_ok=True)
        units = source.of_model(model)
        hashes: dict[str, str] = {}
        for unit in units:
            lines = [line for sample in unit.samples for line in _sample_lines(unit, sample)]
            path = folder / f"samples_{_task_file(unit.task)}_{stamp}.jsonl"
            path.write_text(
                "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                encoding="utf-8",
            )
            written.append(path)
            hashes[unit.task] = sha256(
                "".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"] for s in lines)
            )
        results = _results(source, model, units, hashes)
        path = folder / f"results_{stamp}.json"
        path.write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
        written.append(path)
    return written


def _results(
    source: Source, model: str, units: list[TaskRun], hashes: dict[str, str]
) -> dict[str, Any]:
    config = source.model_config(model)
    provenance = source.provenance(model)
    results: dict[str, Any] = {}
    configs: dict[str, Any] = {}
    higher: dict[str, Any] = {}
    intervals: dict[str, Any] = {}
    for unit in units:
        scalars = unit.scalar_metrics()
        names = set(scalars)
        entry: dict[str, Any] = {
            "name": unit.task,
            "alias": unit.task,
            "sample_len": unit.result.samples.scored,
        }
        better: dict[str, bool] = {}
        for metric, value in scalars.items():
            name, filt = lm_metric(metric, names)
            entry[f"{name},{filt}"] = value
            spread = unit.spread(metric)
            se = spread.get("se")
            entry[f"{name}_stderr,{filt}"] = float(se) if isinstance(se, int | float) else "N/A"
            better[name] = True
            if spread:
                intervals[f"{unit.task}/{name},{filt}"] = {
                    "ci": spread.get("ci"),
                    "n": spread.get("n"),
                    "estimator": spread.get("estimator"),
                }
        results[unit.task] = entry
        higher[unit.task] = better
        task_config = source.task_config(unit.task)
        kind = _output_type(unit)
        filters = list(dict.fromkeys(lm_metric(m, names)[1] for m in scalars))
        configs[unit.task] = {
            "task": unit.task,
            "dataset_path": f"sieval:{unit.task}",
            "test_split": _split_of(unit),
            "output_type": kind,
            "num_fewshot": unit.shots,
            "fewshot_config": {"sampler": "sieval", "seed": task_config.get("seed")},
            "fewshot_delimiter": "\n\n",
            "target_delimiter": " ",
            "repeats": 1,
            "should_decontaminate": False,
            "unsafe_code": False,
            "metric_list": [
                {"metric": name, "aggregation": "mean", "higher_is_better": True}
                for name in dict.fromkeys(lm_metric(m, names)[0] for m in scalars)
            ],
            "description": source.protocol(unit.task),
            "metadata": {"version": _version(source), "sieval_run": source.identity},
            **({"generation_kwargs": _first_kwargs(unit)} if kind == "generate_until" else {}),
            **({"filter_list": [{"name": f} for f in filters]} if filters != ["none"] else {}),
        }
    samples = {u.task: u.result.samples for u in units}
    wall = source.report.timings.wall_s
    return {
        "results": results,
        "group_subtasks": {u.task: [] for u in units},
        "configs": configs,
        "versions": {u.task: _version(source) for u in units},
        "n-shot": {u.task: u.shots for u in units if u.shots is not None},
        "higher_is_better": higher,
        "n-samples": {
            task: {"original": s.total, "effective": s.scored} for task, s in samples.items()
        },
        "config": {
            "model": f"sieval-{provenance.get('dialect') or config.get('dialect') or 'unknown'}",
            "model_args": (
                f"model={source.model_id(model)},base_url={provenance.get('endpoint') or ''}"
            ),
            "batch_size": None,
            "batch_sizes": [],
            "device": None,
            "use_cache": None,
            "limit": _limit(source, units),
            "bootstrap_iters": 0,
            "gen_kwargs": plain(config.get("request_defaults") or None),
            # sieval draws shots with each task's seed and nothing else at random: that seed
            # stands for lm-eval's four (each task's own is in its fewshot_config)
            "random_seed": _seed(source, units),
            "numpy_seed": _seed(source, units),
            "torch_seed": _seed(source, units),
            "fewshot_seed": _seed(source, units),
        },
        "date": source.started,
        "system_instruction": None,
        "system_instruction_sha": None,
        "fewshot_as_multiturn": any(
            bool(source.task_config(u.task).get("fewshot_as_multiturn")) for u in units
        ),
        # lm-eval keeps the template's text; sieval holds no copy (the server's own template
        # rendered the prompts): the tasks that applied it are named under "sieval"
        "chat_template": None,
        "chat_template_sha": None,
        "task_hashes": hashes,
        "model_source": "sieval",
        "model_name": source.model_id(model),
        "model_name_sanitized": _sanitized(source.model_id(model)),
        "total_evaluation_time_seconds": str(wall if wall is not None else ""),
        "sieval": {
            "version": source.version,
            "run": source.identity,
            "label": model,
            "protocols": {u.task: source.protocol(u.task) for u in units},
            "intervals": intervals,
            "failed": {task: s.failed for task, s in samples.items()},
            **_templated(source, units),
        },
    }


def _templated(source: Source, units: list[TaskRun]) -> dict[str, Any]:
    """``apply_chat_template``: the tasks whose prompts the server's chat template rendered
    (``--apply-chat-template``), only when there are any."""
    tasks = [u.task for u in units if source.task_config(u.task).get("apply_chat_template")]
    return {"apply_chat_template": tasks} if tasks else {}


def _version(source: Source) -> str:
    return f"sieval-{source.version}"


def _limit(source: Source, units: list[TaskRun]) -> int | None:
    ns = {n for u in units if isinstance(n := source.task_config(u.task).get("n"), int)}
    return next(iter(ns)) if len(ns) == 1 else None


def _seed(source: Source, units: list[TaskRun]) -> int:
    """The first task's shot seed (sieval's default, 1234, when it names none)."""
    seeds = [source.task_config(u.task).get("seed") for u in units]
    return next((int(s) for s in seeds if isinstance(s, int)), 1234)


def _split_of(unit: TaskRun) -> str:
    """The split the samples came from (``test/12`` -> ``test``)."""
    first = next(iter(unit.samples), None)
    head = first.record.sample_id.rpartition("/")[0] if first is not None else ""
    return head or "test"


def _first_kwargs(unit: TaskRun) -> dict[str, Any]:
    first = next((s for s in unit.samples if s.requests), None)
    return _gen_kwargs(next(iter(first.requests.values()))) if first is not None else {}


def _output_type(unit: TaskRun) -> str:
    first = next((s for s in unit.samples if s.record.channels), None)
    if first is not None and "choices" in first.record.channels:
        return "multiple_choice"
    if unit.result.generates:
        return "generate_until"
    return "loglikelihood"


def _sample_lines(unit: TaskRun, sample: Sample) -> list[dict[str, Any]]:
    """lm-eval's lines for one sample: one per filter (none for a failed sample)."""
    record = sample.record
    if record.status != "ok":
        return []
    doc = plain(record.sample or {"id": record.sample_id})
    target = "" if record.gold is None else str(record.gold)
    arguments, resps = _exchange(sample)
    figures = unit.sample_metrics(sample)
    names = set(figures)
    by_filter: dict[str, dict[str, float]] = {}
    for metric, value in figures.items():
        name, filt = lm_metric(metric, names)
        by_filter.setdefault(filt, {})[name] = float(value)
    unfiltered = by_filter.pop("none", {}) if len(by_filter) > 1 else {}
    for metrics in by_filter.values():  # a figure of the reply itself (censored) rides each line
        metrics.update(unfiltered)
    first_prompt = arguments.get("gen_args_0", {}).get("arg_0", "")
    lines = []
    for filt, metrics in by_filter.items():
        line: dict[str, Any] = {
            "doc_id": _doc_id(record.sample_id),
            "doc": doc,
            "target": target,
            "arguments": arguments,
            "resps": resps,
            "filtered_resps": _filtered(sample, resps, filt),
            "filter": filt,
            "metrics": list(metrics),
            "doc_hash": sha256(json.dumps(doc, indent=2, ensure_ascii=False)),
            "prompt_hash": sha256(str(first_prompt)),
            "target_hash": sha256(target),
            **metrics,
        }
        lines.append(line)
    return lines


def _doc_id(sample_id: str) -> int:
    """The sample's index in its split (``test/12`` -> 12); lm-eval's ``doc_id``."""
    tail = sample_id.rpartition("/")[2]
    digits = re.sub(r"\D", "", tail)
    return int(digits) if digits else 0


def _exchange(sample: Sample) -> tuple[dict[str, dict[str, Any]], list[Any]]:
    """lm-eval's ``arguments`` and ``resps`` of a sample: per choice ``(context,
    continuation)`` and ``[[log-likelihood, is_greedy]]``; for a generation ``(prompt,
    gen_kwargs)`` and ``[[text]]`` (all as text, as lm-eval's tracker writes them)."""
    choices = sample.record.channels.get("choices")
    texts = (sample.record.sample or {}).get("choices")
    arguments: dict[str, dict[str, Any]] = {}
    resps: list[Any] = []
    if isinstance(choices, list):
        prompts = [
            _text_of(r)
            for name, r in sample.requests.items()
            if name.startswith("choice") or len(sample.requests) == len(choices)
        ]
        for i, scored in enumerate(choices):
            prompt = prompts[i] if i < len(prompts) else ""
            option = str(texts[i]) if isinstance(texts, list) and i < len(texts) else ""
            context, continuation = _split(prompt, option)
            arguments[f"gen_args_{i}"] = {"arg_0": context, "arg_1": continuation}
            greedy = scored.get("greedy") if isinstance(scored, dict) else None
            ll = scored.get("logprob_sum") if isinstance(scored, dict) else None
            resps.append([[str(ll), str(greedy)]])
        return arguments, resps
    for i, request in enumerate(sample.requests.values()):
        arguments[f"gen_args_{i}"] = {"arg_0": _text_of(request), "arg_1": _gen_kwargs(request)}
    text = generation_of(sample)
    resps = [[text if text is not None else ""]] if arguments else []
    return arguments, resps


def _filtered(sample: Sample, resps: list[Any], filt: str) -> list[Any]:
    channels = sample.record.channels
    if filt == "strict-match":
        return [str(channels.get("strict") if channels.get("strict") is not None else "[invalid]")]
    if filt == "flexible-extract":
        flexible = channels.get("flexible")
        return [str(flexible if flexible is not None else "[invalid]")]
    if resps and isinstance(resps[0], list) and resps[0] and isinstance(resps[0][0], list):
        return [r[0] for r in resps]  # choices: the one response of each
    if sample.record.prediction is not None and not isinstance(channels.get("choices"), list):
        return [str(sample.record.prediction)]
    return [r[0] for r in resps]


def _text_of(request: Any) -> str:
    from ..results.explain import prompt_text

    return prompt_text(request) or ""


def _split(prompt: str, option: str) -> tuple[str, str]:
    """A choice request's prompt as lm-eval's ``(context, continuation)``: the continuation is
    the option with the space that joins it (lm-eval's ``target_delimiter``)."""
    for continuation in (f" {option}", option):
        if option and prompt.endswith(continuation):
            return prompt[: -len(continuation)], continuation
    return prompt, ""


def _gen_kwargs(request: Any) -> dict[str, Any]:
    body = request.body or {}
    kwargs: dict[str, Any] = {}
    stop = body.get("stop")
    if stop is not None:
        kwargs["until"] = [stop] if isinstance(stop, str) else list(stop)
    for key, name in (("max_tokens", "max_gen_toks"), ("max_output_tokens", "max_gen_toks")):
        if key in body:
            kwargs[name] = body[key]
    if "temperature" in body:
        kwargs["temperature"] = body["temperature"]
        kwargs["do_sample"] = bool(body["temperature"])
    return kwargs
