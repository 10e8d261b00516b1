"""A reply the dialect refuses (``ContractViolation``) is kept, bounded and redacted, in its call
and its sample's record, so the failure can be read again and re-lifted without ``--wire-log``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from runs import options
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation, TransportError
from sieval.ir.request import Request, Sampling, Scoring
from sieval.model import Model
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval, parse_config
from sieval.transport import Limits
from sieval.transport.refused_reply import KEPT_BYTES, kept_reply

SCORE = Request.completion(
    "The sky is blue.",
    sampling=Sampling(temperature=0.0, max_tokens=1),
    scoring=Scoring(input_logprobs=True, input_top_k=2),
)


@pytest.fixture(scope="module")
async def reference() -> AsyncIterator[ReferenceServer]:
    async with ReferenceServer(port=0) as server:
        yield server


def _model(server: ReferenceServer, fault: str | None) -> Model:
    return Model(
        dialect="openai_completions",
        base_url=server.url,
        model_id=server.model_name,
        headers={"x-sieval-fault": fault} if fault else {},
        limits=Limits(retries=1, backoff_base_s=0.01, backoff_max_s=0.02),
    )


async def test_a_refused_reply_is_kept_and_lifts_to_the_same_refusal(reference) -> None:
    async with _model(reference, "nan") as model:
        call = await model.call(SCORE)
    assert isinstance(call.error, ContractViolation) and call.reply is not None
    assert "NaN" in call.reply and json.loads(call.reply)["choices"]  # the JSON as received
    lowered = lower(model.dialect, call.request, model.model_id)
    headers = {"content-type": "application/json"}
    with pytest.raises(ContractViolation) as again:
        lift(model.dialect, lowered, 200, headers, call.reply.encode())
    assert str(again.value) == str(call.error)


async def test_an_accepted_or_unanswered_reply_keeps_no_bytes(reference) -> None:
    async with _model(reference, None) as model:
        ok = await model.call(SCORE)
    async with _model(reference, "500") as model:
        failed = await model.call(SCORE)
    assert ok.error is None and ok.reply is None
    assert isinstance(failed.error, TransportError) and failed.reply is None


def test_a_long_reply_keeps_its_head_and_tail_and_says_what_it_left_out() -> None:
    body = b"H" * 100_000 + b"M" * 100_000 + b"T" * 100_000
    kept = kept_reply(body)
    head, marker, tail = kept.split("\n")
    assert head == "H" * (KEPT_BYTES * 3 // 4) and tail == "T" * (KEPT_BYTES // 4)
    assert marker == f"[sieval: {len(body) - KEPT_BYTES} of the reply's 300000 bytes left out here]"
    assert kept_reply(b"short") == "short"


def test_a_kept_reply_holds_no_secret_and_shows_bytes_that_are_not_utf8() -> None:
    body = b'{"echo": "sk-live-123", "auth": "Bearer tok9tok9tok9"} \xff'
    kept = kept_reply(body, ["sk-live-123"])
    assert "sk-live-123" not in kept and "tok9" not in kept
    assert kept.endswith(" \ufffd")


async def test_the_record_keeps_the_reply_and_samples_id_shows_it(tmp_path: Path) -> None:
    async with ReferenceServer(port=0, faults="nan") as server:
        config = parse_config(
            f"""
models:
  - {{name: ref, endpoint: "{server.url}", model: {server.model_name}, timeout_s: 5}}
tasks:
  - {{name: arc_easy_kshot_ppl, n: 1, num_fewshot: 0}}
"""
        )
        result = await arun_eval(config, options(out=tmp_path))
    records = (result.run_dir / "ref" / "arc_easy_kshot_ppl" / "records.jsonl").read_text()
    record = json.loads(records.splitlines()[0])
    assert record["error"]["class"] == "ContractViolation"
    replies = [r["reply"] for r in record["requests"].values() if "reply" in r]
    assert replies and all("NaN" in reply for reply in replies)
    shown = CliRunner().invoke(
        app, ["samples", str(result.run_dir), "--id", record["sample_id"]], env={"COLUMNS": "200"}
    )
    assert shown.exit_code == 0, shown.output
    assert "reply, as received and refused:" in shown.output and "NaN" in shown.output
    listed = CliRunner().invoke(app, ["samples", str(result.run_dir)], env={"COLUMNS": "200"})
    assert "as received and refused" not in listed.output  # only a sample shown in full
