"""Screenshots of a run's HTML report: the summary, and one sample opened with its folds expanded.

Usage: python scripts/screenshots.py RUN_DIR OUT_DIR [--sample MODEL/TASK/ID]

Writes ``OUT_DIR/report-summary.png`` (the run's facts and the summary table) and
``OUT_DIR/report-sample.png`` (the sample browser with one sample open: its choices, its first
request's wire body and decision ledger unfolded). Without ``--sample`` the sample is the first
wrong one of a task that scores choices. The report is rendered into a temporary file, opened in
headless chromium (``scripts/browser.sh``) with every request but the file's own refused.
The screenshots in docs/images/ come from a quickstart run::

    sieval eval examples/quickstart.yaml --out /tmp/runs
    python scripts/screenshots.py /tmp/runs/<run> docs/images
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from sieval.cli.html import render_html
from sieval.cli.html.browser import launch_options, offline
from sieval.results.view import build_view

WIDTH = 1360


def pick(view: dict[str, Any], wanted: str | None) -> dict[str, Any]:
    samples = view["samples"]
    if wanted:
        for s in samples:
            if f"{s['model']}/{s['task']}/{s['id']}" == wanted:
                return dict(s)
        raise SystemExit(f"no sample {wanted!r} in the run (MODEL/TASK/ID)")
    scored = [s for s in samples if s["choices"] and any(c.get("text") for c in s["choices"])]
    wrong = [s for s in scored if s["outcome"] == "wrong"]
    return dict((wrong or scored or samples)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--sample", help="MODEL/TASK/ID of the sample to open")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    view = build_view(args.run_dir)
    sample = pick(view, args.sample)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        path = Path(tmp) / "report.html"
        path.write_text(render_html(view), encoding="utf-8")
        url = path.as_uri()
        browser = playwright.chromium.launch(**launch_options())
        page = browser.new_page(viewport={"width": WIDTH, "height": 900}, device_scale_factor=1)
        attempted = offline(page, url)
        page.goto(url)
        page.wait_for_selector("#samples[data-ready]")

        box = page.locator("#summary").bounding_box()
        assert box is not None
        page.screenshot(
            path=str(args.out_dir / "report-summary.png"),
            clip={"x": 0, "y": 0, "width": WIDTH, "height": box["y"] + box["height"] + 8},
            full_page=True,
        )

        page.select_option("#filter-model", sample["model"])
        page.select_option("#filter-task", sample["task"])
        page.select_option("#filter-outcome", sample["outcome"])
        row = (
            f"tr.sample-row[data-model={json.dumps(sample['model'])}]"
            f"[data-task={json.dumps(sample['task'])}][data-id={json.dumps(sample['id'])}]"
        )
        while not page.query_selector(row):
            page.click("#page-next")
        page.click(row)
        detail = page.locator("#sample-detail")
        detail.locator("details.prompt-fold > summary").click()
        first = detail.locator("details.request").first
        first.locator(":scope > summary").click()
        first.locator("details.wire > summary").click()
        first.locator("details.ledger-fold > summary").click()
        page.locator("#samples").screenshot(path=str(args.out_dir / "report-sample.png"))
        browser.close()
    if attempted:
        raise SystemExit(f"the page tried to load {attempted}")
    print(f"wrote {args.out_dir}/report-summary.png and report-sample.png ({sample['id']})")


if __name__ == "__main__":
    main()
