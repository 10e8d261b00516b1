"""A headline over samples that failed for their content is marked ``partial``; a checker that
cannot run here is refused before the first request (issue 33.6).

Without the ``instruct`` extra, ``ifeval`` once scored 9 of 10 prompts (the tenth needed NLTK)
and printed 0.1111 over the others, as if complete.
"""

from __future__ import annotations

import csv
import importlib
import io
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from rich.console import Console
from typer.testing import CliRunner

from sieval.cli.compare import render_comparison
from sieval.cli.main import app
from sieval.cli.report import render_summary
from sieval.errors import ConfigError
from sieval.results.document import Report
from sieval.results.marks import result_marks
from sieval.runner import RunOptions, arun_eval, parse_config
from sieval.transport import FakeTransport, HttpReply, HttpRequest, json_reply

from .fakes import FakeTask, answer, write_data

DATA = Path(__file__).parents[3] / "shared" / "data"


def as_data(report: Any) -> Any:
    """A typed report as report.json holds it (plain data)."""
    return msgspec.to_builtins(report)


def data() -> Path:
    import os

    return Path(os.environ.get("SIEVAL_DATA_DIR", DATA))


@pytest.mark.parametrize(
    ("task", "hidden", "package"),
    [("ifeval", "nltk.tokenize.punkt", "nltk"), ("math500", "math_verify", "math-verify")],
)
async def test_a_checker_that_cannot_import_its_dependency_is_refused_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, task: str, hidden: str, package: str
) -> None:
    if "." in hidden:
        # the package itself imported whole first: a package whose import failed half-way would
        # stay half-initialised in this worker for every later test
        importlib.import_module(hidden.rpartition(".")[0])
    monkeypatch.setitem(sys.modules, hidden, None)  # as if the extra were not installed
    said: list[str] = []
    config = parse_config(
        f"models: [{{endpoint: embedded, kind: chat}}]\ntasks: [{{name: {task}, n: 3}}]"
    )
    with pytest.raises(ConfigError) as info:
        await arun_eval(
            config, RunOptions(out=tmp_path / "out", data_dir=data(), on_stage=said.append)
        )
    message = info.value.message
    assert f"task {task!r} cannot be scored here: its checker needs {package}" in message
    assert hidden in message and "pip install 'sieval[instruct]'" in message
    assert "no request was sent" in message
    assert not (tmp_path / "out").exists()  # no run directory, no server started
    assert not any("starting the embedded" in line for line in said)


def config(**model: Any) -> Any:
    extra = "".join(f", {k}: {v}" for k, v in model.items())
    return parse_config(
        f"models: [{{name: m, endpoint: 'http://fake.invalid', model: fake-model{extra}}}]\n"
        "tasks: [{name: fake_qa}]"
    )


def down_for(word: str) -> FakeTransport:
    """The fake server, answering 503 to ``word``'s prompt (a server that is down for it)."""

    def handler(request: HttpRequest) -> HttpReply:
        if word.encode() in (request.body or b""):
            return json_reply({"error": {"message": "overloaded"}}, status=503)
        status, body = answer(request.url, request.body)
        return json_reply(body, status=status)

    return FakeTransport(handler)


async def run(tmp_path: Path, words: list[str], transport: FakeTransport, name: str) -> Any:
    write_data(tmp_path / name, words)
    return await arun_eval(
        config(retries=0),
        RunOptions(out=tmp_path / "out", data_dir=tmp_path / name, run_name=name, preflight=False,
                   serving_checks="off", max_failures=None),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: transport,
    )  # fmt: skip


def shown(item: Any) -> str:
    console = Console(width=200, record=True)
    console.print(item)
    return console.export_text()


async def test_failures_tied_to_content_mark_the_headline_partial(tmp_path: Path) -> None:
    words = ["aa", "bbbb", "bad", "rejected", "cc", "dd"]  # "bad": a reply not believed;
    result = await run(tmp_path, words, down_for("zzzz"), "content")  # "rejected": a 400
    (unit,) = as_data(result.report)["results"]
    assert unit["samples"] == {"total": 6, "scored": 4, "failed": 2, "missing": 0}
    (mark,) = unit["marks"]
    assert mark["mark"] == "partial"
    assert mark["why"].startswith(
        "2 of 6 samples failed for a reason tied to their content: 1 ContractViolation (the reply "
        "for bad cannot be trusted), 1 ServerRejected ("
    )
    assert "the headline is over the other 4 scored" in mark["why"]
    # the terminal summary, every --format, and compare
    summary = shown(render_summary(result.report))
    assert "partial: fake_qa: 2 of 6 samples failed" in summary
    run_dir = str(result.run_dir)
    table = CliRunner().invoke(app, ["report", run_dir, "--format", "csv"]).output
    rows = list(csv.DictReader(io.StringIO(table)))
    assert rows and {r["marks"] for r in rows} == {"partial"}
    assert all(r["marks_why"].startswith("partial: 2 of 6 samples failed") for r in rows)
    from sieval.analysis.compare import compare_runs

    compared = "\n".join(
        map(shown, render_comparison(compare_runs(result.run_dir, result.run_dir)))
    )
    assert "partial in before: 2 of 6 samples failed" in compared


async def test_a_transport_failure_is_counted_not_marked(tmp_path: Path) -> None:
    """A server down for a sample says nothing of the sample: the headline is not partial."""
    result = await run(tmp_path, ["aa", "bbbb", "zzzz", "cc"], down_for("zzzz"), "transport")
    (unit,) = as_data(result.report)["results"]
    assert unit["failures"] == {"TransportError": 1} and unit["marks"] == []


def test_a_report_written_before_marks_gets_them_when_read() -> None:
    old = msgspec.convert({
        "serving": {},
        "run": {"identity": "sha256:0"},
        "results": [
            {
                "model": "m", "task": "ifeval", "headline": "acc",
                "samples": {"total": 10, "scored": 9, "failed": 1, "missing": 0},
                "failures": {"InternalError": 1},
                "failure_examples": [
                    {"sample_id": "s1", "class": "InternalError", "message": "ImportError: no nltk"}
                ],
                "provenance": {"requested_model": "m", "reported_models": [], "dialect": "x"},
            }
        ],
    }, Report)  # fmt: skip
    (mark,) = result_marks(old, old.results[0])
    assert mark.mark == "partial" and "1 InternalError (ImportError: no nltk)" in mark.why
