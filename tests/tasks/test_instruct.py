"""The instruct tasks, each scored through its own spec: a known-right answer scores 1, a wrong
one 0, and the record keeps the raw answer, the extracted one and the rule that matched."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from sieval.errors import ConfigError
from sieval.ir.response import Choice, Response
from sieval.tasks.base import ModelFacts, Sample, SampleResult, TaskConfig
from sieval.tasks.registry import TASKS

from .helpers import generated, prompt_of


def first(name: str, data_dir: Path, **options: Any) -> tuple[Sample, TaskConfig]:
    config = TaskConfig(name=name, options=options)
    return next(iter(TASKS[name].load(data_dir, config))), config


def scored(name: str, sample: Sample, config: TaskConfig, reply: Response | str) -> SampleResult:
    response = generated(reply) if isinstance(reply, str) else reply
    return TASKS[name].score(sample, {"gen": response}, config)


# -- ifeval --------------------------------------------------------------------------------------


def test_ifeval_scores_the_instructions(data_dir: Path) -> None:
    sample, config = first("ifeval", data_dir)
    assert sample.id == "1000"  # no commas, 3 highlighted sections, at least 300 words
    assert prompt_of_chat(TASKS["ifeval"].requests(sample, config)["gen"]).startswith(
        "Write a 300+"
    )
    right = "*one* and *two* and *three*\n" + "word " * 300
    result = scored("ifeval", sample, config, right)
    assert result.metrics["prompt_level_strict_acc"] == 1.0
    assert result.metrics["inst_level_strict_acc"] == 1.0
    assert result.channels["rule"] == "response"
    assert result.channels["extracted"] == "followed: strict 3/3, loose 3/3"
    wrong = scored("ifeval", sample, config, right.replace("and", ", and"))
    assert wrong.metrics["prompt_level_strict_acc"] == 0.0
    assert wrong.metrics["inst_level_strict_acc"] == pytest.approx(2 / 3)
    assert [i["strict"] for i in wrong.channels["instructions"]] == [False, True, True]
    blank = scored("ifeval", sample, config, "  ")
    assert blank.metrics["invalid"] == 1.0 and blank.channels["extracted"] is None


def test_ifeval_instruction_level_counts_each_instruction_once(data_dir: Path) -> None:
    task = TASKS["ifeval"]
    samples = list(task.load(data_dir, TaskConfig(name="ifeval")))[:2]
    config = TaskConfig(name="ifeval")
    results = [(s, scored("ifeval", s, config, "*one* and *two* and *three*\n" + "word " * 300))
               for s in samples]  # fmt: skip
    figures = task.aggregate(results)
    counts = [r.metrics["n_instructions"] for _, r in results]
    followed = sum(
        r.metrics["inst_level_strict_acc"] * n for (_, r), n in zip(results, counts, strict=True)
    )
    assert figures["inst_level_strict_acc"] == pytest.approx(followed / sum(counts))
    assert figures["instructions"] == sum(counts)
    assert "n_instructions" not in figures


def prompt_of_chat(request: Any) -> str:
    (message,) = request.input.messages
    text = message.content[0].text
    assert isinstance(text, str)
    return text


# -- bbh -----------------------------------------------------------------------------------------


def test_bbh_prompt_extraction_and_breakdown(data_dir: Path) -> None:
    task = TASKS["bbh"]
    config = TaskConfig(name="bbh")
    samples = list(task.load(data_dir, config))
    assert len(samples) == 6511 and len({s.group for s in samples}) == 27
    sample = samples[0]
    assert sample.group == "boolean_expressions" and sample.gold == "False"
    prompt = prompt_of(task.requests(sample, config)["gen"])
    assert prompt.startswith("Evaluate the result of a random Boolean expression.\n\nQ: not ( (")
    assert prompt.count("A: Let's think step by step.") == 4
    assert prompt.endswith("\n\nQ: not ( True ) and ( True ) is\nA: Let's think step by step.")
    assert task.requests(sample, config)["gen"].sampling.stop == ("</s>", "Q", "\n\n")
    right = scored("bbh", sample, config, " not True = False. So the answer is False.")
    assert right.metrics["exact_match"] == 1.0
    assert (right.channels["extracted"], right.channels["rule"]) == ("False", "the_answer_is")
    wrong = scored("bbh", sample, config, "So the answer is True.")
    assert wrong.metrics["exact_match"] == 0.0 and wrong.metrics["invalid"] == 0.0
    none = scored("bbh", sample, config, "I cannot say.")
    assert none.metrics["invalid"] == 1.0 and none.channels["rule"] is None
    figures = task.aggregate([(sample, right), (samples[1], wrong)])
    assert figures["exact_match"] == 0.5
    assert set(figures["by_subtask"]) == {"boolean_expressions", "causal_judgement"}
    assert any(p.name == "boolean_expressions.txt" for p in task.data_files(data_dir))


def test_bbh_chat_model_gets_one_user_message(data_dir: Path) -> None:
    task = TASKS["bbh"]
    sample, config = first("bbh", data_dir)
    chat = ModelFacts(input_kind="chat")
    request = task.requests(sample, config, chat)["gen"]
    assert prompt_of_chat(request).startswith("Evaluate the result")
    assert not request.sampling.stop
    assert task.protocol_for(chat).startswith("chat: the prompt as one user message")  # type: ignore[attr-defined]


# -- what every checked task gets ----------------------------------------------------------------


def test_reasoning_never_reaches_the_checker(data_dir: Path) -> None:
    sample, config = first("bbh", data_dir)
    split = Response(choices=(Choice(index=0, text="So the answer is False.", finish_reason="stop",
                                     reasoning="So the answer is True."),))  # fmt: skip
    result = scored("bbh", sample, config, split)
    assert result.metrics["exact_match"] == 1.0
    assert result.channels["reasoning"] == "So the answer is True."
    inline = scored(
        "bbh", sample, config, "<think>So the answer is True.</think>So the answer is False."
    )
    assert inline.metrics["exact_match"] == 1.0
    open_block = scored("bbh", sample, config, "<think>So the answer is False. Hmm")
    assert open_block.metrics["truncated"] == 1.0 and open_block.metrics["invalid"] == 1.0
    assert open_block.metrics["exact_match"] == 0.0


def test_truncated_answers_are_counted(data_dir: Path) -> None:
    sample, config = first("bbh", data_dir)
    cut = Response(choices=(Choice(index=0, text="Let's see, A = not", finish_reason="length"),))
    result = scored("bbh", sample, config, cut)
    assert result.metrics["truncated"] == 1.0 and result.channels["finish_reason"] == "length"
    done = scored("bbh", sample, config, "So the answer is False.")
    figures = TASKS["bbh"].aggregate([(sample, result), (sample, done)])
    assert figures["truncated_rate"] == 0.5 and figures["invalid_rate"] == 0.5


def cut(text: str) -> Response:
    return Response(choices=(Choice(index=0, text=text, finish_reason="length"),))


@pytest.mark.parametrize(
    ("task", "reply", "is_censored"),
    [
        # no final answer when the budget ran out: censored
        ("bbh", cut("Let's see, A = not"), 1.0),
        ("math500", cut("so we get \\boxed{\\frac{1"), 1.0),  # the box never closed
        ("math500", "<think>so the answer is \\boxed{3}", 1.0),  # reasoning never closed
        ("gpqa_diamond", cut("Thinking step by step, the"), 1.0),
        ("humaneval", cut("```python\n    return sorted("), 1.0),  # the fence never closed
        ("ifeval", cut("*one* and *two* and"), 1.0),  # the answer is the whole, cut, response
        # a final answer before the cut, or an answer that ended: scored as it is
        ("bbh", cut("So the answer is False. And then"), 0.0),
        ("math500", cut("so \\boxed{3}. Let me also check"), 0.0),
        ("humaneval", cut("```python\n    return 1\n```\nThis works because"), 0.0),
        ("bbh", "I do not know.", 0.0),  # ended, no answer: invalid and wrong, not censored
        ("ifeval", "*one* and *two*", 0.0),
    ],
)
def test_an_answer_cut_before_it_gave_one_is_censored(
    data_dir: Path, task: str, reply: Response | str, is_censored: float
) -> None:
    """Issue 33: a budget-cut answer is its own outcome, censored, not wrong."""
    sample, config = first(task, data_dir)
    if task == "humaneval":
        import asyncio

        result = asyncio.run(
            TASKS[task].score_async(  # type: ignore[attr-defined]
                sample, {"gen": generated(reply) if isinstance(reply, str) else reply}, config
            )
        )
    else:
        result = scored(task, sample, config, reply)
    assert result.metrics["censored"] == is_censored
    assert TASKS[task].aggregate([(sample, result)])["censored_rate"] == is_censored


@pytest.mark.parametrize(
    ("options", "said"),
    [
        # 10**12 repeats once planned for ever (every repeat of every row is held)
        ({"repeats": 10**12}, "option repeats must be an integer in [1, 1000], got 1000000000000"),
        ({"repeats": 0}, "option repeats must be an integer in [1, 1000]"),
        ({"max_tokens": 10**23}, "option max_tokens must be an integer in [1, 2147483647]"),
        ({"temperature": float("nan")}, "option temperature must be a finite number >= 0"),
        ({"temperature": float("inf")}, "option temperature must be a finite number >= 0"),
    ],
)
def test_an_option_out_of_its_range_is_refused_before_any_sample(
    data_dir: Path, options: dict[str, Any], said: str
) -> None:
    config = TaskConfig(name="math500", n=2, options=options)
    with pytest.raises(ConfigError, match=re.escape(said)) as info:
        next(iter(TASKS["math500"].load(data_dir, config)))
    assert info.value.path == f"tasks.math500.options.{next(iter(options))}"


def test_repeats_are_samples_of_their_own_with_pass_at_k(data_dir: Path) -> None:
    task = TASKS["bbh"]
    config = TaskConfig(name="bbh", options={"repeats": 4, "temperature": 0.7})
    samples = list(task.load(data_dir, config))
    assert len(samples) == 4 * 6511
    assert [s.id for s in samples[:5]] == [
        "boolean_expressions/0#r0", "boolean_expressions/0#r1", "boolean_expressions/0#r2",
        "boolean_expressions/0#r3", "causal_judgement/0#r0",
    ]  # fmt: skip
    seeds = [task.requests(s, config)["gen"].sampling.seed for s in samples[:4]]
    assert seeds == [1234, 1235, 1236, 1237]
    assert task.requests(samples[0], config)["gen"].sampling.temperature == 0.7
    right, wrong = "So the answer is False.", "So the answer is True."
    # item 1: 1 of 4 right; item 2 (target "No" or "Yes"): none right
    replies = [right, wrong, wrong, wrong] + [wrong] * 4
    results = [(s, scored("bbh", s, config, r)) for s, r in zip(samples[:8], replies, strict=True)]
    figures = task.aggregate(results)
    assert figures["repeats"] == 4
    assert figures["pass@1"] == pytest.approx((0.25 + 0) / 2)
    assert figures["pass@2"] == pytest.approx((1 - 3 / 6) / 2)  # 1 - C(3,2)/C(4,2)
    assert figures["pass@4"] == pytest.approx(0.5)
    assert figures["exact_match"] == pytest.approx(1 / 8)
    single = task.aggregate(results[:1])
    assert "pass@1" in single
    plain = list(task.load(data_dir, TaskConfig(name="bbh")))[:1]
    assert "pass@1" not in task.aggregate([(plain[0], results[0][1])])


# -- math500, aime2024, aime2025 -----------------------------------------------------------------


def test_math500_compares_the_boxed_answer_by_value(data_dir: Path) -> None:
    sample, config = first("math500", data_dir)
    assert sample.id == "test/precalculus/807.json"
    assert sample.gold == "\\left( 3, \\frac{\\pi}{2} \\right)"
    text = prompt_of_chat(TASKS["math500"].requests(sample, config)["gen"])
    assert text.endswith(
        "\n\nPlease reason step by step, and put your final answer within \\boxed{}."
    )
    right = scored("math500", sample, config, "So $r=3$. The answer is $\\boxed{(3, \\pi/2)}$.")
    assert right.metrics["accuracy"] == 1.0  # not the gold's string: its value
    assert (right.channels["extracted"], right.channels["rule"]) == ("(3, \\pi/2)", "boxed")
    wrong = scored("math500", sample, config, "$\\boxed{(3, \\pi)}$")
    assert wrong.metrics["accuracy"] == 0.0 and wrong.metrics["invalid"] == 0.0
    cut = scored("math500", sample, config, "so \\boxed{(3, \\frac{\\pi}{2")
    assert cut.metrics["invalid"] == 1.0 and cut.channels["reason"] == "unclosed_box"
    echoed = scored("math500", sample, config, "I will put it within \\boxed{ }.")
    assert echoed.metrics["invalid"] == 1.0 and echoed.channels["reason"] == "empty_box"
    assert echoed.metrics["accuracy"] == 0.0


@pytest.mark.parametrize(("name", "row_id"), [("aime2024", "2024-I-1"), ("aime2025", "0")])
def test_aime_integer_answers(data_dir: Path, name: str, row_id: str) -> None:
    sample, config = first(name, data_dir)
    assert sample.id == row_id and sample.gold.isdigit()
    assert TASKS[name].requests(sample, config)["gen"].sampling.max_tokens == 4096
    right = scored(name, sample, config, f"Thus the answer is $\\boxed{{{sample.gold}}}$.")
    assert right.metrics["accuracy"] == 1.0
    sentence = f"Final Answer: The final answer is ${sample.gold}$. I hope it is correct."
    final = scored(name, sample, config, sentence)
    assert final.metrics["accuracy"] == 1.0 and final.channels["rule"] == "final_answer_sentence"
    wrong = scored(name, sample, config, f"\\boxed{{{int(sample.gold) + 1}}}")
    assert wrong.metrics["accuracy"] == 0.0


# -- gpqa_diamond (synthetic rows in GPQA's format: no GPQA row appears in this repository) -----


def synthetic_gpqa(tmp_path: Path, n: int = 3) -> Path:
    import csv

    from sieval.data.gpqa_diamond import COLUMNS

    folder = tmp_path / "gpqa_diamond"
    folder.mkdir()
    with (folder / "gpqa_diamond.csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        for i in range(n):
            row = dict.fromkeys(COLUMNS, "")
            row.update({"Question": f"Which synthetic value is right for item {i}?",
                        "Correct Answer": f"right {i}", "Incorrect Answer 1": f" wrong {i}a",
                        "Incorrect Answer 2": f"wrong {i}b", "Incorrect Answer 3": f"wrong {i}c",
                        "Record ID": f"rec{i}"})  # fmt: skip
            writer.writerow(row)
    return tmp_path


def test_gpqa_shuffle_is_recorded_and_the_letter_scored(tmp_path: Path) -> None:
    data = synthetic_gpqa(tmp_path)
    task = TASKS["gpqa_diamond"]
    config = TaskConfig(name="gpqa_diamond", seed=7)
    samples = list(task.load(data, config))
    assert [s.id for s in samples] == ["rec0", "rec1", "rec2"]
    sample = samples[0]
    perm = sample.data["shown_permutation"]
    assert sorted(perm) == [0, 1, 2, 3] and sample.data["shown_seed"] == 7
    gold = sample.gold
    assert gold == "ABCD"[perm.index(0)]
    text = prompt_of_chat(task.requests(sample, config)["gen"])
    assert f"{gold}) right 0" in text and "A) " in text and "\nD) " in text
    assert "'Answer: $LETTER'" in text and "wrong 0a" in text and ")  wrong 0a" not in text
    right = scored("gpqa_diamond", sample, config, f"Thinking...\nAnswer: {gold}")
    assert right.metrics["accuracy"] == 1.0
    assert (right.channels["extracted"], right.channels["rule"]) == (gold, "answer_colon")
    other = next(x for x in "ABCD" if x != gold)
    assert scored("gpqa_diamond", sample, config, f"answer: {other}").metrics["accuracy"] == 0.0
    none = scored("gpqa_diamond", sample, config, "I think it is the second one.")
    assert none.metrics["invalid"] == 1.0 and none.channels["rule"] is None
    again = next(iter(task.load(data, config)))
    assert again.data["shown_permutation"] == perm  # the same seed, the same order
    orders = {tuple(next(iter(task.load(data, TaskConfig(name="gpqa_diamond", seed=s))))
                    .data["shown_permutation"]) for s in range(8)}  # fmt: skip
    assert len(orders) > 1


# -- mmlu_pro ------------------------------------------------------------------------------------


def test_mmlu_pro_official_prompt_rules_and_categories(data_dir: Path) -> None:
    task = TASKS["mmlu_pro"]
    config = TaskConfig(name="mmlu_pro")
    samples = list(task.load(data_dir, config))
    assert len(samples) == 12032 and len({s.group for s in samples}) == 14
    sample = samples[0]
    assert (sample.id, sample.group, sample.gold) == ("2804", "biology", "B")
    request = task.requests(sample, config)["gen"]
    prompt = prompt_of(request)
    assert prompt.startswith(
        "The following are multiple choice questions (with answers) about biology. Think step by "
        'step and then finish your answer with "the answer is (X)"'
    )
    assert prompt.count("Question:\n") == 6 and len(sample.data["shot_ids"]) == 5
    assert "\nAnswer: Let's think step by step. Peptidoglycan" in prompt
    assert "A: Let's think" not in prompt
    assert prompt.endswith("H. cross section of an anther (site of pollen production in a "
                           "flower)\nAnswer: Let's think step by step.")  # fmt: skip
    assert request.sampling.stop == ("Question:",) and request.sampling.max_tokens == 2048
    right = scored("mmlu_pro", sample, config, "Shoot tips grow. the answer is (B)")
    assert right.metrics["accuracy"] == 1.0
    assert (right.channels["extracted"], right.channels["rule"]) == ("B", "answer_is")
    colon = scored("mmlu_pro", sample, config, "Hmm.\nAnswer: C")
    assert colon.metrics["accuracy"] == 0.0 and colon.channels["rule"] == "answer_colon"
    last = scored("mmlu_pro", sample, config, "It is B, surely")
    assert last.metrics["accuracy"] == 1.0 and last.channels["rule"] == "last_letter"
    none = scored("mmlu_pro", sample, config, "no idea")
    assert none.metrics["invalid"] == 1.0 and none.prediction is None
    zero = TaskConfig(name="mmlu_pro", num_fewshot=0)
    bare = next(iter(task.load(data_dir, zero)))
    chat = prompt_of_chat(task.requests(bare, zero, ModelFacts(input_kind="chat"))["gen"])
    assert chat.count("Question:\n") == 1
    figures = task.aggregate([(sample, right), (samples[1], none)])
    assert figures["by_category"]["biology"]["accuracy"] == 1.0
    assert figures["invalid_rate"] == 0.5


# -- humaneval, mbpp, mbpp_sanitized: the answer's code run in the sandbox ------------------------


def test_humaneval_runs_the_completion_against_the_tests(data_dir: Path) -> None:
    from sieval.data.registry import get_source

    ((_, row), *_) = get_source("humaneval").rows(data_dir, "test", None)
    sample, config = first("humaneval", data_dir)
    request = TASKS["humaneval"].requests(sample, config)["gen"]
    assert prompt_of(request) == row["prompt"]
    assert request.sampling.stop == ("\nclass", "\ndef", "\n#", "\nif")
    right = scored("humaneval", sample, config, row["canonical_solution"] + "\nprint('cut')")
    assert right.metrics["pass@1"] == 1.0, right.channels["execution"]
    assert right.channels["rule"] == "raw" and right.channels["execution"]["status"] == "passed"
    wrong = scored("humaneval", sample, config, "    return False\n")
    assert wrong.metrics["pass@1"] == 0.0
    assert wrong.channels["execution"]["reason"] == "AssertionError"
    loop = scored("humaneval", sample, config, "    while True:\n        pass\n")
    assert loop.metrics["pass@1"] == 0.0
    assert loop.channels["execution"]["status"] in {"cpu_limit", "timeout"}
    chat = ModelFacts(input_kind="chat")
    message = prompt_of_chat(TASKS["humaneval"].requests(sample, config, chat)["gen"])
    assert message.startswith("Complete the following Python function.")
    whole = row["prompt"] + row["canonical_solution"]
    fenced = scored("humaneval", sample, config, f"Sure:\n```python\n{whole}```\nDone.")
    assert fenced.metrics["pass@1"] == 1.0 and fenced.channels["rule"] == "fenced_python"


@pytest.mark.parametrize(("name", "count"), [("mbpp", 500), ("mbpp_sanitized", 257)])
def test_mbpp_prompt_shots_and_execution(data_dir: Path, name: str, count: int) -> None:
    from sieval.data.registry import get_source

    subset = "full" if name == "mbpp" else "sanitized"
    ((_, row), *_) = get_source("mbpp").rows(data_dir, "test", subset)
    task = TASKS[name]
    config = TaskConfig(name=name)
    samples = list(task.load(data_dir, config))
    assert len(samples) == count
    sample = samples[0]
    assert sample.id == str(row["task_id"])
    assert sample.data["shot_ids"] == ["2", "3", "4"]
    prompt = prompt_of(task.requests(sample, config)["gen"])
    assert prompt.startswith("You are an expert Python programmer, and here is your task: ")
    assert prompt.count("[BEGIN]\n") == 4 and prompt.count("\n[DONE]\n") == 3
    assert prompt.endswith(f"{row['test_list'][2]}\n[BEGIN]\n")
    right = scored(name, sample, config, row["code"] + "\n[DONE]")
    assert right.metrics["pass@1"] == 1.0, right.channels["execution"]
    wrong = scored(name, sample, config, "def nothing():\n    pass\n")
    assert wrong.metrics["pass@1"] == 0.0
    assert wrong.channels["execution"]["reason"].startswith("NameError")
    empty = scored(name, sample, config, "")
    assert empty.metrics["invalid"] == 1.0 and "execution" not in empty.channels


def test_maj_at_k_votes_over_the_repeats_answers(data_dir: Path) -> None:
    task = TASKS["math500"]
    config = TaskConfig(name="math500", options={"repeats": 3, "temperature": 1.0})
    samples = list(task.load(data_dir, config))[:6]
    gold = "\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}"
    # row 1: right, then 7 twice (maj@1 right; maj@2 a tie, to the first seen: right);
    # row 2: never right. k = 1, 2 are reported for 3 repeats.
    replies = [gold, "\\boxed{7}", "\\boxed{7}", "\\boxed{1}", "no box", "\\boxed{2}"]
    results = [(s, scored("math500", s, config, r)) for s, r in zip(samples, replies, strict=True)]
    figures = task.aggregate(results)
    assert figures["repeats"] == 3
    assert figures["maj@1"] == 0.5 and figures["maj@2"] == 0.5
    assert figures["pass@2"] == pytest.approx((1 - 1 / 3) / 2)
    assert task.keeps_predictions
    assert not TASKS["humaneval"].keeps_predictions
    code = TASKS["ifeval"].aggregate([(s, SampleResult(prediction="x", gold=None, metrics={
        "prompt_level_strict_acc": 1.0, "prompt_level_loose_acc": 1.0,
        "inst_level_strict_acc": 1.0, "inst_level_loose_acc": 1.0, "n_instructions": 1.0,
        "invalid": 0.0, "truncated": 0.0})) for s in samples[:2]])  # fmt: skip
    assert "pass@1" in code and "maj@1" not in code


def repeats_of(name: str, data_dir: Path, row: int, replies: list[str]) -> dict[str, Any]:
    """The figures of ``replies`` as the repeats of the task's row ``row`` (in repeat order)."""
    task = TASKS[name]
    config = TaskConfig(name=name, n=row + 1, options={"repeats": len(replies), "temperature": 1.0})
    samples = list(task.load(data_dir, config))[row * len(replies) : (row + 1) * len(replies)]
    assert [s.id.rsplit("#r", 1)[1] for s in samples] == [str(i) for i in range(len(replies))]
    results = [(s, scored(name, s, config, r)) for s, r in zip(samples, replies, strict=True)]
    return {"correct": [r.metrics["accuracy"] for _, r in results], **task.aggregate(results)}


def test_maj_at_k_groups_the_answers_the_math_checker_finds_equal(data_dir: Path) -> None:
    """Issue 33.3: MATH-500's row 2 (gold \\frac{14}{3}) answered 5, \\frac{14}{3}, 14/3,
    \\dfrac{14}{3}: three of four right by the checker, so the vote is right (it was 0: the
    three spellings were three votes of one each, and 5 came first)."""
    boxed = ["\\boxed{5}", "\\boxed{\\frac{14}{3}}", "\\boxed{14/3}", "\\boxed{\\dfrac{14}{3}}"]
    figures = repeats_of("math500", data_dir, 2, boxed)
    assert figures["correct"] == [0.0, 1.0, 1.0, 1.0]
    assert figures["maj@4"] == 1.0
    assert figures["maj@1"] == 0.0  # 5 alone
    assert figures["maj@2"] == 0.0  # 5 and 14/3, one vote each: a tie, to the first answered
    # the tie the other way round: the right answer first wins it
    tie = repeats_of("math500", data_dir, 2, [boxed[3], boxed[0], boxed[0], boxed[2]])
    assert tie["maj@4"] == 1.0 and tie["maj@2"] == 1.0


def test_maj_at_k_of_multiple_choice_votes_by_letter(data_dir: Path) -> None:
    """mmlu_pro's rules read 'the answer is (B)', 'Answer: B' and a last standalone B as one
    letter: three votes for B beat two for the gold letter, and the protocol says how."""
    sample, _ = first("mmlu_pro", data_dir)
    gold = str(sample.gold)
    other = "B" if gold != "B" else "C"
    replies = [f"so the answer is ({gold}).", f"the answer is ({other})", f"Answer: {other}",
               f"I pick {other}", f"the answer is {gold}"]  # fmt: skip
    figures = repeats_of("mmlu_pro", data_dir, 0, replies)
    assert figures["correct"] == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert figures["maj@1"] == 1.0 and figures["maj@4"] == 0.0
    assert figures["maj@2"] == 1.0  # one vote each: the letter answered first
    protocols = {
        n: TASKS[n].protocol_for(ModelFacts()) for n in ("mmlu_pro", "math500", "humaneval")
    }  # type: ignore[attr-defined]
    assert "the extracted letter" in protocols["mmlu_pro"]
    assert "a tie goes to the group answered first" in protocols["mmlu_pro"]
    assert "math-verify's equivalence" in protocols["math500"]
    assert "maj@k" not in protocols["humaneval"]


async def test_code_tasks_score_async_inside_a_loop(data_dir: Path) -> None:
    from sieval.data.registry import get_source

    ((_, row), *_) = get_source("humaneval").rows(data_dir, "test", None)
    sample, config = first("humaneval", data_dir)
    responses = {"gen": generated(row["canonical_solution"])}
    task: Any = TASKS["humaneval"]
    result = await task.score_async(sample, responses, config)
    assert result.metrics["pass@1"] == 1.0
    with pytest.raises(RuntimeError, match="await score_async"):
        task.score(sample, responses, config)
