#!/usr/bin/env python3
"""The shape of lm-evaluation-harness 0.4.13's own result files, recorded from a real run.

    .venv/bin/python scripts/record_lm_eval_files.py --url http://127.0.0.1:18321 [--write]

lm-eval (``pip install 'lm_eval==0.4.13' transformers``, in the venv that runs this) evaluates
its ``local-completions`` model against a live vLLM on two small tasks written as lm-eval task
YAML over the stored files: a multiple-choice one (ARC-Easy's test rows) and a generation one
(GSM8K's test rows, with lm-eval's gsm8k filters ``strict-match`` and ``flexible-extract``),
3 docs each, ``log_samples`` on, saved by lm-eval's ``EvaluationTracker`` as it saves every run.
The tokenizer is read from the prepared model directory (``$SIEVAL_MODEL_DIR``).

``--write`` keeps the files' shape, not their text: ``tests/fixtures/lm_eval/0.4.13/files.json``
holds the results file's keys (each task's metric keys, each config's keys, ``config``'s keys,
the top-level keys and the type of each value) and each samples line's keys and value types per
task kind, which ``tests/export/test_lm_eval.py`` checks sieval's export against key by key.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "lm_eval" / "0.4.13" / "files.json"
DATA = Path(os.environ.get("SIEVAL_DATA_DIR", ROOT.parent / "shared" / "data"))
MODEL_DIR = Path(
    os.environ.get("SIEVAL_MODEL_DIR", Path.home() / ".cache/sieval/models/gemma-3-270m-bf16")
)

CHOICE_TASK = """\
task: sieval_arc_mini
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}/arc_easy/ARC-Easy-test.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{choices.label.index(answerKey)}}}}"
doc_to_choice: "{{{{choices.text}}}}"
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""

GENERATION_TASK = """\
task: sieval_gsm8k_mini
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}/gsm8k/test.jsonl
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer.split('####')[-1].strip()}}}}"
generation_kwargs:
  until: ["Question:", "</s>", "<|im_end|>"]
  do_sample: false
  temperature: 0.0
  max_gen_toks: 24
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: false
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "#### (\\\\-?[0-9\\\\.\\\\,]+)"
      - function: take_first
  - name: flexible-extract
    filter:
      - function: regex
        group_select: -1
        regex_pattern: "(-?[$0-9.,]{{2,}})|(-?[0-9]+)"
      - function: take_first
metadata:
  version: 3.0
"""


def shape(value: Any) -> Any:
    """A value's shape: a dict's keys with their shapes, a list's first item's, else its type."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def run(url: str, out: Path) -> None:
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    tasks = out / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "sieval_arc_mini.yaml").write_text(CHOICE_TASK.format(data=DATA))
    (tasks / "sieval_gsm8k_mini.yaml").write_text(GENERATION_TASK.format(data=DATA))
    tracker = EvaluationTracker(output_path=str(out / "output"))
    results = simple_evaluate(
        model="local-completions",
        model_args=(
            f"model=gemma-3-270m,base_url={url}/v1/completions,num_concurrent=1,"
            f"tokenizer_backend=huggingface,tokenizer={MODEL_DIR},max_length=4096"
        ),
        tasks=["sieval_arc_mini", "sieval_gsm8k_mini"],
        task_manager=TaskManager(include_path=str(tasks)),
        limit=3,
        log_samples=True,
        evaluation_tracker=tracker,
        bootstrap_iters=0,
    )
    assert results is not None
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for name, rows in samples.items():
        tracker.save_results_samples(task_name=name, samples=rows)


def recorded(out: Path) -> dict[str, Any]:
    folder = next((out / "output").iterdir())
    results = json.loads(next(folder.glob("results_*.json")).read_text())
    kinds = {"sieval_arc_mini": "multiple_choice", "sieval_gsm8k_mini": "generate_until"}
    samples: dict[str, Any] = {}
    for path in sorted(folder.glob("samples_*.jsonl")):
        task = next(t for t in kinds if f"samples_{t}_" in path.name)
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        samples[kinds[task]] = {
            "filters": sorted({line["filter"] for line in lines}),
            "line": shape({k: v for k, v in lines[0].items() if k != "doc"}),
        }
    return {
        "lm_eval": "0.4.13",
        "file_names": sorted(p.name.split("_20")[0] for p in folder.iterdir()),
        "results_keys": sorted(results),
        "results": {kinds[t]: sorted(v) for t, v in results["results"].items()},
        "configs": {kinds[t]: sorted(v) for t, v in results["configs"].items()},
        "config": sorted(results["config"]),
        "n-samples": shape(results["n-samples"]["sieval_arc_mini"]),
        "types": {k: type(v).__name__ for k, v in results.items()},
        "samples": samples,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="a live vLLM serving gemma-3-270m")
    parser.add_argument("--write", action="store_true", help=f"write {FIXTURE}")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        run(args.url.rstrip("/"), Path(scratch))
        found = recorded(Path(scratch))
    text = json.dumps(found, indent=1, sort_keys=True) + "\n"
    if args.write:
        FIXTURE.write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
