"""The instruct suite: what chat and reasoning models' cards report (the Open LLM Leaderboard v2's
IFEval, BBH, MATH and GPQA, with AIME, MMLU-Pro and the code tasks of the SFT suites), at each
task's own shots and options."""

from __future__ import annotations

from .suite import Member, Suite

SUITE = Suite(
    name="instruct_suite",
    about="the chat / reasoning-model suite: instruction following, reasoning, maths, code",
    tasks=tuple(
        Member(name=name)
        for name in (
            "ifeval",
            "bbh",
            "math500",
            "aime2024",
            "aime2025",
            "gpqa_diamond",
            "mmlu_pro",
            "humaneval",
            "mbpp",
            "mbpp_sanitized",
        )
    ),
)
