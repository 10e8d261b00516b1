"""A server default the wire cannot override keeps the run's results marked ``exposed``.

Issue 33.5: on a vLLM whose model sets top_k in its generation_config.json, openai_chat cannot
send top_k and no probe can see it; after the warning's own fix (``sampling.top_p: 1.0``) the
run once showed no warning (``skipped``, ``matters: false``), yet its sampled texts differed from
a plain server's. The reference server's ``sampling-default`` fault is that server (top_p 0.8,
top_k 20, repetition_penalty 1.3 for what a request leaves out).
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import msgspec
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import RunOptions, arun_eval, read_records
from sieval.serving.fixes import Exposure, defaults_fix

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
SAMPLED = "[{name: math500, n: 3, options: {temperature: 1.0, repeats: 2, max_tokens: 16}}]"


def as_data(report: Any) -> Any:
    """A typed report as report.json holds it (plain data)."""
    return msgspec.to_builtins(report)


def config(url: str, extra: str = "") -> Any:
    return parse_config(
        f"models: [{{name: m, endpoint: '{url}', model: sieval-reference, kind: chat, "
        f"request_defaults: {{sampling.top_p: 1.0}}{extra}}}]\ntasks: {SAMPLED}"
    )


async def run(tmp_path: Path, fault: str | None, name: str, extra: str = "") -> Any:
    said: list[str] = []
    async with ReferenceServer(faults=fault) as server:
        result = await arun_eval(
            config(server.url, extra),
            RunOptions(out=tmp_path, data_dir=DATA, run_name=name, on_stage=said.append,
                       on_run_dir=lambda d: said.append("RUN DIRECTORY")),
        )  # fmt: skip
    return result, said


def texts(run_dir: Path) -> dict[str, str]:
    records = read_records(run_dir / "m" / "math500" / "records.jsonl").records
    return {key: str(r.channels.get("text")) for key, r in records.items()}


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "300"})
    assert result.exit_code in (0, 1), result.output
    return result.output


async def test_a_field_the_wire_cannot_send_keeps_the_results_exposed(tmp_path: Path) -> None:
    plain, _ = await run(tmp_path, None, "plain", ", server_defaults: neutral")  # and it is
    faulty, said = await run(tmp_path, "sampling-default", "faulty")
    # the premise: top_p is sent, yet the server's other defaults change the sampled texts
    assert texts(faulty.run_dir) != texts(plain.run_dir)
    # said at the start, before the run directory exists
    warning = next(
        i for i, line in enumerate(said) if "server defaults could not be checked" in line
    )
    assert warning < said.index("RUN DIRECTORY")
    assert "top_k: unverified" in said[warning] and "exposed" in said[warning]
    finding = next(
        f for f in faulty.report.serving["m"]["findings"] if f["check"] == "server_defaults"
    )
    assert finding["matters"] is True
    assert "sampling.top_p" not in finding["evidence"]  # sent: nothing left to the server
    # the report's headline carries the mark, with the fields and the fix
    (result,) = as_data(faulty.report)["results"]
    (mark,) = result["marks"]
    assert mark["mark"] == "exposed"
    fields = "top_k, min_p, repetition_penalty (unverified)"
    assert f"{fields}: cannot be sent on this wire nor verified" in mark["why"]
    assert "server_defaults: neutral" in mark["fix"]
    # vllm_native and sglang_native send them, with a raw-text prompt (math500 is a chat task)
    assert "sglang_native, vllm_native can with a raw-text prompt" in mark["fix"]
    assert as_data(plain.report)["results"][0]["marks"] == []
    # every view shows it
    run_dir = str(faulty.run_dir)
    assert "exposed" in cli("report", run_dir).split("math500", 1)[1]
    (row,) = [
        r for r in csv.DictReader(io.StringIO(cli("report", run_dir, "--format", "csv")))
        if r["metric"] == "accuracy"
    ]  # fmt: skip
    assert row["marks"] == "exposed" and "top_k" in row["marks_why"]
    markdown = cli("report", run_dir, "--format", "md")
    assert "| exposed |" in markdown and "- m / math500: exposed: " in markdown
    rows = json.loads(cli("report", run_dir, "--format", "json"))
    assert {r["marks"] for r in rows} == {"exposed"}
    page = tmp_path / "page.html"
    cli("report", run_dir, "--html", str(page))
    assert 'data-mark="exposed"' in page.read_text()
    compared = cli("compare", str(plain.run_dir), run_dir)
    assert "exposed in faulty" in compared and "exposed in plain" not in compared
    both = tmp_path / "both.html"
    cli("compare", str(plain.run_dir), run_dir, "--html", str(both))
    assert 'data-run="after" data-mark="exposed"' in both.read_text()
    assert 'data-run="before" data-mark' not in both.read_text()


async def test_a_server_declared_neutral_is_taken_at_its_word_and_said(tmp_path: Path) -> None:
    """After the server flag, the config says so: no wire shows a server's flags."""
    result, said = await run(tmp_path, None, "declared", ", server_defaults: neutral")
    assert not any("server defaults could not be checked" in line for line in said)
    assert as_data(result.report)["results"][0]["marks"] == []
    finding = next(
        f for f in result.report.serving["m"]["findings"] if f["check"] == "server_defaults"
    )
    assert finding["evidence"]["sampling.top_k"]["status"] == "declared"
    assert "server_defaults: neutral" in finding["evidence"]["sampling.top_k"]["why"]
    assert "not verified" in finding["meaning"] and not finding["matters"]


async def test_a_text_prompt_task_is_told_the_dialects_that_send_the_field(
    tmp_path: Path,
) -> None:
    """A greedy answer can meet a penalty too; on a completion wire the fix names the dialects
    that send it, with the option each takes."""
    said: list[str] = []
    async with ReferenceServer(faults="sampling-default") as server:
        result = await arun_eval(
            parse_config(
                f"models: [{{name: m, endpoint: '{server.url}', model: sieval-reference}}]\n"
                "tasks: [{name: gsm8k_kshot_base_gen, n: 2, num_fewshot: 1}]"
            ),
            RunOptions(out=tmp_path, data_dir=DATA, on_stage=said.append),
        )
    (mark,) = as_data(result.report)["results"][0]["marks"]
    assert "repetition_penalty (unverified): cannot be sent on this wire nor" in mark["why"]
    assert (
        "use a dialect that can (sglang_native with request_defaults: "
        "{options.repetition_penalty: 1.0}, vllm_native with request_defaults: "
        "{options.repetition_penalty: 1.0})" in mark["fix"]
    )


def test_the_hint_names_every_fix_for_the_engine() -> None:
    top_p = Exposure("sampling.top_p", value=1.0)
    top_k = Exposure("sampling.top_k", wires=(("vllm_native", -1), ("sglang_native", -1)))
    min_p = Exposure("options.min_p", raw_wires=(("vllm_native", 0.0),))
    said = defaults_fix("vllm", [top_p], [top_k, min_p])
    assert "the server applies its own top_p" in said
    assert "whether the server applies its own top_k, min_p" in said
    assert "start vLLM with --generation-config vllm" in said
    assert "then declare it with server_defaults: neutral" in said
    assert "send top_p explicitly: request_defaults: {sampling.top_p: 1.0}" in said
    assert (
        "this wire cannot send top_k: use a dialect that can (vllm_native with request_defaults: "
        "{sampling.top_k: -1}, sglang_native with request_defaults: {sampling.top_k: -1})"
    ) in said
    assert (
        "no dialect can send min_p with these tasks' prompt (vllm_native can with a raw-text"
        in (said)
    )
    assert "--sampling-defaults openai" in defaults_fix("sglang", [], [top_k])
    unknown = defaults_fix(None, [], [top_k])
    assert "vLLM: --generation-config vllm; SGLang: --sampling-defaults openai" in unknown
    # a server known to be neither names no flag of theirs
    assert "--generation-config" not in defaults_fix("sieval-reference", [], [top_k])
