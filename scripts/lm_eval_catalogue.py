#!/usr/bin/env python3
"""How much of lm-evaluation-harness 0.4.13's own task catalogue sieval resolves, offline.

    .venv/bin/python scripts/lm_eval_catalogue.py [--tasks-dir DIR] [--out docs/evidence/...md]

Every leaf task of lm-eval's installed ``tasks/`` folder (a YAML whose keys, includes merged,
name one ``task:``), found as ``sieval tasks --include-path DIR`` finds it, is resolved by
sieval's task-file loader into a runnable task: its keys checked, its includes merged, its
``!function`` values imported (lm-eval's own utils modules, which lm-eval's install provides),
its output type, filters and metrics built. The data is not read (a hub dataset is not fetched:
resolving needs no network). A task that resolves is counted; one that does not is counted
under the feature that stopped it (the key, and why). Prints the rate and writes the table.
"""

from __future__ import annotations

import argparse
import collections
import logging
import os
import re
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def feature(message: str) -> str:
    """The feature an error names: ``key: why`` of a task-file error, shortened."""
    body = re.sub(r"^\S+:\d+: ", "", message)
    body = re.sub(r"^/\S+: ", "", body)
    key, sep, why = body.partition(": ")
    if not sep:
        return body[:90]
    key = re.sub(r"\[\d+\]", "[]", key)
    if key.startswith("!function") and "importing" in why:
        missing = re.search(r"No module named '([^']+)'", why)
        cause = (
            f"needs {missing.group(1)}, not installed" if missing else why.split("(", 1)[-1][:60]
        )
        return f"!function: its module fails to import ({cause})"
    if "unknown key" in why:
        return f"{key}: unknown key"
    if "!function" in why and "importing" in why:
        missing = re.search(r"No module named '([^']+)'", why)
        return f"{key}: its !function module imports {missing.group(1) if missing else 'fails'}"
    if "is not supported: sieval aggregates" in why:
        return f"{key}: a custom aggregation ({why.split(' is not')[0]})"
    if "is not supported for" in why:
        return f"{key}: metric {why.split(' is not')[0]}"
    if "unknown metric" in why:
        name = re.search(r"unknown metric '([^']+)'", why)
        return f"{key}: metric {name.group(1) if name else '?'} (not registered)"
    return f"{key}: {why[:70]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    import lm_eval

    from sieval.errors import ConfigError
    from sieval.tasks.catalogue import load_yaml_task, scan

    tasks_dir = args.tasks_dir or Path(lm_eval.__file__).parent / "tasks"
    t0 = time.perf_counter()
    catalogue = scan([tasks_dir])
    entries = [e for e in catalogue.entries.values() if e.kind == "yaml"]
    scanned = time.perf_counter() - t0
    ok = 0
    failures: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for i, entry in enumerate(entries):
        try:
            load_yaml_task(entry)
            ok += 1
        except ConfigError as exc:
            key = feature(exc.message)
            failures[key] += 1
            examples.setdefault(key, f"{entry.name} ({entry.file.relative_to(tasks_dir)})")
        except Exception as exc:  # a bug of sieval's: counted apart, never hidden
            key = f"(sieval raised {type(exc).__name__}: {str(exc)[:60]})"
            failures[key] += 1
            examples.setdefault(key, f"{entry.name} ({entry.file.relative_to(tasks_dir)})")
        if i % 1000 == 0:
            print(f"{i}/{len(entries)} ...", file=sys.stderr, flush=True)
    total = len(entries)
    wall = time.perf_counter() - t0
    lines = [
        "# lm-evaluation-harness 0.4.13's task catalogue, resolved by sieval",
        "",
        f"Measured by `scripts/lm_eval_catalogue.py` (lm-eval 0.4.13 installed in the venv, "
        f"offline): the {total:,} leaf tasks of `lm_eval/tasks/` that `sieval tasks "
        f"--include-path` lists, each resolved by sieval's task-file loader (keys, includes, "
        "`!function` imports, output type, filters, metrics; no data read).",
        "",
        f"**{ok:,} of {total:,} resolve: {ok / total:.1%}.** Listing the folder took "
        f"{scanned:.1f} s, resolving every task {wall - scanned:.1f} s. "
        f"{len(catalogue.problems)} file(s) could not be read as YAML; "
        f"{len(catalogue.duplicates)} task name(s) are defined twice (the first is used); "
        f"{len(catalogue.groups):,} groups and tags.",
        "",
        "Resolving is not running: a resolved task has its keys read, its functions imported, "
        "its family, filters, scorers and aggregations built, and its data source named (a hub "
        "dataset is fetched only when the task runs, online, through `datasets`). Metrics, "
        "filters and aggregations that sieval does not have itself are lm-eval's own functions "
        "(lm-eval installed); the parity of the requests is measured on the tasks whose data is "
        "stored: [lm-eval-yaml-parity.md](lm-eval-yaml-parity.md).",
        "",
        "Every feature that stopped a task, with its count and one example:",
        "",
        "| feature (key: why) | tasks | example |",
        "|---|---:|---|",
    ]
    for key, count in failures.most_common():
        shown = key.replace("|", "/").replace(str(tasks_dir) + "/", "")
        lines.append(f"| {shown} | {count:,} | {examples[key]} |")
    lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
