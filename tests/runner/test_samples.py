"""The plan's samples (``Samples``): ids find their position, a repeated id is refused, memory
stays flat however many samples there are, and the report's tally over them aggregates exactly as a
list would. Every task's real samples: ``tests/tasks/test_held_samples.py``."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sieval.plan.samples as samples_module
from sieval.plan.samples import DuplicateSampleId, Samples
from sieval.results.report import intervals
from sieval.results.tally import tally_unit
from sieval.store.records import Record, RecordWriter
from sieval.tasks._shared import grouped_means, means
from sieval.tasks.base import Sample, SampleResult


def _synthetic(n: int, shared: str = "") -> Iterator[Sample]:
    rng = random.Random(n)
    for i in range(n):
        yield Sample(
            id=f"q{i}",
            data={
                "fewshot": shared,
                "query": f"Question {i}: which {rng.random()}?",
                "choices": [str(rng.random()) for _ in range(4)],
                "shot_ids": ["s1", "s2"] if shared else [],
            },
            gold=i % 4,
            group=f"g{i % 7}" if i % 3 else None,
        )


def test_shared_fields_are_stored_once_and_read_back_as_one_object() -> None:
    fewshot = "Question: a shot\nAnswer: yes\n\n" * 200  # 6 KB of shots, the same in every sample
    with_shots = Samples(_synthetic(500, fewshot))
    without = Samples(_synthetic(500))
    assert with_shots._size - without._size < 500 * 16  # a reference each, not 6 KB each
    first, last = with_shots[0], with_shots[499]
    assert first.data["fewshot"] == fewshot and first.data["fewshot"] is last.data["fewshot"]
    assert first.data["shot_ids"] == ["s1", "s2"]
    assert list(first.data) == ["fewshot", "query", "choices", "shot_ids"]  # order kept


def test_a_repeated_id_is_refused_even_among_colliding_hashes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(samples_module, "hash", lambda _: 7, raising=False)
    distinct = Samples(_synthetic(300))  # every id has the same hash: positions still exact
    assert [distinct.position(f"q{i}") for i in (0, 151, 299)] == [0, 151, 299]
    assert distinct.position("q300") is None
    twice = [*_synthetic(5), Sample(id="q3", data={}, gold=0)]
    with pytest.raises(DuplicateSampleId) as caught:
        Samples(twice)
    assert caught.value.sample_id == "q3"


def test_select_keeps_the_order_asked() -> None:
    held = Samples(_synthetic(40), spill_bytes=512)
    picked = held.select([30, 2, 17])
    assert [s.id for s in picked] == ["q30", "q2", "q17"]
    assert picked.position("q2") == 1 and picked.position("q3") is None


def test_holding_many_samples_costs_a_few_bytes_each_not_the_samples() -> None:
    n = 60_000
    tracemalloc.start()
    held = Samples(_synthetic(n), spill_bytes=1 << 20)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(held) == n and held[n - 1].id == f"q{n - 1}"
    # as Python objects the samples take ~0.7 KB each (42 MB here); held, the index only
    assert peak < 60 * n, peak


def _records(path: Path, n: int) -> None:
    writer = RecordWriter(path)
    for i in range(n):
        ok = i % 10 != 3
        metrics = {"acc": float(i % 2), "acc_norm": float(i % 3 == 0)} if ok else {}
        error = None if ok else {"class": "ServerError", "message": f"boom {i}"}
        status = "ok" if ok else "failed"
        writer.write(
            Record(
                schema_version=4,
                sample_id=f"q{i}",
                status=status,
                model="m",
                task="t",
                metrics=metrics,
                error=error,
            )
        )
    for i in range(3, n, 10):  # the failed ones, run again by a resume: the newest line wins
        writer.write(
            Record(
                schema_version=4,
                sample_id=f"q{i}",
                status="ok",
                model="m",
                task="t",
                metrics={"acc": 1.0, "acc_norm": 1.0},
            )
        )
    writer.close()


def _tally_peak(path: Path, n: int) -> tuple[int, Any]:
    _records(path, n)
    held = Samples(_synthetic(n), spill_bytes=1 << 20)
    tracemalloc.start()
    tally = tally_unit(path, held)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, tally


def test_the_report_tally_holds_no_record_and_counts_the_latest(tmp_path: Path) -> None:
    small, _ = _tally_peak(tmp_path / "small.jsonl", 20_000)
    n = 50_000
    large, tally = _tally_peak(tmp_path / "large.jsonl", n)
    # what each more sample costs: a few arrays' slots (~30 bytes); a dict of metrics per sample,
    # what it held before, took ~0.3 KB
    assert (large - small) / (n - 20_000) < 40, (small, large)
    assert len(tally.scored) == n and tally.missing == 0 and not tally.failures
    expected_acc = [1.0 if i % 10 == 3 else float(i % 2) for i in range(n)]
    assert [r.metrics["acc"] for _, r in tally.scored] == expected_acc
    assert [s.id for s, _ in tally.scored][:4] == ["q0", "q1", "q2", "q3"]
    assert [s.group for s, _ in tally.scored][:3] == [None, "g1", "g2"]


def test_the_streamed_view_aggregates_exactly_as_a_list(tmp_path: Path) -> None:
    n = 3_000
    path = tmp_path / "records.jsonl"
    _records(path, n)
    tally = tally_unit(path, Samples(_synthetic(n)))
    listed = list(tally.scored)
    assert means(tally.scored) == means(listed)
    assert grouped_means(tally.scored, lambda s: s.group or "") == grouped_means(
        listed, lambda s: s.group or ""
    )
    assert intervals(tally.scored, "group") == intervals(listed, "group")
    values = [r.metrics["acc_norm"] for _, r in listed]
    assert means(listed)["acc_norm"] == sum(values) / len(values)  # the same sum, to the bit


def test_means_adds_in_order_to_the_bit() -> None:
    rng = random.Random(3)
    values = [rng.random() * 10 ** rng.randint(-8, 8) for _ in range(5000)]
    results = [
        (
            Sample(id=str(i), data={}, gold=None),
            SampleResult(prediction=None, gold=None, metrics={"x": v}),
        )
        for i, v in enumerate(values)
    ]
    assert means(results) == {"n": 5000, "x": sum(values) / 5000}
    assert means([]) == {"n": 0}
