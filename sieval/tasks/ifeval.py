"""IFEval: verifiable instructions (a word count, no commas, JSON, ...) checked in the answer.

Zhou et al. 2023, "Instruction-Following Evaluation for Large Language Models",
https://arxiv.org/abs/2311.07911

The prompt is the user message as stored, 0-shot; the answer is generated greedily (up to 1280
tokens, lm-eval's ``ifeval``). Each instruction is checked strictly and loosely
(``scoring/ifeval``, the reference's ``evaluation_lib`` semantics). Per sample the prompt-level
metrics are 1 when every instruction is followed; the instruction-level figures are the share of
all instructions followed (the per-sample shares weighted by their instruction counts, so 834
instructions on the 541 prompts count once each). The rule recorded is ``response`` (the whole
answer is checked) and the extracted answer counts what was followed (``followed: strict 1/3,
loose 2/3``); a blank answer is invalid. Each instruction's verdict (strict, loose, the loose
variant that passed) is the ``instructions`` channel.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..scoring.ifeval import DEPENDENCIES, check_response
from ..scoring.uncertainty import UNIT, Derived
from .base import Sample, SampleResult
from .families import Checked, Verdict
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

PROMPT_METRICS = ("prompt_level_strict_acc", "prompt_level_loose_acc")
INST_METRICS = ("inst_level_strict_acc", "inst_level_loose_acc")


def check(text: str, sample: Sample) -> Verdict:
    ids, kwargs = sample.gold["instruction_id_list"], sample.gold["kwargs"]
    verdict = check_response(text, ids, kwargs)
    n = len(verdict.instructions)
    metrics = {
        "prompt_level_strict_acc": float(verdict.strict),
        "prompt_level_loose_acc": float(verdict.loose),
        "inst_level_strict_acc": sum(v.strict for v in verdict.instructions) / n,
        "inst_level_loose_acc": sum(v.loose for v in verdict.instructions) / n,
        "n_instructions": float(n),
    }
    instructions = [
        {"id": v.instruction_id, "strict": v.strict, "loose": v.loose, "loose_rule": v.loose_rule}
        for v in verdict.instructions
    ]
    blank = not text.strip()
    strict = sum(v.strict for v in verdict.instructions)
    loose = sum(v.loose for v in verdict.instructions)
    return Verdict(
        metrics=metrics,
        extracted=None if blank else f"followed: strict {strict}/{n}, loose {loose}/{n}",
        rule=None if blank else "response",
        channels={"instructions": instructions},
        final=False,  # the answer is the whole response: one cut for length is no final answer
    )


FAMILY = Checked(
    check=check,
    gold=lambda row: {"instruction_id_list": row["instruction_id_list"], "kwargs": row["kwargs"]},
    headline="prompt_level_strict_acc",
    input="chat",
    max_tokens=1280,
    needs=DEPENDENCIES,
    vote=False,
    protocol_text=(
        "ifeval (lm-eval 0.4.13 ifeval; the reference's evaluation_lib): 0-shot, the prompt as "
        "stored, greedy, max_tokens 1280; every instruction checked strictly and loosely (eight "
        "variants of the answer); prompt-level = all followed, instruction-level = the share of "
        "all instructions followed"
    ),
)


def figures(results: Iterable[tuple[Sample, SampleResult]]) -> dict[str, Any]:
    """The family's figures, with the instruction-level ones weighted by instruction count."""
    kept = list(results)
    out = FAMILY.aggregate(SPEC, kept)
    total = sum(r.metrics["n_instructions"] for _, r in kept)
    for name in INST_METRICS:
        out[name] = sum(r.metrics[name] * r.metrics["n_instructions"] for _, r in kept) / total
    out.pop("n_instructions", None)
    out["instructions"] = int(total)
    return out


SPEC = Spec(
    name="ifeval",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/ifeval/ifeval.yaml",
    data=Data(source="ifeval", split="train", id_field="key"),
    prompt=Prompt(text="prompt", target=""),
    family=FAMILY,
    headline="prompt_level_strict_acc",
    figures=figures,
    derived={
        name: Derived(of=name, per="n_instructions", weighted=True, bounds=UNIT)
        for name in INST_METRICS
    },
)
TASK = SpecTask(SPEC)
