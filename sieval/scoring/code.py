"""The programs a code task runs in the sandbox, and the code extracted from a chat answer.

- HumanEval (Chen et al. 2021, https://github.com/openai/human-eval ``human_eval/execution.py``):
  ``prompt + completion + "\\n" + test + "\\n" + f"check({entry_point})"``.
- MBPP (Austin et al. 2021, google-research ``mbpp``): the code, then the test imports
  (sanitized split) and ``test_setup_code`` (full split), then each ``assert`` of
  ``test_list`` on its own line, as lm-evaluation-harness's ``mbpp`` task joins them.

``extract_code`` takes a chat answer to the code it holds. Rules, in order: ``fenced_python``
(the first `````python`` or `````py`` block), ``fenced`` (the first ````` block of any
language), ``raw`` (the whole text, for a completion that is code already).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

__all__ = ["CodeExtraction", "extract_code", "humaneval_program", "mbpp_program"]

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


class CodeExtraction(msgspec.Struct, frozen=True, kw_only=True):
    code: str
    rule: str
    """``fenced_python``, ``fenced`` or ``raw``."""
    closed: bool = True
    """False when the text ended inside the block, before its closing fence."""


def extract_code(text: str) -> CodeExtraction:
    blocks = [
        (m.group(1).lower(), m.group(2), m.group(0).endswith("```")) for m in _FENCE.finditer(text)
    ]
    for language, body, closed in blocks:
        if language in ("python", "py", "python3"):
            return CodeExtraction(code=body, rule="fenced_python", closed=closed)
    if blocks:
        return CodeExtraction(code=blocks[0][1], rule="fenced", closed=blocks[0][2])
    return CodeExtraction(code=text, rule="raw")


def humaneval_program(prompt: str, completion: str, test: str, entry_point: str) -> str:
    return f"{prompt}{completion}\n{test}\ncheck({entry_point})\n"


def mbpp_program(
    code: str, test_list: Sequence[str], test_setup_code: str = "",
    test_imports: Sequence[str] = (),
) -> str:  # fmt: skip
    parts = [code, *test_imports, test_setup_code, *test_list]
    return "\n".join(part for part in parts if part) + "\n"
