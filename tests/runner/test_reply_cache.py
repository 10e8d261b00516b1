"""The opt-in reply cache (``--cache DIR``, issue 41): a second identical run is answered from the
cache, with the same figures, its hits counted and named in the report; the same body to a
server whose numerics differ is never answered from it; without a serving fingerprint nothing is
cached, and the run says so. The servers are sieval's reference server (the runs) and a fake
transport (the key's branches: which replies are kept, which are served)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
from runs import DATA
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.runner.reply_cache import ReplyCache
from sieval.serving.fingerprint import Fingerprint
from sieval.transport import FakeTransport, HttpReply, HttpRequest, json_reply


def sieval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    return result.exit_code, " ".join(result.output.split())


def _run(tmp_path: Path, cache: Path, *more: str) -> dict:  # type: ignore[type-arg]
    out = tmp_path / f"runs{len(list(tmp_path.glob('runs*')))}"
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "arc_easy,gsm8k_kshot_base_gen",
        "--limit", "3", "--data-dir", str(DATA), "--cache", str(cache), "--out", str(out), *more,
    )  # fmt: skip
    assert code == 0, said
    (run,) = out.iterdir()
    report: dict = json.loads((run / "report.json").read_text())  # type: ignore[type-arg]
    report["said"] = said
    return report


def test_a_second_run_is_answered_from_the_cache(tmp_path: Path) -> None:
    first = _run(tmp_path, tmp_path / "cache")
    second = _run(tmp_path, tmp_path / "cache")
    sent = first["timings"]["requests"]
    assert first["cache"]["sieval-reference"] == {
        "dir": str(tmp_path / "cache"), "hits": 0, "sent": sent, "kept": sent,
    }  # fmt: skip
    assert second["cache"]["sieval-reference"]["hits"] == second["timings"]["requests"] == sent
    assert second["cache"]["sieval-reference"]["sent"] == 0
    line = f"sieval-reference: {sent} of {sent} replies from the cache, 0 sent"
    assert any(line in w for w in second["warnings"]) and line in second["said"]
    figures = [{r["task"]: r["metrics"] for r in rep["results"]} for rep in (first, second)]
    assert figures[0] == figures[1]


def test_without_a_fingerprint_nothing_is_cached(tmp_path: Path) -> None:
    report = _run(tmp_path, tmp_path / "cache", "--serving-checks", "off")
    assert "cache" not in report and not (tmp_path / "cache").exists()
    assert any("--cache is not used for sieval-reference" in w for w in report["warnings"])


async def test_a_numerics_change_is_another_key(tmp_path: Path) -> None:
    sent: list[bytes] = []

    def answer(request: HttpRequest) -> HttpReply:
        sent.append(request.body or b"")
        if b"refuse" in (request.body or b""):
            return json_reply({"error": {"message": "no"}}, status=400)
        return json_reply({"text": f"reply {len(sent)}"})

    before = Fingerprint(engine="vllm", version="0.32.0", dialect="openai_completions",
                         digest="sha256:aaaa")  # fmt: skip
    after = msgspec.structs.replace(before, digest="sha256:bbbb")
    noisy = msgspec.structs.replace(before, noise=0.5)  # repeat noise is not numerics
    request = HttpRequest(url="http://h:1/v1/completions", method="POST", headers={}, body=b"{1}")
    cache = ReplyCache(FakeTransport(answer), tmp_path, before)
    one = await cache.send(request)
    again = await ReplyCache(FakeTransport(answer), tmp_path, noisy).send(request)
    assert again.body == one.body and len(sent) == 1  # served, not sent
    other = await ReplyCache(FakeTransport(answer), tmp_path, after).send(request)
    assert len(sent) == 2 and other.body != one.body  # the changed numerics sent it again
    body = msgspec.structs.replace(request, body=b"{2}")
    await cache.send(body)
    assert len(sent) == 3  # another body, another key
    refused = msgspec.structs.replace(request, body=b"refuse")
    for _ in range(2):
        assert (await cache.send(refused)).status == 400
    assert len(sent) == 5 and cache.kept == 2  # a refusal is never kept
