#!/usr/bin/env python3
"""The base suite per sample against lm-evaluation-harness 0.4.13, on one live vLLM.

    .venv/bin/python scripts/lm_eval_parity.py --url http://127.0.0.1:18325 [--task NAME[:N] ...]

For each task, lm-eval (its own venv, ``$SIEVAL_LM_EVAL``, default
``~/.cache/sieval/bench/lm-eval-0.4.13``: ``pip install 'lm_eval[api]==0.4.13' transformers``)
runs its ``local-completions`` model against ``URL/v1/completions`` (``num_concurrent=1``,
``batch_size=1``, ``max_length`` the server's, the tokenizer read from the prepared model
directory, ``add_bos_token=True`` so every context starts with Gemma's BOS as the server's own
tokenisation of a text prompt does; ``False`` for WikiText, whose rolling windows put one BOS in
front themselves) with ``log_samples``, each task's YAML pointed at the stored files exactly as
``scripts/lm_eval_strings.py`` points it (its functions are reused), ``limit`` N (MMLU: N rows of
each subject). Then sieval runs the same tasks (``openai_completions``, the same server, the first
N samples, one request at a time, tokens recorded). Per sample it compares:

- the strings: lm-eval's logged ``arguments`` with the prompt of every request sieval sent (the
  body's ``prompt`` is context + continuation; WikiText: the document);
- the token ids: lm-eval's (context, continuation) encoding against the server's ``/tokenize``
  of sieval's prompt and sieval's count of continuation tokens (WikiText: every window's ids,
  sent as ids by both);
- the log-likelihoods, to the bit (``==`` on the floats), and lm-eval's ``is_greedy`` (LAMBADA);
- every metric lm-eval reports for the task (its stderrs are off: ``bootstrap_iters=0``); MMLU's
  group and category figures are lm-eval's own ``aggregate_subtask_metrics`` over its subjects.

The server must serve one request at a time with no prefix cache, or its bf16 numbers depend on
what else is batched or cached: start one with ``SIEVAL_VLLM_PORT=18325
SIEVAL_VLLM_EXTRA_ARGS=--no-enable-prefix-caching scripts/live-vllm.sh start``. ``--json OUT``
writes the whole comparison.

``--sieval-url URL2`` runs sieval's side against a second server of the same build, model and
flags while lm-eval runs against ``--url``: on a CPU server bound to one core
(``VLLM_CPU_OMP_THREADS_BIND``), two servers on two cores halve the wall. The comparison still
demands every log-likelihood equal to the bit, so two servers whose numerics differ show as
failures, never as agreement; both must list the same maximum length.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("SIEVAL_LM_EVAL", Path.home() / ".cache/sieval/bench/lm-eval-0.4.13"))
MODEL_DIR = Path(
    os.environ.get("SIEVAL_MODEL_DIR", Path.home() / ".cache/sieval/models/gemma-3-270m-bf16")
)
MODEL = "gemma-3-270m"

DEFAULT_N: dict[str, int] = {
    "arc_easy": 100,
    "arc_challenge": 100,
    "hellaswag": 100,
    "winogrande": 100,
    "piqa": 100,
    "openbookqa": 100,
    "sciq": 100,
    "boolq": 100,
    "truthfulqa_mc1": 100,
    "truthfulqa_mc2": 100,
    "lambada_openai": 100,
    "wikitext": 10,
    "mmlu": 2,
}
"""Per task: lm-eval's ``limit`` (MMLU: rows of each of its 57 subjects; sieval's n is 57 times
that, its samples taking the subjects' rows in turn)."""

ROLLING = {"wikitext"}
MMLU_GROUPS = ("stem", "other", "social_sciences", "humanities")
"""lm-eval's ``mmlu`` group: its four groups, in the order ``tasks/mmlu/default/_mmlu.yaml``
lists them."""
CATEGORY: dict[str, str] = {}
"""Each MMLU subject's lm-eval group, read from its YAML's ``tag`` (``mmlu_stem_tasks``)."""


# -- lm-eval's side (runs in lm-eval's venv) -------------------------------------------------------


def _lm(url: str, max_length: int, bos: bool) -> Any:
    from lm_eval.api.registry import get_model

    args = (
        f"model={MODEL},base_url={url}/v1/completions,tokenizer_backend=huggingface,"
        f"tokenizer={MODEL_DIR},num_concurrent=1,batch_size=1,max_retries=3,"
        f"max_length={max_length},add_bos_token={bos}"
    )
    return get_model("local-completions").create_from_arg_string(args)


def _ids(lm: Any, task: str, arguments: list[list[str]]) -> list[dict[str, Any]]:
    """The token ids lm-eval sends per request, and how many of them are scored."""
    from lm_eval import utils

    out = []
    if task in ROLLING:
        (doc,) = arguments[0]
        windows = map(
            utils.make_disjoint_window,
            utils.get_rolling_token_windows(
                token_list=lm.tok_encode(doc),
                prefix_token=lm.prefix_token_id,
                max_seq_len=lm.max_length - 1,
                context_len=1,
            ),
        )
        for ctx, cont in windows:
            out.append({"ids": (ctx + cont)[-lm.max_length :], "scored": len(cont)})
        return out
    for ctx, cont in arguments:
        if ctx:
            ctx_enc, cont_enc = lm._encode_pair(ctx, cont)
        else:
            ctx_enc, cont_enc = [lm.prefix_token_id], lm.tok_encode(cont)
        out.append({"ids": ctx_enc + cont_enc, "scored": len(cont_enc)})
    return out


def _args(sample: dict[str, Any]) -> list[list[str]]:
    args = sample["arguments"]
    if isinstance(args, dict):  # {"gen_args_0": {"arg_0": ctx, "arg_1": cont}, ...}
        return [list(a.values()) for _, a in sorted(args.items(), key=lambda kv: int(kv[0][9:]))]
    return [list(a) for a in args]


def _configs(task: str, data: Path, tmp: Path) -> list[dict[str, Any]]:
    import lm_eval
    from lm_eval.tasks._yaml_loader import load_yaml
    from lm_eval_strings import YAML, _dataset, _mmlu_dataset  # type: ignore[import-not-found]

    tasks_dir = Path(lm_eval.__file__).parent / "tasks"
    if task == "mmlu":
        from sieval_subjects import SUBJECTS  # type: ignore[import-not-found]

        configs = []
        for subject in SUBJECTS:
            config = load_yaml(tasks_dir / "mmlu/default" / f"mmlu_{subject}.yaml")
            CATEGORY[subject] = config["tag"].removeprefix("mmlu_").removesuffix("_tasks")
            config = {k: v for k, v in config.items() if k != "tag"}
            config.update(_mmlu_dataset(subject, data, tmp))
            configs.append(config)
        return configs
    config = load_yaml(tasks_dir / YAML[task])
    config = {k: v for k, v in config.items() if k != "tag"}
    config.update(_dataset(task, data, tmp))
    return [config]


def lm_eval_side(task: str, n: int, url: str, max_length: int, data: Path, out: Path) -> None:
    import logging

    from lm_eval import simple_evaluate
    from lm_eval.api.metrics import aggregate_subtask_metrics
    from lm_eval.api.task import ConfigurableTask

    logging.disable(logging.WARNING)
    lm = _lm(url, max_length, bos=task not in ROLLING)
    with tempfile.TemporaryDirectory(prefix="sieval-lm-eval-") as tmp:
        objects = []
        for config in _configs(task, data, Path(tmp)):
            obj = ConfigurableTask(config=config)
            if obj.get_config("num_fewshot") is None:
                obj.set_config(key="num_fewshot", value=0)
            objects.append(obj)
        started = time.monotonic()
        res = simple_evaluate(model=lm, tasks=objects, limit=n, log_samples=True,
                              bootstrap_iters=0, fewshot_random_seed=1234)  # fmt: skip
        wall = time.monotonic() - started
    assert res is not None
    samples, metrics, subjects = [], {}, {}
    for name, logged in res["samples"].items():
        subset = name.removeprefix("mmlu_") if task == "mmlu" else None
        for s in logged:
            arguments = _args(s)
            resps = [r[0] for r in s["resps"]]
            samples.append({
                "doc": s["doc_id"], "subset": subset, "arguments": arguments,
                "lls": [r[0] if isinstance(r, (list, tuple)) else r for r in resps],
                "greedy": [r[1] if isinstance(r, (list, tuple)) else None for r in resps],
                "requests": _ids(lm, task, arguments),
            })  # fmt: skip
        figures = {k.split(",")[0]: v for k, v in res["results"][name].items()
                   if "," in k and "_stderr" not in k and isinstance(v, (int, float))}  # fmt: skip
        if task == "mmlu":
            subjects[subset] = {**figures, "n": len(logged)}
        else:
            metrics = figures
    if task == "mmlu":  # the group's figures as lm-eval nests them: subjects, groups, mmlu
        groups = {}
        for category in MMLU_GROUPS:
            members = sorted(s for s in subjects if CATEGORY[s] == category)
            accs, sizes = [subjects[m]["acc"] for m in members], [subjects[m]["n"] for m in members]
            groups[category] = (float(aggregate_subtask_metrics(accs, sizes)), sum(sizes))
            metrics[f"by_category.{category}.acc"] = groups[category][0]
        accs, sizes = [a for a, _ in groups.values()], [n for _, n in groups.values()]
        metrics["acc"] = float(aggregate_subtask_metrics(accs, sizes))
        for subject, figures in subjects.items():
            metrics[f"by_subject.{subject}.acc"] = figures["acc"]
    out.write_text(json.dumps({"samples": samples, "metrics": metrics, "wall_s": wall}))


# -- sieval's side --------------------------------------------------------------------------------


def _tokenize(url: str, prompt: str) -> list[int]:
    body = json.dumps({"model": MODEL, "prompt": prompt}).encode()
    request = urllib.request.Request(
        f"{url}/tokenize", body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        tokens: list[int] = json.loads(reply.read())["tokens"]
    return tokens


def sieval_side(
    task: str, n: int, url: str, data: Path, out: Path, resume: Path | None = None
) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from sieval.plan.config import parse_config
    from sieval.runner.engine import RunOptions, run_eval
    from sieval.store.records import Shared, expand_requests, read_records
    from sieval.tasks.base import TaskConfig
    from sieval.tasks.registry import TASKS

    count = n * 57 if task == "mmlu" else n
    config = parse_config(
        "models:\n"
        f"  - {{name: g, endpoint: '{url}', model: {MODEL}, dialect: openai_completions,"
        " concurrency_limit: 1}\n"
        f"tasks:\n  - {{name: {task}, n: {count}}}\n"
    )
    options = RunOptions(out=out, data_dir=data, concurrency=1, record_tokens=False, resume=resume)
    started = time.monotonic()
    run = run_eval(config, options)
    wall = time.monotonic() - started
    folder = run.run_dir / "g" / task
    records = read_records(folder / "records.jsonl").records
    shared = Shared.load(folder / "shared.jsonl")
    spec: Any = TASKS[task]
    task_config = TaskConfig(name=task, n=count)
    arguments = {s.id: [list(a) for a in spec.arguments(s, task_config).values()]
                 for s in spec.load(data, task_config)}  # fmt: skip
    samples = []
    for sid, rec in records.items():
        requests = expand_requests(rec.requests, shared)
        prompts = [(r.body or {}).get("prompt") for r in requests.values()]
        if task in ROLLING:
            lls = [rec.metrics.get("loglikelihood")]
            scored = [w["predicted"] for w in rec.channels.get("windows", [])]
            ids = prompts
        else:
            channel = rec.channels.get("choices") or [rec.channels.get("target", {})]
            lls = [c.get("logprob_sum") for c in channel]
            scored = [c.get("n_tokens") for c in channel]
            ids = [_tokenize(url, p) for p in prompts]
        greedy = rec.prediction if task == "lambada_openai" else None
        samples.append({"sample": sid, "status": rec.status, "arguments": arguments[sid],
                        "prompts": prompts, "lls": lls, "ids": ids, "scored": scored,
                        "greedy": greedy})  # fmt: skip
    (entry,) = run.report["results"]
    return {"samples": samples, "metrics": entry["metrics"], "wall_s": wall,
            "run_dir": str(run.run_dir)}  # fmt: skip


# -- the comparison ------------------------------------------------------------------------------


def _flat(metrics: dict[str, Any], prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in metrics.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = float(value)
    return out


def _sent(task: str, arguments: list[list[str]]) -> list[Any]:
    """What sieval's prompts must be for these arguments (context + continuation)."""
    return [None] if task in ROLLING else ["".join(a) for a in arguments]


def compare(task: str, lm: dict[str, Any], ours: dict[str, Any], shown: int = 3) -> dict[str, Any]:
    theirs = {(s["subset"], s["doc"]): s for s in lm["samples"]}
    row: dict[str, Any] = {"task": task, "n": len(ours["samples"]),
                           "lm_eval_n": len(lm["samples"]), "failed": 0, "strings": 0,
                           "requests": 0, "ids_agree": 0, "ll_equal": 0, "ll_equal_ids": 0,
                           "greedy_equal": 0, "differences": []}  # fmt: skip
    for s in ours["samples"]:
        head, _, index = s["sample"].rpartition("/")
        mine = theirs.get((head if task == "mmlu" else None, int(index)))
        if s["status"] != "ok":
            row["failed"] += 1
        if mine is None:
            row["differences"].append({"sample": s["sample"], "why": "not in lm-eval's samples"})
            continue
        sent_ok = task in ROLLING or s["prompts"] == _sent(task, s["arguments"])
        if s["arguments"] == mine["arguments"] and sent_ok:
            row["strings"] += 1
        elif len(row["differences"]) < shown:
            row["differences"].append({"sample": s["sample"], "why": "strings",
                                       "lm_eval": mine["arguments"],
                                       "sieval": s["arguments"]})  # fmt: skip
        if task in ROLLING:
            ids_ok = [s["ids"] == [r["ids"] for r in mine["requests"]]
                      and s["scored"] == [r["scored"] for r in mine["requests"]]]  # fmt: skip
        else:
            pairs = zip(s["ids"], s["scored"], mine["requests"], strict=True)
            ids_ok = [i == r["ids"] and k == r["scored"] for i, k, r in pairs]
        equal = [a == b for a, b in zip(s["lls"], mine["lls"], strict=True)]
        row["requests"] += len(equal)
        row["ids_agree"] += sum(ids_ok)
        row["ll_equal"] += sum(equal)
        row["ll_equal_ids"] += sum(e and k for e, k in zip(equal, ids_ok, strict=True))
        if task == "lambada_openai":
            row["greedy_equal"] += int(s["greedy"] == mine["greedy"][0])
            if s["greedy"] != mine["greedy"][0] and len(row["differences"]) < shown:
                row["differences"].append({"sample": s["sample"], "why": "is_greedy",
                                           "sieval": s["greedy"],
                                           "lm_eval": mine["greedy"][0]})  # fmt: skip
        for e, k, a, b in zip(equal, ids_ok, s["lls"], mine["lls"], strict=True):
            if not e and len(row["differences"]) < shown:
                row["differences"].append({"sample": s["sample"], "why": "loglikelihood",
                                           "ids_agree": k, "sieval": a, "lm_eval": b})  # fmt: skip
    mine_m, ours_m = lm["metrics"], _flat(ours["metrics"])
    row["metrics"] = {k: {"lm_eval": v, "sieval": ours_m.get(k), "equal": ours_m.get(k) == v}
                      for k, v in mine_m.items()}  # fmt: skip
    row["wall_s"] = {"lm_eval": lm["wall_s"], "sieval": ours["wall_s"]}
    row["sieval_run"] = ours["run_dir"]
    return row


def _max_length(url: str) -> int:
    with urllib.request.urlopen(f"{url}/v1/models", timeout=30) as reply:
        (model,) = json.loads(reply.read())["data"]
    return int(model["max_model_len"])


def _task_args(given: list[str]) -> list[tuple[str, int]]:
    if not given:
        return list(DEFAULT_N.items())
    out = []
    for item in given:
        name, _, n = item.partition(":")
        out.append((name, int(n) if n else DEFAULT_N[name]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:18325")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("SIEVAL_DATA_DIR", ROOT.parent / "shared" / "data")),
    )
    parser.add_argument("--task", action="append", default=[], help="NAME or NAME:N")
    parser.add_argument("--json", type=Path, help="write the whole comparison here")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "sieval-parity")
    parser.add_argument("--keep", type=Path,
                        help="keep lm-eval's side of each task here as TASK.json, and reuse one "
                        "found there instead of running lm-eval again")  # fmt: skip
    parser.add_argument("--resume", type=Path, help="sieval's run directory to resume (one task)")
    parser.add_argument("--sieval-url",
                        help="run sieval's side against this second server of the same build "
                        "while lm-eval runs against --url")  # fmt: skip
    parser.add_argument("--lm-eval", type=Path, help=argparse.SUPPRESS)  # the venv's side
    parser.add_argument("--max-length", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    tasks = _task_args(args.task)
    if args.lm_eval is not None:
        ((task, n),) = tasks
        lm_eval_side(task, n, args.url, args.max_length, args.data_dir, args.lm_eval)
        return 0
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"no lm-eval venv at {VENV}: python3 -m venv {VENV} && {VENV}/bin/pip install "
              "'lm_eval[api]==0.4.13' transformers (or set SIEVAL_LM_EVAL)",
              file=sys.stderr)  # fmt: skip
        return 2
    max_length = _max_length(args.url)
    ours_url = args.sieval_url or args.url
    if _max_length(ours_url) != max_length:
        print(f"--sieval-url {ours_url} lists another maximum length than --url {args.url}",
              file=sys.stderr)  # fmt: skip
        return 2
    sys.path.insert(0, str(ROOT))
    from sieval.tasks._mmlu import SUBJECTS

    table = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sieval_subjects.py").write_text(f"SUBJECTS = {list(SUBJECTS)!r}\n")
        env = {**os.environ, "PYTHONPATH": tmp, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
        for task, n in tasks:
            out = (args.keep or Path(tmp)) / f"{task}.json"
            argv = [str(python), __file__, "--lm-eval", str(out), "--task", f"{task}:{n}",
                    "--url", args.url, "--max-length", str(max_length),
                    "--data-dir", str(args.data_dir)]  # fmt: skip
            lm_eval = None
            if not (args.keep and out.exists()):
                lm_eval = subprocess.Popen(argv, env=env)
                if ours_url == args.url:  # one server: one harness at a time
                    _finish(lm_eval)
            try:
                ours = sieval_side(task, n, ours_url, args.data_dir, args.out, args.resume)
            except BaseException:
                if lm_eval is not None:
                    lm_eval.kill()
                raise
            if lm_eval is not None:
                _finish(lm_eval)
            lm = json.loads(out.read_text())
            row = compare(task, lm, ours)
            table.append(row)
            print(json.dumps(_summary(row)), flush=True)
    if args.json:
        args.json.write_text(json.dumps(table, indent=1) + "\n")
    _print(table)
    return 0 if all(_agrees(r) for r in table) else 1


def _finish(process: subprocess.Popen[bytes]) -> None:
    if process.wait() != 0:
        raise subprocess.CalledProcessError(process.returncode, process.args)


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("task", "n", "lm_eval_n", "failed", "strings", "requests", "ids_agree", "ll_equal",
            "ll_equal_ids", "greedy_equal", "wall_s")  # fmt: skip
    return {**{k: row[k] for k in keys},
            "metrics_equal": sum(m["equal"] for m in row["metrics"].values()),
            "metrics": len(row["metrics"]), "differences": row["differences"][:3]}  # fmt: skip


def _agrees(row: dict[str, Any]) -> bool:
    return (
        row["n"] == row["lm_eval_n"] == row["strings"]
        and row["ll_equal"] == row["requests"]
        and all(m["equal"] for m in row["metrics"].values())
    )


def _g(value: float | None) -> str:
    return "-" if value is None else format(value, ".6g")


def _print(table: list[dict[str, Any]]) -> None:
    print(f"{'task':<16} {'n':>5} {'strings':>7} {'requests':>8} {'ids':>6} {'ll==':>6} metrics")
    for r in table:
        figures = ", ".join(
            f"{k} {m['lm_eval']:.6g}/{_g(m['sieval'])}" + ("" if m["equal"] else " DIFFERS")
            for k, m in r["metrics"].items()
            if not k.startswith("by_subject.")
        )
        print(f"{r['task']:<16} {r['n']:>5} {r['strings']:>7} {r['requests']:>8} "
              f"{r['ids_agree']:>6} {r['ll_equal']:>6} {figures}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
