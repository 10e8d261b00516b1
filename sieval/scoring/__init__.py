"""Pure scoring functions over ``Response``: continuation log-likelihood, choice picking, letter
log-probabilities, and GSM8K answer extraction and comparison."""

from .choice import argmax, pick_acc, pick_acc_norm
from .continuation import ContinuationScore, continuation_score
from .letters import candidate_letter_logprobs, letter_logprobs, spelled_letter
from .numbers import extract_flexible, extract_strict, gold_number, normalize_answer

__all__ = [
    "ContinuationScore",
    "argmax",
    "candidate_letter_logprobs",
    "continuation_score",
    "extract_flexible",
    "extract_strict",
    "gold_number",
    "letter_logprobs",
    "normalize_answer",
    "pick_acc",
    "pick_acc_norm",
    "spelled_letter",
]
