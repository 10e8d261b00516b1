"""The results view explains each sample from its record alone: the choices and their scores
under the headline, which was picked and why, the prompt as sent, and the exact bodies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import options

from sieval.results.explain import prompt_text
from sieval.results.view import build_view
from sieval.runner import arun_eval, parse_config
from sieval.store.records import RequestRecord, decode_record

CONFIG = """
models: [{name: ref, endpoint: embedded}]
tasks:
  - {name: arc_easy_kshot_ppl, n: 8, num_fewshot: 2}
  - {name: mmlu_kshot_clp, n: 8, num_fewshot: 1}
  - {name: gsm8k_kshot_base_gen, n: 3, num_fewshot: 1}
"""


@pytest.fixture(scope="module")
async def run(tmp_path_factory: Any) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("view")
    result = await arun_eval(parse_config(CONFIG), options(out=out, run_name="r"))
    return result.run_dir, build_view(result.run_dir)


def records(run_dir: Path, task: str) -> dict[str, dict[str, Any]]:
    """Each record as plain data, its column-wise channels and stats put back."""
    lines = (run_dir / "ref" / task / "records.jsonl").read_bytes().splitlines()
    return {r["sample_id"]: r for r in (msgspec.to_builtins(decode_record(x)) for x in lines)}


async def test_outcomes_follow_the_headline_metric(run: tuple[Path, dict[str, Any]]) -> None:
    run_dir, view = run
    for task, headline in [("arc_easy_kshot_ppl", "acc_norm"), ("mmlu_kshot_clp", "acc")]:
        raw = records(run_dir, task)
        shown = {s["id"]: s["outcome"] for s in view["samples"] if s["task"] == task}
        assert shown == {
            i: ("correct" if r["metrics"][headline] == 1.0 else "wrong") for i, r in raw.items()
        }


async def test_ppl_choices_show_the_acc_norm_score_and_the_pick(
    run: tuple[Path, dict[str, Any]],
) -> None:
    run_dir, view = run
    raw = records(run_dir, "arc_easy_kshot_ppl")
    for sample in (s for s in view["samples"] if s["task"] == "arc_easy_kshot_ppl"):
        record = raw[sample["id"]]
        texts = record["sample"]["choices"]
        sums = [c["logprob_sum"] for c in record["channels"]["choices"]]
        scores = [lp / len(t) for lp, t in zip(sums, texts, strict=True)]
        assert [c["score"] for c in sample["choices"]] == pytest.approx(scores)
        assert [c["text"] for c in sample["choices"]] == texts
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        assert [c["picked"] for c in sample["choices"]] == [i == best for i in range(len(texts))]
        assert [c["gold"] for c in sample["choices"]].index(True) == record["gold"]
        assert sample["why"].startswith(f"picked {'ABCDE'[best]}: the highest log-likelihood per")
        assert sample["prompt"].endswith(f"Answer: {texts[0]}")  # choice:0 as sent


async def test_margins_are_gold_minus_the_best_other_choice(
    run: tuple[Path, dict[str, Any]],
) -> None:
    _, view = run
    (arc,) = [m for m in view["margins"] if m["task"] == "arc_easy_kshot_ppl"]
    samples = [s for s in view["samples"] if s["task"] == "arc_easy_kshot_ppl"]
    assert len(arc["values"]) == len(samples)
    for gap, sample in zip(arc["values"], samples, strict=True):
        assert (gap > 0) == (sample["outcome"] == "correct")


async def test_generation_shows_text_and_extracted_answer(
    run: tuple[Path, dict[str, Any]],
) -> None:
    run_dir, view = run
    raw = records(run_dir, "gsm8k_kshot_base_gen")
    for sample in (s for s in view["samples"] if s["task"] == "gsm8k_kshot_base_gen"):
        channels = raw[sample["id"]]["channels"]
        assert sample["generation"] == channels["text"] and sample["choices"] == []
        strict = channels["strict"]
        assert sample["extracted"] == (None if strict is None else str(strict))
        assert sample["requests"][0]["body"]["prompt"] == sample["prompt"]


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"prompt": "Q: hi"}, "Q: hi"),
        ({"text": "raw"}, "raw"),
        ({"messages": [{"role": "user", "content": "hello"}]}, "user: hello"),
        (
            {"system": "be brief", "messages": [{"role": "user", "content": [{"text": "a"}]}]},
            "system: be brief\nuser: a",
        ),
        ({"contents": [{"role": "user", "parts": [{"text": "x"}, {"text": "y"}]}]}, "user: xy"),
        ({"input": "just text"}, "user: just text"),
    ],
)
def test_prompt_text_of_every_wire_shape(body: dict[str, Any], text: str) -> None:
    assert prompt_text(RequestRecord(body=body)) == text
