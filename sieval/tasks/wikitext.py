"""WikiText-2 (raw, document level): each article's rolling log-likelihood, as
lm-evaluation-harness's ``wikitext`` (word and byte perplexity, bits per byte).

Merity et al. 2016, "Pointer Sentinel Mixture Models", https://arxiv.org/abs/1609.07843

The page is detokenised by lm-eval's ``wikitext_detokenizer`` before it is scored; its words
(``re.split(r"\\s+", page)``) and UTF-8 bytes are counted in the page as stored, before
detokenisation, as lm-eval's ``process_results`` counts them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .families import RollingLogLikelihood
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

_DEGREE = chr(176)


def detokenize(row: Mapping[str, Any]) -> str:
    """lm-eval's ``wikitext_detokenizer``: WikiText's tokenised spacing undone."""
    text: str = row["page"]
    text = text.replace("s '", "s'")  # contractions
    text = re.sub(r"/' [0-9]/", r"/'[0-9]/", text)
    for spaced, joined in ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", ".")):  # number separators
        text = text.replace(spaced, joined)
    for mark in ":;.!?,":  # punctuation
        text = text.replace(f" {mark} ", f"{mark} ")
    text = re.sub(r"\(\s*([^\)]*?)\s*\)", r"(\1)", text)  # brackets and quotes
    text = re.sub(r"\[\s*([^\]]*?)\s*\]", r"[\1]", text)
    text = re.sub(r"{\s*([^}]*?)\s*}", r"{\1}", text)
    text = re.sub(r"\"\s*([^\"]*?)\s*\"", r'"\1"', text)
    text = re.sub(r"'\s*([^']*?)\s*'", r"'\1'", text)
    for spaced, joined in (
        ("= = = =", "===="), ("= = =", "==="), ("= =", "=="), (f" {_DEGREE} ", _DEGREE),
        (" \n", "\n"), ("\n ", "\n"), (" N ", " 1 "), (" 's", "'s"),
    ):  # fmt: skip
        text = text.replace(spaced, joined)
    return text


def count(row: Mapping[str, Any]) -> tuple[int, int]:
    """The words and UTF-8 bytes of the page as stored."""
    page: str = row["page"]
    return len(re.split(r"\s+", page)), len(page.encode("utf-8"))


SPEC = Spec(
    name="wikitext",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/wikitext/wikitext.yaml and preprocess_wikitext.py",
    data=Data(source="wikitext", split="test"),
    prompt=Prompt(text="", target=detokenize),
    family=RollingLogLikelihood(count=count),
    headline="word_perplexity",
    differs=(
        "each document is tokenised without special tokens and predicted after one BOS (lm-eval "
        "with add_bos_token=True also predicts the document's own BOS after its prefix BOS)"
    ),
)
TASK = SpecTask(SPEC)
