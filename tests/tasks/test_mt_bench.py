"""MT-Bench judged end to end against the embedded reference server, which answers and judges
(a deterministic judge, ``reference/judge.py``): the judge role required and never the evaluated
model by accident, FastChat's prompts sent, the rating read as FastChat reads it, a broken
verdict counted and never scored, the judge named in every record and in the report, a judge
failing mid-run failing its samples and a resume judging only those."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from runs import DATA, options

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.plan import plan_run
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval, read_records
from sieval.tasks.judging import prompt_hash

N = 3  # questions 81-83: writing


def config(judge: str, *, self_judge: bool = True, n: int = N, extra: str = "") -> Any:
    options_ = "{judge_self: true}" if self_judge else "{}"
    return parse_config(
        f"""
models:
  - {{name: m, endpoint: embedded, kind: chat}}
tasks:
  - {{name: mt_bench, n: {n}, options: {options_}}}
{judge}
{extra}
"""
    )


EMBEDDED_JUDGE = "roles:\n  judge: {name: j, endpoint: embedded, kind: chat}"


def served_judge(url: str, retries: int = 2) -> str:
    return (
        f"roles:\n  judge: {{name: j, endpoint: '{url}', model: sieval-reference, kind: chat, "
        f"retries: {retries}}}"
    )


def _prompts() -> dict[str, dict[str, Any]]:
    path = DATA / "mt_bench" / "judge_prompts.jsonl"
    if not path.is_file():
        pytest.skip(f"benchmark data not found at {path}; set SIEVAL_DATA_DIR")
    return {p["name"]: p for p in map(json.loads, path.read_text().splitlines())}


def test_a_judged_task_without_a_judge_is_refused_before_io() -> None:
    with pytest.raises(ConfigError, match=r"calls a model in the role 'judge', which the config"):
        plan_run(config(""), data_dir=DATA)


def test_the_evaluated_model_judges_only_when_the_task_allows_it() -> None:
    with pytest.raises(ConfigError) as info:
        plan_run(config(EMBEDDED_JUDGE, self_judge=False), data_dir=DATA)
    assert str(info.value).startswith(
        "task 'mt_bench' would be judged by the model it evaluates ('j' serves "
        "'sieval-reference', as 'm' does)"
    )
    allowed = plan_run(config(EMBEDDED_JUDGE), data_dir=DATA)
    assert "mt_bench: the judge 'j' is the evaluated model 'm' (judge_self: true)" in allowed.notes
    # the judge is in the run's identity (another judge is another run)
    assert allowed.inputs["roles"]["judge"]["model"] == "sieval-reference"


async def test_each_turn_is_judged_with_fastchat_s_prompts_and_named(tmp_path: Path) -> None:
    result = await arun_eval(config(EMBEDDED_JUDGE), options(out=tmp_path))
    assert result.exit_code == 0
    records = read_records(result.run_dir / "m" / "mt_bench" / "records.jsonl").records
    prompts = _prompts()
    ratings: list[float] = []
    for record in records.values():
        assert list(record.requests) == ["turn1", "turn2", "judge:turn1", "judge:turn2"]
        one, two = record.requests["judge:turn1"], record.requests["judge:turn2"]
        assert (one.role, one.turn, two.turn) == ("judge", 1, 1)  # sent together
        answers = record.channels["answers"]
        assert one.messages is not None and two.messages is not None
        template = prompts["single-v1"]
        question = record.sample["turns"][0]
        filled = template["prompt_template"].format(question=question, answer=answers[0])
        assert one.messages == [
            {"role": "system", "content": [{"type": "text", "text": template["system_prompt"]}]},
            {"role": "user", "content": [{"type": "text", "text": filled}]},
        ]
        multi = prompts["single-v1-multi-turn"]
        assert two.messages[0]["content"][0]["text"] == multi["system_prompt"]
        filled = multi["prompt_template"].format(
            question_1=question,
            question_2=record.sample["turns"][1],
            answer_1=answers[0],
            answer_2=answers[1],
        )
        assert two.messages[1]["content"][0]["text"] == filled
        # the rating is the reply's [[n]]; the judge is named in the record
        replies = [r.output[0]["text"] for r in (one, two) if r.output]
        parsed = [float(t.rsplit("[[", 1)[1].split("]]")[0]) for t in replies]
        assert record.channels["ratings"] == parsed
        assert record.metrics["turn1_rating"] == parsed[0]
        assert record.metrics["judge_parse_errors"] == 0
        ratings += parsed
        assert record.channels["judge"] == {
            "model": "sieval-reference",
            "fingerprint": "sieval-reference-0.32.0",  # the server's system_fingerprint
            "prompts": {
                name: prompt_hash(prompts[name]["system_prompt"], prompts[name]["prompt_template"])
                for name in ("single-v1", "single-v1-multi-turn")
            },
            "sampling": {"temperature": 0.0, "max_tokens": 2048},
        }
    entry = result.report.results[0]
    assert entry.metrics["score"] == pytest.approx(sum(ratings) / len(ratings))
    assert entry.metrics["ratings"] == 2 * N and entry.metrics["judge_parse_errors"] == 0
    assert set(entry.metrics["by_category"]) == {"writing"}
    judged = [m for m in entry.marks or [] if m.mark == "judged"]
    assert judged and judged[0].why == (
        "scored by the judge 'j' (model 'sieval-reference' at embedded), the evaluated model "
        "itself (judge_self: true); 0 judge replies broke the verdict format and are not scored"
    )


async def test_math_is_judged_against_gpt_4_s_reference_answer(tmp_path: Path) -> None:
    cfg = parse_config(
        "models: [{name: m, endpoint: embedded, kind: chat}]\n"
        "tasks: [{name: mt_bench, samples: ['111'], options: {judge_self: true}}]\n"
        + EMBEDDED_JUDGE
    )
    result = await arun_eval(cfg, options(out=tmp_path))
    record = read_records(result.run_dir / "m" / "mt_bench" / "records.jsonl").records["111"]
    references = {
        r["question_id"]: r["choices"][0]["turns"]
        for r in map(
            json.loads,
            (DATA / "mt_bench" / "reference_answer" / "gpt-4.jsonl").read_text().split("\n")[:-1],
        )
    }
    sent = record.requests["judge:turn2"].messages
    assert sent is not None
    text = sent[1]["content"][0]["text"]
    assert text.startswith("<|The Start of Reference Answer|>")
    assert references[111][1] in text
    assert set(record.channels["judge"]["prompts"]) == {
        "single-math-v1",
        "single-math-v1-multi-turn",
    }


async def test_a_broken_verdict_is_counted_and_never_scored(tmp_path: Path) -> None:
    async with ReferenceServer(port=0, faults="judge-unparseable") as judge:
        result = await arun_eval(config(served_judge(judge.url)), options(out=tmp_path))
    assert result.exit_code == 0  # the samples are answered and judged: the verdicts are bad
    records = read_records(result.run_dir / "m" / "mt_bench" / "records.jsonl").records
    for record in records.values():
        assert record.channels["ratings"] == [None, None]
        assert "turn1_rating" not in record.metrics and "turn2_rating" not in record.metrics
        assert record.metrics["judge_parse_errors"] == 2
    entry = result.report.results[0]
    assert entry.metrics["judge_parse_errors"] == 2 * N and entry.metrics["ratings"] == 0
    assert "score" not in entry.metrics  # no rating, no score: never a 0
    assert any("6 judge replies broke" in m.why for m in entry.marks or [])


async def test_a_judge_failing_mid_run_fails_its_samples_and_a_resume_only_judges(
    tmp_path: Path,
) -> None:
    """The judge's first two requests get a 500 (no retry): the samples they belong to fail,
    none scored; a resume sends only the judgments that failed, the answers (and a judgment
    answered beside a failed one) replayed from the journal."""
    async with ReferenceServer(port=0, faults="500; times=2") as judge:
        first = await arun_eval(
            config(served_judge(judge.url, retries=0)), options(out=tmp_path, wire_log=True)
        )
        unit = first.run_dir / "m" / "mt_bench"
        records = read_records(unit / "records.jsonl").records
        failed = {s for s, r in records.items() if r.status == "failed"}
        assert 1 <= len(failed) <= 2
        for sample in failed:
            assert records[sample].metrics == {}
            assert records[sample].error is not None
            assert records[sample].error["class"] == "TransportError"
        assert first.report.results[0].samples.scored == N - len(failed)
        unanswered = sum(
            records[s].requests[f"judge:{t}"].status != 200
            for s in failed
            for t in ("turn1", "turn2")
        )
        assert unanswered >= 1  # a judgment answered beside a failed one is journaled
        wire = first.run_dir / "m" / "wire.jsonl"
        answered = len(wire.read_text().splitlines())
        judge_wire = first.run_dir / "j" / "wire.jsonl"
        judged = len(judge_wire.read_text().splitlines())
        again = await arun_eval(
            config(served_judge(judge.url, retries=0)),
            options(out=tmp_path, wire_log=True, resume=first.run_dir),
        )
    assert again.exit_code == 0
    assert len(wire.read_text().splitlines()) == answered  # no answer was generated again
    assert len(judge_wire.read_text().splitlines()) == judged + unanswered
    resumed = read_records(unit / "records.jsonl").records
    assert all(r.status == "ok" for r in resumed.values())
    for sample in failed:  # the same answers, judged now
        assert resumed[sample].channels["answers"] == [
            o.output[0]["text"] if o.output else None
            for o in (resumed[sample].requests["turn1"], resumed[sample].requests["turn2"])
        ]
    assert again.report.results[0].samples.scored == N
