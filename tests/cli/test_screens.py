"""What a new user reads, at 80 columns: the progress line keeps its count and time left, model
names and errors never break mid-word, the end of a run is the summary, ``report`` gives a row per
MMLU subject with its n, symbols read the right way round, and no Python ``None`` is shown."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from rich.console import Console
from runs import options
from typer.testing import CliRunner

from sieval.cli import app as cli_app
from sieval.cli.compare import render_comparison, run_names
from sieval.cli.formats import render_rows, result_rows
from sieval.cli.html import render_html
from sieval.cli.main import app
from sieval.cli.report import render_finishes, render_report, render_summary
from sieval.cli.text import console
from sieval.results.document import Report
from sieval.results.view import build_view
from sieval.runner import arun_eval, parse_config
from sieval.runner.progress import RichProgress, Unit, progress_line, progress_lines

CONFIG = """
models: [{name: ref, endpoint: embedded}]
tasks:
  - {name: arc_easy_kshot_ppl, n: 12, num_fewshot: 1}
  - {name: mmlu_kshot_clp, n: 30, num_fewshot: 1}
  - {name: gsm8k_kshot_base_gen, n: 2, num_fewshot: 1}
"""


@pytest.fixture(scope="module")
async def run_dir(tmp_path_factory: Any) -> Path:
    out = tmp_path_factory.mktemp("screens")
    return (
        await arun_eval(parse_config(CONFIG), options(out=out, run_name="r", preflight=True))
    ).run_dir


def report_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "report.json").read_text())


def typed(report: dict[str, Any]) -> Report:
    """A report's plain data (as a test edits it) as the typed report the views take."""
    return msgspec.convert(report, Report)


def shown(*items: Any, width: int = 80) -> str:
    buffer = io.StringIO()
    screen = Console(file=buffer, width=width, force_terminal=False, color_system=None)
    for item in items:
        screen.print(item)
    return buffer.getvalue()


def cli(*args: str, width: int = 80) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


NAME = "sieval-reference/gsm8k_kshot_base_gen"


@pytest.mark.parametrize("width", [40, 60, 77, 120])
def test_the_progress_line_keeps_the_count_and_the_time_left(width: int) -> None:
    line = progress_line(NAME, 25, 1319, 2, (0.9, 8124.0), width).plain
    assert len(line) <= width
    assert "25/1319" in line and re.search(r"\d+:\d\d:\d\d$", line) and "failed 2" in line
    if width >= 120:
        assert NAME in line and "8,124 tok/s" in line and "0.9/s" in line and "━" in line


def test_the_progress_line_drops_the_least_useful_fields_first() -> None:
    full = progress_line(NAME, 25, 1319, 0, (0.9, 8124.0), 200).plain
    assert "tok/s" in full and "failed 0" in full
    narrower = [progress_line(NAME, 25, 1319, 0, (0.9, 8124.0), w).plain for w in (77, 62, 50)]
    assert "tok/s" not in narrower[0] and "0.9/s" in narrower[0]  # tokens/s goes first
    assert "0.9/s" not in narrower[1] and NAME in narrower[1]  # then samples/s
    assert NAME not in narrower[2] and narrower[2].startswith("gsm8k_kshot_base_gen")  # the model
    cut = progress_line(NAME, 25, 1319, 0, (0.9, 0.0), 24).plain
    assert cut.endswith("25/1319 0:23:57") and "…" in cut and len(cut) <= 24  # 1294 at 0.9/s


def test_the_lines_of_several_units_line_up() -> None:
    units = [
        Unit("reference/arc_easy_kshot_ppl", 20, 20, 0, (0.9, 1536.0)),
        Unit("reference/gsm8k_kshot_base_gen", 3, 10, 0, (0.5, 612.0)),
    ]
    for width in (77, 100, 157):
        lines = [line.plain for line in progress_lines(units, width)]
        assert len({len(line) for line in lines}) == 1
        assert len({line.index("━") for line in lines}) == 1
        assert len({line.index("failed") for line in lines}) == 1


def test_the_live_lines_leave_room_for_the_echo_of_ctrl_c() -> None:
    """A full-width line wraps when the terminal echoes ^C, and the live display then leaves its
    last frame on screen twice: every line stops three columns short."""
    buffer = io.StringIO()
    screen = Console(file=buffer, width=80, force_terminal=True, color_system=None)
    progress = RichProgress(screen)
    progress.start("sieval-reference/arc_easy_kshot_ppl", 1000, 0)
    progress.start("sieval-reference/hellaswag_kshot_ppl", 1000, 0)
    progress.advance("sieval-reference/arc_easy_kshot_ppl", True, 100)
    progress.close()
    progress.close()  # the engine and the interrupted command both close it: drawn once
    frame = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buffer.getvalue())
    last = [line for line in frame.splitlines() if "/1000" in line][-2:]
    assert len(last) == 2 and all(len(line) <= 77 for line in last)


def test_a_long_model_name_is_never_broken(run_dir: Path) -> None:
    report = report_of(run_dir)
    name = "meta-llama/Llama-3.1-8B-Instruct-Turbo"
    one = {**report, "results": [{**r, "model": name} for r in report["results"]]}
    assert name in shown(render_summary(typed(one)))  # in the title, whole
    two = {**one, "results": [*one["results"], {**one["results"][0], "model": "other"}]}
    text = shown(render_summary(typed(two)))
    assert sum(name in line for line in text.splitlines()) == 1  # a table per model, titled
    assert "sieval run" in text and "· other" in text


def test_errors_wrap_at_word_boundaries_on_a_terminal() -> None:
    message = (
        "pre-run check 'context' failed for model 'sieval-reference': task "
        "'mmlu_kshot_clp''s longest prompt (high_school_european_history/0/letter) does not fit "
        "the server's context; lower the shots with --num-fewshot N or serve a longer context"
    )
    buffer = io.StringIO()
    screen = console(stderr=True)
    screen.file, screen.soft_wrap = buffer, False  # what a terminal gets
    screen.width = 60
    screen.print(message)
    rows = buffer.getvalue().splitlines()
    assert len(rows) > 2 and " ".join(r.rstrip() for r in rows) == message  # only at spaces
    piped = console(stderr=True)
    assert piped.soft_wrap  # not a terminal: one line, greppable


def test_help_names_values_readably() -> None:
    for name in cli_app.COMMANDS:
        helped = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "100"}).output
        assert not re.search(r"<[a-z\[\]]+( range)?>|\{[a-z_]+\}", helped), (name, helped)
    usage = cli("report", "--help").splitlines()[0]
    assert usage == "Usage: sieval report [OPTIONS] RUN_DIR..."  # one run, or several side by side
    assert "--limit N" in cli("samples", "--help") and "--endpoint URL" in cli("eval", "--help")


def test_the_end_of_a_run_is_the_summary_and_fits_40_rows(tmp_path: Path) -> None:
    out = cli("eval", "examples/quickstart.yaml", "--out", str(tmp_path))
    rows = out.splitlines()
    assert rows[-1].startswith("run directory: ") and rows[-3].startswith("details: sieval report")
    assert len(rows) <= 40, out
    assert "provenance" not in out and "by_subject" not in out
    assert (
        "answers: reference/gsm8k_kshot_base_gen: all 10 ended on their own (a stop string or "
        "the end of text)" in " ".join(out.split())
    )
    assert "answers: reference/arc_easy" not in out and "answers: reference/mmlu" not in out
    assert "stop 10" not in out and "samples.failed" not in out
    # a generation task's headline with its censored share and bounds (one line in a pipe, words
    # wrapped on a terminal: tests/runner/test_censored.py); a scoring task has none
    (censored,) = [row for row in rows if row.startswith("censored: ")]
    assert censored.startswith("censored: gsm8k_kshot_base_gen 0/10 (0%); exact_match ")
    assert censored.endswith(" as wrong, 0.0000 left out")


async def test_finish_reasons_are_shown_for_generation_only(run_dir: Path) -> None:
    report = report_of(run_dir)
    assert [r["generates"] for r in report["results"]] == [False, False, True]
    finishes = [str(line).split(":")[0] for line in render_finishes(typed(report))]
    assert finishes == ["ref/gsm8k_kshot_base_gen"]


async def test_report_gives_a_row_per_subject_with_its_n_categories_first(run_dir: Path) -> None:
    report = report_of(run_dir)
    mmlu = report["results"][1]["metrics"]
    text = shown(*render_report(typed(report)), width=80)
    assert text.index("mmlu_kshot_clp · by_category") < text.index("mmlu_kshot_clp · by_subject")
    for subject, entry in mmlu["by_subject"].items():
        (row,) = [line for line in text.splitlines() if f"│ {subject} " in line]
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert cells == [subject, str(entry["n"]), f"{entry['acc']:.4f}"]
    assert ".n " not in text and "acc (headline)" in text


async def test_md_and_csv_keep_each_subjects_n(run_dir: Path) -> None:
    report = report_of(run_dir)
    subjects = report["results"][1]["metrics"]["by_subject"]
    rows = result_rows(typed(report))
    for subject, entry in subjects.items():
        (row,) = [r for r in rows if r["metric"] == f"by_subject.{subject}.acc"]
        assert row["n"] == entry["n"]
    (top,) = [r for r in rows if r["task"] == "mmlu_kshot_clp" and r["metric"] == "acc"]
    assert top["n"] == 30
    md = render_rows(rows, "md")
    some, entry = next(iter(subjects.items()))
    assert f"| by_subject.{some}.acc | {entry['acc']:.4f} |  | {entry['n']} |" in md
    csv = render_rows(rows, "csv").splitlines()
    assert any(line.startswith(f"ref,mmlu_kshot_clp,by_subject.{some}.acc,") for line in csv)
    assert all(line.split(",")[7] for line in csv[1:])  # every row has its n


async def test_samples_mark_the_gold_with_a_tick_and_name_the_pick(run_dir: Path) -> None:
    out = cli("samples", str(run_dir), "--task", "arc_easy_kshot_ppl", "--wrong", "--limit", "0")
    records = [
        json.loads(line)
        for line in (run_dir / "ref" / "arc_easy_kshot_ppl" / "records.jsonl")
        .read_text()
        .splitlines()
    ]
    wrong = [r for r in records if r["metrics"]["acc_norm"] == 0.0]
    assert wrong
    rows = [line for line in out.splitlines() if "│" in line and "logprob" not in line]
    ticked = [line for line in rows if line.lstrip().startswith("✓")]
    picked = [line for line in rows if line.rstrip().endswith("picked")]
    assert len(ticked) == len(picked) == len(wrong)
    assert not set(ticked) & set(picked)  # a wrong pick never carries the tick
    labels = "ABCD"
    for record, tick, pick in zip(wrong, ticked, picked, strict=True):
        assert (
            f"│ {labels[record['gold']]} " in tick and f"│ {labels[record['prediction']]} " in pick
        )
    assert "✓ the gold answer; picked: the model's choice" in out


async def test_predictions_show_as_letters_in_the_view(run_dir: Path) -> None:
    view = build_view(run_dir)
    arc = [s for s in view["samples"] if s["task"] == "arc_easy_kshot_ppl"]
    for sample in arc:
        assert isinstance(sample["prediction"], int)
        assert (
            sample["prediction_label"]
            == [c["label"] for c in sample["choices"]][sample["prediction"]]
        )
        assert sample["gold_label"] == next(c["label"] for c in sample["choices"] if c["gold"])
    assert "s.prediction_label ?? s.prediction" in render_html(view)


async def test_compare_names_the_runs_and_prints_intervals_like_every_table(
    run_dir: Path, tmp_path: Path
) -> None:
    from sieval.analysis.compare import compare_runs

    result = compare_runs(run_dir, run_dir)
    text = shown(*render_comparison(result, names=("5shot", "0shot")), width=100)
    assert "0shot −" in text and "right only in 5shot" in text and " A " not in text
    assert "* the headline metric" in text and "acc_norm *" in text
    assert "differs between the runs (flipped): 0" in text
    assert re.search(r"│\s+0\.000–0\.000 │", text)  # the paired interval, as report prints one
    a, b = tmp_path / "five-shot", tmp_path / "zero-shot"
    assert run_names(a, b) == ("five-shot", "zero-shot")
    assert run_names(tmp_path / "20261202-005954-a9dc6fc2", b) == ("before", "after")
    assert run_names(a, b, "x,y") == ("x", "y")
    out = cli("compare", str(run_dir), str(run_dir))
    assert "before: " in out and "after −" in out


async def test_no_python_none_reaches_the_screen(run_dir: Path) -> None:
    report = report_of(run_dir)
    blank = {**report["results"][0]["provenance"], "endpoint": None, "server_version": None}
    report["results"] = [{**r, "provenance": blank} for r in report["results"]]
    assert "None" not in shown(*render_report(typed(report)))
    gsm8k = cli("samples", str(run_dir), "--task", "gsm8k_kshot_base_gen", "--limit", "0")
    assert "None" not in gsm8k and "extracted: " in gsm8k


def test_the_margin_plot_counts_its_axis_in_a_stated_unit() -> None:
    from sieval.cli.html import _margins_plot

    tiny = [{"model": "m", "task": "t", "metric": "acc_norm", "values": [3e-6, -1e-6, 2e-6]}]
    figure, caption = _margins_plot(tiny, False)  # type: ignore[misc]
    axis = figure.axes[-1]
    assert "in nats per character × 10^−6" in axis.get_xlabel()
    figure.canvas.draw()
    assert axis.xaxis.get_offset_text().get_text() == ""  # no easily missed 1e−6 in the corner
    assert "units of 10^−6 nats per character" in caption
    plain = [{"model": "m", "task": "t", "metric": "acc", "values": [3.0, -1.0]}]
    figure, _ = _margins_plot(plain, False)  # type: ignore[misc]
    assert figure.axes[-1].get_xlabel().endswith("in nats")
