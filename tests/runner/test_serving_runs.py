"""The serving checks in a run: said before the first sample, kept in run.json and report.json,
compared on --resume (other numerics refused unless accepted) and by sieval compare, and run
from the command line by sieval probe --checks."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import msgspec
import pytest
from rich.console import Console
from typer.testing import CliRunner

from sieval.analysis.compare import compare_runs
from sieval.cli.compare import render_comparison
from sieval.cli.main import app
from sieval.cli.report import render_report, write_html
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.run_config import load_run_config
from sieval.reference import ReferenceServer, start_in_thread
from sieval.runner import RunOptions, arun_eval
from sieval.serving.probes import is_probe
from sieval.store.rundir import read_run_json
from sieval.transport import HttpTransport
from sieval.transport.types import HttpReply, HttpRequest

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
ARC = "[{name: arc_easy_kshot_ppl, n: 3, num_fewshot: 1}]"


def config(endpoint: str, tasks: str = ARC, concurrency: int = 2) -> Any:
    return parse_config(
        f"models: [{{name: m, endpoint: '{endpoint}', model: sieval-reference, "
        f"concurrency_limit: {concurrency}}}]\ntasks: {tasks}"
    )


async def run(tmp_path: Path, cfg: Any, **kw: Any) -> Any:
    return await arun_eval(cfg, RunOptions(out=tmp_path / "out", data_dir=DATA, **kw))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_finding_that_matters_is_said_before_the_run_and_kept(tmp_path: Path) -> None:
    said: list[str] = []
    async with ReferenceServer(faults="batch-variant") as server:
        result = await run(
            tmp_path,
            config(server.url),
            on_stage=said.append,
            on_run_dir=lambda d: said.append("RUN DIRECTORY"),
        )
    warning = next(i for i, line in enumerate(said) if line.startswith("warning: m: batch"))
    assert warning < said.index("RUN DIRECTORY")  # before the first sample is sent
    assert "concurrency 1" in said[warning] and "nats" in said[warning]
    assert any(line.startswith("m: batch invariance failed") for line in result.warnings)
    section = result.report.serving["m"]
    batch = next(f for f in section["findings"] if f["check"] == "batch_invariance")
    assert batch["outcome"] == "failed" and batch["evidence"]["moved"] > 0
    assert batch["tasks"] == ["arc_easy_kshot_ppl"]
    assert section["cost"]["requests"] > 0 and section["cost"]["prompt_tokens"] > 0
    assert result.report.results[0].samples.scored == 3  # warned, never stopped
    stored = read_run_json(result.run_dir)
    assert stored["serving"]["m"][0]["digest"] == section["fingerprint"]["digest"]
    assert stored["identity"] == result.report.run.identity
    page = write_html(result.run_dir, result.report, tmp_path / "page.html").read_text()
    serving = page[page.index('<section id="serving">') : page.index('<section id="plots">')]
    assert 'batch_invariance</td><td class="bad">failed' in serving and "concurrency 1" in serving
    console = Console(width=80, record=True)
    for item in render_report(result.report):
        console.print(item)
    text = console.export_text()
    assert "serving checks · m" in text and "batch_invariance  failed" in text


async def test_the_identity_is_the_one_a_run_without_serving_checks_has(tmp_path: Path) -> None:
    async with ReferenceServer() as server:
        checked = await run(tmp_path / "a", config(server.url))
        unchecked = await run(tmp_path / "b", config(server.url), serving_checks="off")
    assert checked.report.run.identity == unchecked.report.run.identity
    assert "serving" not in read_run_json(unchecked.run_dir)
    assert unchecked.report.serving == {}


class _Counting:
    def __init__(self) -> None:
        self.inner = HttpTransport()
        self.probes = 0

    async def send(self, request: HttpRequest) -> HttpReply:
        if request.body and is_probe(msgspec.json.decode(request.body)):
            self.probes += 1
        return await self.inner.send(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.parametrize("options", [{"serving_checks": "off"}, {"preflight": False}])
async def test_off_sends_no_probe(tmp_path: Path, options: dict[str, Any]) -> None:
    counting = _Counting()
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url),
            RunOptions(out=tmp_path / "out", data_dir=DATA, **options),
            transport_factory=lambda cfg: counting,
        )
        await counting.aclose()
    assert counting.probes == 0 and result.report.serving == {}


async def test_a_selection_runs_those_checks_only(tmp_path: Path) -> None:
    counting = _Counting()
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url, concurrency=1),
            RunOptions(out=tmp_path / "out", data_dir=DATA, serving_checks="seed_repeat"),
            transport_factory=lambda cfg: counting,
        )
        await counting.aclose()
    section = result.report.serving["m"]
    assert section["checks"] == ["seed_repeat"]
    # asked for by name, it runs although no task samples
    assert [f["check"] for f in section["findings"]] == ["seed_repeat"]
    assert counting.probes == section["cost"]["requests"] == 4  # fingerprint twice, seed twice


def _drop_last_record(run_dir: Path) -> None:
    path = run_dir / "m" / "arc_easy_kshot_ppl" / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))


async def test_a_resume_onto_other_numerics_is_refused_then_accepted(tmp_path: Path) -> None:
    port = free_port()
    async with ReferenceServer(port=port) as server:
        first = await run(tmp_path, config(server.url))
    _drop_last_record(first.run_dir)
    resumed = load_run_config(first.run_dir)
    async with ReferenceServer(port=port, faults="fingerprint-changing"):
        with pytest.raises(ConfigError) as refused:
            await arun_eval(resumed, RunOptions(resume=first.run_dir, data_dir=DATA))
        message = refused.value.message
        assert "numerics differ" in message and "--accept-numerics-change" in message
        assert "log-probabilities moved" in message and "another machine" in message
        assert len(read_run_json(first.run_dir)["serving"]["m"]) == 1  # nothing written
        accepted = await arun_eval(
            resumed,
            RunOptions(resume=first.run_dir, data_dir=DATA, accept_numerics_change=True),
        )
    assert accepted.report.results[0].samples.scored == 3
    kept = read_run_json(first.run_dir)["serving"]["m"]
    assert len(kept) == 2 and kept[0]["digest"] != kept[1]["digest"]
    assert accepted.report.serving["m"]["fingerprints"] == 2
    assert any("spans 2 serving fingerprints" in w for w in accepted.warnings)


async def test_a_resume_on_the_same_server_and_a_run_without_fingerprints(
    tmp_path: Path,
) -> None:
    async with ReferenceServer() as server:
        first = await run(tmp_path, config(server.url))
        _drop_last_record(first.run_dir)
        again = await arun_eval(
            load_run_config(first.run_dir), RunOptions(resume=first.run_dir, data_dir=DATA)
        )
        assert not any("fingerprint" in w for w in again.warnings)
        # a run made before fingerprints: resumes as it did, and says it compared nothing
        meta = first.run_dir / "run.json"
        data = json.loads(meta.read_text())
        del data["serving"]
        meta.write_text(json.dumps(data))
        _drop_last_record(first.run_dir)
        old = await arun_eval(
            load_run_config(first.run_dir), RunOptions(resume=first.run_dir, data_dir=DATA)
        )
    assert old.report.results[0].samples.scored == 3
    assert any("holds no serving fingerprint" in w for w in old.warnings)


async def test_compare_says_the_numerics_differ_before_any_score(tmp_path: Path) -> None:
    async with ReferenceServer() as plain, ReferenceServer(faults="fingerprint-changing") as other:
        a = await run(tmp_path / "a", config(plain.url))
        a2 = await run(tmp_path / "a2", config(plain.url))
        b = await run(tmp_path / "b", config(other.url))
    result = compare_runs(a.run_dir, b.run_dir)
    [serving] = result["serving"]
    assert serving["compared"] and not serving["same"]
    assert "another machine" in serving["said"]
    assert serving["changes"][0].startswith("numerics: ")
    items = list(render_comparison(result))
    assert "numerics differ" in str(items[1])  # right after the run directories
    first_table = next(i for i, item in enumerate(items) if not isinstance(item, str))
    assert first_table > 1  # before any score
    same = compare_runs(a.run_dir, a2.run_dir)["serving"][0]
    assert same["compared"] and same["same"]
    said = [str(x) for x in render_comparison(compare_runs(a.run_dir, a2.run_dir))]
    assert "the same engine, model and numerics" in said[1]


runner = CliRunner()


@pytest.mark.parametrize(("fault", "code"), [(None, 0), ("nondeterministic", 1)])
def test_probe_checks_from_the_command_line(tmp_path: Path, fault: str | None, code: int) -> None:
    server = start_in_thread(port=0, faults=fault)
    try:
        out = tmp_path / "checks.json"
        result = runner.invoke(
            app,
            ["probe", "--checks", "--dialect", "vllm_native", "--endpoint", server.url,
             "--model", "sieval-reference", "--only", "determinism,seed_repeat",
             "--json", str(out)],
        )  # fmt: skip
    finally:
        server.stop()
    assert result.exit_code == code, result.output
    data = json.loads(out.read_text())
    outcomes = {f["check"]: f["outcome"] for f in data["findings"]}
    want = "passed" if fault is None else "failed"
    assert outcomes == {"determinism": want, "seed_repeat": want}
    assert "fingerprint: sieval-reference" in result.output
    assert data["fingerprint"]["engine"] == "sieval-reference"


def test_probe_checks_names_an_unknown_check() -> None:
    result = runner.invoke(
        app,
        ["probe", "--checks", "--dialect", "vllm_native", "--endpoint", "http://127.0.0.1:9",
         "--model", "m", "--only", "batch"],
    )  # fmt: skip
    assert result.exit_code == 2 and "--only: unknown check 'batch'" in result.output


def test_probe_checks_on_a_dead_port_says_so_and_sends_nothing_more() -> None:
    result = runner.invoke(
        app,
        ["probe", "--checks", "--dialect", "vllm_native", "--endpoint", "http://127.0.0.1:9",
         "--model", "m"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert (
        "did not answer the first probe" in result.output and "could not connect" in result.output
    )


async def test_the_batch_probe_sends_no_more_copies_than_the_run_would(tmp_path: Path) -> None:
    gen = "[{name: gsm8k_kshot_base_gen, n: 1, num_fewshot: 1}]"  # greedy: batch check wanted
    async with ReferenceServer(faults="batch-variant") as server:
        three = await run(tmp_path / "three", config(server.url, gen, concurrency=3))
        peak_three = server.peak_in_flight
    found = {f["check"]: f for f in three.report.serving["m"]["findings"]}
    assert found["batch_invariance"]["evidence"]["copies"] == 3
    assert peak_three == 3  # the model's concurrency_limit, never the default 7 copies
    said: list[str] = []
    async with ReferenceServer(faults="batch-variant") as server:
        one = await run(
            tmp_path / "one", config(server.url, gen, concurrency=1), on_stage=said.append
        )
        peak_one = server.peak_in_flight
    checks = [f["check"] for f in one.report.serving["m"]["findings"]]
    assert "batch_invariance" not in checks and "determinism" in checks
    assert peak_one == 1
    assert "batch_invariance left out for m: its concurrency_limit is 1" in said
