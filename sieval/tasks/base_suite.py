"""The base-model suite: the tasks a base model's card reports, at lm-evaluation-harness 0.4.13's
names and shot defaults (all 0-shot)."""

from __future__ import annotations

from .suite import Member, Suite

SUITE = Suite(
    name="base_suite",
    about="the standard base-model suite, lm-eval 0.4.13's tasks and defaults",
    tasks=tuple(
        Member(name=name)
        for name in (
            "arc_easy",
            "arc_challenge",
            "hellaswag",
            "winogrande",
            "piqa",
            "openbookqa",
            "sciq",
            "boolq",
            "truthfulqa_mc1",
            "truthfulqa_mc2",
            "lambada_openai",
            "wikitext",
            "mmlu",
        )
    ),
)
