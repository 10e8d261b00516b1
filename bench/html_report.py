"""The HTML report of a 14,000-sample MMLU run: its size, and how soon it paints in chromium.

Usage: python bench/html_report.py [--run-dir DIR] [--out /tmp/sieval-bench-html] [--repeat 5]

Without ``--run-dir`` it first makes the run: ``mmlu_kshot_clp`` on every test question of the
data (14,042 in /work/shared/data/mmlu), 5-shot, on the embedded reference server, in a new
directory under ``--out`` (outside the checkout; about a minute on 2 cores). The reference
server's context is 4,096 of its tokens, so the pre-run checks are skipped and the prompts that
do not fit fail with HTTP 400: the report holds correct, wrong and failed samples.

It then builds the view, renders ``report.html`` beside ``report.json``, and opens it ``--repeat``
times in headless chromium (``scripts/browser.sh``), each in a fresh browser context with every
request but the file's own refused. Printed: the file's size and its samples' share; per load the
first contentful paint (``performance.getEntriesByType("paint")``), the time until the sample
list shows its first page (the page's ``sieval-samples-ready`` mark) and the JS heap; medians.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from sieval.cli.html import render_html
from sieval.cli.html.browser import launch_options, offline
from sieval.plan.config import parse_config
from sieval.results.view import build_view
from sieval.runner import RunOptions, arun_eval

ROOT = Path(__file__).resolve().parent.parent
CONFIG = """
models:
  - {name: reference, endpoint: embedded, concurrency_limit: 32}
tasks:
  - {name: mmlu_kshot_clp, num_fewshot: 5}
"""


def make_run(out: Path, data_dir: Path) -> Path:
    started = time.perf_counter()
    result = asyncio.run(
        arun_eval(
            parse_config(CONFIG),
            RunOptions(out=out, data_dir=data_dir, preflight=False),
        )
    )
    entry = result.report["results"][0]
    took = time.perf_counter() - started
    print(f"run: {result.run_dir} in {took:.0f} s; samples {entry['samples']}")
    return result.run_dir


def render(run_dir: Path) -> Path:
    started = time.perf_counter()
    view = build_view(run_dir)
    built = time.perf_counter()
    html = render_html(view)
    rendered = time.perf_counter()
    path = run_dir / "report.html"
    path.write_text(html, encoding="utf-8")
    blob = re.search(r'id="sample-data"[^>]*>([^<]*)<', html)
    data = len(blob.group(1)) if blob else 0
    size = len(html.encode())
    print(
        f"view: {len(view['samples'])} samples, built in {built - started:.2f} s; "
        f"rendered in {rendered - built:.2f} s"
    )
    print(
        f"file: {path} {size / 1e6:.2f} MB, of which the samples (gzip+base64) "
        f"{data / 1e6:.2f} MB and the rest (summary, plots, style, script) "
        f"{(size - data) / 1e3:.0f} kB"
    )
    return path


def measure(path: Path, repeat: int) -> None:
    from playwright.sync_api import sync_playwright

    url = path.resolve().as_uri()
    results: list[dict[str, Any]] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_options())
        for _ in range(repeat):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            attempted = offline(page, url)
            page.goto(url)
            page.wait_for_selector("#samples[data-ready]", timeout=120_000)
            paints = page.evaluate(
                "Object.fromEntries(performance.getEntriesByType('paint')"
                ".map(e => [e.name, e.startTime]))"
            )
            ready = page.evaluate(
                "performance.getEntriesByName('sieval-samples-ready')[0].startTime"
            )
            heap = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : 0")
            count = page.text_content("#sample-count")
            context.close()
            if attempted:
                raise SystemExit(f"the page tried to load {attempted}")
            row = {"fcp": paints["first-contentful-paint"], "ready": ready, "heap": heap}
            results.append(row)
            print(
                f"load: first contentful paint {row['fcp']:.0f} ms, first page of samples "
                f"{ready:.0f} ms, JS heap {heap / 1e6:.0f} MB ({count})"
            )
        browser.close()
    fcp = statistics.median(r["fcp"] for r in results)
    ready = statistics.median(r["ready"] for r in results)
    print(f"median of {repeat}: first contentful paint {fcp:.0f} ms, first page {ready:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, help="an existing run: skip making one")
    parser.add_argument("--out", type=Path, default=Path("/tmp/sieval-bench-html"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data_dir = Path(os.environ.get("SIEVAL_DATA_DIR", ROOT.parent / "shared" / "data"))
    run_dir = args.run_dir or make_run(args.out, data_dir)
    measure(render(run_dir), args.repeat)


if __name__ == "__main__":
    sys.exit(main())
