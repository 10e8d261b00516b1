"""IFEval scoring: each instruction of a prompt checked strictly and loosely, and the four metrics.

As the IFEval reference's ``evaluation_lib.py`` defines them (Zhou et al. 2023, arXiv:2311.07911;
google-research ``instruction_following_eval``):

- strict: an instruction is followed when the response is not blank and its check passes;
- loose: when the check passes on any of eight variants of the response, tried in this order:
  the response, without ``*``, without its first line, without its last line, without both,
  and the last three again without ``*`` (the line-dropping ones stripped; a blank variant never
  passes). The variant that passed first is recorded as the rule (``LOOSE_VARIANTS``);
- prompt-level accuracy: the share of prompts whose every instruction is followed;
  instruction-level accuracy: the share of all instructions followed (834 on the 541 prompts).

The metric names are lm-evaluation-harness's (``prompt_level_strict_acc``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from .instructions import CHECKS, InstructionArgsError, check_instruction
from .text import DEPENDENCIES

__all__ = [
    "CHECKS",
    "DEPENDENCIES",
    "LOOSE_VARIANTS",
    "InstructionArgsError",
    "InstructionVerdict",
    "PromptVerdict",
    "check_instruction",
    "check_response",
    "ifeval_metrics",
    "loose_variants",
]

LOOSE_VARIANTS = (
    "response",
    "no_asterisks",
    "without_first_line",
    "without_last_line",
    "without_first_and_last_line",
    "no_asterisks_without_first_line",
    "no_asterisks_without_last_line",
    "no_asterisks_without_first_and_last_line",
)


class InstructionVerdict(msgspec.Struct, frozen=True, kw_only=True):
    instruction_id: str
    strict: bool
    loose: bool
    loose_rule: str | None
    """The first of ``LOOSE_VARIANTS`` on which the check passed; None when none did."""


class PromptVerdict(msgspec.Struct, frozen=True, kw_only=True):
    instructions: tuple[InstructionVerdict, ...]
    strict: bool
    """Every instruction followed, strictly."""
    loose: bool
    """Every instruction followed, loosely."""


def loose_variants(response: str) -> dict[str, str]:
    """The eight texts the loose check tries, by name, in order."""
    lines = response.split("\n")
    first = "\n".join(lines[1:]).strip()
    last = "\n".join(lines[:-1]).strip()
    both = "\n".join(lines[1:-1]).strip()
    texts = [response, response.replace("*", ""), first, last, both]
    texts += [t.replace("*", "") for t in (first, last, both)]
    return dict(zip(LOOSE_VARIANTS, texts, strict=True))


def check_response(
    response: str, instruction_ids: Sequence[str], kwargs: Sequence[Mapping[str, Any]]
) -> PromptVerdict:
    """Check ``response`` against a prompt's instructions (``kwargs[i]`` is the arguments of
    ``instruction_ids[i]``, as in IFEval's ``input_data.jsonl``)."""
    if len(instruction_ids) != len(kwargs):
        raise InstructionArgsError(
            f"instruction_id_list has {len(instruction_ids)} ids but kwargs has {len(kwargs)}"
        )
    variants = loose_variants(response)
    verdicts = []
    for instruction_id, args in zip(instruction_ids, kwargs, strict=True):
        strict = bool(response.strip()) and check_instruction(instruction_id, response, args)
        rule = next(
            (
                name
                for name, text in variants.items()
                if text.strip() and check_instruction(instruction_id, text, args)
            ),
            None,
        )
        verdicts.append(
            InstructionVerdict(
                instruction_id=instruction_id,
                strict=strict,
                loose=rule is not None,
                loose_rule=rule,
            )
        )
    return PromptVerdict(
        instructions=tuple(verdicts),
        strict=all(v.strict for v in verdicts),
        loose=all(v.loose for v in verdicts),
    )


def ifeval_metrics(verdicts: Sequence[PromptVerdict]) -> dict[str, float]:
    """The four IFEval accuracies over the prompts' verdicts (nan with no prompts)."""
    instructions = [v for p in verdicts for v in p.instructions]

    def share(values: list[bool]) -> float:
        return sum(values) / len(values) if values else float("nan")

    return {
        "prompt_level_strict_acc": share([p.strict for p in verdicts]),
        "inst_level_strict_acc": share([v.strict for v in instructions]),
        "prompt_level_loose_acc": share([p.loose for p in verdicts]),
        "inst_level_loose_acc": share([v.loose for v in instructions]),
    }
