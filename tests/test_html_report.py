"""The HTML report in a real headless browser (Debian's chromium, driven by playwright).

One run of two models (the embedded reference server, and one whose first requests get HTTP 500
with no retry) on three tasks; its ARC test split is cut to seven questions, the first of which
holds markup. Each test opens the report from disk with every request but the file's own
refused, and reads what a person would see. What the page should show is computed here from
``report.json`` and ``records.jsonl``, never from the view the page was built from.

Chromium starts once for the module. ``SIEVAL_SKIP_BROWSER=1`` skips these tests explicitly;
without it a missing chromium fails them, naming ``scripts/browser.sh``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from runs import DATA, options

from sieval.cli.html import render_html
from sieval.cli.html.browser import CHROMIUM, launch_options
from sieval.plan.config import parse_config, results_dirname
from sieval.reference import ReferenceServer
from sieval.results.view import build_view
from sieval.runner import arun_eval
from sieval.store.records import Shared, expand_requests, read_records

HOSTILE = (
    "Which tag is this? </script><script>window.__pwned = 1</script>"
    '<img src="x" onerror="window.__pwned = 2"> <b>sievalmarker</b> &amp; &lt;'
)
"""The first ARC question of the run: shown as text, it runs nothing and loads nothing."""

MODEL_NAMES = ("ref <i>one</i>", "flaky")
"""The models' labels; the first holds markup too (the summary is rendered server-side)."""

PAGE_SIZE = 5
"""Rows per page of the sample list here (100 in a real report): the filters' results span
several pages."""

FAILING_REQUESTS = 12
"""The faulty server answers its first this-many requests with HTTP 500 (no retry): some
samples fail, the rest are scored."""


# -- the run and its page -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The benchmark data, with ARC's test split cut to 7 questions, the first one hostile."""
    root = tmp_path_factory.mktemp("data")
    for name in ("mmlu", "gsm8k"):
        (root / name).symlink_to(DATA / name)
    arc = root / "arc_easy"
    arc.mkdir()
    (arc / "ARC-Easy-train.jsonl").symlink_to(DATA / "arc_easy" / "ARC-Easy-train.jsonl")
    lines = (DATA / "arc_easy" / "ARC-Easy-test.jsonl").read_text().splitlines()[:7]
    first = json.loads(lines[0])
    first["question"] = HOSTILE
    lines[0] = json.dumps(first)
    (arc / "ARC-Easy-test.jsonl").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="module")
async def run_dir(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    async with ReferenceServer(port=0, faults=f"500; times={FAILING_REQUESTS}") as server:
        config = parse_config(
            f"""
models:
  - {{name: {json.dumps(MODEL_NAMES[0])}, endpoint: embedded}}
  - {{name: {MODEL_NAMES[1]}, endpoint: "{server.url}", model: {server.model_name},
     retries: 0, concurrency_limit: 4, timeout_s: 10}}
tasks:
  - {{name: arc_easy_kshot_ppl, num_fewshot: 2}}
  - {{name: mmlu_kshot_clp, n: 12, num_fewshot: 1}}
  - {{name: gsm8k_kshot_base_gen, n: 2, num_fewshot: 1}}
"""
        )
        opts = options(out=tmp_path_factory.mktemp("runs"), data_dir=data_dir, preflight=True)
        result = await arun_eval(config, opts)
    return result.run_dir


@pytest.fixture(scope="module")
def report(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "report.json").read_text())
    return data


@pytest.fixture(scope="module")
def html_file(run_dir: Path) -> Path:
    path = run_dir / "report.html"
    path.write_text(render_html(build_view(run_dir), page_size=PAGE_SIZE), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    if os.environ.get("SIEVAL_SKIP_BROWSER") == "1":
        pytest.skip("browser tests skipped on request (SIEVAL_SKIP_BROWSER=1)")
    if not CHROMIUM.exists():
        pytest.fail(
            f"the HTML report's tests need chromium at {CHROMIUM}: run scripts/browser.sh "
            "(or set SIEVAL_SKIP_BROWSER=1 to skip them explicitly)"
        )
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.fail("the HTML report's tests need playwright: pip install -e '.[dev]'")
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(**launch_options())
        yield chromium
        await chromium.close()


class Page:
    """An opened report: the playwright page, the requests it attempted, its errors."""

    def __init__(self, page: Any, attempted: list[str], errors: list[str]) -> None:
        self.page = page
        self.attempted = attempted
        self.errors = errors

    async def choose(self, **filters: str) -> None:
        """Set the sample filters (``task``, ``model``, ``outcome``, ``search``)."""
        for name, value in filters.items():
            if name == "search":  # debounced: wait until the page has applied it
                await self.page.fill("#filter-search", value)
                await self.page.wait_for_function(
                    "needle => document.getElementById('samples').dataset.search === needle",
                    arg=value.strip().lower(),
                )
            else:
                await self.page.select_option(f"#filter-{name}", value)

    async def count(self) -> str:
        return str(await self.page.text_content("#sample-count"))

    async def rows(self) -> set[tuple[str, str, str]]:
        """(model, task, id) of every listed sample, page after page."""
        seen: set[tuple[str, str, str]] = set()
        while not await self.page.is_disabled("#page-prev"):
            await self.page.click("#page-prev")
        while True:
            rows = await self.page.query_selector_all("tr.sample-row")
            assert len(rows) <= PAGE_SIZE
            for row in rows:
                seen.add(
                    (
                        await row.get_attribute("data-model"),
                        await row.get_attribute("data-task"),
                        await row.get_attribute("data-id"),
                    )
                )
            if await self.page.is_disabled("#page-next"):
                return seen
            await self.page.click("#page-next")

    async def open(self, model: str, task: str, sample_id: str) -> Any:
        """Show one sample (found by searching its id) and return the detail panel."""
        await self.page.select_option("#filter-model", model)
        await self.page.select_option("#filter-task", task)
        await self.choose(search=sample_id)
        row = (
            f"tr.sample-row[data-model={json.dumps(model)}][data-task={json.dumps(task)}]"
            f"[data-id={json.dumps(sample_id)}]"
        )
        while not await self.page.query_selector(row):  # an id may be part of later ids
            await self.page.click("#page-next")
        await self.page.click(row)
        await self.page.wait_for_selector(f"#sample-detail[data-id={json.dumps(sample_id)}]")
        return await self.page.query_selector("#sample-detail")


@pytest.fixture
async def report_page(browser: Any, html_file: Path) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    url = html_file.as_uri()
    attempted: list[str] = []

    async def route(request: Any) -> None:
        if request.request.url == url:
            await request.continue_()
        else:
            attempted.append(request.request.url)
            await request.abort()

    await page.route("**/*", route)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    await page.goto(url)
    await page.wait_for_selector("#samples[data-ready]", timeout=20_000)
    yield Page(page, attempted, errors)
    await context.close()


# -- what the records say -----------------------------------------------------------------------


def unit_records(run_dir: Path, model: str, task: str) -> tuple[dict[str, Any], Shared]:
    unit = run_dir / results_dirname(model) / task
    return read_records(unit / "records.jsonl").records, Shared.load(unit / "shared.jsonl")


def expected(run_dir: Path, report: dict[str, Any], which: str) -> set[tuple[str, str, str]]:
    """(model, task, id) of the records that are ``wrong`` (scored, headline metric 0) or
    ``failed``."""
    out = set()
    for result in report["results"]:
        records, _ = unit_records(run_dir, result["model"], result["task"])
        for record in records.values():
            if which == "failed":
                hit = record.status == "failed"
            else:
                hit = record.status == "ok" and record.metrics[result["headline"]] == 0.0
            if hit:
                out.add((record.model, record.task, record.sample_id))
    return out


def total_samples(report: dict[str, Any]) -> int:
    return sum(r["samples"]["scored"] + r["samples"]["failed"] for r in report["results"])


# -- the tests ----------------------------------------------------------------------------------


class _Loads(HTMLParser):
    """Every place of a page a browser would fetch from: attribute values, style and script."""

    def __init__(self) -> None:
        super().__init__()
        self.places: list[str] = []
        self.tags: list[str] = []
        self._raw: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.places += [f"{tag}[{name}]={value}" for name, value in attrs if value]
        self._raw = tag if tag in ("style", "script") else None

    def handle_data(self, data: str) -> None:
        if self._raw:
            self.places.append(f"<{self._raw}>{data}")

    def handle_endtag(self, tag: str) -> None:
        self._raw = None


async def test_the_page_loads_nothing(
    report_page: Page, html_file: Path, report: dict[str, Any]
) -> None:
    html = html_file.read_text()
    loads = _Loads()
    loads.feed(html)
    assert not {"link", "iframe", "object", "embed", "base", "img", "video", "audio"} & set(
        loads.tags
    )
    for place in loads.places:
        assert "://" not in place and "url(" not in place.replace("url(#", ""), place[:200]
        assert "@import" not in place, place[:200]
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
    assert f'content="{csp}"' in html
    assert report_page.attempted == []
    assert report_page.errors == []
    # the page is whole: the plots are drawn and every sample was decoded
    assert len(await report_page.page.query_selector_all("#plots figure svg")) >= 5
    total = total_samples(report)
    assert await report_page.count() == f"{total} of {total} samples"


async def test_summary_equals_report(report_page: Page, report: dict[str, Any]) -> None:
    page = report_page.page
    assert len(await page.query_selector_all("#summary-table tbody tr")) == len(report["results"])
    for result in report["results"]:
        headline = result["headline"]
        value = result["metrics"][headline]
        spread = result["intervals"][headline]
        row = await page.query_selector(
            f"#summary-table tr[data-model={json.dumps(result['model'])}]"
            f"[data-task={json.dumps(result['task'])}]"
        )
        assert row is not None, (result["model"], result["task"])
        assert await row.get_attribute("data-headline") == headline
        text = {}
        for name in ("model", "value", "se", "ci", "scored", "failed", "missing", "failures"):
            text[name] = await (await row.query_selector(f"td.{name}")).inner_text()
        samples = result["samples"]
        lo, hi = spread["ci"]
        assert text == {
            "model": result["model"],
            "value": f"{value:.4f}",
            "se": f"{spread['se']:.4f}",
            "ci": f"[{lo:.4f}, {hi:.4f}]",
            "scored": f"{samples['scored']} / {samples['total']}",
            "failed": str(samples["failed"]),
            "missing": str(samples["missing"]),
            "failures": ", ".join(f"{k} {v}" for k, v in result["failures"].items()),
        }
        # the attributes carry the figures unrounded
        assert float(await row.get_attribute("data-value")) == value
        assert float(await row.get_attribute("data-ci-lo")) == lo
        assert float(await row.get_attribute("data-ci-hi")) == hi
        for key in ("total", "scored", "failed", "missing"):
            assert int(await row.get_attribute(f"data-{key}")) == samples[key]


async def test_wrong_shows_exactly_the_wrong_records(
    report_page: Page, run_dir: Path, report: dict[str, Any]
) -> None:
    wrong = expected(run_dir, report, "wrong")
    assert wrong, "the run should have wrong answers"
    await report_page.choose(outcome="wrong")
    assert await report_page.count() == f"{len(wrong)} of {total_samples(report)} samples"
    assert await report_page.rows() == wrong
    # and with the task and model filters, each (model, task)'s own
    for result in report["results"]:
        model, task = result["model"], result["task"]
        await report_page.choose(model=model, task=task)
        assert await report_page.rows() == {w for w in wrong if w[:2] == (model, task)}


async def test_failed_shows_exactly_the_failed_records(
    report_page: Page, run_dir: Path, report: dict[str, Any]
) -> None:
    failed = expected(run_dir, report, "failed")
    assert failed and {model for model, _, _ in failed} == {"flaky"}
    await report_page.choose(outcome="failed")
    assert await report_page.count() == f"{len(failed)} of {total_samples(report)} samples"
    assert await report_page.rows() == failed
    # a failed sample shows its error class, the server's message and the HTTP status
    model, task, sample_id = sorted(failed)[0]
    records, _ = unit_records(run_dir, model, task)
    error = records[sample_id].error
    assert error is not None
    detail = await report_page.open(model, task, sample_id)
    box = await detail.query_selector(".error")
    assert await box.get_attribute("data-class") == error["class"]
    message = await (await box.query_selector("pre.error-message")).text_content()
    assert message == error["message"]
    assert "HTTP 500" in await box.inner_text()


async def test_search_narrows_to_the_matching_samples(
    report_page: Page, run_dir: Path, report: dict[str, Any]
) -> None:
    total = total_samples(report)
    await report_page.choose(search="SIEVALMARKER")  # only in the hostile question
    shown = await report_page.rows()
    assert {(model, task) for model, task, _ in shown} == {
        (model, "arc_easy_kshot_ppl") for model in MODEL_NAMES
    }
    assert len({sample_id for _, _, sample_id in shown}) == 1
    assert await report_page.count() == f"2 of {total} samples"
    # a word many prompts hold: exactly the samples whose id, question, prompt or generation
    # holds it are listed
    await report_page.choose(search="energy")
    matches = set()
    for result in report["results"]:
        records, shared = unit_records(run_dir, result["model"], result["task"])
        for record in records.values():
            first = next(iter(expand_requests(record.requests, shared).values()))
            texts = [
                record.sample_id,
                (record.sample or {}).get("query") or "",
                str((first.body or {}).get("prompt") or ""),
                str(record.channels.get("text") or ""),
            ]
            if any("energy" in text.lower() for text in texts):
                matches.add((record.model, record.task, record.sample_id))
    assert 0 < len(matches) < total
    assert await report_page.rows() == matches
    await report_page.choose(search="")
    assert await report_page.count() == f"{total} of {total} samples"


@pytest.mark.parametrize("task", ["arc_easy_kshot_ppl", "mmlu_kshot_clp", "gsm8k_kshot_base_gen"])
async def test_folded_wire_body_and_ledger_equal_the_record(
    report_page: Page, run_dir: Path, task: str
) -> None:
    records, shared = unit_records(run_dir, "flaky", task)
    for record in list(records.values())[-2:]:
        detail = await report_page.open("flaky", task, record.sample_id)
        sent = expand_requests(record.requests, shared)
        folds = await detail.query_selector_all("details.request")
        assert [await fold.get_attribute("data-request") for fold in folds] == list(sent)
        for fold, (key, request) in zip(folds, sent.items(), strict=True):
            for summary in ("", "details.wire > ", "details.ledger-fold > "):
                await (await fold.query_selector(f":scope > {summary}summary")).click()
            body = await fold.query_selector(f"pre.wire-body[data-request={json.dumps(key)}]")
            assert await body.is_visible()
            assert json.loads(await body.inner_text()) == request.body
            ledger = [
                [await cell.inner_text() for cell in await row.query_selector_all("td")]
                for row in await fold.query_selector_all("table.ledger tbody tr")
            ]
            assert isinstance(request.ledger, list) and request.ledger
            assert ledger == [
                [e["leaf"], e["outcome"], e.get("path") or e.get("reason") or ""]
                for e in request.ledger
            ]


async def test_markup_in_a_prompt_is_shown_as_text(report_page: Page, run_dir: Path) -> None:
    page = report_page.page
    records, _ = unit_records(run_dir, MODEL_NAMES[0], "arc_easy_kshot_ppl")
    hostile = next(r for r in records.values() if "sievalmarker" in (r.sample or {})["query"])
    detail = await report_page.open(MODEL_NAMES[0], "arc_easy_kshot_ppl", hostile.sample_id)
    query = await (await detail.query_selector("pre.query")).text_content()
    assert query == (hostile.sample or {})["query"] and HOSTILE in query
    assert HOSTILE in await (await detail.query_selector("pre.prompt")).text_content()
    row = await page.query_selector("tr.sample-row.selected td.question")
    assert "</script><script>window.__pwned" in await row.text_content()
    assert await page.evaluate("window.__pwned") is None
    assert await page.query_selector_all("#samples img, #samples b, #summary i") == []
    cell = await page.query_selector("#summary-table td.model")
    assert await cell.text_content() == MODEL_NAMES[0]
    assert report_page.attempted == [] and report_page.errors == []


async def test_prediction_and_gold_are_letters_and_the_list_cuts_nothing(
    report_page: Page, run_dir: Path
) -> None:
    """Beside the A-D choices table the prediction reads as a letter, never an index; in the
    sample list the task and the question wrap, never end in an ellipsis."""
    page = report_page.page
    records, _ = unit_records(run_dir, MODEL_NAMES[0], "arc_easy_kshot_ppl")
    record = next(r for r in records.values() if r.status == "ok")
    detail = await report_page.open(MODEL_NAMES[0], "arc_easy_kshot_ppl", record.sample_id)
    facts = {}
    for dt in await detail.query_selector_all("dl.kv dt"):
        value = await dt.evaluate_handle("e => e.nextElementSibling")
        facts[await dt.inner_text()] = await value.inner_text()
    labels = (record.sample or {}).get("labels") or list("ABCD")
    assert facts["prediction"] == labels[record.prediction] and facts["gold"] == labels[record.gold]
    for cell in ("td.task", "td.question"):
        style = await page.eval_on_selector(
            f"tr.sample-row.selected {cell}",
            "e => [getComputedStyle(e).whiteSpace, getComputedStyle(e).textOverflow]",
        )
        assert style[0] == "normal", (cell, style)
    question = await page.eval_on_selector(
        "tr.sample-row.selected td.question", "e => e.textContent"
    )
    assert question == " ".join(((record.sample or {})["query"]).split())


def test_a_missing_interval_or_value_prints_a_dash() -> None:
    """No browser: the renderer alone, on a hand-made view with nothing measured."""
    view = {
        "title": "t",
        "run": {},
        "denominator": "",
        "summary": [
            {
                "model": "m",
                "task": "t",
                "shots": None,
                "protocol": "",
                "headline": "acc",
                "value": None,
                "se": None,
                "ci": None,
                "estimator": None,
                "metrics": {},
                "samples": {"total": 1, "scored": 0, "failed": 0, "missing": 1},
                "failures": {},
                "dialect": "d",
                "endpoint": None,
            }
        ],
        "requests": [],
        "margins": [],
        "samples": [],
        "compare": None,
    }
    html = render_html(view)
    cells = re.findall(r'<td class="num (value|se|ci)"[^>]*>([^<]*)</td>', html)
    assert cells == [("value", "—"), ("se", "—"), ("ci", "—")]
    assert 'id="plots"' in html and "<svg" not in html and 'id="compare"' not in html


def test_a_comparison_is_rendered_when_the_view_has_one(run_dir: Path) -> None:
    """No browser: a run compared with itself, every difference 0."""
    from sieval.analysis.compare import compare_runs

    view = build_view(run_dir)
    assert 'id="compare"' not in render_html(view)
    view["compare"] = compare_runs(run_dir, run_dir)
    html = render_html(view)
    rows = re.findall(r'<tr data-task="([^"]+)" data-metric="([^"]+)" data-diff="([^"]+)"', html)
    headlines = {(u["task"], u["headline"]) for u in view["compare"]["tasks"]}
    assert headlines <= {(task, metric) for task, metric, _ in rows}
    assert {float(diff) for _, _, diff in rows} == {0.0}


async def test_a_code_samples_program_outcome_is_shown(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A code task's sample shows how its program ended (status, reason, the sandbox's mode)
    and the end of its stderr; the page names the sandbox the run used."""
    config = parse_config(
        "models: [{name: ref, endpoint: embedded}]\ntasks: [{name: humaneval, n: 1}]\n"
    )
    opts = options(out=tmp_path_factory.mktemp("code"))
    code_run = (await arun_eval(config, opts)).run_dir
    (record,) = read_records(code_run / "ref" / "humaneval" / "records.jsonl").records.values()
    execution = record.channels["execution"]
    path = code_run / "report.html"
    path.write_text(render_html(build_view(code_run)), encoding="utf-8")
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    await page.goto(path.as_uri())
    await page.wait_for_selector("#samples[data-ready]", timeout=20_000)
    sandbox = await page.text_content("p.sandbox")
    assert f"in the {execution['mode']} sandbox" in str(sandbox)
    await page.click("tr.sample-row")
    line = await page.wait_for_selector("#sample-detail p.execution")
    assert await line.get_attribute("data-status") == execution["status"]
    shown = " ".join(str(await line.text_content()).split())
    assert f"program: {execution['status']} — {execution['reason']}" in shown
    assert f"({execution['mode']}, " in shown
    await context.close()


async def test_the_compare_page_leads_with_numerics_and_fits_1400_px(
    browser: Any, run_dir: Path, tmp_path: Path
) -> None:
    """The terminal's first warning, "the runs' numerics differ", is on the page above the table
    (issue 41), and the comparison table fits a 1400 px window. The second run is this run with
    its server's fingerprint edited to another dtype: a change of numerics as run.json keeps it."""
    import shutil

    from sieval.analysis.compare import compare_runs

    other = tmp_path / "other"
    shutil.copytree(run_dir, other, ignore=shutil.ignore_patterns("run.lock"))
    meta = json.loads((other / "run.json").read_text())
    for spans in meta["serving"].values():
        for span in spans:
            span["dtype"] = "bfloat16"
    (other / "run.json").write_text(json.dumps(meta))
    view = build_view(other)
    view["compare"] = compare_runs(run_dir, other)
    assert any(s.get("compared") and not s.get("same") for s in view["compare"]["serving"])
    path = tmp_path / "compare.html"
    path.write_text(render_html(view), encoding="utf-8")
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    await page.goto(path.as_uri())
    warning = await page.wait_for_selector("#compare p.warning.numerics")
    assert await warning.is_visible()
    said = " ".join(str(await warning.text_content()).split())
    assert "the runs' numerics differ" in said and "bfloat16" in said
    table = await page.query_selector("#compare-table")
    above = await page.evaluate(
        "(w) => w.compareDocumentPosition(document.querySelector('#compare-table')) & 4", warning
    )
    assert above  # the warning comes before the table
    box = await table.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1400
    wide = await page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 1400
    await context.close()
