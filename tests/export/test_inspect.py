"""The Inspect export, read back by ``inspect_ai``'s own log reader and shown by ``inspect view``
in headless chromium (a screenshot of the sample list is kept in ``docs/images/``)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sieval.export import export_run
from sieval.store.records import Shared, expand_requests, read_records, records_path, shared_path

from .conftest import needs, records, result_of

SCREENSHOT = "inspect-view.png"
"""Written to a temporary directory, or to ``$SIEVAL_SCREENSHOT_DIR`` (``docs/images`` holds the
one the docs show)."""


@pytest.fixture(scope="module")
def logs(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    needs("inspect_ai", "inspect-ai")
    return export_run(run_dir, "inspect", tmp_path_factory.mktemp("inspect"))


def read(path: Path) -> Any:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(path))


def test_inspects_reader_loads_every_log(logs: list[Path], report: dict[str, Any]) -> None:
    assert len(logs) == len(report["results"]) == 4
    by_key = {}
    for path in logs:
        log = read(path)
        assert log.status == "success" and path.suffix == ".eval"
        assert log.eval.model == "sieval/sieval-reference"
        scores = {s.name: s for s in log.results.scores}
        by_key[(log.eval.task, log.results.completed_samples, len(log.samples))] = scores
    for result in report["results"]:
        key = (result["task"], result["samples"]["scored"], result["samples"]["total"])
        scores = by_key[key]
        for metric, value in result["metrics"].items():
            if metric == "n":
                continue
            assert scores[metric].metrics["mean"].value == value
            spread = result["intervals"].get(metric)
            if spread is None:  # a figure the report gives no interval (censored_rate)
                assert set(scores[metric].metrics) == {"mean"}
                continue
            assert scores[metric].metrics["stderr"].value == spread["se"]
            ci = [scores[metric].metrics["ci_low"].value, scores[metric].metrics["ci_high"].value]
            assert ci == spread["ci"]


def test_a_sample_holds_what_was_sent_and_scored(
    logs: list[Path], run_dir: Path, report: dict[str, Any]
) -> None:
    path = records_path(run_dir, "ref", "gsm8k_kshot_base_gen")
    found = read_records(path).records
    shared = Shared.load(shared_path(path))
    log = next(read(p) for p in logs if "gsm8k" in p.name and _is_ref(read(p), report))
    assert log.eval.task_args == {"num_fewshot": 1}
    for sample in log.samples:
        record = found[str(sample.id)]
        sent = expand_requests(record.requests, shared)["gen"].body
        assert sample.messages[0].content == sent["prompt"]  # the exact prompt sent
        assert sample.messages[-1].role == "assistant"
        assert sample.messages[-1].content == record.channels["text"]
        # the record's flags under the report's names, so each score joins its aggregate
        named = {("censored_rate" if k == "censored" else k): v for k, v in record.metrics.items()}
        assert {k: s.value for k, s in sample.scores.items()} == named
        assert set(named) <= set(result_of(report, "ref", "gsm8k_kshot_base_gen")["metrics"])
        usage = next(iter(sample.model_usage.values()))
        assert usage.input_tokens == sum(r.usage["input_tokens"] for r in record.requests.values())


def _is_ref(log: Any, report: dict[str, Any]) -> bool:
    ref = result_of(report, "ref", log.eval.task)
    return bool(log.results.completed_samples == ref["samples"]["scored"]) and not any(
        s.error for s in log.samples
    )


def test_a_failed_sample_carries_its_error_and_no_score(logs: list[Path], run_dir: Path) -> None:
    failed = [r for r in records(run_dir, "flaky", "arc_easy") if r["status"] != "ok"]
    assert failed
    log = next(
        read(p) for p in logs if "arc_easy" in p.name and any(s.error for s in read(p).samples)
    )
    errors = {str(s.id): s for s in log.samples if s.error}
    assert set(errors) == {r["sample_id"] for r in failed}
    for sample in errors.values():
        assert sample.scores is None and "TransportError" in sample.error.message


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_inspect_view_shows_the_log(
    logs: list[Path], report: dict[str, Any], tmp_path: Path
) -> None:
    if os.environ.get("SIEVAL_SKIP_BROWSER") == "1":
        pytest.skip("browser tests skipped on request (SIEVAL_SKIP_BROWSER=1)")
    from sieval.cli.html.browser import CHROMIUM, launch_options

    if not CHROMIUM.exists():
        pytest.fail(f"inspect view's test needs chromium at {CHROMIUM}: run scripts/browser.sh")
    from playwright.async_api import async_playwright

    port = free_port()
    view = subprocess.Popen(
        [sys.executable, "-m", "inspect_ai._cli.main", "view", "--log-dir",
         str(logs[0].parent), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**launch_options())
            page = await browser.new_page(viewport={"width": 1400, "height": 820})
            for _ in range(120):  # the viewer starts in a few seconds on a loaded machine
                try:
                    await page.goto(f"http://127.0.0.1:{port}/")
                    break
                except Exception:
                    await asyncio.sleep(0.5)
            await page.get_by_text("gsm8k_kshot_base_gen").first.wait_for(timeout=30_000)
            listing = await page.inner_text("body")
            assert "arc_easy" in listing and "sieval/sieval-reference" in listing
            await page.get_by_text("arc_easy").first.click()
            ref = result_of(report, "ref", "arc_easy")
            await page.get_by_text("test/0").first.wait_for(timeout=30_000)
            shown = await page.inner_text("body")
            assert "acc_norm" in shown and "Which statement best explains" in shown
            shot = Path(os.environ.get("SIEVAL_SCREENSHOT_DIR") or tmp_path) / SCREENSHOT
            await page.screenshot(path=str(shot))
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert ref["samples"]["total"] == 6
            await browser.close()
    finally:
        view.terminate()
        view.wait(timeout=30)
