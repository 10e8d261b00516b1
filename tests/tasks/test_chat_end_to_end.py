"""The chat tasks and MMLU's other forms end to end on the embedded reference server."""

from __future__ import annotations

from pathlib import Path

import pytest
from runs import options

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.runner import run_eval
from sieval.store.records import Shared, expand_requests, read_records


def run(tmp_path: Path, dialect: str, task: str, n: int = 3, shots: str = ""):
    config = parse_config(
        f"models: [{{name: m, endpoint: embedded, dialect: {dialect}, concurrency_limit: 4}}]\n"
        f"tasks: [{{name: {task}, n: {n}{shots}}}]"
    )
    return run_eval(config, options(out=tmp_path))


def records(result, task: str):
    unit = result.run_dir / "m" / task
    shared = Shared.load(unit / "shared.jsonl")
    return [
        (r, expand_requests(r.requests, shared))
        for r in read_records(unit / "records.jsonl").records.values()
    ]


def test_gsm8k_0shot_gen_through_openai_chat(tmp_path: Path) -> None:
    result = run(tmp_path, "openai_chat", "gsm8k_0shot_gen")
    assert result.exit_code == 0
    (entry,) = result.report.results
    assert entry.samples.scored == 3 and 0.0 <= entry.metrics["exact_match"] <= 1.0
    assert entry.provenance.input_kind == "chat"
    for record, requests in records(result, "gsm8k_0shot_gen"):
        body = requests["gen"].body
        assert body["messages"][0]["role"] == "user"
        assert record.sample["query"] in body["messages"][0]["content"][0]["text"]
        assert body["max_completion_tokens"] == 256 and body["temperature"] == 0.0


def test_mmlu_kshot_clp_through_openai_chat_reads_the_sampled_top_k(tmp_path: Path) -> None:
    # OpenAI's chat wire returns at most 20 alternatives; asked as k + 1, k is at most 19
    result = run(
        tmp_path,
        "openai_chat",
        "mmlu_kshot_clp",
        n=4,
        shots=", num_fewshot: 1, options: {top_k: 19}",
    )
    (entry,) = result.report.results
    assert entry.samples.scored + entry.samples.failed == 4
    assert entry.protocol.startswith("chat: the k-shot prompt as one user message")
    for _, requests in records(result, "mmlu_kshot_clp"):
        body = requests["letter"].body
        assert body["logprobs"] is True and body["top_logprobs"] == 20  # k=19 asked as k+1
        assert body["messages"][0]["role"] == "user"


def test_mmlu_0shot_gen_through_anthropic_messages(tmp_path: Path) -> None:
    result = run(tmp_path, "anthropic_messages", "mmlu_0shot_gen", n=4)
    (entry,) = result.report.results
    assert entry.samples.scored == 4
    assert set(entry.metrics) >= {"acc", "invalid_rate", "by_subject"}
    for record, requests in records(result, "mmlu_0shot_gen"):
        assert requests["answer"].body["max_tokens"] == 8
        assert record.prediction in {"A", "B", "C", "D", "invalid"}


def test_mmlu_kshot_clp_through_sglang_native_scores_the_letters_by_id(tmp_path: Path) -> None:
    result = run(tmp_path, "sglang_native", "mmlu_kshot_clp", n=3, shots=", num_fewshot: 1")
    (entry,) = result.report.results
    assert entry.samples.scored == 3, entry
    assert "no top-k" in entry.protocol
    ids = entry.provenance.token_ids
    assert {" A", " B", " C", " D"} <= set(ids)
    for record, requests in records(result, "mmlu_kshot_clp"):
        params = requests["letter"].body
        assert params["token_ids_logprob"] == list(dict.fromkeys(params["token_ids_logprob"]))
        assert set(params["token_ids_logprob"]) >= {ids[" A"], ids[" B"]}
        assert params.get("top_logprobs_num", 0) == 0
        letters = record.channels["letter_logprobs"]
        assert set(letters) == {"A", "B", "C", "D"}


def test_a_chat_task_on_a_completion_wire_is_refused_naming_the_dialects_that_can(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as info:
        run(tmp_path, "openai_completions", "gsm8k_0shot_gen")
    message = str(info.value)
    assert "gsm8k_0shot_gen needs chat" in message and "openai_chat" in message
    assert "anthropic_messages" in message
    assert not tmp_path.exists() or not any(tmp_path.iterdir())
