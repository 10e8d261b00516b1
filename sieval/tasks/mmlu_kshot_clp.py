"""MMLU, k-shot, scored by the next-token log-probability of the answer letter (CLP).

Hendrycks et al. 2021, "Measuring Massive Multitask Language Understanding",
https://arxiv.org/abs/2009.03300

The prompt is the original ``evaluate.py`` (hendrycks/test) wording: a subject header, the first k
dev rows of the same subject (default 5, in file order), then the target ending in ``Answer:``.
Two details differ from one or the other reference: the header has one space before the subject,
as lm-evaluation-harness's ``mmlu`` description has (``evaluate.py`` prints two), and questions are
used as written, as ``evaluate.py`` does (lm-eval strips them). The letters are scored by the
``choice letter`` family (``families/letter.py``): from the top-k (default 100, option ``top_k``),
by token id on a dialect with ``candidate_scoring``, over chat as one user message. This is
neither ``evaluate.py``'s scoring (the `` A`` entry of the top-100 only, -100 when absent) nor
lm-eval's (the full log-likelihood of each continuation `` A`` ... `` D``: task ``mmlu``).

Samples interleave subjects (row 0 of every subject in alphabetical order, then row 1, ...) so
that a small ``n`` spans many subjects. ``acc`` is the micro-average, with per-subject and
per-category (the original release's STEM / humanities / social sciences / other) breakdowns.
"""

from __future__ import annotations

from ._mmlu import GROUPS, ORIGINAL, SUBJECTS, description
from .families import ChoiceLetter
from .prompt import Prompt
from .shots import FIRST_N
from .spec import Data, Spec, SpecTask

QUESTION = (
    "{{question}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nC. {{choices[2]}}\nD. {{choices[3]}}"
    "\nAnswer:"
)
LETTERS = ("A", "B", "C", "D")
SPELLINGS = tuple(f"{space}{letter}" for letter in LETTERS for space in ("", " "))
"""The letters as the next token may spell them; each one that is a single token of the model's
tokenizer is scored by id on a dialect with ``candidate_scoring``."""

SPEC = Spec(
    name="mmlu_kshot_clp",
    about=__doc__.split("\n\n")[1],
    reference="hendrycks/test evaluate.py (prompt), sieval's letter scoring",
    data=Data(
        source="mmlu",
        split="test",
        shots="dev",
        sampler=FIRST_N,
        subsets=SUBJECTS,
        subset_option="subjects",
        subset_groups=GROUPS,
    ),
    prompt=Prompt(text=QUESTION, target="answer", choices=list(LETTERS), description=description()),
    family=ChoiceLetter(
        letters=LETTERS,
        protocol_text=(
            "next-token logprob of the letters A-D (stripped of leading space/'▁', max over "
            "spellings) read from the top-k list after k dev shots in hendrycks' format; "
            "prediction = argmax, ties -> earliest letter; any letter missing from top-k fails; "
            "acc = micro-average"
        ),
    ),
    headline="acc",
    num_fewshot=5,
    breakdowns={"by_subject": lambda group: group, "by_category": ORIGINAL.__getitem__},
    cluster_by_group=True,
)
TASK = SpecTask(SPEC)
