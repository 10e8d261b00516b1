"""MMLU, 0-shot, the model answers with a letter (generation), for wires without logprobs.

Hendrycks et al. 2021, "Measuring Massive Multitask Language Understanding",
https://arxiv.org/abs/2009.03300

The user message is the subject header, the question with its four options in hendrycks' format,
and one instruction line; the reply is generated greedily (max 8 tokens, through the model's chat
template). The letter is extracted strictly (``extract_letter``): the reply must begin with one
letter and name no other; anything else is ``invalid`` and scored wrong (``invalid_rate`` counts
them). ``acc`` is the micro-average, with per-subject and per-category breakdowns.

The rule, in order, on the reply with outer whitespace removed:

1. an ``Answer:`` in front is dropped (any case);
2. the reply must begin with a letter A-D (any case), alone: optionally in parentheses or bold,
   followed by the end, a space or punctuation (``C``, ``C.``, ``(C) because``, ``**C**``,
   ``C. Paris``); ``Bob`` or ``The answer is C`` are no letter;
3. an ``A`` followed by a space and a lower-case word is the article, not the letter (``A good
   answer is C`` names no letter first: invalid; so is ``A is correct``: answer ``A`` or ``A.``);
4. a reply that begins with a list of letters names several, and picks none (``A B C D``, ``A,
   B, C or D``, ``(A) or (B)``, ``B and C``): invalid. A letter after the first that is the
   article does not make a list (``C. A city in France`` is C).

lm-evaluation-harness 0.4.13's ``mmlu_generative`` compares the whole first line, case and
punctuation ignored, with the letter: it scores the three replies above (a list, the article)
wrong too, but also ``C. Paris`` and ``Answer: C`` (read here as C). simple-evals' ``mmlu_eval``
reads the first ``Answer: X`` anywhere (``ANSWER_PATTERN_MULTICHOICE``, the letter then
anything): ``Answer: A, B, C or D`` is A there, invalid here; a reply without ``Answer:`` is no
answer there, a letter here when it comes first. The rules were tightened (3, 4) after the
protocol line was written; it still says what they do ("strictly from the start of the reply"),
so runs made before resume.
"""

from __future__ import annotations

import re

from ._mmlu import GROUPS, ORIGINAL, SUBJECTS, description
from .families import Answer, Generation
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

INSTRUCTION = "Answer with the letter of the correct option (A, B, C or D) only."
PREFIX = re.compile(r"answer\s*:\s*", re.I)
LETTER = re.compile(r"(?:\*\*)?\(?([ABCD])\)?(?:\*\*)?(?=$|[\s.,:;!?)/&*])", re.I)
"""A letter standing alone, optionally in parentheses or bold."""
SEPARATOR = re.compile(r"\s*[,;/&.]\s*|\s+(?:or|and)\s+|\s+", re.I)
"""What separates the letters of a list (``A, B, C or D``)."""
MAX_TOKENS = 8
LETTERS = ("A", "B", "C", "D")
TEXT = description(
    "{{ (question ~ '\\nA. ' ~ choices[0] ~ '\\nB. ' ~ choices[1] ~ '\\nC. ' ~ choices[2]"
    " ~ '\\nD. ' ~ choices[3]).rstrip() }}\n\n" + INSTRUCTION
)


def _letter_at(text: str, at: int) -> tuple[str, int] | None:
    """The letter standing alone at ``at`` and where it ends, or None (no letter, or the
    article ``A``)."""
    match = LETTER.match(text, at)
    if match is None:
        return None
    letter = match.group(1)
    bare = match.end() == match.start(1) + 1  # no closing parenthesis or bold
    if letter in "Aa" and bare and _article(text[match.end() :]):
        return None
    return letter.upper(), match.end()


def _article(after: str) -> bool:
    """Whether what follows an ``A`` makes it the article: a space, then a lower-case word."""
    rest = after.lstrip(" \t")
    return len(rest) < len(after) and rest[:1].isalpha() and rest[:1].islower()


def extract_letter(text: str) -> str | None:
    """The answer letter when the reply begins with it and names no other (the module's rule);
    else None."""
    reply = text.strip()
    prefix = PREFIX.match(reply)
    if prefix is not None:
        reply = reply[prefix.end() :]
    first = _letter_at(reply, 0)
    if first is None:
        return None
    letter, end = first
    separator = SEPARATOR.match(reply, end)
    if separator is not None and separator.end() > end:
        following = _letter_at(reply, separator.end())
        if following is not None and following[0] != letter:
            return None  # a list of letters: several named, none picked
    return letter


SPEC = Spec(
    name="mmlu_0shot_gen",
    about=__doc__.split("\n\n")[1],
    reference="hendrycks/test evaluate.py (question format), sieval's instruction and extraction",
    data=Data(
        source="mmlu",
        split="test",
        subsets=SUBJECTS,
        subset_option="subjects",
        subset_groups=GROUPS,
    ),
    prompt=Prompt(text=TEXT, target="answer"),
    family=Generation(
        answers=(Answer(metric="acc", extract=extract_letter),),
        gold=lambda row: LETTERS[row["answer"]],
        input="chat",
        max_tokens=MAX_TOKENS,
        has_max_tokens_option=False,
        invalid="invalid",
        request="answer",
        count_invalid=True,
        protocol_text=(
            "chat, 0-shot: subject header + question + options A-D in hendrycks' format + an "
            "instruction to answer with the letter only, as the user message; greedy generation "
            "(temperature 0, max_tokens 8); the letter extracted strictly from the start of the "
            "reply, anything else invalid and wrong; acc = micro-average"
        ),
    ),
    headline="acc",
    breakdowns={"by_subject": lambda group: group, "by_category": ORIGINAL.__getitem__},
    cluster_by_group=True,
)
TASK = SpecTask(SPEC)
