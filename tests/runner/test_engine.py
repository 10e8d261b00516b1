"""The engine against FakeTransport and a real local HTTP server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sieval.errors import ConfigError
from sieval.ir.request import Scoring
from sieval.plan.config import EvalConfig, parse_config
from sieval.results.document import SampleCounts
from sieval.runner import RunOptions, arun_eval, read_records
from sieval.store.records import Record, RecordWriter, Shared, expand
from sieval.tasks.base import Requirement
from sieval.transport import HttpRequest

from .fakes import FakeTask, fake_transport, serve, write_data

WORDS = ["aa", "bbb", "cc", "ddd", "ee", "fff"]


def make_config(endpoint: str = "http://fake.invalid", **model: Any) -> EvalConfig:
    extra = "".join(f"    {k}: {v}\n" for k, v in model.items())
    return parse_config(
        "models:\n"
        "  - name: m\n"
        f"    endpoint: {endpoint}\n"
        "    model: fake-model\n"
        "    concurrency_limit: 3\n" + extra + "tasks:\n  - name: fake_qa\n"
    )


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    write_data(tmp_path / "data", WORDS)
    return tmp_path / "data"


def options(tmp_path: Path, data_dir: Path, **kw: Any) -> RunOptions:
    kw.setdefault("out", tmp_path / "results")
    kw.setdefault("preflight", False)  # these tests count requests; tests/runner/test_checks.py
    return RunOptions(data_dir=data_dir, **kw)


async def test_run_writes_records_and_report(tmp_path: Path, data_dir: Path) -> None:
    transport = fake_transport()
    result = await arun_eval(
        make_config(),
        options(tmp_path, data_dir, run_name="r1"),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: transport,
    )
    assert result.exit_code == 0 and result.run_dir == tmp_path / "results" / "r1"
    lines = (result.run_dir / "m" / "fake_qa" / "records.jsonl").read_text().splitlines()
    assert len(lines) == len(WORDS)
    first = json.loads(lines[0])
    assert first["schema_version"] == 5 and first["status"] == "ok"
    assert set(first["requests"]) == {"r0", "r1"}
    raw = first["requests"]["r0"]
    # what both requests share is stored once for the record
    assert first["requests_common"] == {
        "ledger": "L0",
        "body_ref": "B0",
        "status": 200,
        "finish": ["stop"],
    }
    assert "ledger" not in raw and "status" not in raw and "prompt" not in raw
    unit = result.run_dir / "m" / "fake_qa"
    shared = Shared.load(unit / "shared.jsonl")
    request = expand(read_records(unit / "records.jsonl").records["s0"].requests["r0"], shared)
    assert request.body == {
        "model": "fake-model",
        "prompt": "Q: aa",
        "temperature": 0.0,
        "max_tokens": 4,
    }
    assert [d["leaf"] for d in request.ledger][:1] == ["input.completion.text"]
    assert first["reported_model"] == "fake-model" and request.status == 200
    later = expand(read_records(unit / "records.jsonl").records["s1"].requests["r0"], shared)
    assert later.body["prompt"] == "Q: bbb"  # only the prompt differs: the rest is the template
    # what is left of the body, the prompt, is the same for both requests: stored once (v5)
    assert json.loads(lines[1])["requests_columns"]["body.prompt"] == "Q: bbb"
    assert first["sample"] == {"word": "aa", "gold": "AA"}
    assert first["channels"] == {"text": first["prediction"]} and "acc" in first["metrics"]
    report = json.loads((result.run_dir / "report.json").read_text())
    (entry,) = report["results"]
    assert entry["metrics"]["acc"] == 0.5 and entry["metrics"]["ids"] == [f"s{i}" for i in range(6)]
    assert entry["samples"] == {"total": 6, "scored": 6, "failed": 0, "missing": 0}
    assert entry["provenance"]["reported_models"] == ["fake-model"]
    assert entry["provenance"]["served_models"] == ["fake-model"]
    assert entry["provenance"]["server_version"] == {"version": "9.9.9"}
    assert report["run"]["identity"].startswith("sha256:")
    assert report["timings"]["requests"] == 12 and "scored samples only" in report["denominator"]
    assert (
        json.loads((result.run_dir / "run.json").read_text())["identity"]
        == result.report.run.identity
    )
    # probe (models, the wire's own route asked with an empty body, version) then 12 completions
    urls = [c.url.rsplit("/", 1)[-1] for c in transport.calls[:3]]
    assert urls == ["models", "completions", "version"] and transport.calls[1].body == b"{}"
    assert transport.closed


async def test_failed_samples_are_recorded_counted_and_never_scored(
    tmp_path: Path, data_dir: Path
) -> None:
    write_data(data_dir, ["aa", "reject", "badd", "boom", "cc"])
    result = await arun_eval(
        make_config(),
        options(tmp_path, data_dir),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: fake_transport(),
    )
    assert result.exit_code == 1 and result.failed == 3
    records = read_records(result.run_dir / "m" / "fake_qa" / "records.jsonl").records
    rejected = records["s1"]
    assert rejected.status == "failed" and rejected.metrics == {}
    assert rejected.error is not None and rejected.error["class"] == "ServerRejected"
    assert rejected.error["status"] == 400 and "bad prompt reject" in rejected.error["message"]
    assert rejected.requests["r0"].body is not None  # the body that was sent is kept
    assert rejected.requests["r0"].error is not None and rejected.prediction is None
    violated = records["s2"]
    assert violated.error == {
        "class": "ContractViolation",
        "message": "the reply for badd cannot be trusted",
        "path": "choices[0]",
    }
    assert records["s3"].error is not None and records["s3"].error["class"] == "InternalError"
    (entry,) = result.report.results
    assert entry.failures == {"ContractViolation": 1, "InternalError": 1, "ServerRejected": 1}
    assert entry.samples == SampleCounts(total=5, scored=2, failed=3, missing=0)
    assert entry.metrics["ids"] == ["s0", "s4"] and entry.metrics["acc"] == 1.0
    assert [e.sample_id for e in entry.failure_examples] == ["s1", "s2", "s3"]


async def test_capability_mismatch_is_refused_before_any_request(
    tmp_path: Path, data_dir: Path
) -> None:
    transport = fake_transport()
    needy = FakeTask(requirements=[Requirement("token_ids", "ids are compared")])
    with pytest.raises(ConfigError) as info:
        await arun_eval(
            make_config(),
            options(tmp_path, data_dir),
            tasks={"fake_qa": needy},
            transport_factory=lambda cfg: transport,
        )
    message = str(info.value)
    assert "fake_qa needs token_ids" in message and "openai_completions does not support" in message
    assert "dialects that do:" in message
    assert transport.calls == [] and not (tmp_path / "results").exists()


async def test_unknown_dialect_is_refused(tmp_path: Path, data_dir: Path) -> None:
    with pytest.raises(ConfigError, match="unknown dialect 'future_wire'"):
        await arun_eval(
            make_config(dialect="future_wire"),
            options(tmp_path, data_dir),
            tasks={"fake_qa": FakeTask()},
            transport_factory=lambda cfg: fake_transport(),
        )


async def test_refused_leaf_stops_the_run_before_io(tmp_path: Path, data_dir: Path) -> None:
    transport = fake_transport()
    task = FakeTask(request_extra={"scoring": Scoring(token_ids=True)})
    with pytest.raises(ConfigError, match="refused before I/O") as info:
        await arun_eval(
            make_config(),
            options(tmp_path, data_dir),
            tasks={"fake_qa": task},
            transport_factory=lambda cfg: transport,
        )
    assert "scoring.token_ids" in str(info.value)
    assert transport.calls == [] and not (tmp_path / "results").exists()


async def test_unknown_task_model_and_missing_dataset(tmp_path: Path, data_dir: Path) -> None:
    tasks = {"fake_qa": FakeTask()}
    config = make_config()
    with pytest.raises(ConfigError, match="Did you mean 'fake_qa'"):
        await arun_eval(config, options(tmp_path, data_dir, tasks=["fake_q"]), tasks=tasks)
    with pytest.raises(ConfigError, match="unknown model 'n'"):
        await arun_eval(config, options(tmp_path, data_dir, models=["n"]), tasks=tasks)
    with pytest.raises(ConfigError, match="unknown task 'fake_qa'. Did you mean 'fake_qb'"):
        await arun_eval(config, options(tmp_path, data_dir), tasks={"fake_qb": FakeTask()})
    with pytest.raises(ConfigError, match="dataset .* is missing"):
        await arun_eval(config, options(tmp_path, tmp_path / "nowhere"), tasks=tasks)
    with pytest.raises(ConfigError, match="--limit"):
        await arun_eval(config, options(tmp_path, data_dir, limit=0), tasks=tasks)
    with pytest.raises(ConfigError, match="--concurrency"):
        await arun_eval(config, options(tmp_path, data_dir, concurrency=0), tasks=tasks)
    assert not (tmp_path / "results").exists()


async def test_duplicate_sample_ids_are_refused(tmp_path: Path, data_dir: Path) -> None:
    class Dup(FakeTask):
        def load(self, data_dir: Path, config: Any) -> Any:
            samples = super().load(data_dir, config)
            return [samples[0], samples[0]]

    with pytest.raises(ConfigError, match="twice"):
        await arun_eval(make_config(), options(tmp_path, data_dir), tasks={"fake_qa": Dup()})


async def test_limit_selection_and_data_dir_env(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIEVAL_DATA_DIR", str(data_dir))
    result = await arun_eval(
        make_config(),
        RunOptions(out=tmp_path / "out", limit=2, models=["m"], tasks=["fake_qa"], preflight=False),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: fake_transport(),
    )
    assert result.report.results[0].samples.total == 2
    assert result.report.run.inputs["tasks"]["fake_qa"]["config"]["n"] == 2
    # a second unnamed run in the same second gets its own directory
    again = await arun_eval(
        make_config(),
        RunOptions(out=tmp_path / "out", limit=2, preflight=False),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: fake_transport(),
    )
    assert again.run_dir != result.run_dir
    with pytest.raises(ConfigError, match="already exists"):
        await arun_eval(
            make_config(),
            RunOptions(out=tmp_path / "out", run_name=result.run_dir.name, preflight=False),
            tasks={"fake_qa": FakeTask()},
        )


async def test_concurrency_is_bounded_per_model_and_globally(
    tmp_path: Path, data_dir: Path
) -> None:
    write_data(data_dir, [f"w{i:03d}" for i in range(40)])
    state = {"now": 0, "max": 0}

    async def slow(request: HttpRequest) -> Any:
        from .fakes import answer

        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        await asyncio.sleep(0.002)
        state["now"] -= 1
        from sieval.transport import json_reply

        status, data = answer(request.url, request.body)
        return json_reply(data, status=status)

    from sieval.transport import FakeTransport

    result = await arun_eval(
        make_config(),
        options(tmp_path, data_dir),
        tasks={"fake_qa": FakeTask(per_sample=4)},
        transport_factory=lambda cfg: FakeTransport(slow),
    )
    assert result.exit_code == 0 and state["max"] == 3  # concurrency_limit: 3
    state["max"] = 0
    await arun_eval(
        make_config(),
        options(tmp_path, data_dir, concurrency=2),
        tasks={"fake_qa": FakeTask(per_sample=4)},
        transport_factory=lambda cfg: FakeTransport(slow),
    )
    assert state["max"] == 2  # the global cap wins


async def test_identity_mismatch_names_what_changed(tmp_path: Path, data_dir: Path) -> None:
    tasks = {"fake_qa": FakeTask()}
    first = await arun_eval(
        make_config(),
        options(tmp_path, data_dir, limit=3),
        tasks=tasks,
        transport_factory=lambda cfg: fake_transport(),
    )
    run = first.run_dir

    async def resume(config: EvalConfig, **kw: Any) -> str:
        with pytest.raises(ConfigError, match="cannot resume") as info:
            await arun_eval(
                config,
                options(tmp_path, data_dir, resume=run, **kw),
                tasks=tasks,
                transport_factory=lambda cfg: fake_transport(),
            )
        return str(info.value)

    assert "tasks.fake_qa.config.n: 3 -> 4" in await resume(make_config(), limit=4)
    changed = await resume(
        parse_config(
            "models: [{name: m, endpoint: 'http://fake.invalid', model: other-model}]\n"
            "tasks: [{name: fake_qa}]"
        ),
        limit=3,
    )
    assert 'models.m.model: "fake-model" -> "other-model"' in changed
    assert "n:" not in changed
    write_data(data_dir, [*WORDS, "gg"])
    assert "tasks.fake_qa.data: 1 file changed" in await resume(make_config(), limit=3)
    write_data(data_dir, WORDS)
    # unchanged inputs resume fine and run nothing
    again = await arun_eval(
        make_config(),
        options(tmp_path, data_dir, resume=run, limit=3),
        tasks=tasks,
        transport_factory=lambda cfg: fake_transport(),
    )
    timings = again.report.timings
    assert timings.sessions[-1].samples_run == 0 and again.report.run.resumed
    # a resume that sends nothing keeps the run's own timings: it adds a session
    assert timings.samples_run == 3 and timings.requests == timings.sessions[0].requests


async def test_resume_refuses_a_directory_that_is_not_a_run(tmp_path: Path, data_dir: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    with pytest.raises(ConfigError, match="no run.json"):
        await arun_eval(
            make_config(), options(tmp_path, data_dir, resume=bad), tasks={"fake_qa": FakeTask()}
        )
    (bad / "run.json").write_text("{not json")
    with pytest.raises(ConfigError, match="unreadable run metadata"):
        await arun_eval(
            make_config(), options(tmp_path, data_dir, resume=bad), tasks={"fake_qa": FakeTask()}
        )
    (bad / "run.json").write_text('{"identity": "sha256:x", "inputs": {}}')
    with pytest.raises(ConfigError, match="run.json was edited"):
        await arun_eval(
            make_config(), options(tmp_path, data_dir, resume=bad), tasks={"fake_qa": FakeTask()}
        )
    from sieval.store.identity import fingerprint

    (bad / "run.json").write_text(f'{{"identity": "{fingerprint({})}", "inputs": {{}}}}')
    with pytest.raises(ConfigError, match=r"(?s)differs from the run's:\n  models\.m\.dialect"):
        await arun_eval(
            make_config(), options(tmp_path, data_dir, resume=bad), tasks={"fake_qa": FakeTask()}
        )


async def test_resume_reruns_failed_samples_and_skips_scored_ones(
    tmp_path: Path, data_dir: Path
) -> None:
    flaky = {"fail": True}

    def handler_hook(request: HttpRequest) -> None:
        from sieval.errors import TransportError

        if flaky["fail"] and request.body and b"bbb" in request.body:
            raise TransportError("connection reset", attempts=5)

    first = await arun_eval(
        make_config(),
        options(tmp_path, data_dir),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: fake_transport(handler_hook),
    )
    assert first.report.results[0].failures == {"TransportError": 1}
    flaky["fail"] = False
    transport = fake_transport()
    second = await arun_eval(
        make_config(),
        options(tmp_path, data_dir, resume=first.run_dir),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: transport,
    )
    completions = [  # the pre-flight's route probe (an empty body) generates nothing
        c for c in transport.calls if c.url.endswith("/completions") and c.body != b"{}"
    ]
    assert len(completions) == 2 and all(b"bbb" in c.body for c in completions if c.body)
    assert second.exit_code == 0 and second.report.results[0].samples.scored == 6
    path = first.run_dir / "m" / "fake_qa" / "records.jsonl"
    assert len(path.read_text().splitlines()) == 7  # append-only: the failed line stays
    assert read_records(path).records["s1"].status == "ok"


async def test_truncated_last_line_is_ignored_reported_and_repaired(
    tmp_path: Path, data_dir: Path
) -> None:
    first = await arun_eval(
        make_config(),
        options(tmp_path, data_dir, limit=3),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: fake_transport(),
    )
    path = first.run_dir / "m" / "fake_qa" / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]) + lines[2][:40])  # a crash mid-write
    assert read_records(path).truncated_bytes == 40
    second = await arun_eval(
        make_config(),
        options(tmp_path, data_dir, resume=first.run_dir, limit=3),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: fake_transport(),
    )
    assert any("truncated last record (40 bytes)" in w for w in second.warnings)
    assert second.report.timings.sessions[-1].samples_run == 1
    assert second.report.warnings == second.warnings
    result = read_records(path)
    assert result.truncated_bytes == 0 and result.lines == 3 and len(result.records) == 3


def test_read_records_edge_cases(tmp_path: Path) -> None:
    path = tmp_path / "r" / "records.jsonl"
    assert read_records(path).lines == 0
    writer = RecordWriter(path, fsync_interval_s=0.0)
    record = Record(schema_version=1, sample_id="a", status="ok", model="m", task="t")
    writer.write(record)
    writer.close()
    writer.close()  # idempotent
    # a complete record whose newline was lost is kept, and repaired with a newline
    path.write_bytes(path.read_bytes() + msgspec.json.encode(record).replace(b'"a"', b'"b"'))
    seen = read_records(path, repair=True)
    assert set(seen.records) == {"a", "b"} and path.read_bytes().endswith(b"\n")
    path.write_bytes(b"\n" + path.read_bytes())  # blank lines are skipped
    assert len(read_records(path).records) == 2
    path.write_bytes(b"garbage\n" + path.read_bytes())
    with pytest.raises(ConfigError, match="records.jsonl:1: not a valid record"):
        read_records(path)


async def test_unreachable_endpoint_fails_fast_naming_the_url(
    tmp_path: Path, data_dir: Path
) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(ConfigError, match=f"cannot reach {url}"):
        await arun_eval(
            make_config(url), options(tmp_path, data_dir), tasks={"fake_qa": FakeTask()}
        )
    assert not (tmp_path / "results").exists()


async def test_probe_falls_back_to_health_and_refuses_a_bad_key(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sieval.transport import FakeTransport, json_reply

    from .fakes import answer

    def no_models(request: HttpRequest) -> Any:
        if request.url.endswith(("/v1/models", "/version")):
            return json_reply({"detail": "Not Found"}, status=404)
        status, data = answer(request.url, request.body)
        return json_reply(data, status=status)

    result = await arun_eval(
        make_config(),
        options(tmp_path, data_dir, limit=1),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: FakeTransport(no_models),
    )
    prov = result.report.results[0].provenance
    assert prov.served_models == [] and prov.server_version is None

    def broken(request: HttpRequest) -> Any:
        return json_reply({"error": "down"}, status=503 if "models" in request.url else 404)

    with pytest.raises(ConfigError, match="cannot reach http://fake.invalid"):
        await arun_eval(
            make_config(),
            options(tmp_path, data_dir),
            tasks={"fake_qa": FakeTask()},
            transport_factory=lambda cfg: FakeTransport(broken),
        )

    def health_down(request: HttpRequest) -> Any:
        return json_reply({"error": "nope"}, status=404 if "models" in request.url else 500)

    with pytest.raises(ConfigError, match="cannot reach"):
        await arun_eval(
            make_config(),
            options(tmp_path, data_dir),
            tasks={"fake_qa": FakeTask()},
            transport_factory=lambda cfg: FakeTransport(health_down),
        )
    monkeypatch.setenv("SIEVAL_TEST_KEY", "sk-wrong-key-000")
    async with serve(key="sk-right-key-111") as url:
        with pytest.raises(ConfigError, match="refused the API key") as info:
            await arun_eval(
                make_config(url, api_key_env="SIEVAL_TEST_KEY"),
                options(tmp_path, data_dir),
                tasks={"fake_qa": FakeTask()},
            )
    assert "sk-wrong-key-000" not in str(info.value)
    assert list((tmp_path / "results").iterdir()) == [result.run_dir]  # failures made no dir


async def test_embedded_endpoint_runs_the_reference_server(tmp_path: Path, data_dir: Path) -> None:
    config = parse_config("models: [{endpoint: embedded}]\ntasks: [{name: fake_qa}]")
    result = await arun_eval(
        config, options(tmp_path, data_dir, limit=2), tasks={"fake_qa": FakeTask()}
    )
    (entry,) = result.report.results
    assert entry.samples.scored == 2
    assert entry.provenance.endpoint == "embedded"
    assert entry.provenance.reported_models == ["sieval-reference"]
    assert result.report.run.inputs["models"]["sieval-reference"]["endpoint"] == "embedded"
    assert (result.run_dir / "sieval-reference" / "fake_qa" / "records.jsonl").is_file()


def test_data_is_found_beside_a_checkout_when_nothing_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sieval.runner.engine import resolve_data_dir

    monkeypatch.delenv("SIEVAL_DATA_DIR", raising=False)
    checkout = tmp_path / "sieval"
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    config = parse_config("models: [{endpoint: embedded}]\ntasks: [{name: arc_easy_kshot_ppl}]")
    assert resolve_data_dir(config, RunOptions()) == Path(
        "data"
    )  # nothing exists: the error says data/
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert resolve_data_dir(config, RunOptions()).resolve() == tmp_path / "shared" / "data"
    (checkout / "data").mkdir()
    assert resolve_data_dir(config, RunOptions()) == Path("data")
    assert resolve_data_dir(config, RunOptions(data_dir=tmp_path)) == tmp_path
