"""The reference server as a judge, read by the reference implementations' own code.

MT-Bench's ``run_judge_single`` / ``run_judge_pair`` (``mt_bench/reference_common.py``) and
Arena-Hard's ``pairwise_judgment`` (``arena_hard_v2/reference/gen_judgment.py``) are imported
from the shared data folder, their model call pointed at the reference server: they build the
judge prompt from the real templates and parse the reply with their own patterns.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import types
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sieval.ir.request import ChatInput, Message, Request, Sampling, StructuredOutput, TextPart
from sieval.model import Model
from sieval.reference import ReferenceServer, RunningServer, start_in_thread

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


@pytest.fixture(scope="module")
def judge() -> Iterator[RunningServer]:
    """A reference server on its own thread (the reference code calls it synchronously)."""
    running = start_in_thread()
    yield running
    running.stop()


def chat(
    server: RunningServer, messages: list[dict[str, Any]], fault: str | None = None, **fields: Any
) -> dict[str, Any]:
    body = {"model": "sieval-reference", "messages": messages, "max_tokens": 200, **fields}
    request = urllib.request.Request(
        server.url + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            **({"x-sieval-fault": fault} if fault else {}),
        },
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        data: dict[str, Any] = json.loads(reply.read())
    return data


def _load(name: str, path: Path, stubs: dict[str, types.ModuleType]) -> types.ModuleType:
    """Import a reference file from the data folder, its unavailable imports stubbed."""
    if not path.is_file():
        pytest.skip(f"reference code not found at {path}; set SIEVAL_DATA_DIR")
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        with warnings.catch_warnings():  # its regexes are written with invalid escapes
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            spec.loader.exec_module(module)
    finally:
        for key, value in saved.items():
            if value is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = value
    return module


class _Conversation:
    """The part of FastChat's conversation template the judging code uses."""

    roles = ("user", "assistant")

    def __init__(self) -> None:
        self.system = ""
        self.messages: list[list[Any]] = []

    def set_system_message(self, text: str) -> None:
        self.system = text

    def append_message(self, role: str, text: str | None) -> None:
        self.messages.append([role, text])

    def to_openai(self) -> list[dict[str, Any]]:
        turns = [{"role": r, "content": t} for r, t in self.messages if t is not None]
        return [{"role": "system", "content": self.system}, *turns] if self.system else turns


@pytest.fixture(scope="module")
def mt_bench(judge: RunningServer) -> types.ModuleType:
    adapter = types.ModuleType("fastchat.model.model_adapter")
    adapter.get_conversation_template = lambda model: _Conversation()  # type: ignore[attr-defined]
    adapter.OPENAI_MODEL_LIST = ("gpt-4",)  # type: ignore[attr-defined]
    adapter.ANTHROPIC_MODEL_LIST = ()  # type: ignore[attr-defined]
    stubs = {
        "openai": types.ModuleType("openai"),  # used only by the model calls replaced below
        "anthropic": types.ModuleType("anthropic"),
        "fastchat": types.ModuleType("fastchat"),
        "fastchat.model": types.ModuleType("fastchat.model"),
        "fastchat.model.model_adapter": adapter,
    }
    module = _load("mt_bench_reference", DATA / "mt_bench" / "reference_common.py", stubs)

    def completion(model: str, conv: _Conversation, temperature: float, max_tokens: int) -> str:
        fault = getattr(module, "FAULT", None)
        reply = chat(judge, conv.to_openai(), fault, temperature=temperature)
        return str(reply["choices"][0]["message"]["content"])

    module.chat_completion_openai = completion  # type: ignore[attr-defined]
    return module


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        pytest.skip(f"benchmark data not found at {path}; set SIEVAL_DATA_DIR")
    # split on newlines only: the rows' strings hold other line separators (U+2028)
    return [json.loads(line) for line in path.read_text().split("\n") if line.strip()]


def _rows(path: Path) -> dict[int, dict[str, Any]]:
    return {r["question_id"]: r for r in _jsonl(path)}


def _answer(*turns: str) -> dict[str, Any]:
    return {"choices": [{"turns": list(turns)}]}


def _judge(module: types.ModuleType, name: str) -> Any:
    prompts = {p["name"]: p for p in _jsonl(DATA / "mt_bench" / "judge_prompts.jsonl")}
    return module.Judge(
        "gpt-4", prompts[name], ref_based="math" in name, multi_turn="multi" in name
    )


UNRELATED = "Bananas are yellow and monkeys like to climb tall trees in the jungle."


def test_mt_bench_single_ratings_follow_the_reference_answer(mt_bench: types.ModuleType) -> None:
    questions = _rows(DATA / "mt_bench" / "question.jsonl")
    references = _rows(DATA / "mt_bench" / "reference_answer" / "gpt-4.jsonl")
    question, reference = questions[111], references[111]
    copied = _answer(reference["choices"][0]["turns"][0])
    judge = _judge(mt_bench, "single-math-v1")
    good, prompt, text = mt_bench.run_judge_single(question, copied, judge, reference)
    poor, _, _ = mt_bench.run_judge_single(question, _answer(UNRELATED), judge, reference)
    assert "[The Start of Reference Answer]" in prompt and "Rating: [[" in text
    assert good == 10 and 1 <= poor < good
    multi = _judge(mt_bench, "single-math-v1-multi-turn")
    both = _answer(*reference["choices"][0]["turns"])
    second, _, _ = mt_bench.run_judge_single(question, both, multi, reference, multi_turn=True)
    assert second == 10


def test_a_multi_turn_rating_without_reference_reads_the_second_question(
    mt_bench: types.ModuleType,
) -> None:
    question = _rows(DATA / "mt_bench" / "question.jsonl")[81]
    judge = _judge(mt_bench, "single-v1-multi-turn")
    first = "Hawaii has beaches."
    on_topic = _answer(first, question["turns"][1])
    off_topic = _answer(first, UNRELATED)
    good, prompt, _ = mt_bench.run_judge_single(question, on_topic, judge, None, multi_turn=True)
    poor, _, _ = mt_bench.run_judge_single(question, off_topic, judge, None, multi_turn=True)
    assert "### User:" in prompt and good == 10 and poor < good


def test_mt_bench_pairwise_picks_the_closer_answer_in_both_orders(
    mt_bench: types.ModuleType,
) -> None:
    questions = _rows(DATA / "mt_bench" / "question.jsonl")
    references = _rows(DATA / "mt_bench" / "reference_answer" / "gpt-4.jsonl")
    question, reference = questions[112], references[112]
    copied, other = _answer(reference["choices"][0]["turns"][0]), _answer(UNRELATED)
    judge = _judge(mt_bench, "pair-math-v1")
    first, _, _ = mt_bench.run_judge_pair(question, copied, other, judge, reference)
    second, _, _ = mt_bench.run_judge_pair(question, other, copied, judge, reference)
    same, _, _ = mt_bench.run_judge_pair(question, copied, copied, judge, reference)
    assert (first, second, same) == ("A", "B", "tie")


def test_the_unparseable_fault_defeats_mt_benchs_parsers(mt_bench: types.ModuleType) -> None:
    questions = _rows(DATA / "mt_bench" / "question.jsonl")
    references = _rows(DATA / "mt_bench" / "reference_answer" / "gpt-4.jsonl")
    question, reference = questions[111], references[111]
    copied = _answer(reference["choices"][0]["turns"][0])
    mt_bench.FAULT = "judge-unparseable"  # type: ignore[attr-defined]
    try:
        rating, _, text = mt_bench.run_judge_single(
            question, copied, _judge(mt_bench, "single-math-v1"), reference
        )
        winner, _, _ = mt_bench.run_judge_pair(
            question, copied, copied, _judge(mt_bench, "pair-math-v1"), reference
        )
    finally:
        mt_bench.FAULT = None  # type: ignore[attr-defined]
    assert (rating, winner) == (-1, "error") and "Rating: [[" in text


@pytest.fixture(scope="module")
def arena(judge: RunningServer) -> tuple[types.ModuleType, dict[str, Any]]:
    folder = DATA / "arena_hard_v2" / "reference"
    utils = types.ModuleType("utils")
    completion = types.ModuleType("utils.completion")
    names = ("load_questions", "load_model_answers", "make_config")
    for name in names:
        setattr(completion, name, lambda *a, **k: None)
    completion.get_endpoint = lambda endpoints: None  # type: ignore[attr-defined]

    def api(messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        fault = kwargs.get("fault")
        reply = chat(judge, messages, fault, temperature=kwargs["temperature"])
        return {"answer": reply["choices"][0]["message"]["content"]}

    completion.registered_api_completion = {"reference": api}  # type: ignore[attr-defined]
    judge_utils = _load("utils.judge_utils", folder / "judge_utils.py", {})
    stubs = {"utils": utils, "utils.completion": completion, "utils.judge_utils": judge_utils}
    module = _load("arena_reference", folder / "gen_judgment.py", stubs)
    configs = yaml.safe_load((folder / "arena-hard-v2.0.yaml").read_text())
    configs["max_tokens"] = 200  # the reference's 16000 is past this server's context
    return module, configs


def _arena_row() -> tuple[dict[str, Any], dict[str, Any]]:
    """A question with a short o3-mini baseline answer (the judge prompt fits 4096 tokens)."""
    folder = DATA / "arena_hard_v2"
    baselines = {r["uid"]: r for r in _jsonl(folder / "baseline_o3-mini-2025-01-31.jsonl")}
    for question in _jsonl(folder / "question.jsonl"):
        baseline = baselines.get(question["uid"])
        answer = baseline["messages"][-1]["content"]["answer"] if baseline else ""
        short = 0 < len(answer) < 1200 and len(question["prompt"]) < 400
        if question["category"] == "hard_prompt" and short:
            return question, baseline  # type: ignore[return-value]
    pytest.skip("no short Arena-Hard row")


def _answer_row(text: str) -> dict[str, Any]:
    return {"messages": [{"content": {"answer": text}}]}


def test_arena_hard_verdicts_parse_and_follow_the_prompt(
    arena: tuple[types.ModuleType, dict[str, Any]],
) -> None:
    module, configs = arena
    question, baseline = _arena_row()
    settings = {"api_type": "reference", "endpoints": None}
    relevant = _answer_row(question["prompt"])
    off_topic = _answer_row(UNRELATED)
    worse = module.pairwise_judgment(question, baseline, off_topic, None, configs, settings)
    better = module.pairwise_judgment(question, baseline, relevant, None, configs, settings)
    assert worse["score"] in ("A>>B", "A>B") and better["score"] in ("B>>A", "B>A")
    assert "My final verdict is: [[" in worse["judgment"]["answer"]
    broken = module.pairwise_judgment(
        question, baseline, off_topic, None, configs, {**settings, "fault": "judge-unparseable"}
    )
    assert broken["score"] is None


# -- grades, JSON verdicts, and settings ----------------------------------------------------------

GRADE_PROMPT = """You are assessing a submitted answer on a given task based on a criterion.

[BEGIN DATA]
***
[Task]: What is the capital of France?
***
[Submission]: {answer}
***
[Criterion]: Paris is the capital of France.
***
[END DATA]

Does the submission meet the criterion?

After assessing the submitted answer, reply with 'GRADE: $LETTER' (without quotes) where \
LETTER is one of CI.
"""
GRADE = re.compile(r"(?i)GRADE\s*:\s*([CPI])(.*)$")  # Inspect's default grade pattern


@pytest.mark.parametrize(
    ("answer", "grade"), [("The capital of France is Paris.", "C"), ("It is Berlin.", "I")]
)
def test_an_inspect_style_grade(judge: RunningServer, answer: str, grade: str) -> None:
    messages = [{"role": "user", "content": GRADE_PROMPT.format(answer=answer)}]
    text = chat(judge, messages)["choices"][0]["message"]["content"]
    found = GRADE.search(text)
    assert found is not None and found.group(1) == grade, text
    broken = chat(judge, messages, "judge-unparseable")["choices"][0]["message"]["content"]
    assert GRADE.search(broken) is None and "GRADE:" in broken


VERDICT = {
    "type": "object",
    "properties": {
        "explanation": {"type": "string"},
        "rating": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    "required": ["explanation", "rating"],
}
SINGLE = (
    "[Question]\nWhat is 2 + 2?\n\n[The Start of Reference Answer]\nTwo plus two is four.\n"
    "[The End of Reference Answer]\n\n[The Start of Assistant's Answer]\n{answer}\n"
    "[The End of Assistant's Answer]"
)


def test_a_json_verdict_under_structured_output(judge: RunningServer) -> None:
    messages = [{"role": "user", "content": SINGLE.format(answer="Two plus two is four.")}]
    schema = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": VERDICT}}
    # greedy: unseeded, at the server's default temperature, the verdict moves by up to 0.2 drawn
    # from the server's one rng, whose state depends on which tests this worker ran before (a
    # rating of 2 for "Bananas." in a full run)
    greedy = {"response_format": schema, "temperature": 0.0}
    text = chat(judge, messages, **greedy)["choices"][0]["message"]["content"]
    verdict = json.loads(text)
    assert verdict["rating"] == 10 and "key words" in verdict["explanation"]
    poor = chat(judge, [{"role": "user", "content": SINGLE.format(answer="Bananas.")}],
                **greedy)  # fmt: skip
    assert json.loads(poor["choices"][0]["message"]["content"])["rating"] == 1
    broken = chat(judge, messages, "judge-unparseable", **greedy)
    assert "rating" not in json.loads(broken["choices"][0]["message"]["content"])


def test_a_rejudge_with_other_settings_can_disagree_and_repeats(judge: RunningServer) -> None:
    prompt = SINGLE.format(answer="Two is the answer.") + '\nRate as "[[rating]]".'
    messages = [{"role": "user", "content": prompt}]

    def rating(**fields: Any) -> int:
        text = chat(judge, messages, **fields)["choices"][0]["message"]["content"]
        found = re.search(r"\[\[(\d+)\]\]", text)
        assert found is not None, text
        return int(found.group(1))

    greedy = rating(temperature=0.0)
    assert greedy == rating(temperature=0.0)
    sampled = {seed: rating(temperature=1.0, seed=seed) for seed in range(8)}
    assert sampled == {seed: rating(temperature=1.0, seed=seed) for seed in range(8)}
    assert set(sampled.values()) != {greedy}, sampled
    assert all(abs(r - greedy) <= 2 for r in sampled.values())


def test_a_prompt_that_asks_for_no_verdict_is_answered_by_the_model(judge: RunningServer) -> None:
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    text = chat(judge, messages, temperature=0.0)["choices"][0]["message"]["content"]
    assert "key words" not in text and "[[" not in text


@pytest.mark.parametrize(
    "wire", ["openai_chat", "openai_responses", "anthropic_messages", "google_genai"]
)
async def test_every_chat_wire_judges_in_json_and_in_text(
    server: ReferenceServer, wire: str
) -> None:
    prompt = SINGLE.format(answer="Two plus two is four.")
    base = Request(
        input=ChatInput(messages=(Message(role="user", content=(TextPart(text=prompt),)),)),
        sampling=Sampling(temperature=0.0, max_tokens=200),
    )
    schema = StructuredOutput(format="json_schema", schema=VERDICT, name="verdict")
    rated = Request(input=base.input, sampling=base.sampling, structured_output=schema)
    as_text = Request(
        input=ChatInput(
            messages=(Message(role="user", content=(TextPart(text=prompt + " [[rating]]"),)),)
        ),
        sampling=base.sampling,
    )
    async with Model(dialect=wire, base_url=server.url, model_id=server.model_name) as model:
        structured = await model.run(rated)
        text = await model.run(as_text)
    value = structured.choices[0].structured_output
    assert getattr(value, "value", None) == {"explanation": ANY_TEXT, "rating": 10}
    assert "Rating: [[10]]" in text.choices[0].text


class _AnyText(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and "key words" in other

    __hash__ = str.__hash__


ANY_TEXT = _AnyText()
