"""Pre-run checks against the reference server with the matching fault switched on: each stops
the run before the first sample (no run directory), names the fix, and can be skipped."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.run_config import load_run_config
from sieval.reference import ReferenceServer
from sieval.runner import RunOptions, arun_eval
from sieval.serving.probes import is_probe
from sieval.transport import HttpTransport
from sieval.transport.types import HttpReply, HttpRequest

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


def config(endpoint: str, model: str = "sieval-reference", tasks: str = "") -> object:
    tasks = tasks or "[{name: arc_easy_kshot_ppl, n: 2, num_fewshot: 1}]"
    return parse_config(
        f"models: [{{name: m, endpoint: '{endpoint}', model: '{model}', concurrency_limit: 2}}]\n"
        f"tasks: {tasks}"
    )


async def run(tmp_path: Path, cfg: object, **kw: object):
    return await arun_eval(cfg, RunOptions(out=tmp_path / "out", data_dir=DATA, **kw))  # type: ignore[arg-type]


async def test_passing_checks_are_recorded_in_the_report(tmp_path: Path) -> None:
    tasks = (
        "[{name: arc_easy_kshot_ppl, n: 2, num_fewshot: 1},"
        " {name: mmlu_kshot_clp, n: 2, num_fewshot: 1}]"
    )
    async with ReferenceServer() as server:
        result = await run(tmp_path, config(server.url, tasks=tasks))
    checks = result.report.preflight["m"]
    outcomes = {(c["check"], c.get("task")): c["outcome"] for c in checks}
    assert outcomes[("endpoint", None)] == "passed" and outcomes[("model", None)] == "passed"
    assert outcomes[("bos", "arc_easy_kshot_ppl")] == "passed"
    assert outcomes[("top_k", "mmlu_kshot_clp")] == "passed"
    assert outcomes[("context", "arc_easy_kshot_ppl")] == "passed"


async def test_a_model_the_server_does_not_serve_fails_before_the_run(tmp_path: Path) -> None:
    async with ReferenceServer() as server:
        with pytest.raises(
            ConfigError, match="does not serve model 'llama'; it serves sieval-reference"
        ):
            await run(tmp_path, config(server.url, model="llama"))
    assert not (tmp_path / "out").exists()


async def test_the_embedded_server_answers_only_to_its_own_model(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not serve model 'meta-llama/x'"):
        await run(tmp_path, config("embedded", model="meta-llama/x"))


async def test_an_endpoint_ending_in_v1_is_accepted_and_said_once(tmp_path: Path) -> None:
    """What OpenAI SDK and lm-eval users type: the /v1 is dropped (each dialect adds its own
    path), said once, and the run is the run of the bare URL (same identity)."""
    said: list[str] = []
    async with ReferenceServer() as server:
        result = await run(tmp_path, config(server.url + "/v1/"), on_stage=said.append)
        bare: list[str] = []
        plain = await run(tmp_path / "bare", config(server.url), on_stage=bare.append)
        again: list[str] = []  # the run keeps the URL as used: a resume says nothing more
        await arun_eval(
            load_run_config(result.run_dir),
            RunOptions(resume=result.run_dir, data_dir=DATA, on_stage=again.append),
        )
    assert not [line for line in again if "/v1" in line] and any("complete" in x for x in again)
    noted = [line for line in said if "/v1" in line]
    assert len(noted) == 1 and f"using {server.url} as the base URL" in noted[0]
    assert result.report.run.identity == plain.report.run.identity
    assert result.report.results[0].samples.scored == 2
    assert not [line for line in bare if "/v1" in line]


async def test_a_top_k_above_the_servers_cap_fails_once_before_the_run(tmp_path: Path) -> None:
    tasks = "[{name: mmlu_kshot_clp, n: 3, num_fewshot: 1}]"
    async with ReferenceServer(max_logprobs=20) as server:
        with pytest.raises(ConfigError, match=r"top-k 100.*max allowed: 20.*--max-logprobs"):
            await run(tmp_path, config(server.url, tasks=tasks))
    assert not (tmp_path / "out").exists()


async def test_a_prompt_longer_than_the_context_fails_before_the_run(tmp_path: Path) -> None:
    tasks = "[{name: arc_easy_kshot_ppl, n: 2, num_fewshot: 5}]"
    async with ReferenceServer(max_model_len=200) as server:
        with pytest.raises(
            ConfigError,
            match=r"longest prompt .* does not fit.*lower the shots with num_fewshot: \d \(about",
        ):
            await run(tmp_path, config(server.url, tasks=tasks))


async def test_a_missing_bos_fails_and_no_preflight_skips_it(tmp_path: Path) -> None:
    async with ReferenceServer(faults="no-bos") as server:
        with pytest.raises(ConfigError, match=r"first scored token .* not the BOS .*'<bos>', id 2"):
            await run(tmp_path, config(server.url))
        result = await run(tmp_path, config(server.url), preflight=False)
    assert result.report.preflight == {} and result.exit_code == 0
    first = msgspec.json.decode(
        (result.run_dir / "m" / "arc_easy_kshot_ppl" / "records.jsonl").read_bytes().split(b"\n")[0]
    )
    assert first["status"] == "ok"  # scored, without the BOS: exactly what the check prevents


async def test_n_above_the_dataset_size_is_said(tmp_path: Path) -> None:
    from runner.fakes import FakeTask, write_data  # the fake task reads one word per sample

    data = tmp_path / "data"
    write_data(data, ["aa", "bb"])
    cfg = parse_config("models: [{endpoint: embedded, name: ref}]\ntasks: [{name: fake_qa, n: 50}]")
    result = await arun_eval(
        cfg, RunOptions(out=tmp_path / "out", data_dir=data), tasks={"fake_qa": FakeTask()}
    )
    assert any("n=50 but the dataset has 2 samples" in w for w in result.warnings)


class _Counting:
    """A real HTTP transport that keeps the path of every request it sends."""

    def __init__(self) -> None:
        self.inner = HttpTransport()
        self.paths: list[str] = []
        self.probes = 0
        """Requests that were the serving checks' probes (not in ``paths``)."""
        self.routes = 0
        """The pre-flight's route probes: an empty body, which the server refuses unread."""

    async def send(self, request: HttpRequest) -> HttpReply:
        body = msgspec.json.decode(request.body) if request.body else None
        if body == {}:
            self.routes += 1
        elif is_probe(body):
            self.probes += 1
        else:
            self.paths.append(request.url.split("//", 1)[1].split("/", 1)[1])
        return await self.inner.send(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_the_checks_cost_the_server_no_request_the_run_does_not_send(
    tmp_path: Path,
) -> None:
    """The context check counts the longest prompt through /tokenize, and the top-k and BOS
    checks' answers are the samples' own: the model routes see exactly the run's requests, and
    the serving checks' probes, which the report counts."""
    tasks = (
        "[{name: arc_easy_kshot_ppl, n: 3, num_fewshot: 1},"
        " {name: mmlu_kshot_clp, n: 2, num_fewshot: 1}]"
    )
    counting = _Counting()
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url, tasks=tasks),  # type: ignore[arg-type]
            RunOptions(out=tmp_path / "out", data_dir=DATA),
            transport_factory=lambda cfg: counting,
        )
        await counting.aclose()
    checks = {(c["check"], c.get("task")): c for c in result.report.preflight["m"]}
    for task in ("arc_easy_kshot_ppl", "mmlu_kshot_clp"):
        assert checks[("context", task)]["outcome"] == "passed"
        assert "counted by /tokenize" in checks[("context", task)]["detail"]
    assert checks[("top_k", "mmlu_kshot_clp")]["outcome"] == "passed"
    assert checks[("bos", "arc_easy_kshot_ppl")]["outcome"] == "passed"
    recorded = 0
    for task in ("arc_easy_kshot_ppl", "mmlu_kshot_clp"):
        lines = (result.run_dir / "m" / task / "records.jsonl").read_bytes().splitlines()
        records = [msgspec.json.decode(line) for line in lines if line]
        assert [r["status"] for r in records] == ["ok"] * len(records)
        recorded += sum(len(r["requests"]) for r in records)
    sent = [p for p in counting.paths if p.startswith("v1/completions")]
    assert recorded > 0 and len(sent) == recorded and counting.routes == 1
    assert counting.probes == result.report.serving["m"]["cost"]["requests"] > 0


async def test_a_wire_log_run_sends_every_request_itself(tmp_path: Path) -> None:
    """With --wire-log every request of the run is in the log: a check's answer is not reused."""
    counting = _Counting()
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url),  # type: ignore[arg-type]
            RunOptions(out=tmp_path / "out", data_dir=DATA, wire_log=True),
            transport_factory=lambda cfg: counting,
        )
        await counting.aclose()
    lines = (result.run_dir / "m" / "arc_easy_kshot_ppl" / "records.jsonl").read_bytes()
    recorded = sum(len(msgspec.json.decode(x)["requests"]) for x in lines.splitlines() if x)
    sent = [p for p in counting.paths if p.startswith("v1/completions")]
    assert len(sent) == recorded + 1  # the BOS check's own request, then the run's


class _Relisting(_Counting):
    """A real transport whose ``/v1/models`` replies are rewritten to ``listing``."""

    def __init__(self, listing: object) -> None:
        super().__init__()
        self.listing = listing

    async def send(self, request: HttpRequest) -> HttpReply:
        reply = await super().send(request)
        if request.url.endswith("/v1/models"):
            body = msgspec.json.encode(self.listing)
            return msgspec.structs.replace(reply, status=200, body=body)
        return reply


async def _relisted(tmp_path: Path, listing: object, model: str = "sieval-reference"):
    relisting = _Relisting(listing)
    async with ReferenceServer() as server:
        try:
            return await arun_eval(
                config(server.url, model=model),  # type: ignore[arg-type]
                RunOptions(out=tmp_path / "out", data_dir=DATA),
                transport_factory=lambda cfg: relisting,
            )
        finally:
            await relisting.aclose()


async def test_a_listing_sieval_cannot_read_is_checked_by_a_first_request(tmp_path: Path) -> None:
    result = await _relisted(tmp_path, {"items": [{"model": "sieval-reference"}], "total": 1})
    model = next(c for c in result.report.preflight["m"] if c["check"] == "model")
    assert model["outcome"] == "passed", model
    assert "a first request of 1 output token" in model["detail"]
    assert "GET /v1/models answered an object with keys items, total, no ids" in model["detail"]


@pytest.mark.parametrize("listing", [{"items": []}, {"data": []}])
async def test_a_listing_sieval_cannot_read_still_refuses_a_wrong_model(
    tmp_path: Path, listing: object
) -> None:
    with pytest.raises(ConfigError, match="does not serve model 'llama'"):
        await _relisted(tmp_path, listing, model="llama")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "listing",
    [
        [{"id": "sieval-reference"}],  # a bare list
        ["sieval-reference"],
        {"data": [{"name": "sieval-reference"}]},
        {"models": [{"id": "sieval-reference"}]},
    ],
)
async def test_other_listing_shapes_are_read(tmp_path: Path, listing: object) -> None:
    result = await _relisted(tmp_path, listing)
    model = next(c for c in result.report.preflight["m"] if c["check"] == "model")
    assert model["outcome"] == "passed" and "is served" in model["detail"], model
    assert result.report.results[0].provenance.served_models == ["sieval-reference"]


async def _counted_run(tmp_path: Path, task: str, n: int) -> tuple[dict[Any, Any], int, int]:
    """A run of ``task`` on the reference server: its pre-run checks by (check, task), the
    requests its records hold, and the completions requests the server saw."""
    counting = _Counting()
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url, tasks=f"[{{name: {task}, n: {n}}}]"),  # type: ignore[arg-type]
            RunOptions(out=tmp_path / "out", data_dir=DATA),
            transport_factory=lambda cfg: counting,
        )
        await counting.aclose()
    checks = {(c["check"], c.get("task")): c for c in result.report.preflight["m"]}
    lines = (result.run_dir / "m" / task / "records.jsonl").read_bytes().splitlines()
    recorded = sum(len(msgspec.json.decode(x)["requests"]) for x in lines if x)
    sent = [p for p in counting.paths if p.startswith("v1/completions")]
    return checks, recorded, len(sent)


async def test_a_token_id_prompt_is_counted_from_its_ids_not_sent(tmp_path: Path) -> None:
    """WikiText's windows are token ids: the context check counts them against the listed
    maximum length; a probe request of a whole window (1,024 prompt tokens on a live vLLM) is
    server work lm-eval does not do."""
    checks, recorded, sent = await _counted_run(tmp_path, "wikitext", 1)
    assert checks[("context", "wikitext")]["outcome"] == "passed"
    assert "counted from its token ids" in checks[("context", "wikitext")]["detail"]
    assert recorded > 0 and sent == recorded


async def test_two_checks_reading_one_sample_send_it_once(tmp_path: Path) -> None:
    """LAMBADA asks for a top-k (is_greedy) and scores a text prompt: the top-k check and the
    BOS check both read its first sample's request; the second uses the first's answer, and the
    run uses it too, so the server sees exactly the run's requests."""
    checks, recorded, sent = await _counted_run(tmp_path, "lambada_openai", 2)
    assert checks[("top_k", "lambada_openai")]["outcome"] == "passed"
    assert checks[("bos", "lambada_openai")]["outcome"] == "passed"
    assert recorded == 2 and sent == recorded
