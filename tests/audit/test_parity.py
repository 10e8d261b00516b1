"""sieval parity: three passes compared call by call; identical dialects give max |diff| = 0."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from runs import options

from sieval.audit.parity import compare_records, run_parity
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.store.records import Record, RequestRecord

CONFIG = """
models:
  - {name: reference, endpoint: embedded, concurrency_limit: 2}
tasks:
  - {name: arc_easy_kshot_ppl, n: 2, num_fewshot: 1}
  - {name: mmlu_kshot_clp, n: 3, num_fewshot: 1}
  - {name: gsm8k_kshot_base_gen, n: 2, num_fewshot: 1}
"""


def test_two_dialects_on_the_reference_server_are_identical(tmp_path: Path) -> None:
    result = run_parity(
        parse_config(CONFIG),
        ["openai_completions", "vllm_native"],
        options(out=tmp_path),
        warmup=True,
    )
    assert result.dialects == ("openai_completions", "vllm_native", "openai_completions")
    assert result.warmup is not None
    assert result.warmup.run_dir.name == "parity-0-warmup-openai_completions"
    assert [r.run_dir.name for r in result.runs] == [
        "parity-1-openai_completions",
        "parity-2-vllm_native",
        "parity-3-openai_completions",
    ]
    by_task = {t.task: t for t in result.tasks}
    arc = by_task["arc_easy_kshot_ppl"]
    assert arc.versus_b.calls == 2 * 8  # four choices and four unconditional calls per sample
    assert arc.versus_b.input_logprobs > 100
    assert arc.versus_b.max_abs_diff == 0.0 and arc.versus_b.texts_equal
    assert arc.control.calls == arc.adjacent.calls == 16
    assert by_task["mmlu_kshot_clp"].versus_b.top_k_logprobs == 3 * 100
    assert by_task["gsm8k_kshot_base_gen"].versus_b.calls == 2
    assert result.identical
    assert result.to_json()["identical"] is True


def test_two_dialects_on_two_servers_report_their_agreement(tmp_path: Path) -> None:
    from sieval.reference import start_in_thread

    one, two = start_in_thread(port=0), start_in_thread(port=0, seed=1)
    try:
        config = parse_config(
            f"models: [{{name: m, endpoint: '{one.url}', model: sieval-reference}}]\n"
            "tasks: [{name: arc_easy_kshot_ppl, n: 2, num_fewshot: 0}]"
        )
        result = run_parity(
            config,
            ["vllm_native", "sglang_native"],
            options(out=tmp_path),
            endpoints=[one.url, two.url],
        )
        one_dialect = run_parity(
            config,
            ["vllm_native", "vllm_native"],
            options(out=tmp_path / "one"),
            endpoints=[one.url, two.url],
        )
    finally:
        one.stop()
        two.stop()
    # one dialect on two servers: A and its control on the first, B on the second
    used = [json.loads((r.run_dir / "run.json").read_text()) for r in one_dialect.runs]
    assert [u["config"]["models"][0]["endpoint"] for u in used] == [one.url, two.url, one.url]
    assert one_dialect.tasks[0].versus_b.input_logprobs > 50
    (arc,) = result.tasks
    d = arc.versus_b
    assert d.samples == 2 and d.same_prediction == 2
    assert len(d.diffs) == d.input_logprobs > 50
    assert d.quantiles()["max"] == d.max_abs_diff
    stored = result.to_json()["tasks"][0]["versus_b"]
    assert "diffs" not in stored and set(stored["abs_diff_quantiles"]) == {
        "p50",
        "p90",
        "p99",
        "max",
    }
    with pytest.raises(ConfigError, match="two base URLs"):
        run_parity(config, ["vllm_native", "sglang_native"], options(out=tmp_path), endpoints=["x"])


def _record(logprob: float, text: str = " a", gen: str = "x") -> Record:
    tokens = {
        "input": [["<bos>", None, None, None], [text, logprob, None, [[text, logprob]]]],
        "choices": [{"text": gen, "tokens": None}],
    }
    return Record(
        schema_version=1,
        sample_id="s",
        status="ok",
        model="m",
        task="t",
        requests={"r": RequestRecord(prompt="p", tokens=tokens)},
    )


def test_compare_records_measures_logprob_and_text_differences() -> None:
    same = compare_records({"s": _record(-1.0)}, {"s": _record(-1.0)})
    assert (same.calls, same.input_logprobs, same.top_k_logprobs) == (1, 1, 1)
    assert same.max_abs_diff == 0.0 and same.texts_equal
    moved = compare_records({"s": _record(-1.0)}, {"s": _record(-1.25)})
    assert moved.max_abs_diff == pytest.approx(0.25) and moved.texts_equal
    renamed = compare_records({"s": _record(-1.0)}, {"s": _record(-1.0, text=" b")})
    assert not renamed.texts_equal and renamed.mismatches[0].startswith("s/r.input[1]")
    regen = compare_records({"s": _record(-1.0)}, {"s": _record(-1.0, gen="y")})
    assert not regen.texts_equal


def test_compare_records_counts_a_short_reply_as_a_mismatch() -> None:
    a = _record(-1.0)
    b = copy.deepcopy(a)
    b.requests["r"].tokens["input"].pop()
    diff = compare_records({"s": a}, {"s": b})
    assert not diff.texts_equal and "2 vs 1 positions" in diff.mismatches[0]


@pytest.mark.parametrize(
    ("dialects", "needle"),
    [(["openai_completions"], "two different"), (["vllm_native", "vllm_native"], "two different")],
)
def test_parity_needs_two_dialects(dialects, needle) -> None:
    with pytest.raises(ConfigError, match=needle):
        run_parity(parse_config(CONFIG), dialects)


def test_parity_needs_one_model() -> None:
    two = CONFIG.replace("models:\n", "models:\n  - {name: other, endpoint: embedded}\n")
    with pytest.raises(ConfigError, match="one model"):
        run_parity(parse_config(two), ["openai_completions", "vllm_native"])
