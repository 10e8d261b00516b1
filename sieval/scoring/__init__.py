"""Pure scoring functions over ``Response``: continuation log-likelihood, choice picking, letter
log-probabilities, and GSM8K answer extraction and comparison; and the uncertainty of the scores
(standard errors, confidence intervals, McNemar's test)."""

from .choice import argmax, pick_acc, pick_acc_norm
from .continuation import ContinuationScore, continuation_score
from .letters import candidate_letter_logprobs, letter_logprobs, spelled_letter
from .numbers import extract_flexible, extract_strict, gold_number, normalize_answer
from .uncertainty import Estimate, McNemar, is_binary, mcnemar, mean_estimate, paired_difference

__all__ = [
    "ContinuationScore",
    "Estimate",
    "McNemar",
    "argmax",
    "candidate_letter_logprobs",
    "continuation_score",
    "extract_flexible",
    "extract_strict",
    "gold_number",
    "is_binary",
    "letter_logprobs",
    "mcnemar",
    "mean_estimate",
    "normalize_answer",
    "paired_difference",
    "pick_acc",
    "pick_acc_norm",
    "spelled_letter",
]
