"""One model over several replicas, on real servers: three reference servers give the same
per-sample records as one; replicas whose serving fingerprints differ are refused before the first
sample (or run, and said, with ``allow_mixed_replicas``); a replica killed mid-run (SIGKILL of its
``sieval serve`` process) loses no sample and scores none twice; every request record names the
replica that answered it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import options

from sieval.dialects.registry import get_dialect
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.plan import PlannedModel
from sieval.reference import ReferenceServer
from sieval.results.document import SampleCounts
from sieval.runner import arun_eval
from sieval.runner.endpoints import Endpoints
from sieval.store.records import read_records, records_path

TASKS = """
  - {name: arc_easy, n: 8}
  - {name: gsm8k_kshot_base_gen, n: 4, num_fewshot: 1}
"""


def config(endpoint: str, extra: str = "") -> Any:
    return parse_config(
        f"models: [{{name: m, endpoint: {endpoint}, model: sieval-reference{extra}}}]\n"
        f"concurrency: 6\ntasks:{TASKS}"
    )


@contextlib.asynccontextmanager
async def servers(*faults: str | None) -> AsyncIterator[list[str]]:
    async with contextlib.AsyncExitStack() as stack:
        urls = []
        for fault in faults:
            server = await stack.enter_async_context(ReferenceServer(port=0, faults=fault))
            urls.append(server.url)
        yield urls


def unit(run_dir: Path, task: str) -> dict[str, Any]:
    found = read_records(records_path(run_dir, "m", task)).records
    return {k: msgspec.to_builtins(v) for k, v in found.items()}


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what differs between two runs of the same samples: times, the replica."""
    kept = {k: v for k, v in record.items() if k not in ("started", "duration_s")}
    kept["requests"] = {
        name: {k: v for k, v in r.items() if k not in ("timings", "replica")}
        for name, r in record["requests"].items()
    }
    return kept


async def test_three_replicas_give_the_records_of_one(tmp_path: Path) -> None:
    async with servers(None, None, None, None) as (one, *three):
        single = await arun_eval(config(f"'{one}'"), options(out=tmp_path / "one", preflight=True))
        spread = await arun_eval(
            config(f"[{', '.join(repr(u) for u in three)}]"),
            options(out=tmp_path / "three", preflight=True),
        )
    served: Counter[str] = Counter()
    for task in ("arc_easy", "gsm8k_kshot_base_gen"):
        alone, replicated = unit(single.run_dir, task), unit(spread.run_dir, task)
        assert set(alone) == set(replicated) and len(alone) in (8, 4)
        for sample_id, record in replicated.items():
            assert comparable(record) == comparable(alone[sample_id]), sample_id
            for request in record["requests"].values():
                served[request["replica"]] += 1
            assert all("replica" not in r for r in alone[sample_id]["requests"].values())
    assert set(served) == set(three)  # every replica answered, and nothing else did
    assert single.report.results[0].metrics == spread.report.results[0].metrics
    assert any("3 replicas, one serving fingerprint" in w for w in spread.warnings)


async def test_mixed_fingerprints_are_refused_before_the_first_sample(tmp_path: Path) -> None:
    async with servers(None, "fingerprint-changing") as urls:
        listed = f"[{', '.join(repr(u) for u in urls)}]"
        with pytest.raises(ConfigError) as refused:
            await arun_eval(config(listed), options(out=tmp_path / "refused", preflight=True))
        assert not (tmp_path / "refused").exists()  # no run directory, no sample
        message = refused.value.message
        assert f"{urls[0]} -> {urls[1]}: numerics:" in message
        assert "allow_mixed_replicas: true" in message
        mixed = await arun_eval(
            config(listed, ", allow_mixed_replicas: true"),
            options(out=tmp_path / "mixed", preflight=True),
        )
    said = [w for w in mixed.report.warnings if "allow_mixed_replicas" in w]
    assert said and "runs on replicas whose serving fingerprints differ" in said[0]
    replicas = {
        r["replica"]
        for record in unit(mixed.run_dir, "arc_easy").values()
        for r in record["requests"].values()
    }
    assert replicas == set(urls)


async def test_a_replica_url_listed_twice_or_embedded_is_refused() -> None:
    with pytest.raises(ConfigError, match="is listed twice"):
        config("['http://127.0.0.1:9', 'http://127.0.0.1:9/v1']")
    with pytest.raises(ConfigError, match="'embedded' cannot be a replica"):
        config("[embedded, 'http://127.0.0.1:9']")
    with pytest.raises(ConfigError, match="for a model served by several replicas"):
        config("'http://127.0.0.1:9'", ", allow_mixed_replicas: true")


# -- a replica killed mid-run ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_processes(count: int) -> Iterator[list[tuple[str, subprocess.Popen[bytes]]]]:
    """``count`` ``sieval serve`` processes on free ports, each answering before it is used."""
    started = []
    try:
        for _ in range(count):
            port = free_port()
            process = subprocess.Popen(
                [sys.executable, "-m", "sieval", "serve", "--port", str(port), "--quiet"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            started.append((f"http://127.0.0.1:{port}", process))
        for url, process in started:
            deadline = time.monotonic() + 60
            while True:  # a readiness poll, bounded: the process imports for a second or two
                try:
                    with urllib.request.urlopen(url + "/v1/models", timeout=2):
                        break
                except OSError:
                    assert process.poll() is None, f"sieval serve at {url} exited"
                    assert time.monotonic() < deadline, f"sieval serve at {url} never answered"
                    time.sleep(0.2)
        yield started
    finally:
        for _, process in started:
            if process.poll() is None:
                process.terminate()
            process.wait(timeout=30)


class KillAfter:
    """A progress sink that SIGKILLs a replica's process once ``after`` samples have finished
    and the records under ``out`` name it as having answered (on a loaded machine its first
    answer can come late: killed before it, the run would not show it answered, then died)."""

    def __init__(self, process: subprocess.Popen[bytes], after: int, out: Path, url: str) -> None:
        self.process, self.after, self.seen = process, after, 0
        self.out, self.url, self.killed = out, url, False

    def start(self, unit: str, total: int, done: int) -> None:
        pass

    def advance(self, unit: str, ok: bool, tokens: int = 0) -> None:
        self.seen += 1
        if self.seen >= self.after and not self.killed and self._answered():
            os.kill(self.process.pid, signal.SIGKILL)
            self.killed = True

    def _answered(self) -> bool:
        for path in self.out.rglob("records.jsonl"):
            for record in read_records(path).records.values():
                if any(r.replica == self.url for r in record.requests.values()):
                    return True
        return False

    def close(self) -> None:
        pass


async def test_a_replica_killed_mid_run_loses_nothing_and_scores_nothing_twice(
    tmp_path: Path,
) -> None:
    n = 40
    with serve_processes(3) as started:
        urls = [url for url, _ in started]
        victim_url, victim = started[1]
        killer = KillAfter(victim, after=6, out=tmp_path, url=victim_url)
        cfg = parse_config(
            f"models: [{{name: m, endpoint: [{', '.join(repr(u) for u in urls)}], "
            f"model: sieval-reference, retries: 0, concurrency_limit: 6}}]\n"
            f"tasks: [{{name: arc_easy, n: {n}}}]"
        )
        result = await arun_eval(cfg, options(out=tmp_path), progress=killer)
        assert victim.poll() == -signal.SIGKILL  # it was killed mid-run, not at the end
    assert killer.seen == n
    lines = (records_path(result.run_dir, "m", "arc_easy")).read_text().splitlines()
    ids = Counter(json.loads(line)["sample_id"] for line in lines)
    assert len(ids) == n and set(ids.values()) == {1}  # each sample recorded once
    records = unit(result.run_dir, "arc_easy")
    assert {r["status"] for r in records.values()} == {"ok"}  # nothing lost
    served = Counter(r["replica"] for rec in records.values() for r in rec["requests"].values())
    assert set(served) <= set(urls) and sum(served.values()) == 4 * n
    assert served[victim_url] > 0  # it answered before it died
    assert served[urls[0]] + served[urls[2]] > served[victim_url]
    assert result.report.results[0].samples == SampleCounts(total=n, scored=n, failed=0, missing=0)


def test_each_shard_starts_from_its_own_replica() -> None:
    from sieval.cluster.frozen_plan import _rotated

    urls = ["http://a:1", "http://b:1", "http://c:1"]
    assert [_rotated(urls, k)[0] for k in range(5)] == [*urls, *urls[:2]]
    assert sorted(_rotated(urls, 4)) == sorted(urls) and _rotated([], 3) == []


async def test_a_replica_limit_holds_on_each_replica(tmp_path: Path) -> None:
    # each request waits 50 ms on its server, so every slot the client allows is taken at once
    async with contextlib.AsyncExitStack() as stack:
        started = [
            await stack.enter_async_context(ReferenceServer(port=0, faults="delay; seconds=0.05"))
            for _ in range(3)
        ]
        listed = f"[{', '.join(repr(s.url) for s in started)}]"
        result = await arun_eval(
            parse_config(
                f"concurrency: 64\nmodels: [{{name: m, endpoint: {listed}, "
                "model: sieval-reference, concurrency_limit: 32, replica_concurrency_limit: 2}]\n"
                "tasks: [{name: arc_easy, n: 12}]"
            ),
            options(out=tmp_path),
        )
        peaks = [server.peak_in_flight for server in started]
    assert result.report.results[0].samples.scored == 12
    assert peaks == [2, 2, 2]  # the replica's own limit, reached on each, never passed


def test_the_budget_of_replicas_is_the_models_or_each_replicas() -> None:
    def budget(more: str) -> tuple[int, int | None]:
        config = parse_config(
            "models: [{name: m, endpoint: ['http://h:1', 'http://h:2', 'http://h:3'], model: m, "
            f"concurrency_limit: 12{more}}}]\ntasks: [{{name: arc_easy}}]"
        )
        endpoint = Endpoints([PlannedModel(m, get_dialect(m.dialect_id)) for m in config.models])[
            "m"
        ]
        assert endpoint.replicas is not None and len(endpoint.replicas) == 3
        return endpoint.budget, endpoint.replicas.cap

    assert budget("") == (12, None)  # the model's one budget, spread over the replicas
    assert budget(", replica_concurrency_limit: 5") == (15, 5)


async def test_a_run_on_replicas_stopped_early_resumes_on_them(tmp_path: Path) -> None:
    """The replicas are in the run's stored config: a stopped run (here by a token budget)
    resumes from its directory alone on the same replicas, each sample recorded once."""
    from sieval.cost.forecast import CostOptions
    from sieval.plan.run_config import load_run_config

    async with servers(None, None) as urls:
        cfg = config(f"[{', '.join(repr(u) for u in urls)}]")
        whole = await arun_eval(cfg, options(out=tmp_path / "whole"))
        first = await arun_eval(
            cfg, options(out=tmp_path / "out", cost=CostOptions(budget_tokens=2000))
        )
        assert first.exit_code == 1 and first.stopped is not None
        assert sum(r.samples.missing for r in first.report.results) > 0
        done = await arun_eval(load_run_config(first.run_dir), options(resume=first.run_dir))
    assert done.exit_code == 0
    for task in ("arc_easy", "gsm8k_kshot_base_gen"):
        lines = records_path(done.run_dir, "m", task).read_text().splitlines()
        ids = Counter(json.loads(line)["sample_id"] for line in lines)
        assert set(ids.values()) == {1} and len(ids) in (8, 4)
        named = {
            r["replica"]
            for rec in unit(done.run_dir, task).values()
            for r in rec["requests"].values()
        }
        assert named == set(urls)  # both sessions ran on the replicas
    for a, b in zip(whole.report.results, done.report.results, strict=True):
        assert a.metrics == b.metrics
