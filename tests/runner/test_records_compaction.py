"""A prompt is stored once per sample: long text fields keep only what an earlier request of the
sample (or the unit's template) lacks, and ``expand_requests`` gives back every exact body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from runs import options

from sieval.plan.config import parse_config
from sieval.runner import arun_eval
from sieval.store.records import (
    Record,
    RecordWriter,
    RequestRecord,
    Shared,
    expand_requests,
    read_records,
)

CONTEXT = "".join(f"Question: q{i} is what?\nAnswer: a{i}\n\n" for i in range(40))


def record(sample_id: str, prompts: dict[str, str]) -> Record:
    requests = {
        key: RequestRecord(body={"model": "m", "prompt": text, "max_tokens": 1}, ledger=[])
        for key, text in prompts.items()
    }
    return Record(
        schema_version=4, sample_id=sample_id, status="ok", model="m", task="t", requests=requests
    )


def round_trip(tmp_path: Path, records: list[Record]) -> tuple[dict[str, Record], Shared, bytes]:
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path)
    for r in records:
        writer.write(r)
    writer.close()
    return (
        read_records(path).records,
        Shared.load(path.with_name("shared.jsonl")),
        path.read_bytes(),
    )


def test_the_context_of_every_choice_is_stored_once(tmp_path: Path) -> None:
    first = record(
        "a", {"c0": CONTEXT + "Q: x?\nAnswer: red", "c1": CONTEXT + "Q: x?\nAnswer: blue"}
    )
    other = CONTEXT.replace("q3", "Q3")  # a different k-shot context: only its head is shared
    second = record("b", {f"c{i}": other + f"Q: y?\nAnswer: {w}" for i, w in enumerate("pqrs")})
    seen, shared, raw = round_trip(tmp_path, [first, second])
    for original in (first, second):
        whole = expand_requests(seen[original.sample_id].requests, shared)
        assert {k: r.body for k, r in whole.items()} == {
            k: r.body for k, r in original.requests.items()
        }
    line_b = raw.split(b"\n")[1].decode()
    assert line_b.count("a39") == 1  # the tail of the new context, once for four choices
    assert "q0 is what" not in line_b  # the head, shared with the template, not at all
    stored = json.loads(line_b)
    prefix = stored["requests"]["c1"]["body_prefix"]
    assert prefix == {"prompt": ["c0", len(other) + len("Q: y?\nAnswer: ")]}
    # what is left of each prompt, in request order (records v5: a column of the sample)
    assert stored["requests_columns"]["body.prompt"][1] == "q"


def test_short_fields_and_non_text_fields_are_kept_whole(tmp_path: Path) -> None:
    short = record("a", {"c0": "Q: hi\nA: yes", "c1": "Q: hi\nA: no"})
    seen, _, raw = round_trip(tmp_path, [short])
    assert b"body_prefix" not in raw
    assert seen["a"].requests["c1"].body == {"prompt": "Q: hi\nA: no"}


texts = st.text(alphabet="ab\n", min_size=0, max_size=200)


@settings(max_examples=60, deadline=None)
@given(
    heads=st.lists(texts, min_size=1, max_size=3),
    samples=st.lists(st.lists(st.tuples(st.integers(0, 2), texts), min_size=1, max_size=4),
                     min_size=1, max_size=4),
)  # fmt: skip
def test_expand_gives_back_every_body(
    tmp_path_factory: Any, heads: list[str], samples: Any
) -> None:
    tmp = tmp_path_factory.mktemp("rt")
    records = [
        record(f"s{i}", {f"r{j}": heads[h % len(heads)] * 3 + t for j, (h, t) in enumerate(sample)})
        for i, sample in enumerate(samples)
    ]
    seen, shared, _ = round_trip(tmp, records)
    for original in records:
        whole = expand_requests(seen[original.sample_id].requests, shared)
        assert [r.body for r in whole.values()] == [r.body for r in original.requests.values()]


async def test_a_25_shot_arc_record_holds_its_prompt_once(tmp_path: Path) -> None:
    config = parse_config(
        "models: [{name: ref, endpoint: embedded}]\n"
        "tasks: [{name: arc_easy_kshot_ppl, n: 6, num_fewshot: 25}]\n"
    )
    result = await arun_eval(config, options(out=tmp_path, data_dir=None, run_name="r"))
    unit = result.run_dir / "ref" / "arc_easy_kshot_ppl"
    raw = (unit / "records.jsonl").read_bytes().splitlines()
    shared = Shared.load(unit / "shared.jsonl")
    for line, r in zip(raw, read_records(unit / "records.jsonl").records.values(), strict=True):
        prompts = [q.body["prompt"] for q in expand_requests(r.requests, shared).values()]
        longest = max(len(p) for p in prompts)
        # the whole prompts sent add up to 4 contexts and 4 unconditional ones; stored, the
        # line is well under twice the longest prompt (+ 2 KB for usage, timings, channels)
        assert sum(len(p) for p in prompts) > 3.5 * longest
        assert len(line) < 1.3 * longest + 4000
