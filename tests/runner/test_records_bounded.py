"""A record keeps at most ``STORED_TEXT_CHARS`` of a text (``records/bounded.py``): the sample is
scored on the whole answer, its record line stays bounded (a 500 MB answer was stored whole)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
from runs import options

from sieval.ir.response import Response
from sieval.runner import arun_eval
from sieval.store.records import STORED_TEXT_CHARS, bounded_text, stored_channels
from sieval.tasks.base import SampleResult
from sieval.transport import FakeTransport, HttpReply, HttpRequest, json_reply

from .fakes import FakeTask, answer, write_data
from .test_budget import _fake_config


class RawText(FakeTask):
    """FakeTask, its channel the answer as it came (a generation task's ``text``)."""

    def score(self, sample: Any, responses: Mapping[str, Response], *args: Any) -> SampleResult:
        scored = super().score(sample, responses, *args)
        raw = responses["r0"].choices[0].text
        return SampleResult(
            prediction=scored.prediction,
            gold=scored.gold,
            metrics=scored.metrics,
            channels={"text": raw},
        )


def test_a_short_text_is_kept_whole_and_the_same_object() -> None:
    channels = {"text": "x" * 100, "rows": [{"a": "b"}], "n": 3}
    assert stored_channels(channels) is channels
    assert bounded_text("abc", limit=3) == "abc"


def test_a_long_text_keeps_its_head_and_tail_and_says_what_was_cut() -> None:
    text = "h" * 600 + "m" * 1000 + "t" * 400
    kept = bounded_text(text, limit=1000)
    assert kept.startswith("h" * 600 + "m" * 150) and kept.endswith("m" * 0 + "t" * 250)
    assert "[sieval: 1,000 of the text's 2,000 characters left out here]" in kept
    long = "y" * (STORED_TEXT_CHARS + 10)
    stored = stored_channels({"text": long, "nested": [long, 1], "short": "s"})
    assert len(stored["text"]) < STORED_TEXT_CHARS + 100 and stored["short"] == "s"
    assert stored["nested"][0] == stored["text"] and stored["nested"][1] == 1


async def test_a_huge_answer_is_scored_whole_and_stored_bounded(tmp_path: Path) -> None:
    """A 3 Mi-character answer (under the 64 MiB cap) that ends with the right word: scored right
    on the whole text, stored as its head and tail, the record line under 1.5 Mi characters."""
    write_data(tmp_path / "data", ["aa"])

    def handler(request: HttpRequest) -> HttpReply:
        status, data = answer(request.url, request.body)
        if "choices" in data:
            data["choices"][0]["text"] = " " * (3 * 2**20) + "AA"
        return json_reply(data, status=status)

    result = await arun_eval(
        _fake_config(1),
        options(out=tmp_path / "out", data_dir=tmp_path / "data"),
        tasks={"fake_qa": RawText()},
        transport_factory=lambda cfg: FakeTransport(handler),
    )
    assert result.report.results[0].samples.scored == 1
    line = (result.run_dir / "m" / "fake_qa" / "records.jsonl").read_bytes()
    assert len(line) < 1.5 * 2**20
    record = msgspec.json.decode(line.splitlines()[0])
    assert record["metrics"] == {"acc": 1.0}  # scored on the whole text
    stored = record["channels"]["text"]
    assert stored.endswith(" AA") and "characters left out here" in stored
