"""The chat tasks and MMLU's chat and by-id forms: prompts, extraction, requirements."""

from __future__ import annotations

import os
import re
import string
from pathlib import Path

import pytest

from sieval.errors import ContractViolation
from sieval.ir.request import ChatInput, CompletionInput
from sieval.ir.response import Choice, Response, Token, TopEntry
from sieval.tasks.base import ModelFacts, TaskConfig
from sieval.tasks.gsm8k_0shot_gen import TASK as GSM8K_CHAT
from sieval.tasks.gsm8k_0shot_gen import extract_marked
from sieval.tasks.mmlu_0shot_gen import TASK as MMLU_GEN
from sieval.tasks.mmlu_0shot_gen import extract_letter
from sieval.tasks.mmlu_kshot_clp import SPELLINGS
from sieval.tasks.mmlu_kshot_clp import TASK as MMLU

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
CHAT = ModelFacts(input_kind="chat", capabilities=frozenset({"chat", "sampled_top_k"}))
IDS = {
    "A": 235280,
    " A": 586,
    "B": 235305,
    " B": 599,
    "C": 235288,
    " C": 585,
    "D": 235299,
    " D": 608,
}
BY_ID = ModelFacts(capabilities=frozenset({"candidate_scoring"}), token_ids=IDS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so 3 + 4 = 7\n#### 7", "7"),
        ("#### 1,234.", "1234"),
        ("first #### 5 then #### 6", "6"),  # the last marked answer counts
        ("The answer is $\\boxed{42}$.", "42"),
        ("#### $18", "18"),
        ("I think 12 is right", None),  # no mark: strict finds nothing
        ("", None),
    ],
)
def test_gsm8k_chat_reads_the_last_marked_answer(text: str, expected: str | None) -> None:
    assert extract_marked(text) == expected


def lm_eval_reads(text: str) -> str | None:
    """The letter lm-eval 0.4.13's ``mmlu_generative`` scores right for ``text``: its
    ``get_response`` filters keep the first line, without outer whitespace, and ``exact_match``
    (``ignore_case``, ``ignore_punctuation``) compares it with the letter."""
    line = text.split("\n", 1)[0].strip().lower()
    line = line.translate(str.maketrans("", "", string.punctuation))
    return line.upper() if line in ("a", "b", "c", "d") else None


def simple_evals_reads(text: str) -> str | None:
    """simple-evals' ``ANSWER_PATTERN_MULTICHOICE`` (``mmlu_eval.py``): the first ``Answer: X``."""
    match = re.search(r"(?i)Answer[ \t]*:[ \t]*\$?([A-D])\$?", text)
    return match.group(1).upper() if match else None


LETTER_TABLE = [
    # reply, sieval, lm-eval mmlu_generative, simple-evals
    ("B", "B", "B", None),
    ("C.", "C", "C", None),
    (" (C) because", "C", None, None),
    ("**D**", "D", "D", None),
    ("Answer: a.", "A", None, "A"),
    ("A", "A", "A", None),
    ("C. Paris", "C", None, None),
    ("D) None of the above", "D", None, None),
    ("C is correct", "C", None, None),
    ("C. A city in France", "C", None, None),  # the second "A" is an article
    ("B.\n\nA is wrong because", "B", "B", None),  # only the start names the pick
    # issue 33: several letters named, or the article "A": no pick
    ("A B C D", None, None, None),
    ("A, B, C or D", None, None, None),
    ("A good answer is C", None, None, None),
    ("Answer: A, B, C or D", None, None, "A"),
    ("(A) or (B)", None, None, None),
    ("B and C are both correct", None, None, None),
    ("A. B. C. D.", None, None, None),
    ("A/B", None, None, None),
    ("a good question", None, None, None),
    ("A is correct", None, None, None),  # said: the article rule; answer "A" or "A." as asked
    # no letter first
    ("The answer is B", None, None, None),
    ("Bob", None, None, None),
    ("", None, None, None),
]


@pytest.mark.parametrize(("text", "ours", "lm_eval", "simple_evals"), LETTER_TABLE)
def test_mmlu_gen_reads_one_letter_named_first(
    text: str, ours: str | None, lm_eval: str | None, simple_evals: str | None
) -> None:
    assert extract_letter(text) == ours
    assert (lm_eval_reads(text), simple_evals_reads(text)) == (lm_eval, simple_evals)


def test_gsm8k_chat_asks_one_user_message_greedily() -> None:
    sample = next(iter(GSM8K_CHAT.load(DATA, TaskConfig(name="gsm8k_0shot_gen", n=1))))
    (request,) = GSM8K_CHAT.requests(sample, TaskConfig(name="gsm8k_0shot_gen")).values()
    assert isinstance(request.input, ChatInput)
    (message,) = request.input.messages
    assert message.role == "user" and message.content[0].text.startswith(sample.data["query"])
    assert "'#### <number>'" in message.content[0].text
    assert request.sampling.temperature == 0.0 and request.sampling.max_tokens == 256


def test_mmlu_over_chat_is_one_user_message_and_names_its_protocol() -> None:
    config = TaskConfig(name="mmlu_kshot_clp", n=1, num_fewshot=1)
    sample = next(iter(MMLU.load(DATA, config)))
    (request,) = MMLU.requests(sample, config, CHAT).values()
    assert isinstance(request.input, ChatInput)
    text = request.input.messages[0].content[0].text
    assert text == sample.data["fewshot"] + sample.data["query"]
    assert request.scoring.sampled_top_k == 100
    assert MMLU.protocol_for(CHAT).startswith("chat: the k-shot prompt as one user message")
    needs = {r.capability for r in MMLU.requirements_for(CHAT)}
    assert "chat" in needs and "text_prompt" not in needs
    (plain,) = MMLU.requests(sample, config).values()
    assert isinstance(plain.input, CompletionInput)


def test_mmlu_by_candidate_ids_needs_no_top_k() -> None:
    config = TaskConfig(name="mmlu_kshot_clp", n=1, num_fewshot=1)
    sample = next(iter(MMLU.load(DATA, config)))
    (request,) = MMLU.requests(sample, config, BY_ID).values()
    assert request.scoring.sampled_top_k == 0
    assert request.scoring.candidate_token_ids == tuple(IDS[t] for t in SPELLINGS)
    assert "candidate_scoring" in {r.capability for r in MMLU.requirements_for(BY_ID)}
    assert "no top-k" in MMLU.protocol_for(BY_ID)
    gold = sample.gold
    letters = {"A": -3.0, "B": -2.5, "C": -4.0, "D": -5.0}
    letters[gold] = -0.1
    candidates = tuple(
        TopEntry(
            token=t, logprob=letters[t.strip()] - (0.5 if t.startswith(" ") else 0), token_id=i
        )
        for t, i in IDS.items()
    )
    token = Token(text="x", logprob=-9.0, token_id=1, candidates=candidates)
    reply = Response(choices=(Choice(index=0, text="x", tokens=(token,)),))
    result = MMLU.score(sample, {"letter": reply}, config, BY_ID)
    assert result.prediction == gold and result.metrics["acc"] == 1.0
    assert result.channels["letter_logprobs"][gold] == -0.1  # the best spelling, not a sum


def test_a_missing_candidate_fails_the_sample() -> None:
    config = TaskConfig(name="mmlu_kshot_clp", n=1, num_fewshot=1)
    sample = next(iter(MMLU.load(DATA, config)))
    token = Token(
        text="x", logprob=-9.0, candidates=(TopEntry(token="A", logprob=-1.0, token_id=IDS["A"]),)
    )
    reply = Response(choices=(Choice(index=0, text="x", tokens=(token,)),))
    with pytest.raises(ContractViolation, match="letters B, C, D have no candidate logprob"):
        MMLU.score(sample, {"letter": reply}, config, BY_ID)


def test_without_every_letter_id_mmlu_keeps_the_top_k() -> None:
    partial = ModelFacts(capabilities=frozenset({"candidate_scoring"}), token_ids={"A": 1})
    config = TaskConfig(name="mmlu_kshot_clp", n=1, num_fewshot=1)
    (request,) = MMLU.requests(next(iter(MMLU.load(DATA, config))), config, partial).values()
    assert request.scoring.sampled_top_k == 100 and request.scoring.candidate_token_ids == ()


def test_mmlu_gen_scores_an_invalid_reply_as_wrong() -> None:
    config = TaskConfig(name="mmlu_0shot_gen", n=4)
    samples = list(MMLU_GEN.load(DATA, config))
    assert "Answer with the letter" in samples[0].data["query"]
    reply = Response(choices=(Choice(index=0, text="I am not sure"),))
    result = MMLU_GEN.score(samples[0], {"answer": reply}, config)
    assert result.prediction == "invalid"
    assert result.metrics == {"acc": 0.0, "invalid": 1.0, "censored": 0.0}  # it ended: wrong
    agg = MMLU_GEN.aggregate([(samples[0], result)])
    assert agg["invalid_rate"] == 1.0 and agg["acc"] == 0.0 and agg["censored_rate"] == 0.0


def test_a_generation_cut_before_its_answer_is_censored() -> None:
    """Issue 33: a reply that ended for length before any letter is censored (not simply
    wrong); one that ended for length after its letter is scored like any other."""
    config = TaskConfig(name="mmlu_0shot_gen", n=2)
    first, second = list(MMLU_GEN.load(DATA, config))[:2]
    cut = Response(choices=(Choice(index=0, text="Let me think about", finish_reason="length"),))
    result = MMLU_GEN.score(first, {"answer": cut}, config)
    assert result.metrics == {"acc": 0.0, "invalid": 1.0, "censored": 1.0}
    text = f"{second.gold}. It is"
    said = Response(choices=(Choice(index=0, text=text, finish_reason="length"),))
    answered = MMLU_GEN.score(second, {"answer": said}, config)
    assert answered.metrics == {"acc": 1.0, "invalid": 0.0, "censored": 0.0}
    agg = MMLU_GEN.aggregate([(first, result), (second, answered)])
    assert agg["censored_rate"] == 0.5 and agg["acc"] == 0.5
