#!/usr/bin/env python3
"""The per-sample strings of the base suite against lm-evaluation-harness 0.4.13's, offline.

    .venv/bin/python scripts/lm_eval_strings.py [--docs N] [--task NAME ...] [--write]

lm-eval runs in its own venv (``$SIEVAL_LM_EVAL``, default
``~/.cache/sieval/bench/lm-eval-0.4.13``; made by ``python3 -m venv DIR && DIR/bin/pip install
torch==2.13.0 lm_eval==0.4.13``). This script starts that venv's python on itself (``--lm-eval``):
each task's own YAML is loaded as lm-eval loads it, its dataset pointed at the stored files (read
by the ``datasets`` library from a temporary directory: JSON Lines and JSON as stored, the zipped
Arrow dumps extracted, and the formats it has no reader for converted to JSON Lines by the small
functions below, independently of sieval's loaders), its shots seeded as ``simple_evaluate``
seeds them (``fewshot_random_seed=1234``), and every instance's ``arguments`` built by
``build_all_requests``. sieval's are the ``arguments`` of its tasks' samples (what its requests
send), from the same files through sieval's loaders. Per task and shot count: docs compared, docs
identical, and the first differences.

``--write`` records, for the first ``--fixture-docs`` docs of each case, the sha256 of each
request's strings and their lengths in ``tests/fixtures/lm_eval/0.4.13/<case>.json`` (no dataset
text), which ``tests/tasks/test_lm_eval_strings.py`` checks without lm-eval; and lm-eval's metric
functions on fixed log-likelihoods (``metrics.json``), the oracle of the metric arithmetic tests.

Overrides of lm-eval's configs, besides the dataset: ``training_split: null`` where train is not
stored (hellaswag, boolq, wikitext: lm-eval reads its shot pool when the task is built).

``--yaml`` compares lm-eval's stock YAML with itself as sieval reads it: sieval's side is the
same file loaded by sieval's task-file loader (``sieval/tasks/yaml_task.py``), with the same
data-source override (``dataset_path``, ``dataset_name``, ``dataset_kwargs`` and, where train is
not stored, ``training_split``), not sieval's own task module. lm-eval then runs in this venv
(``pip install lm-eval==0.4.13``; it builds requests without torch), both sides in one process
over the same temporary files. ``--yaml`` adds the tasks beyond the base suite whose data is
stored and whose stock YAML resolves: GSM8K (0 and its default 5 shots), BBH's 27
zero-shot and 3-shot chain-of-thought subtasks, IFEval, AIME 2025, MMLU-Pro's 14 subjects
(0 and its default 5 shots). (HumanEval's and MBPP's stock YAMLs cannot be loaded by lm-eval
itself offline: their utils load Hugging Face evaluate's ``code_eval`` from the hub.)
``--sample N`` compares N seeded documents of a split larger than N (the count is printed), else
every document; ``--limit N`` the first N of each split (of each subject or subtask), which
lm-eval builds alone (``build_all_requests(limit=N)``; a document's shots depend on no later
document).
"""

from __future__ import annotations

import argparse
import bz2
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "lm_eval" / "0.4.13"
VENV = Path(os.environ.get("SIEVAL_LM_EVAL", Path.home() / ".cache/sieval/bench/lm-eval-0.4.13"))
SEED = 1234

CASES: list[tuple[str, int]] = [
    ("arc_easy", 0),
    ("arc_easy", 25),
    ("arc_challenge", 0),
    ("arc_challenge", 25),
    ("hellaswag", 0),
    ("winogrande", 0),
    ("winogrande", 5),
    ("piqa", 0),
    ("piqa", 5),
    ("openbookqa", 0),
    ("openbookqa", 5),
    ("sciq", 0),
    ("sciq", 3),
    ("boolq", 0),
    ("truthfulqa_mc1", 0),
    ("truthfulqa_mc2", 0),
    ("lambada_openai", 0),
    ("lambada_openai", 2),
    ("wikitext", 0),
    ("mmlu", 0),
    ("mmlu", 5),
]
"""(task, num_fewshot): every base-suite task at lm-eval's default (0), and k shots where the
stored data has a shot split lm-eval would draw from."""

YAML = {
    "arc_easy": "arc/arc_easy.yaml",
    "arc_challenge": "arc/arc_challenge.yaml",
    "hellaswag": "hellaswag/hellaswag.yaml",
    "winogrande": "winogrande/default.yaml",
    "piqa": "piqa/piqa.yaml",
    "openbookqa": "openbookqa/openbookqa.yaml",
    "sciq": "sciq/sciq.yaml",
    "boolq": "super_glue/boolq/default.yaml",
    "truthfulqa_mc1": "truthfulqa/truthfulqa_mc1.yaml",
    "truthfulqa_mc2": "truthfulqa/truthfulqa_mc2.yaml",
    "lambada_openai": "lambada/lambada_openai.yaml",
    "wikitext": "wikitext/wikitext.yaml",
}


# -- lm-eval's side (runs in lm-eval's venv) -------------------------------------------------------


def _extract(zip_path: Path, member_suffix: str, into: Path) -> Path:
    with zipfile.ZipFile(zip_path) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(member_suffix) and "__MACOSX" not in n]
        target = into / name.replace(" ", "_")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(zf.read(name))
    return target


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def _hellaswag_rows(path: Path) -> list[dict[str, Any]]:
    """The derived text's six-line items as hub rows (the whole context in ctx_a)."""
    lines = bz2.decompress(path.read_bytes()).decode("utf-8").split("\n")
    rows = []
    for at in range(0, len(lines) - 5, 6):
        head, label, *endings = lines[at : at + 6]
        activity, _, ctx = head.partition(": ")
        rows.append({"activity_label": activity, "ctx_a": ctx, "ctx_b": "", "ctx": ctx,
                     "endings": endings, "label": label})  # fmt: skip
    return rows


def _targets(targets: dict[str, int]) -> dict[str, list[Any]]:
    return {"choices": list(targets), "labels": list(targets.values())}


def _dataset(task: str, data: Path, tmp: Path) -> dict[str, Any]:
    """lm-eval's dataset keys for ``task`` over the stored files."""
    if task.startswith("arc_"):
        folder, stem = (
            ("arc_easy", "ARC-Easy") if task == "arc_easy" else ("arc_challenge", "ARC-Challenge")
        )
        files = {
            s: str(data / folder / f"{stem}-{s}.jsonl") for s in ("train", "validation", "test")
        }
        return {"dataset_path": "json", "dataset_kwargs": {"data_files": files}}
    if task == "hellaswag":
        rows = _hellaswag_rows(data / "hellaswag" / "hellaswag_val_full.txt.bz2")
        files = {"validation": str(_jsonl(tmp / "hellaswag.jsonl", rows))}
        return {"dataset_path": "json", "dataset_kwargs": {"data_files": files},
                "training_split": None}  # fmt: skip
    if task == "winogrande":
        member = "{}/data-00000-of-00001.arrow"
        zipped = data / "winogrande/winogrande.zip"
        files = {
            s: str(_extract(zipped, member.format(s), tmp)) for s in ("train", "validation", "test")
        }
        return {"dataset_path": "arrow", "dataset_kwargs": {"data_files": files}}
    if task in ("piqa", "openbookqa"):
        files = {s: str(_extract(data / task / f"{task}.zip", f"{task}-{s}.arrow", tmp))
                 for s in ("train", "validation", "test")}  # fmt: skip
        return {"dataset_path": "arrow", "dataset_kwargs": {"data_files": files}}
    if task == "sciq":
        names = {"train": "train.json", "validation": "valid.json", "test": "test.json"}
        files = {s: str(_extract(data / "sciq/SciQ.zip", f"/{n}", tmp)) for s, n in names.items()}
        return {"dataset_path": "json", "dataset_kwargs": {"data_files": files}}
    if task == "boolq":
        rows = [
            json.loads(line) for line in (data / "boolq/val.jsonl").read_text().splitlines() if line
        ]
        for row in rows:
            row["label"] = {"false": 0, "true": 1}[row["label"]]
        files = {"validation": str(_jsonl(tmp / "boolq.jsonl", rows))}
        return {"dataset_path": "json", "dataset_kwargs": {"data_files": files},
                "training_split": None}  # fmt: skip
    if task.startswith("truthfulqa"):
        raw = json.loads((data / "truthfulqa_mc/mc_task.json").read_text())
        rows = [{"question": r["question"], "mc1_targets": _targets(r["mc1_targets"]),
                 "mc2_targets": _targets(r["mc2_targets"])} for r in raw]  # fmt: skip
        files = {"validation": str(_jsonl(tmp / "truthfulqa.jsonl", rows))}
        return {"dataset_path": "json", "dataset_kwargs": {"data_files": files}}
    if task == "lambada_openai":
        files = {"test": str(data / "lambada_openai/lambada_test.jsonl")}
        return {
            "dataset_path": "json",
            "dataset_name": None,
            "dataset_kwargs": {"data_files": files},
        }
    if task == "wikitext":
        base = data / "wikitext/wikitext-2-raw-v1"
        files = {s: str(base / s / "data-00000-of-00001.arrow") for s in ("test", "validation")}
        return {"dataset_path": "arrow", "dataset_name": None,
                "dataset_kwargs": {"data_files": files}, "training_split": None}  # fmt: skip
    raise KeyError(task)


YAML_EXTRA = {
    "gsm8k": "gsm8k/gsm8k.yaml",
    "humaneval": "humaneval/humaneval.yaml",
    "ifeval": "ifeval/ifeval.yaml",
    "aime25": "aime/aime25.yaml",
    "mbpp": "mbpp/mbpp.yaml",
    "aime24": "aime/aime24.yaml",
    "minerva_math500": "minerva_math/minerva_math500.yaml",
    "hendrycks_math500": "hendrycks_math/hendrycks_math500.yaml",
}
YAML_CASES: list[tuple[str, int]] = [
    *CASES,
    ("gsm8k", 0),
    ("gsm8k", 5),
    ("ifeval", 0),
    ("aime25", 0),
    ("aime24", 0),
    ("humaneval", 0),
    ("mbpp", 0),
    ("mbpp", 3),
    ("minerva_math500", 0),
    ("minerva_math500", 4),
    ("hendrycks_math500", 0),
    ("mmlu_pro", 0),
    ("mmlu_pro", 5),
    ("bbh_zeroshot", 0),
    ("bbh_cot_fewshot", 3),
]
"""(task, num_fewshot) of ``--yaml``: the base suite's, and the stored tasks beyond it."""


def _extra_dataset(task: str, data: Path, tmp: Path) -> dict[str, Any]:
    import gzip

    if task == "gsm8k":
        files = {s: str(data / "gsm8k" / f"{s}.jsonl") for s in ("train", "test")}
        return {
            "dataset_path": "json",
            "dataset_name": None,
            "dataset_kwargs": {"data_files": files},
        }
    if task == "humaneval":
        text = gzip.decompress((data / "humaneval/HumanEval.jsonl.gz").read_bytes()).decode()
        path = tmp / "humaneval.jsonl"
        path.write_text(text, encoding="utf-8")
        return {"dataset_path": "json", "dataset_name": None,
                "dataset_kwargs": {"data_files": {"test": str(path)}}}  # fmt: skip
    if task == "ifeval":
        files = {"train": str(data / "ifeval" / "input_data.jsonl")}
        return {
            "dataset_path": "json",
            "dataset_name": None,
            "dataset_kwargs": {"data_files": files},
        }
    if task == "aime24":  # the stored copy names its columns in lower case; the hub's do not
        rows = [json.loads(x) for x in (data / "aime2024/test.jsonl").read_text().splitlines()]
        renamed = [{"ID": r["id"], "Problem": r["problem"], "Solution": r["solution"],
                    "Answer": r["answer"]} for r in rows]  # fmt: skip
        files = {"train": str(_jsonl(tmp / "aime24.jsonl", renamed))}
        return {"dataset_path": "json", "dataset_name": None,
                "dataset_kwargs": {"data_files": files}}  # fmt: skip
    if task == "mbpp":  # the test split of the full config: task ids 11 to 510
        rows = [json.loads(line) for line in (data / "mbpp/mbpp.jsonl").read_text().splitlines()]
        test = [r for r in rows if 11 <= int(r["task_id"]) <= 510]
        files = {"test": str(_jsonl(tmp / "mbpp-test.jsonl", test))}
        return {"dataset_path": "json", "dataset_name": None,
                "dataset_kwargs": {"data_files": files}}  # fmt: skip
    if task in ("minerva_math500", "hendrycks_math500"):
        files = {"test": str(data / "math500" / "test.jsonl")}
        return {"dataset_path": "json", "dataset_name": None,
                "dataset_kwargs": {"data_files": files}}  # fmt: skip
    if task == "aime25":
        files = {"test": str(data / "aime2025" / "test.jsonl")}
        return {"dataset_path": "json", "dataset_name": None,
                "dataset_kwargs": {"data_files": files}}  # fmt: skip
    raise KeyError(task)


def _bbh_dataset(subject: str, data: Path) -> dict[str, Any]:
    files = {"test": str(data / "bbh" / "bbh" / f"{subject}.json")}
    return {"dataset_path": "json", "dataset_name": None,
            "dataset_kwargs": {"data_files": files, "field": "examples"}}  # fmt: skip


def _mmlu_dataset(subject: str, data: Path, tmp: Path) -> dict[str, Any]:
    files = {}
    for split, folder in (("test", "test"), ("validation", "val"), ("dev", "dev")):
        with (data / "mmlu" / folder / f"{subject}_{folder}.csv").open(
            newline="", encoding="utf-8"
        ) as fh:
            rows = [{"question": r[0], "subject": subject, "choices": r[1:5],
                     "answer": "ABCD".index(r[5])} for r in csv.reader(fh)]  # fmt: skip
        files[split] = str(_jsonl(tmp / "mmlu" / f"{subject}_{split}.jsonl", rows))
    return {"dataset_path": "json", "dataset_name": None, "dataset_kwargs": {"data_files": files}}


def _build(config: dict[str, Any], k: int, limit: int | None = None) -> list[dict[str, Any]]:
    from lm_eval.api.task import ConfigurableTask

    task = ConfigurableTask(config=config)
    task.set_config(key="num_fewshot", value=k)  # 0 too: a YAML's own default is not 0-shot
    task.set_fewshot_seed(seed=SEED)
    task.build_all_requests(limit=limit, rank=0, world_size=1)
    docs: dict[int, list[list[str]]] = {}
    for inst in task.instances:
        docs.setdefault(inst.doc_id, []).append([inst.idx, *inst.arguments])
    return [
        {"doc": doc, "arguments": [a[1:] for a in sorted(args, key=lambda a: a[0])]}
        for doc, args in sorted(docs.items())
    ]


def lm_eval_side(cases: list[tuple[str, int]], data: Path, out: Path) -> None:
    import logging

    import lm_eval
    from lm_eval.tasks._yaml_loader import load_yaml

    logging.disable(logging.WARNING)
    tasks_dir = Path(lm_eval.__file__).parent / "tasks"
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sieval-lm-eval-") as tmp_name:
        tmp = Path(tmp_name)
        for task, k in cases:
            if task == "mmlu":
                from sieval_subjects import SUBJECTS  # type: ignore[import-not-found]

                docs = []
                for subject in SUBJECTS:
                    config = load_yaml(tasks_dir / "mmlu/default" / f"mmlu_{subject}.yaml")
                    config = {k_: v for k_, v in config.items() if k_ != "tag"}
                    config.update(_mmlu_dataset(subject, data, tmp))
                    docs += [{**d, "subset": subject} for d in _build(config, k)]
            else:
                config = load_yaml(tasks_dir / YAML[task])
                config = {k_: v for k_, v in config.items() if k_ != "tag"}
                config.update(_dataset(task, data, tmp))
                docs = _build(config, k)
            result[f"{task}/{k}"] = docs
            print(f"lm-eval: {task} {k}-shot: {len(docs)} docs", file=sys.stderr)
        result["metrics"] = _metric_oracle()
    out.write_text(json.dumps(result))


def _metric_oracle() -> dict[str, Any]:
    """lm-eval's own metric functions on fixed inputs (the tests' oracle)."""
    import math

    import numpy as np
    from lm_eval.api.metrics import bits_per_byte, perplexity, weighted_perplexity
    from lm_eval.tasks.truthfulqa.utils import process_results_mc2

    lls = [[-1.5, -0.9, -3.0, -0.75], [-2.0, -2.0, -0.5], [-10.0, -0.001, -7.5, -0.002, -20.0]]
    choices = [
        ["a", "bbbbbbb", "cc", "dddd"],
        ["xyz", "x", "long choice"],
        ["q", "rr", "s", "tt", "u"],
    ]
    cases = []
    for ll, ch in zip(lls, choices, strict=True):
        norm = np.array(ll) / np.array([float(len(c)) for c in ch])
        labels = [(i + len(ll)) % 2 for i in range(len(ll))]  # true ones not all leading
        mc2 = process_results_mc2({"mc2_targets": {"labels": labels}}, [(x, False) for x in ll])
        cases.append({"lls": ll, "choices": ch, "labels": labels, "argmax": int(np.argmax(ll)),
                      "argmax_norm": int(np.argmax(norm)), "mc2": float(mc2["acc"])})  # fmt: skip
    items = [-12.5, -3.25, -0.125, -40.0]
    words, n_bytes = [3, 1, 7, 11], [14, 5, 30, 52]
    return {
        "choice": cases,
        "perplexity": {"items": items, "value": perplexity(items)},
        "rolling": {
            "lls": items,
            "words": words,
            "bytes": n_bytes,
            "word_perplexity": weighted_perplexity(list(zip(items, words, strict=True))),
            "byte_perplexity": weighted_perplexity(list(zip(items, n_bytes, strict=True))),
            "bits_per_byte": bits_per_byte(list(zip(items, n_bytes, strict=True))),
        },
        "math_log2": math.log(2),
    }


# -- sieval's side ------------------------------------------------------------------------------


def _digest(arguments: list[list[str]]) -> str:
    return hashlib.sha256(json.dumps(arguments, ensure_ascii=False).encode()).hexdigest()[:32]


def sieval_side(cases: list[tuple[str, int]], data: Path) -> dict[str, list[dict[str, Any]]]:
    sys.path.insert(0, str(ROOT))
    from sieval.tasks.base import TaskConfig
    from sieval.tasks.registry import TASKS

    out: dict[str, list[dict[str, Any]]] = {}
    for name, k in cases:
        task: Any = TASKS[name]
        config = TaskConfig(name=name, num_fewshot=k)
        out[f"{name}/{k}"] = [
            {"sample": s.id, "arguments": [list(a) for a in task.arguments(s, config).values()]}
            for s in task.load(data, config)
        ]
    return out


def _doc_of(name: str, sample_id: str) -> tuple[str | None, int]:
    head, _, index = sample_id.rpartition("/")
    return (head if name == "mmlu" else None), int(index)


def compare(
    cases: list[tuple[str, int]], lm: dict[str, Any], ours: dict[str, Any], shown: int = 3
) -> list[dict[str, Any]]:
    table = []
    for name, k in cases:
        key = f"{name}/{k}"
        theirs = {(d.get("subset"), d["doc"]): d["arguments"] for d in lm[key]}
        same, diffs = 0, []
        for sample in ours[key]:
            doc = _doc_of(name, sample["sample"])
            if theirs.get(doc) == sample["arguments"]:
                same += 1
            elif len(diffs) < shown:
                diffs.append({"sample": sample["sample"], "lm_eval": theirs.get(doc),
                              "sieval": sample["arguments"]})  # fmt: skip
        table.append({"task": name, "num_fewshot": k, "docs": len(ours[key]),
                      "lm_eval_docs": len(lm[key]), "identical": same,
                      "first_differences": diffs})  # fmt: skip
    return table


def _fixture(name: str, k: int, rows: list[dict[str, Any]]) -> str:
    """One case as JSON, a document a line."""
    head = json.dumps({"task": name, "num_fewshot": k, "seed": SEED, "lm_eval": "0.4.13"})
    docs = ",\n".join(json.dumps(row) for row in rows)
    return f'{head[:-1]}, "docs": [\n{docs}\n]}}\n'


def write_fixtures(
    cases: list[tuple[str, int]], ours: dict[str, Any], docs: int, lm: dict[str, Any]
) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, k in cases:
        rows = [
            {
                "sample": s["sample"],
                "sha256": _digest(s["arguments"]),
                "lengths": [[len(x) for x in a] for a in s["arguments"]],
            }
            for s in ours[f"{name}/{k}"][:docs]
        ]
        (FIXTURES / f"{name}-{k}shot.json").write_text(_fixture(name, k, rows))
    (FIXTURES / "metrics.json").write_text(json.dumps(lm["metrics"], indent=1) + "\n")


def _yaml_configs(
    name: str, data: Path, tmp: Path, tasks_dir: Path
) -> list[tuple[str, Path, dict[str, Any]]]:
    """(case part, stock YAML, its data-source override) of one ``--yaml`` case."""
    if name == "mmlu":
        from sieval.tasks._mmlu import SUBJECTS

        return [
            (s, tasks_dir / "mmlu/default" / f"mmlu_{s}.yaml", _mmlu_dataset(s, data, tmp))
            for s in SUBJECTS
        ]
    if name == "mmlu_pro":  # each subject's YAML filters the one test file by its category
        files = {s: str(data / "mmlu_pro" / f"{s}-00000-of-00001.parquet")
                 for s in ("test", "validation")}  # fmt: skip
        override = {"dataset_path": "parquet", "dataset_name": None,
                    "dataset_kwargs": {"data_files": files}}  # fmt: skip
        return [
            (p.stem.removeprefix("mmlu_pro_"), p, override)
            for p in sorted((tasks_dir / "mmlu_pro").glob("mmlu_pro_*.yaml"))
        ]
    if name.startswith("bbh_"):
        folder = {"bbh_zeroshot": "zeroshot", "bbh_cot_fewshot": "cot_fewshot"}[name]
        subjects = sorted(p.stem for p in (data / "bbh" / "bbh").glob("*.json"))
        return [
            (s, tasks_dir / "bbh" / folder / f"{s}.yaml", _bbh_dataset(s, data)) for s in subjects
        ]
    path = tasks_dir / (YAML.get(name) or YAML_EXTRA[name])
    override = _extra_dataset(name, data, tmp) if name in YAML_EXTRA else _dataset(name, data, tmp)
    return [("", path, override)]


def _sieval_yaml(path: Path, override: dict[str, Any], k: int, data: Path) -> list[dict[str, Any]]:
    from sieval.tasks.base import TaskConfig
    from sieval.tasks.catalogue import FileTask
    from sieval.tasks.yaml_file import read_yaml
    from sieval.tasks.yaml_task import resolve

    located = read_yaml(path)
    located.values.update(override)
    spec = resolve(located)
    task = FileTask(spec, {"file": str(path)})
    config = TaskConfig(name=spec.name, num_fewshot=k)
    return [
        {"sample": s.id, "arguments": [_plain(a) for a in task.arguments(s, config).values()]}
        for s in task.load(data, config)
    ]


def _plain(arguments: Any) -> list[Any]:
    return [dict(a) if isinstance(a, dict) else a for a in arguments]


def _antlr_pin_passed() -> None:
    """lm-eval's minerva_math utils refuse to import unless ``antlr4-python3-runtime`` is 4.11
    (its LaTeX parser's pin); math-verify, which sieval installs, needs 4.13. Building the
    prompts parses no LaTeX, so the version check alone is answered with 4.11 here (the check
    reads ``importlib.metadata.version`` when utils.py is imported)."""
    import importlib.metadata

    real = importlib.metadata.version

    def version(name: str) -> str:
        return "4.11.0" if name == "antlr4-python3-runtime" else real(name)

    importlib.metadata.version = version  # type: ignore[assignment]


def _code_eval_offline() -> None:
    """lm-eval's humaneval and mbpp utils load Hugging Face evaluate's ``code_eval`` metric from
    the hub when imported (on both sides: sieval's loader imports the same ``!function``s), and
    humaneval's runs it once on a toy case. Building requests never scores, so
    ``evaluate.load("code_eval")`` answers with a stand-in whose ``compute`` scores nothing."""
    import evaluate

    real = evaluate.load

    class StandIn:
        def compute(self, *args: Any, **kwargs: Any) -> Any:
            return {}, {}

    def load(path: str, *args: Any, **kwargs: Any) -> Any:
        return StandIn() if path == "code_eval" else real(path, *args, **kwargs)

    evaluate.load = load


def yaml_parity(
    cases: list[tuple[str, int]],
    data: Path,
    sample: int | None,
    out: Path | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Per case: lm-eval's requests from its stock YAML against sieval's from the same YAML
    (the table written to ``out`` after each case, so a long run's finished cases are kept)."""
    import logging
    import random

    import datasets
    import lm_eval
    from lm_eval.tasks._yaml_loader import load_yaml

    logging.disable(logging.WARNING)
    datasets.disable_caching()  # a cached map would replay another run's process_docs
    if any(name == "minerva_math500" for name, _ in cases):
        _antlr_pin_passed()
    if any(name in ("humaneval", "mbpp") for name, _ in cases):
        _code_eval_offline()
    tasks_dir = Path(lm_eval.__file__).parent / "tasks"
    table = []
    with tempfile.TemporaryDirectory(prefix="sieval-yaml-parity-") as tmp_name:
        tmp = Path(tmp_name)
        for name, k in cases:
            docs = same = 0
            total = 0
            diffs: list[dict[str, Any]] = []
            for part, path, override in _yaml_configs(name, data, tmp, tasks_dir):
                config = load_yaml(path)
                config = {k_: v for k_, v in config.items() if k_ != "tag"}
                config.update(override)
                built = _build(config, k, limit)
                theirs = {d["doc"]: [_plain(a) for a in d["arguments"]] for d in built}
                ours = _sieval_yaml(path, override, k, data)
                total += len(ours)
                built_docs = len(ours) if limit is None else min(limit, len(ours))
                if len(theirs) != built_docs:  # a document only one side has is a difference
                    diffs.append({"part": part, "lm_eval_docs": len(theirs),
                                  "sieval_docs": built_docs})  # fmt: skip
                if limit is not None:  # the first docs: their shots depend on no later doc
                    ours = ours[:limit]
                if sample is not None and len(ours) > sample:
                    ours = random.Random(SEED).sample(ours, sample)
                for row in ours:
                    docs += 1
                    doc = int(row["sample"].rpartition("/")[2])
                    if theirs.get(doc) == row["arguments"]:
                        same += 1
                    elif len(diffs) < 3:
                        diffs.append(
                            {"part": part, "sample": row["sample"], "lm_eval": theirs.get(doc),
                             "sieval": row["arguments"]}
                        )  # fmt: skip
            scope = (
                f"the first {limit} of each part (--limit {limit})"
                if limit is not None
                else f"{sample} seeded (--sample {sample}, seed {SEED})"
                if sample is not None and docs < total
                else "every document"
            )
            table.append({"task": name, "num_fewshot": k, "docs_in_split": total, "compared": docs,
                          "identical": same, "scope": scope,
                          "first_differences": diffs})  # fmt: skip
            print(f"{name:<16} {k:>5} {total:>7} {docs:>8} {same:>9}", file=sys.stderr, flush=True)
            if out is not None:
                out.write_text(json.dumps(table, indent=1) + "\n")
    return table


def _scope(row: dict[str, Any]) -> str:
    """Which documents a row compared: every one, the first N of each part, or a sample."""
    if row["compared"] == row["docs_in_split"]:
        return "every document"
    return row.get("scope") or f"{row['compared']:,} of {row['docs_in_split']:,}"


def markdown(rows: list[dict[str, Any]], command: str) -> str:
    """The ``--yaml`` tables as the evidence page shows them."""
    lines = [
        "# lm-eval's own YAMLs read by sieval: the same requests, document by document",
        "",
        f"Measured by `{command}` (lm-eval 0.4.13 in the venv, both sides in one process over the "
        "same files). sieval's side is lm-eval's stock YAML loaded by sieval's task-file loader, "
        "the data source pointed at the stored files (`dataset_path`, `dataset_name`, "
        "`dataset_kwargs`; `training_split: null` where train is not stored: hellaswag, boolq, "
        "wikitext), nothing else. lm-eval's side is `ConfigurableTask` from the same YAML and "
        "override, shots seeded as `simple_evaluate` seeds them (1234). A document is identical "
        "when every request's arguments are equal: (context, continuation) for log-likelihood, "
        "(document,) for rolling, (context, generation_kwargs) for generation.",
        "",
        "| task | shots | docs in split | compared | identical | which documents |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['task']} | {r['num_fewshot']} | {r['docs_in_split']:,} | {r['compared']:,} "
            f"| {r['identical']:,} | {_scope(r)} |"
        )
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("SIEVAL_DATA_DIR", ROOT.parent / "shared" / "data")),
    )
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--fixture-docs", type=int, default=60)
    parser.add_argument("--yaml", action="store_true", help="lm-eval's YAML read by sieval")
    parser.add_argument("--sample", type=int, default=None)
    parser.add_argument("--render", type=Path, nargs="*", help="--yaml tables (JSON) to Markdown")
    parser.add_argument(
        "--limit", type=int, default=None, help="--yaml: the first N docs of each split (part)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the --yaml table here")
    parser.add_argument(
        "--lm-eval", type=Path, help=argparse.SUPPRESS
    )  # the venv's side: its output file
    args = parser.parse_args()
    if args.render:
        rows = [row for path in args.render for row in json.loads(path.read_text())]
        print(markdown(rows, "scripts/lm_eval_strings.py --yaml"))
        return 0
    if args.yaml:
        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        picked = [c for c in YAML_CASES if not args.task or c[0] in args.task]
        print(f"{'task':<16} {'shots':>5} {'in split':>7} {'compared':>8} {'identical':>9}",
              file=sys.stderr)  # fmt: skip
        rows = yaml_parity(picked, args.data_dir, args.sample, args.json, args.limit)
        for row in rows:
            for diff in row["first_differences"]:
                print(json.dumps({"task": row["task"], **diff})[:1500])
        return 0 if all(r["identical"] == r["compared"] and not r["first_differences"]
                        for r in rows) else 1  # fmt: skip
    cases = [c for c in CASES if not args.task or c[0] in args.task]
    if args.lm_eval is not None:
        lm_eval_side(cases, args.data_dir, args.lm_eval)
        return 0
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"no lm-eval venv at {VENV}: python3 -m venv {VENV} && {VENV}/bin/pip install "
              "torch==2.13.0 lm_eval==0.4.13 (or set SIEVAL_LM_EVAL)", file=sys.stderr)  # fmt: skip
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        subjects = Path(tmp) / "sieval_subjects.py"
        sys.path.insert(0, str(ROOT))
        from sieval.tasks._mmlu import SUBJECTS

        subjects.write_text(f"SUBJECTS = {list(SUBJECTS)!r}\n")
        out = Path(tmp) / "lm_eval.json"
        env = {**os.environ, "PYTHONPATH": tmp, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
        argv = [str(python), __file__, "--lm-eval", str(out), "--data-dir", str(args.data_dir)]
        subprocess.run(argv + [a for t in args.task for a in ("--task", t)], check=True, env=env)
        lm = json.loads(out.read_text())
    ours = sieval_side(cases, args.data_dir)
    table = compare(cases, lm, ours)
    print(f"{'task':<16} {'shots':>5} {'docs':>6} {'lm-eval':>7} {'identical':>9}")
    for row in table:
        cells = (
            row["task"],
            row["num_fewshot"],
            row["docs"],
            row["lm_eval_docs"],
            row["identical"],
        )
        print("{:<16} {:>5} {:>6} {:>7} {:>9}".format(*cells))
    for row in table:
        for diff in row["first_differences"]:
            print(
                json.dumps({"task": row["task"], "num_fewshot": row["num_fewshot"], **diff})[:1500]
            )
    if args.write:
        write_fixtures(cases, ours, args.fixture_docs, lm)
    return 0 if all(r["identical"] == r["docs"] == r["lm_eval_docs"] for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
