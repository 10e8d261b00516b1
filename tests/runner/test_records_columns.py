"""Records v5: what every request of a sample has is stored once (a shared finish list) or as a
column (``usage`` and ``timings`` keys), channels that are lists of like dicts as dicts of lists;
every reader gets back the ``Record`` the engine built, and the report counts the same."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sieval.plan.samples import Samples
from sieval.results.tally import finish_counts, tally_unit
from sieval.store.records import (
    Record,
    RecordWriter,
    RequestRecord,
    Shared,
    decode_record,
    expand_requests,
    latest_at,
    read_records,
)
from sieval.tasks.base import Sample

V4 = Path(__file__).parents[1] / "fixtures" / "runs" / "v4-cea26a8"
LEDGER = [{"leaf": "input.completion.text", "outcome": "consumed", "path": "prompt"}]


def request(prompt: str = "Question: q?\nAnswer: a", **fields: Any) -> RequestRecord:
    fields.setdefault("ledger", LEDGER)
    fields.setdefault("status", 200)
    return RequestRecord(body={"model": "m", "prompt": prompt, "max_tokens": 1}, **fields)


def answered(input_tokens: int, total_s: float, finish: list[str], **fields: Any) -> RequestRecord:
    usage = {"input_tokens": input_tokens, "output_tokens": 1}
    return request(usage=usage, timings={"total_s": total_s}, finish=finish, **fields)


def record(requests: dict[str, RequestRecord], channels: dict[str, Any] | None = None) -> Record:
    return Record(
        schema_version=5,
        sample_id="s",
        status="ok",
        model="m",
        task="t",
        requests=requests,
        channels=channels or {},
        metrics={"acc": 1.0},
    )


def write(path: Path, records: list[Record]) -> list[bytes]:
    writer = RecordWriter(path)
    for r in records:
        writer.write(r)
    writer.close()
    return path.read_bytes().splitlines()


def whole(decoded: Record, shared: Shared) -> Record:
    return msgspec.structs.replace(decoded, requests=expand_requests(decoded.requests, shared))


def assert_round_trip(tmp_path: Path, original: Record, *before: Record) -> dict[str, Any]:
    """``original`` written (after the records ``before`` it, in the same file), then read back
    both ways, is ``original``, and exactly what its plain encoding (every field in its request,
    as version 1 wrote it) decodes to: field order and number types included, the bytes are
    compared. Returns its line as plain JSON."""
    path = tmp_path / "records.jsonl"
    line = write(path, [*before, original])[-1]
    shared = Shared.load(path.with_name("shared.jsonl"))
    plain = msgspec.json.encode(decode_record(msgspec.json.encode(original)))
    for decoded in (decode_record(line), read_records(path).records[original.sample_id]):
        back = whole(decoded, shared)
        assert back == original
        assert msgspec.json.encode(back) == plain
    stored: dict[str, Any] = json.loads(line)
    return stored


CHOICES = [request(f"Question: q?\nAnswer: {w}") for w in ("red", "blue", "green")]


def stats(requests: list[RequestRecord], *fields: dict[str, Any]) -> dict[str, RequestRecord]:
    return {
        f"choice:{i}": msgspec.structs.replace(r, **f)
        for i, (r, f) in enumerate(zip(requests, fields, strict=True))
    }


USAGE = {"input_tokens": 120, "output_tokens": 1}
REQUESTS = {
    "all stats equal": stats(CHOICES, *[{"usage": USAGE, "timings": {"total_s": 0.01}}] * 3),
    "stats differ": stats(
        CHOICES,
        {"usage": {"input_tokens": 7, "output_tokens": 1}, "timings": {"total_s": 0.5}},
        {"usage": {"input_tokens": 8, "output_tokens": 1}, "timings": {"total_s": 0.25}},
        {
            "usage": {"input_tokens": 9, "output_tokens": 1, "cached_tokens": 3},
            "timings": {"total_s": 0.125, "attempts": 2.0},
        },
    ),
    "a failed request beside answered ones": stats(
        CHOICES,
        {"usage": USAGE, "timings": {"total_s": 0.5}, "finish": ["length"]},
        {
            "timings": {"total_s": 2.0},
            "status": None,
            "error": {"class": "TransportTimeout", "message": "read timed out"},
        },
        {"usage": USAGE, "timings": {"total_s": 0.5}, "finish": ["length"]},
    ),
    "finish lists differ": stats(
        CHOICES,
        {"usage": USAGE, "finish": ["length"]},
        {"usage": USAGE, "finish": ["stop:empty"]},
        {"usage": USAGE, "finish": ["length", "stop"]},
    ),
    "key orders differ": stats(
        CHOICES,
        {"usage": {"input_tokens": 1, "output_tokens": 2}},
        {"usage": {"output_tokens": 2, "input_tokens": 1}},
        {"usage": {"input_tokens": 1, "output_tokens": 2}},
    ),
    "retried requests": stats(  # the engine writes attempts as an int; it decodes as a float
        CHOICES, *[{"usage": USAGE, "timings": {"total_s": 0.5, "attempts": 2}}] * 3
    ),
    "a single request": {"gen": answered(120, 0.5, ["stop"])},
    "no requests": {},
}


@pytest.mark.parametrize("case", REQUESTS)
def test_requests_read_back_as_they_were(tmp_path: Path, case: str) -> None:
    assert_round_trip(tmp_path, record(REQUESTS[case]))


ROWS = [{"logprob_sum": -1.5, "n_tokens": 2}, {"logprob_sum": -0.25, "n_tokens": 1}]
TOP = [{"text": "a", "top": [["a", -0.1], ["b", -2.0]]}, {"text": "b", "top": [["b", -0.3]]}]
CHANNELS: dict[str, tuple[dict[str, Any], list[str]]] = {
    # case: (the channels, those stored column-wise)
    "lists of dicts with the same keys": (
        {"choices": ROWS, "unconditional": ROWS[::-1]},
        ["choices", "unconditional"],
    ),
    "dicts with other keys": ({"choices": [ROWS[0], {**ROWS[1], "is_greedy": True}]}, []),
    "keys in another order": ({"choices": [ROWS[0], {"n_tokens": 1, "logprob_sum": 0.0}]}, []),
    "lists of non-dicts": ({"letter_logprobs": [-0.5, -1.0], "tokens": [["a", -0.1]] * 2}, []),
    "a dict beside a non-dict": ({"choices": [ROWS[0], 3]}, []),
    "nested values": ({"choices": TOP, "text": "a"}, ["choices"]),
    "an empty list": ({"choices": []}, []),
    "a one-element list": ({"choices": ROWS[:1]}, []),
    "dicts with no keys": ({"choices": [{}, {}, {}]}, []),
    "not lists": ({"text": "The answer is 4.", "letter_logprobs": {"A": -0.5}}, []),
}


@pytest.mark.parametrize("case", CHANNELS)
def test_channels_read_back_as_they_were(tmp_path: Path, case: str) -> None:
    channels, columnar = CHANNELS[case]
    stored = assert_round_trip(tmp_path, record(REQUESTS["stats differ"], channels))
    assert stored.get("channels_columns", []) == columnar
    for name, value in stored["channels"].items():
        if name not in columnar:
            assert value == channels[name]  # written as it is


def test_the_layout_is_what_the_docstring_says(tmp_path: Path) -> None:
    requests = {
        "choice:0": answered(76, 0.013562, ["length"]),
        "choice:1": answered(74, 0.01342, ["length"]),
        "uncond:0": answered(31, 0.017099, ["length"]),
    }
    requests["uncond:0"].timings["first_byte_s"] = 0.01  # only one request has it: it stays
    channels = {"choices": ROWS, "text": "x"}
    stored = assert_round_trip(tmp_path, record(requests, channels))
    assert stored["requests_common"] == {
        "ledger": "L0",
        "body_ref": "B0",
        "status": 200,
        "finish": ["length"],
    }
    assert stored["requests_columns"] == {
        "usage.input_tokens": [76, 74, 31],
        "usage.output_tokens": 1,
        "timings.total_s": [0.013562, 0.01342, 0.017099],
    }
    assert [set(r) for r in stored["requests"].values()] == [
        {"body"},
        {"body"},
        {"body", "timings"},
    ]
    assert stored["requests"]["uncond:0"]["timings"] == {"first_byte_s": 0.01}
    assert stored["channels_columns"] == ["choices"]
    assert stored["channels"] == {
        "choices": {"logprob_sum": [-1.5, -0.25], "n_tokens": [2, 1]},
        "text": "x",
    }


def test_differing_finish_lists_stay_in_their_requests(tmp_path: Path) -> None:
    stored = assert_round_trip(tmp_path, record(REQUESTS["finish lists differ"]))
    assert "finish" not in stored["requests_common"]
    assert [r["finish"] for r in stored["requests"].values()] == [
        ["length"],
        ["stop:empty"],
        ["length", "stop"],
    ]


def test_requests_that_all_have_no_finish_share_none(tmp_path: Path) -> None:
    stored = assert_round_trip(tmp_path, record(REQUESTS["all stats equal"]))
    assert stored["requests_common"] == {"ledger": "L0", "body_ref": "B0", "status": 200}
    assert stored["requests_columns"] == {
        "usage.input_tokens": 120,
        "usage.output_tokens": 1,
        "timings.total_s": 0.01,
    }
    assert all(set(r) == {"body"} for r in stored["requests"].values())


def test_a_single_request_keeps_everything_in_it(tmp_path: Path) -> None:
    stored = assert_round_trip(tmp_path, record(REQUESTS["a single request"]))
    assert "requests_common" not in stored and "requests_columns" not in stored
    assert stored["requests"]["gen"]["usage"] == {"input_tokens": 120, "output_tokens": 1}


def test_a_failed_requests_stats_are_not_columns(tmp_path: Path) -> None:
    stored = assert_round_trip(tmp_path, record(REQUESTS["a failed request beside answered ones"]))
    # every request has total_s; only the answered ones have usage and finish
    assert stored["requests_columns"] == {"timings.total_s": [0.5, 2.0, 0.5]}
    assert [r.get("usage") for r in stored["requests"].values()] == [USAGE, None, USAGE]
    assert "finish" not in stored["requests_common"]


def choices(sample_id: str, words: tuple[str, ...], max_tokens: tuple[int, ...]) -> Record:
    requests = {
        f"choice:{i}": msgspec.structs.replace(
            answered(76, 0.5, ["length"], prompt=f"Question: q?\nAnswer: {w}"),
            body={"model": "m", "prompt": f"Question: q?\nAnswer: {w}", "max_tokens": n},
        )
        for i, (w, n) in enumerate(zip(words, max_tokens, strict=True))
    }
    return msgspec.structs.replace(record(requests), sample_id=sample_id)


def test_the_text_left_of_each_body_is_a_column(tmp_path: Path) -> None:
    first = choices("a", ("red", "blue", "green"), (1, 1, 1))
    later = choices("b", ("pink", "grey", "teal"), (2, 3, 2))
    path = tmp_path / "records.jsonl"
    lines = write(path, [first, later])
    shared = Shared.load(path.with_name("shared.jsonl"))
    for original, line in zip((first, later), lines, strict=True):
        assert whole(decode_record(line), shared) == original
        assert whole(read_records(path).records[original.sample_id], shared) == original
    assert "body.prompt" not in json.loads(lines[0])["requests_columns"]  # choice:0: the template
    stored = json.loads(lines[1])
    assert stored["requests_columns"]["body.prompt"] == [
        "Question: q?\nAnswer: pink",
        "Question: q?\nAnswer: grey",
        "Question: q?\nAnswer: teal",
    ]
    # a field that is not text stays in the body (a column of lists would read as values)
    bodies = [r["body"] for r in stored["requests"].values()]
    assert bodies == [{"max_tokens": 2}, {"max_tokens": 3}, {"max_tokens": 2}]
    same = choices("c", ("pink", "grey", "teal"), (1, 1, 1))
    (line,) = write(tmp_path / "c.jsonl", [first, same])[1:]
    assert not any("body" in r for r in json.loads(line)["requests"].values())


def test_a_request_with_no_body_keeps_the_others_bodies(tmp_path: Path) -> None:
    refused = RequestRecord(prompt="Question: q?\nAnswer: blue", error={"class": "Refused"})
    first = record({"choice:0": answered(76, 0.5, ["length"]), "choice:1": refused})
    other = {"choice:0": answered(76, 0.5, ["length"], prompt="Question: q?\nAnswer: pink")}
    later = msgspec.structs.replace(record({**other, "choice:1": refused}), sample_id="t")
    path = tmp_path / "records.jsonl"
    lines = write(path, [first, later])
    stored = json.loads(lines[1])
    assert "requests_columns" not in stored
    assert stored["requests"]["choice:0"]["body"] == {"prompt": "Question: q?\nAnswer: pink"}
    assert stored["requests"]["choice:1"]["prompt"] == "Question: q?\nAnswer: blue"
    shared = Shared.load(path.with_name("shared.jsonl"))
    assert whole(decode_record(lines[1]), shared) == later


usage_keys = ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens")
timing_keys = ("total_s", "first_byte_s", "attempts")
finishes = st.lists(st.sampled_from(["length", "stop", "stop:empty", ""]), max_size=2)


@st.composite
def requests(draw: Any) -> dict[str, RequestRecord]:
    out: dict[str, RequestRecord] = {}
    for i in range(draw(st.integers(2, 5))):  # 0 and 1: REQUESTS above
        usage = {k: draw(st.integers(0, 3)) for k in usage_keys if draw(st.booleans())}
        timings = {
            k: draw(st.sampled_from([0.5, 0.25, 2])) for k in timing_keys if draw(st.booleans())
        }
        if draw(st.booleans()):  # another order
            usage = dict(reversed(usage.items()))
        made = request(
            # a long shared head (stored once, ``body_prefix``) or a short text, and a tail
            draw(st.sampled_from(["Question: q?\n" * 6, "b", ""]))
            + draw(st.text("ab", max_size=3)),
            usage=usage,
            timings=timings,
            finish=draw(finishes),
            status=draw(st.sampled_from([200, 500, None])),
        )
        body = draw(st.sampled_from(["as is", "as is", "as is", "other fields", "none"]))
        if body == "other fields":  # a field that is not text, another model
            extra = {"max_tokens": draw(st.integers(1, 2)), "stop": ["\n"]}
            made = msgspec.structs.replace(made, body={**(made.body or {}), **extra, "model": "n"})
        elif body == "none":  # refused before lowering: the prompt instead of a body
            made = msgspec.structs.replace(made, body=None, prompt="p")
        out[f"r{i}"] = made
    return out


values = st.one_of(st.integers(0, 2), st.floats(-2, 0), st.text(max_size=2), st.none())
rows = st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3)
like_rows = st.lists(st.sampled_from(["a", "b", "c"]), unique=True, min_size=1).flatmap(
    lambda keys: st.lists(st.fixed_dictionaries({k: values for k in keys}), min_size=2, max_size=4)
)
channel = st.one_of(like_rows, st.lists(rows, max_size=4), st.lists(values, max_size=3), values)


@settings(max_examples=300, deadline=None)
@given(
    requests=requests(),
    channels=st.dictionaries(st.sampled_from(["x", "y"]), channel),
    before=st.lists(requests(), min_size=1, max_size=2),  # what the template holds varies
)
def test_any_sample_reads_back_as_it_was(
    tmp_path_factory: Any,
    requests: dict[str, RequestRecord],
    channels: dict[str, Any],
    before: list[dict[str, RequestRecord]],
) -> None:
    earlier = [msgspec.structs.replace(record(r), sample_id=f"e{i}") for i, r in enumerate(before)]
    tmp = tmp_path_factory.mktemp("rt")
    assert_round_trip(tmp, record(requests, channels), *earlier)


def v4_lines(task: str) -> list[bytes]:
    return (V4 / "reference" / task / "records.jsonl").read_bytes().splitlines()


def as_v5(tmp_path: Path) -> Path:
    """A copy of the v4 run whose records the v5 writer wrote again (the same samples)."""
    target = tmp_path / "v5"
    shutil.copytree(V4, target)
    for unit in (target / "reference").iterdir():
        shared = Shared.load(unit / "shared.jsonl")
        records = read_records(unit / "records.jsonl").records.values()
        (unit / "records.jsonl").unlink()
        (unit / "shared.jsonl").unlink()
        write(
            unit / "records.jsonl",
            [msgspec.structs.replace(whole(r, shared), schema_version=5) for r in records],
        )
    return target


def test_a_v5_line_is_smaller_than_the_v4_line_of_the_same_record(tmp_path: Path) -> None:
    v5 = as_v5(tmp_path)
    old = v4_lines("arc_easy_kshot_ppl")
    new = (v5 / "reference" / "arc_easy_kshot_ppl" / "records.jsonl").read_bytes().splitlines()
    assert len(old) == len(new) == 12
    assert all(len(b) < len(a) for a, b in zip(old, new, strict=True))
    assert sum(map(len, new)) < 0.8 * sum(map(len, old))
    stored = [json.loads(line) for line in new]
    shared_finish = [s for s in stored if "finish" in s["requests_common"]]
    assert 0 < len(shared_finish) < len(stored)  # the fixture has samples of both kinds
    for s in stored:
        assert set(s["requests_columns"]) - {"body.prompt"} == {
            "usage.input_tokens",
            "usage.output_tokens",
            "timings.total_s",
        }
        assert s["requests_columns"]["usage.output_tokens"] == 1
        assert len(s["requests_columns"]["usage.input_tokens"]) == len(s["requests"]) == 8
        assert not any({"usage", "timings"} & set(r) for r in s["requests"].values())
        if "body.prompt" in s["requests_columns"]:  # every request's prompt differs
            assert not any("body" in r for r in s["requests"].values())
        has_finish = ["finish" in r for r in s["requests"].values()]
        assert has_finish == [s not in shared_finish] * 8
        assert s["channels_columns"] == ["choices", "unconditional"]
        assert set(s["channels"]["choices"]) == {"logprob_sum", "n_tokens", "n_chars", "norm_chars"}
        assert all(len(v) == 4 for v in s["channels"]["choices"].values())
    assert sum("body.prompt" in s["requests_columns"] for s in stored) == 11  # not the first
    gsm8k = [json.loads(line) for line in v4_lines("gsm8k_kshot_base_gen")]
    assert all(len(s["requests"]) == 1 for s in gsm8k)  # one request: nothing to factor


def test_the_report_counts_the_same_finishes_from_v4_and_v5_records(tmp_path: Path) -> None:
    v5 = as_v5(tmp_path)
    stored = {r["task"]: r for r in json.loads((V4 / "report.json").read_text())["results"]}
    for task, entry in stored.items():
        counts = []
        for run in (V4, v5):
            path = run / "reference" / task / "records.jsonl"
            seen = read_records(path).records
            samples = Samples(Sample(id=i, data={}, gold=None) for i in seen)
            counts.append(finish_counts(tally_unit(path, samples).finishes))
            # what the streaming decoder counts is each whole record's finish lists
            outcomes = [o for _, o in latest_at(path, samples.position, len(samples))]
            assert [list(o.finishes()) for o in outcomes] == [
                [r.finish for r in seen[o.sample_id].requests.values()] for o in outcomes
            ]
        expected = (entry["finish_reasons"], entry["empty_answers"])
        assert counts == [expected, expected]  # as the v4 code counted them
    assert stored["arc_easy_kshot_ppl"]["empty_answers"] > 0
