"""Every Eval Ever records (evaleval's schema 0.3.0, what model pages ingest), per model.

In the datastore's layout, ``DEST/data/<collection>/<developer>/<model>/`` (collection
``sieval`` unless named): ``<uuid>.json``, the aggregate ``EvaluationLog`` (one
``evaluation_results`` entry per task and metric: the report's value, its standard error and
95% interval with their method, the shots and the protocol), and ``<uuid>_samples.jsonl``, one
``InstanceLevelEvaluationLog`` per scored sample and metric, joined to its aggregate entry by
``evaluation_result_id`` (``<task>/<metric>``). The uuid is a version-4 uuid drawn from the run
identity and the model, so exporting twice writes the same files.

What sieval does not know is said as such: the developer is the model id's prefix (``org/name``;
``unknown`` for a flat id), the deployment and weights' availability ``unknown``, the evaluating
organisation ``unknown`` and its relationship to the model ``other``. A failed sample is never a
scored instance; the aggregate counts the failures in its details.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path
from typing import Any

from .source import Source, TaskRun, generation_of, sha256

__all__ = ["SCHEMA_VERSION", "export_every_eval_ever"]

SCHEMA_VERSION = "0.3.0"
"""The evaleval schema version these records follow (``eval.schema.json``'s ``version``)."""

LOWER_IS_BETTER = frozenset({"word_perplexity", "byte_perplexity", "bits_per_byte", "perplexity"})
"""Metrics where a lower score is better; these are also unbounded above."""

_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f]')


def export_every_eval_ever(source: Source, dest: Path, *, collection: str = "sieval") -> list[Path]:
    written = []
    for model in source.models():
        model_id = source.model_id(model)
        developer, name = _identity(model_id)
        folder = dest / "data" / collection / developer / name
        folder.mkdir(parents=True, exist_ok=True)
        key = _uuid(source, model)
        evaluation_id = f"{collection}/{model_id}/{int(source.started)}"
        samples_path = folder / f"{key}_samples.jsonl"
        rows = [
            row
            for unit in source.of_model(model)
            for row in _instances(source, unit, evaluation_id, model_id)
        ]
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        samples_path.write_text(text, encoding="utf-8")
        aggregate = _aggregate(source, model, model_id, developer, evaluation_id)
        aggregate["detailed_evaluation_results"] = {
            "format": "jsonl",
            "file_path": f"data/{collection}/{developer}/{name}/{samples_path.name}",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "total_rows": len(rows),
        }
        path = folder / f"{key}.json"
        path.write_text(json.dumps(aggregate, indent=2, ensure_ascii=False), encoding="utf-8")
        written += [path, samples_path]
    return written


def _identity(model_id: str) -> tuple[str, str]:
    """The datastore's developer and model directories for ``model_id``."""
    developer, _, name = model_id.rpartition("/")
    return _component(developer or "unknown"), _component(name)


def _component(text: str) -> str:
    cleaned = _UNSAFE.sub("_", text).rstrip(". ") or "unknown"
    return "data_" if cleaned == "data" else cleaned


def _uuid(source: Source, model: str) -> str:
    digest = hashlib.sha256(f"{source.identity}/{model}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _aggregate(
    source: Source, model: str, model_id: str, developer: str, evaluation_id: str
) -> dict[str, Any]:
    provenance = source.provenance(model)
    server = provenance.get("server_version")
    version = server.get("version") if isinstance(server, dict) else server
    details = {
        "deployment_type": "unknown",
        "model_availability": "unknown",
        "sieval_label": model,
        "dialect": str(provenance.get("dialect") or ""),
        "endpoint": str(provenance.get("endpoint") or ""),
    }
    model_info: dict[str, Any] = {
        "name": model,
        "id": model_id,
        "developer": developer,
        "additional_details": details,
    }
    if version:
        model_info["inference_engine"] = {
            "name": str(version).split(" ")[0],
            "version": str(version),
        }
    results = []
    for unit in source.of_model(model):
        for metric, value in unit.scalar_metrics().items():
            results.append(_result(source, unit, metric, value))
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "evaluation_timestamp": source.iso_started(),
        "retrieved_timestamp": str(int(source.started)),
        "source_metadata": {
            "source_name": "sieval",
            "source_type": "evaluation_run",
            "source_organization_name": "unknown",
            "evaluator_relationship": "other",
            "additional_details": {"run": source.identity},
        },
        "eval_library": {
            "name": "sieval",
            "version": source.version,
            "additional_details": {
                "records_schema_version": str(source.report.records_schema_version)
            },
        },
        "model_info": model_info,
        "evaluation_results": results,
    }


def _result(source: Source, unit: TaskRun, metric: str, value: float) -> dict[str, Any]:
    spread = unit.spread(metric)
    lower = metric in LOWER_IS_BETTER
    config: dict[str, Any] = {
        "evaluation_description": source.protocol(unit.task),
        "metric_id": f"sieval.{metric}",
        "metric_name": metric,
        "lower_is_better": lower,
        "score_type": "continuous",
        "min_score": 0,
        "max_score": "Infinity" if lower else 1,
        "metric_unit": "value" if lower else "proportion",
    }
    uncertainty: dict[str, Any] = {}
    if isinstance(spread.get("se"), int | float):
        uncertainty["standard_error"] = {
            "value": float(spread["se"]),
            "method": str(spread.get("estimator") or "analytic"),
        }
    ci = spread.get("ci")
    if isinstance(ci, list) and len(ci) == 2 and None not in ci:
        uncertainty["confidence_interval"] = {
            "lower": float(ci[0]),
            "upper": float(ci[1]),
            "confidence_level": 0.95,
            "method": str(spread.get("estimator") or ""),
        }
    if isinstance(spread.get("n"), int):
        uncertainty["num_samples"] = int(spread["n"])
    counts = unit.result.samples
    score: dict[str, Any] = {
        "score": value,
        "details": {
            "num_fewshot": "unknown" if unit.shots is None else str(unit.shots),
            "scored": str(counts.scored),
            "failed": str(counts.failed),
            "headline": str(metric == unit.headline).lower(),
        },
    }
    if uncertainty:
        score["uncertainty"] = uncertainty
    return {
        "evaluation_result_id": f"{unit.task}/{metric}",
        "evaluation_name": unit.task,
        "source_data": {
            "dataset_name": unit.task,
            "source_type": "other",
            "additional_details": {"sieval_task": unit.task},
        },
        "evaluation_timestamp": source.iso_started(),
        "metric_config": config,
        "score_details": score,
        "generation_config": {
            "additional_details": {
                "num_fewshot": "unknown" if unit.shots is None else str(unit.shots),
                "protocol": source.protocol(unit.task),
            }
        },
    }


def _instances(
    source: Source, unit: TaskRun, evaluation_id: str, model_id: str
) -> list[dict[str, Any]]:
    rows = []
    for sample in unit.samples:
        record = sample.record
        if record.status != "ok":
            continue
        described = record.sample or {}
        raw = str(described.get("query") or sample.prompt or "")
        reference = [] if record.gold is None else [_label(described, record.gold)]
        choices = described.get("choices")
        text = generation_of(sample)
        answer = _label(described, record.prediction) if record.prediction is not None else ""
        usage = sample.usage
        timings = [r.timings.get("total_s") for r in sample.requests.values()]
        latency = sum(t for t in timings if isinstance(t, int | float)) * 1000
        for metric, value in unit.sample_metrics(sample).items():
            rows.append(
                {
                    "schema_version": SCHEMA_VERSION,
                    "evaluation_id": evaluation_id,
                    "model_id": model_id,
                    "evaluation_name": unit.task,
                    "evaluation_result_id": f"{unit.task}/{metric}",
                    "sample_id": record.sample_id,
                    "sample_hash": sha256(raw + "\n" + "\n".join(reference)),
                    "interaction_type": "single_turn",
                    "input": {
                        "raw": raw,
                        "formatted": sample.prompt,
                        "reference": reference,
                        "choices": [str(c) for c in choices] if isinstance(choices, list) else None,
                    },
                    "output": {"raw": [text if text is not None else answer]},
                    "messages": None,
                    "answer_attribution": [
                        {
                            "turn_idx": 0,
                            "source": "output.raw",
                            "extracted_value": answer,
                            "extraction_method": f"sieval:{unit.headline}",
                            "is_terminal": True,
                        }
                    ],
                    "evaluation": {"score": float(value), "is_correct": float(value) == 1.0},
                    "token_usage": {
                        "input_tokens": usage.get("input_tokens", 0),
                        "output_tokens": usage.get("output_tokens", 0),
                        "total_tokens": usage.get("input_tokens", 0)
                        + usage.get("output_tokens", 0),
                    },
                    "performance": {"latency_ms": latency},
                    "metadata": {
                        k: v
                        for k, v in (
                            ("group", record.group),
                            ("replicas", ", ".join(sample.replicas) or None),
                            ("num_fewshot", None if unit.shots is None else str(unit.shots)),
                        )
                        if v is not None
                    },
                }
            )
    return rows


def _label(described: dict[str, Any], value: Any) -> str:
    """A choice index as its option's text; any other answer as text."""
    choices = described.get("choices")
    if isinstance(value, int) and isinstance(choices, list) and 0 <= value < len(choices):
        return str(choices[value])
    return str(value)
