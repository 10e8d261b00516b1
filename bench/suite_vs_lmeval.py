"""The base suite on a live vLLM: sieval against lm-evaluation-harness 0.4.13, interleaved rounds.

Usage: python bench/suite_vs_lmeval.py --url http://127.0.0.1:18325 [--n 10] [--rounds 2]
       [--concurrency 8 | --lm-eval-concurrency C --sieval-concurrency C] [--first sieval]
       [--task NAME ...]
       python bench/suite_vs_lmeval.py --url URL --sweep 1,4,8,16 [--n 10] [--task NAME ...]

Per round, each harness runs the same tasks on the same server in a fresh process (the order
alternates round by round; ``--first`` names who starts): lm-eval's ``local-completions`` with
``num_concurrent`` C in its own venv (the YAMLs pointed at the stored files by
``scripts/lm_eval_parity.py``, ``limit`` n; MMLU: ceil(n / 57) rows of each subject; WikiText:
``--wikitext`` documents), and ``sieval eval`` with
``--concurrency`` C (``openai_completions``, the same n; MMLU 57 times lm-eval's limit, the same
rows). Each harness runs at its own concurrency when given (its best: ``--sweep`` runs each harness
once per listed concurrency, interleaved, and prints each one's wall per concurrency and its
fastest). Measured: each
process's wall time (imports, data and setup included: what a user waits for) and the server's
prompt tokens (``vllm:prompt_tokens_total`` from ``/metrics`` before and after; sieval's pre-run
and serving checks included, and the serving checks' own share, from its report, beside), with
the ratios sieval / lm-eval per round and their median, and each task's headline figure on both
sides. At C > 1 the server batches requests, so bf16 log-likelihoods
may differ in the last bits between the harnesses (``scripts/lm_eval_parity.py`` shows equality
one request at a time).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("SIEVAL_LM_EVAL", Path.home() / ".cache/sieval/bench/lm-eval-0.4.13"))
SUITE = (
    "arc_easy", "arc_challenge", "hellaswag", "winogrande", "piqa", "openbookqa", "sciq", "boolq",
    "truthfulqa_mc1", "truthfulqa_mc2", "lambada_openai", "wikitext", "mmlu",
)  # fmt: skip
HEADLINE = {"wikitext": "word_perplexity", "lambada_openai": "acc", "mmlu": "acc"}


def _limit(task: str, n: int, wikitext: int) -> int:
    if task == "mmlu":
        return -(-n // 57)
    return wikitext if task == "wikitext" else n


def lm_eval_side(tasks: list[str], n: int, wikitext: int, url: str, concurrency: int,
                 data: Path, out: Path) -> None:  # fmt: skip
    """In lm-eval's venv: every task through one ``simple_evaluate`` per limit."""
    import logging

    sys.path.insert(0, str(ROOT / "scripts"))
    from lm_eval import simple_evaluate
    from lm_eval.api.registry import get_model
    from lm_eval.api.task import ConfigurableTask
    from lm_eval_parity import MODEL, MODEL_DIR, ROLLING, _configs  # type: ignore[import-not-found]

    logging.disable(logging.WARNING)
    with urllib.request.urlopen(f"{url}/v1/models", timeout=30) as reply:
        max_length = json.loads(reply.read())["data"][0]["max_model_len"]
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="sieval-lm-eval-") as tmp:
        # one model per BOS setting (WikiText's windows carry their own), one evaluate per limit
        runs: dict[tuple[bool, int], list[Any]] = {}
        for task in tasks:
            for config in _configs(task, data, Path(tmp)):
                obj = ConfigurableTask(config=config)
                if obj.get_config("num_fewshot") is None:
                    obj.set_config(key="num_fewshot", value=0)
                key = (task not in ROLLING, _limit(task, n, wikitext))
                runs.setdefault(key, []).append(obj)
        for (bos, limit), objects in runs.items():
            lm = get_model("local-completions").create_from_arg_string(
                f"model={MODEL},base_url={url}/v1/completions,tokenizer_backend=huggingface,"
                f"tokenizer={MODEL_DIR},num_concurrent={concurrency},batch_size=1,"
                f"max_retries=3,max_length={max_length},add_bos_token={bos}"
            )
            res = simple_evaluate(model=lm, tasks=objects, limit=limit, bootstrap_iters=0,
                                  fewshot_random_seed=1234)  # fmt: skip
            assert res is not None
            for name, values in res["results"].items():
                for key, value in values.items():
                    if "," in key and "_stderr" not in key and isinstance(value, (int, float)):
                        figures[f"{name}.{key.split(',')[0]}"] = value
    out.write_text(json.dumps(figures))


def _prompt_tokens(url: str) -> float:
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as reply:
        text = reply.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("vllm:prompt_tokens_total")
    )


def _timed(argv: list[str], url: str, env: dict[str, str]) -> tuple[float, float]:
    before = _prompt_tokens(url)
    started = time.monotonic()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - started
    return wall, _prompt_tokens(url) - before


def _report(out: Path) -> dict[str, Any]:
    (run_dir,) = [p.parent for p in out.glob("*/report.json")]
    report: dict[str, Any] = json.loads((run_dir / "report.json").read_text())
    return report


def _serving_tokens(report: dict[str, Any]) -> int:
    """The prompt tokens sieval's serving checks sent (fixed per run, not per sample)."""
    return sum(int(e.get("cost", {}).get("prompt_tokens", 0)) for e in report["serving"].values())


def _sieval_figures(report: dict[str, Any]) -> dict[str, float]:
    figures = {}
    for entry in report["results"]:
        for key, value in entry["metrics"].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                figures[f"{entry['task']}.{key}"] = float(value)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:18325")
    parser.add_argument("--n", type=int, default=10, help="samples per task (MMLU: see above)")
    parser.add_argument("--wikitext", type=int, default=1, help="WikiText documents")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8, help="both harnesses'")
    parser.add_argument("--lm-eval-concurrency", type=int, help="lm-eval's num_concurrent")
    parser.add_argument("--sieval-concurrency", type=int, help="sieval's --concurrency")
    parser.add_argument("--sweep", help="C1,C2,...: each harness once at each, interleaved")
    parser.add_argument(
        "--first",
        choices=["lm_eval", "sieval"],
        default="lm_eval",
        help="the harness that runs first in odd rounds (the other one first in even rounds)",
    )
    parser.add_argument(
        "--sieval-arg",
        action="append",
        default=[],
        help="an extra argument of sieval eval (e.g. --no-preflight)",
    )
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("SIEVAL_DATA_DIR", ROOT.parent / "shared" / "data")),
    )
    parser.add_argument("--lm-eval", type=Path, help=argparse.SUPPRESS)  # the venv's side
    args = parser.parse_args()
    tasks = args.task or list(SUITE)
    if args.lm_eval is not None:
        lm_eval_side(tasks, args.n, args.wikitext, args.url, args.concurrency, args.data_dir,
                     args.lm_eval)  # fmt: skip
        return 0
    sys.path.insert(0, str(ROOT))
    from sieval.tasks._mmlu import SUBJECTS

    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "sieval_subjects.py").write_text(f"SUBJECTS = {list(SUBJECTS)!r}\n")
        env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
        lm_env = {**env, "PYTHONPATH": tmp_name}
        si_env = {**env, "PYTHONPATH": str(ROOT)}
        specs = ",".join(
            f"{t}:n={_limit(t, args.n, args.wikitext) * (57 if t == 'mmlu' else 1)}" for t in tasks
        )

        def argvs(lm_c: int, si_c: int, r: int) -> dict[str, list[str]]:
            lm_out, si_out = tmp / f"lm-{r}-{lm_c}.json", tmp / f"sieval-{r}-{si_c}"
            return {
                "lm_eval": [str(VENV / "bin" / "python"), __file__, "--lm-eval", str(lm_out),
                            "--url", args.url, "--n", str(args.n),
                            "--wikitext", str(args.wikitext), "--concurrency", str(lm_c),
                            "--data-dir", str(args.data_dir),
                            *[a for t in tasks for a in ("--task", t)]],
                "sieval": [sys.executable, "-m", "sieval", "eval", "--endpoint", args.url,
                           "--model", "gemma-3-270m", "--dialect", "openai_completions",
                           "--task", specs, "--concurrency", str(si_c),
                           "--data-dir", str(args.data_dir), "--out", str(si_out),
                           *args.sieval_arg],
            }  # fmt: skip

        envs = {"lm_eval": lm_env, "sieval": si_env}
        if args.sweep:
            return _sweep(args, argvs, envs)
        lm_c = args.lm_eval_concurrency or args.concurrency
        si_c = args.sieval_concurrency or args.concurrency
        for r in range(args.rounds):
            commands = argvs(lm_c, si_c, r)
            second = "sieval" if args.first == "lm_eval" else "lm_eval"
            order = [args.first, second][:: -1 if r % 2 else 1]
            row: dict[str, Any] = {"round": r + 1, "first": order[0],
                                   "concurrency": {"lm_eval": lm_c, "sieval": si_c}}  # fmt: skip
            for name in order:
                wall, tokens = _timed(commands[name], args.url, envs[name])
                row[name] = {"wall_s": wall, "prompt_tokens": tokens}
            row["wall_ratio"] = row["sieval"]["wall_s"] / row["lm_eval"]["wall_s"]
            row["token_ratio"] = row["sieval"]["prompt_tokens"] / row["lm_eval"]["prompt_tokens"]
            lm_fig = json.loads(Path(commands["lm_eval"][3]).read_text())
            report = _report(Path(commands["sieval"][commands["sieval"].index("--out") + 1]))
            checks = _serving_tokens(report)
            row["sieval"]["serving_check_tokens"] = checks
            row["token_ratio_samples"] = (row["sieval"]["prompt_tokens"] - checks) / row["lm_eval"][
                "prompt_tokens"
            ]
            row["figures"] = _headlines(tasks, lm_fig, _sieval_figures(report))
            rows.append(row)
            print(json.dumps(row), flush=True)
    walls = [r["wall_ratio"] for r in rows]
    tokens = [r["token_ratio"] for r in rows]
    print(json.dumps({"tasks": len(tasks), "n": args.n, "wikitext": args.wikitext,
                      "concurrency": {"lm_eval": lm_c, "sieval": si_c}, "rounds": len(rows),
                      "median_wall_ratio": statistics.median(walls),
                      "median_token_ratio": statistics.median(tokens),
                      "median_token_ratio_without_serving_checks":
                          statistics.median(r["token_ratio_samples"] for r in rows)}))  # fmt: skip
    return 0


def _sweep(args: argparse.Namespace, argvs: Callable[[int, int, int], dict[str, list[str]]],
           envs: dict[str, dict[str, str]]) -> int:  # fmt: skip
    """Each harness once per concurrency, the two interleaved (lm-eval first at even steps)."""
    levels = [int(c) for c in args.sweep.split(",")]
    walls: dict[str, dict[int, float]] = {"lm_eval": {}, "sieval": {}}
    for step, c in enumerate(levels):
        commands = argvs(c, c, step)
        for name in ["lm_eval", "sieval"][:: -1 if step % 2 else 1]:
            wall, tokens = _timed(commands[name], args.url, envs[name])
            walls[name][c] = wall
            print(json.dumps({"harness": name, "concurrency": c, "wall_s": round(wall, 1),
                              "prompt_tokens": tokens}), flush=True)  # fmt: skip
    best = {name: min(w, key=w.__getitem__) for name, w in walls.items()}
    print(json.dumps({"sweep": levels, "n": args.n, "best": best}))
    return 0


def _headlines(tasks: list[str], lm: dict[str, float], ours: dict[str, float]) -> dict[str, Any]:
    out = {}
    for task in tasks:
        metric = HEADLINE.get(task, "acc_norm" if f"{task}.acc_norm" in lm else "acc")
        theirs = lm.get(f"{task}.{metric}")
        if task == "mmlu":  # lm-eval's group figure is not computed without its group config
            subjects = {k: v for k, v in lm.items() if k.startswith("mmlu_") and k.endswith(".acc")}
            theirs = statistics.fmean(subjects.values()) if subjects else None
        out[task] = {"metric": metric, "lm_eval": theirs, "sieval": ours.get(f"{task}.{metric}")}
    return out


if __name__ == "__main__":
    sys.exit(main())
