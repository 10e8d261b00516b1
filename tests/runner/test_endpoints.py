"""One owner per endpoint: the model entries that reach one server share its budget of requests
in flight and its connections; the process's descriptors are split between the run's servers."""

from __future__ import annotations

from pathlib import Path

from runs import options

from sieval.dialects.registry import get_dialect
from sieval.plan.config import parse_config
from sieval.plan.plan import PlannedModel
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval
from sieval.runner.endpoints import Endpoints, endpoint_key
from sieval.runner.limits import Claim, connection_budgets


def planned(models: str, keys: dict[str, str] | None = None) -> list[PlannedModel]:
    config = parse_config(f"models:\n{models}tasks: [{{name: t}}]")
    return [
        PlannedModel(m, get_dialect(m.dialect_id), api_key=(keys or {}).get(m.label))
        for m in config.models
    ]


def entry(name: str, url: str, limit: int, more: str = "") -> str:
    fields = f"name: {name}, endpoint: '{url}', model: sieval-reference, concurrency_limit: {limit}"
    return f"  - {{{fields}{more}}}\n"


async def test_two_models_on_one_server_share_its_budget(tmp_path: Path) -> None:
    # each request waits 50 ms on the server, so every slot the client allows is taken at once:
    # the server's peak is the budget the client enforces (2 + 4 = 6 when each model had its own)
    async with ReferenceServer(faults="delay; seconds=0.05") as server:
        config = parse_config(
            "concurrency: 64\nmodels:\n"
            + entry("a", server.url, 2)
            + entry("b", f"{server.url}/v1", 4, ", dialect: vllm_native")
            + "tasks: [{name: arc_easy_kshot_ppl, n: 12, num_fewshot: 0}]\n"
        )
        result = await arun_eval(config, options(out=tmp_path))
        peak = server.peak_in_flight
    assert result.exit_code == 0
    assert [r.samples.scored for r in result.report.results] == [12, 12]
    assert peak == 4  # the larger concurrency_limit of the two, never their sum
    said = [w for w in result.warnings if "reach one server" in w]
    assert said == [
        f"models 'a' (2), 'b' (4) reach one server ({server.url}): they share its budget of 4 "
        "requests in flight (the largest concurrency_limit of theirs)"
    ]


async def test_models_on_two_servers_keep_their_own_budgets(tmp_path: Path) -> None:
    async with (
        ReferenceServer(faults="delay; seconds=0.05") as one,
        ReferenceServer(faults="delay; seconds=0.05") as two,
    ):
        config = parse_config(
            "concurrency: 64\nmodels:\n"
            + entry("a", one.url, 2)
            + entry("b", two.url, 3)
            + "tasks: [{name: arc_easy_kshot_ppl, n: 8, num_fewshot: 0}]\n"
        )
        result = await arun_eval(config, options(out=tmp_path))
    assert result.exit_code == 0
    assert (one.peak_in_flight, two.peak_in_flight) == (2, 3)
    assert not [w for w in result.warnings if "reach one server" in w]


def test_an_endpoint_is_scheme_host_port_and_credentials() -> None:
    models = planned(
        "  - {name: a, endpoint: 'http://Host.example', model: m}\n"
        "  - {name: b, endpoint: 'http://host.example:80/v1', model: m, dialect: openai_chat}\n"
        "  - {name: c, endpoint: 'https://host.example', model: m}\n"
        "  - {name: d, endpoint: 'http://host.example:8000', model: m}\n"
        "  - {name: e, endpoint: 'http://host.example', model: m}\n"
        "  - {name: f, endpoint: 'http://u:pw@host.example', model: m}\n"
        "  - {name: g, endpoint: embedded}\n"
        "  - {name: h, endpoint: embedded}\n",
        keys={"e": "sk-other-account"},
    )
    keys = {pm.label: endpoint_key(pm) for pm in models}
    assert keys["a"] == keys["b"]  # one server: two dialects, a /v1 and the default port
    assert len({keys[k] for k in "acdefgh"}) == 7  # scheme, port, key, password, own servers
    assert keys["a"].origin == keys["e"].origin == "http://host.example:80"
    assert "sk-other-account" not in repr(keys["e"])  # the key never shows


def test_the_budget_of_a_shared_endpoint_is_the_largest_limit() -> None:
    endpoints = Endpoints(
        planned(
            "  - {name: a, endpoint: 'http://h:1', model: m, concurrency_limit: 8}\n"
            "  - {name: b, endpoint: 'http://h:2', model: m, concurrency_limit: 5}\n"
            "  - {name: c, endpoint: 'http://h:1', model: m, concurrency_limit: 32}\n"
        ),
        fd_limit=1 << 16,
    )
    assert endpoints["a"] is endpoints["c"] is not endpoints["b"]
    assert (endpoints["a"].budget, endpoints["b"].budget) == (32, 5)
    assert endpoints["a"].pool.connections == 32 and endpoints["a"].labels == ["a", "c"]
    assert endpoints.notes == [
        "models 'a' (8), 'c' (32) reach one server (http://h:1): they share its budget of 32 "
        "requests in flight (the largest concurrency_limit of theirs)"
    ]
    same = Endpoints(
        planned(
            "  - {name: a, endpoint: 'http://h:1', model: m}\n"
            "  - {name: b, endpoint: 'http://h:1', model: m}\n"
        )
    )
    assert same.notes == [
        "models 'a', 'b' reach one server (http://h:1): they share its budget of 32 requests in "
        "flight (their concurrency_limit)"
    ]


def test_the_connection_budget_stays_below_the_open_file_limit() -> None:
    [(connections, note)] = connection_budgets([Claim("model 'ref'", 1000, True)], limit=1024)
    assert connections == (1024 - 64) // 2 == 480
    assert note is not None and "1000" in note and "480 connections" in note
    assert "shared with the embedded server" in note
    assert connection_budgets([Claim("model 'ref'", 1000, False)], limit=4096) == [(1000, None)]


def test_the_servers_of_a_run_share_one_connection_budget() -> None:
    endpoints = Endpoints(
        planned(
            "  - {name: small, endpoint: 'http://h:1', model: m, concurrency_limit: 4}\n"
            "  - {name: a, endpoint: 'http://h:2', model: m, concurrency_limit: 1000}\n"
            "  - {name: b, endpoint: 'http://h:3', model: m, concurrency_limit: 1000}\n"
            "  - {name: a2, endpoint: 'http://h:2', model: m, concurrency_limit: 10}\n"
        ),
        fd_limit=1024,
    )
    given = {label: endpoints[label].pool.connections for label in ("small", "a", "b", "a2")}
    assert given == {"small": 4, "a": 478, "b": 478, "a2": 478}
    assert sum(ep.pool.connections for ep in endpoints.all) <= 1024 - 64
    # the budget of requests stays what the config says; the pool queues the ones above it
    assert endpoints["a"].budget == 1000
    capped = [n for n in endpoints.notes if "open-file limit" in n]
    assert len(capped) == 2 and "shared by 3 servers" in capped[0]
    assert capped[0].startswith("models 'a', 'a2': concurrency_limit 1000 is more connections")
    both = connection_budgets(
        [Claim("model 'x'", 1000, True), Claim("model 'y'", 1000, True)], limit=1024
    )
    assert [c for c, _ in both] == [240, 240]  # 2 descriptors each
    assert "each embedded server holding the other end" in (both[0][1] or "")
    roomy = Endpoints(
        endpoints_models := [pm for ep in endpoints.all for pm in ep.models], fd_limit=1 << 20
    )
    assert [ep.pool.connections for ep in roomy.all] == [4, 1000, 1000]
    assert len(endpoints_models) == 4 and not [n for n in roomy.notes if "open-file" in n]
