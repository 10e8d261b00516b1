"""ARC-Easy, k-shot, scored by the log-likelihood of each choice's text (sieval's first task).

Clark et al. 2018, "Think you have Solved Question Answering? Try ARC, the AI2 Reasoning
Challenge", https://arxiv.org/abs/1803.05457

The text is lm-evaluation-harness's ``arc_easy`` (``arc_easy`` here is that task); this one
differs in its shots, 25 by default (the Open LLM Leaderboard's setting for ARC), drawn once for
all samples with ``random.Random(seed)``, and in ``acc_uncond`` (Brown et al. 2020: the choice's
log-likelihood after the context minus after a bare ``Answer:``), on by default as its protocol
has always said (a run made with it resumes with it); ``options: {acc_uncond: false}`` halves the
requests.
"""

from __future__ import annotations

from .families import MultipleChoice
from .prompt import Prompt
from .shots import SHARED
from .spec import Data, Spec, SpecTask

QUERY = "Question: {{question}}\nAnswer:"
UNCONDITIONAL_CONTEXT = "Answer:"

SPEC = Spec(
    name="arc_easy_kshot_ppl",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/arc/arc_easy.yaml (prompt); shots and acc_uncond sieval's",
    data=Data(source="arc_easy", split="test", shots="train", sampler=SHARED, id_field="id"),
    prompt=Prompt(
        text=QUERY, target="{{choices.label.index(answerKey)}}", choices="{{choices.text}}"
    ),
    family=MultipleChoice(uncond_context=UNCONDITIONAL_CONTEXT, uncond_default=True),
    headline="acc_norm",
    num_fewshot=25,
    extra=lambda row: {"labels": list(row["choices"]["label"])},
    protocol=(
        "loglikelihood of ' {choice}' after k seeded train shots + 'Question: {q}\\nAnswer:' via "
        "input scoring; acc = argmax sum, acc_norm = argmax sum/len(choice), characters of the "
        "choice without its leading space (lm-eval), acc_uncond = argmax sum minus the sum "
        "after a bare 'Answer:' (Brown et al.); ties -> lowest index"
    ),
)
TASK = SpecTask(SPEC)
