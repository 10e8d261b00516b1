"""A task file's ``metric: judge`` (issue 38's judge scorer for the no-code free-form family):
the judge role asked, after the generation, whether each answer equals the reference; its verdict
is the metric, a reply without one a judge_parse_error counted and never scored; the judge named
in every record. End to end on the embedded reference server, which answers and judges."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from runs import options

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.plan import plan_run
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval, read_records
from sieval.tasks.catalogue import registry
from sieval.tasks.judging import prompt_hash
from sieval.tasks.scorers import JUDGE_PROMPT

ROWS = [
    {"q": "What is the capital of France?", "a": "Paris is the capital of France"},
    {"q": "Name the largest planet.", "a": "Jupiter is the largest planet"},
    {"q": "What colour is the sky?", "a": "The sky is blue"},
]

TASK = """
task: qa_judged
dataset_path: json
dataset_kwargs: {data_files: {test: rows.jsonl}}
test_split: test
doc_to_text: "Question: {{q}}\\nAnswer:"
doc_to_target: a
generation_kwargs: {until: ["\\n"], max_gen_toks: 32}
metric_list: [{metric: judge}, {metric: exact_match}]
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "qa.yaml").write_text(textwrap.dedent(TASK).lstrip())
    return tmp_path


def config(folder: Path, judge: str, self_judge: bool = True) -> Any:
    opts = "{judge_self: true}" if self_judge else "{}"
    return parse_config(
        f"""
models:
  - {{name: m, endpoint: embedded, kind: completion}}
tasks:
  - {{name: qa_judged, options: {opts}}}
{judge}
""",
    )


EMBEDDED = "roles:\n  judge: {name: j, endpoint: embedded, kind: chat}"


def test_the_judge_is_required_and_never_the_model_by_accident(folder: Path) -> None:
    with pytest.raises(ConfigError, match=r"calls a model in the role 'judge'"):
        plan_run(config(folder, ""), data_dir=folder, tasks=registry([folder]))
    with pytest.raises(ConfigError, match=r"would be judged by the model it evaluates"):
        plan_run(
            config(folder, EMBEDDED, self_judge=False), data_dir=folder, tasks=registry([folder])
        )
    task = registry([folder])["qa_judged"]
    assert task.roles == ("judge",) and not task.static
    assert task.defaults["judge_self"] is False


async def test_each_answer_is_judged_and_the_judge_named(folder: Path, tmp_path: Path) -> None:
    result = await arun_eval(
        config(folder, EMBEDDED),
        options(out=tmp_path / "run", data_dir=folder),
        tasks=registry([folder]),
    )
    assert result.exit_code == 0
    records = read_records(result.run_dir / "m" / "qa_judged" / "records.jsonl").records
    assert len(records) == 3
    for record in records.values():
        judge = record.requests["judge:judge"]
        assert judge.messages is not None and judge.role == "judge"
        sent = judge.messages[0]["content"][0]["text"]
        answer = record.channels["extracted"]["none"]
        assert f"[Submission]: {answer}\n" in sent  # the extracted answer, as the judge saw it
        assert f"[Criterion]: {record.gold}\n" in sent
        verdict = record.channels["verdicts"]["judge"]
        assert verdict in ("C", "I")
        assert record.metrics["judge"] == (1.0 if verdict == "C" else 0.0)
        assert record.metrics["judge_parse_errors"] == 0.0
        assert record.channels["judge"]["prompts"] == {"judge": prompt_hash(JUDGE_PROMPT)}
        assert record.channels["judge"]["model"] == "sieval-reference"
    entry = result.report.results[0]
    assert entry.headline == "judge"
    values = [r.metrics["judge"] for r in records.values()]
    assert entry.metrics["judge"] == pytest.approx(sum(values) / len(values))


async def test_a_broken_verdict_is_counted_and_never_scored(folder: Path, tmp_path: Path) -> None:
    async with ReferenceServer(port=0, faults="judge-unparseable") as judge:
        served = (
            f"roles:\n  judge: {{name: j, endpoint: '{judge.url}', model: sieval-reference, "
            "kind: chat}"
        )
        result = await arun_eval(
            config(folder, served),
            options(out=tmp_path / "run", data_dir=folder),
            tasks=registry([folder]),
        )
    assert result.exit_code == 0
    records = read_records(result.run_dir / "m" / "qa_judged" / "records.jsonl").records
    for record in records.values():
        assert record.channels["verdicts"] == {"judge": None}
        assert "judge" not in record.metrics  # never a 0
        assert record.metrics["judge_parse_errors"] == 1.0
        assert "exact_match" in record.metrics  # the rule-based scorer still scores
    entry = result.report.results[0]
    assert "judge" not in entry.metrics
    assert entry.metrics["judge_parse_errors"] == 1.0


def test_a_prompt_without_the_answer_is_refused(folder: Path) -> None:
    (folder / "qa.yaml").write_text(
        textwrap.dedent(TASK)
        .lstrip()
        .replace("{metric: judge}", "{metric: judge, prompt: 'Grade {question}'}")
    )
    with pytest.raises(
        ConfigError,
        match=r"metric judge takes the options prompt .* lacks \{answer\}, \{reference\}",
    ):
        registry([folder])["qa_judged"]


class _Call:
    """What the family reads of a call: its reply, no error, the model that answered."""

    def __init__(self, text: str) -> None:
        from sieval.ir.response import Choice, Response

        self.response = Response(choices=(Choice(index=0, text=text, finish_reason="stop"),))
        self.error = None
        self.reported_model = "a-judge"

    def result(self) -> Any:
        return self.response


class _Context:
    """A sample's context whose model answers ``answer`` and whose judge grades C, keeping
    what the judge was asked."""

    def __init__(self, config: Any, answer: str, asked: list[str]) -> None:
        from sieval.tasks.base import COMPLETION_MODEL

        self.config, self.facts, self.answer, self.asked = config, COMPLETION_MODEL, answer, asked

    async def gather(self, requests: Any) -> dict[str, Any]:
        return {name: _Call(self.answer) for name in requests}

    def role(self, name: str) -> Any:
        asked = self.asked

        class Judge:
            async def gather(self, requests: Any) -> dict[str, Any]:
                asked.extend(requests)
                return {n: _Call("They agree.\nGRADE: C") for n in requests}

        return Judge()


@pytest.mark.parametrize(
    ("cascade", "gold", "answer", "decided_by", "value"),
    [
        ("number", "7", " 7", "rule", 1.0),
        ("number", "7", " 8", "rule", 0.0),
        ("number", "7", " seven", "judge", 1.0),  # no number: the judge decides (C)
        ("math_equiv", "\\frac{1}{2}", " 0.5", "rule", 1.0),
        ("math_equiv", "\\frac{1}{2}", " \\frac{1}{3}", "rule", 0.0),
        ("math_equiv", "\\frac{1}{2}", " one half", "judge", 1.0),
    ],
)
async def test_a_cascade_asks_the_judge_only_where_the_rule_cannot_decide(
    tmp_path: Path, cascade: str, gold: str, answer: str, decided_by: str, value: float
) -> None:
    from sieval.tasks.base import TaskConfig

    (tmp_path / "rows.jsonl").write_text(json.dumps({"q": "x?", "a": gold}) + "\n")
    text = textwrap.dedent(TASK).lstrip()
    text = text.replace("{metric: judge}", f"{{metric: judge, cascade: {cascade}}}")
    (tmp_path / "qa.yaml").write_text(text)
    task = registry([tmp_path])["qa_judged"]
    config = TaskConfig(name="qa_judged")
    sample = next(iter(task.load(tmp_path, config)))
    asked: list[str] = []
    result = await task.solve(sample, _Context(config, answer, asked))  # type: ignore[arg-type]
    assert result.metrics["judge"] == value
    assert result.channels["decided_by"] == {"judge": decided_by}
    assert result.metrics["decided_by_judge"] == (1.0 if decided_by == "judge" else 0.0)
    assert asked == (["judge"] if decided_by == "judge" else [])  # the rule's: never sent
    assert ("judge" in result.channels) == (decided_by == "judge")
