"""The valid range of every numeric request leaf, in one table.

A value out of its range is refused before any byte is sent: by ``validate()`` for a request a
task builds (``Refused``), and by ``check_default_value`` for a model's ``request_defaults``
(``ConfigError``, when the config is read). Each bound has a reason:

- a float is finite (a NaN or an infinity cannot be written as JSON, nor means anything);
- an integer the wire sends fits the type the servers decode it into: a 32-bit token count or
  id, a 64-bit seed (a larger one fails in the JSON encoder, or is cut by the server);
- ``sampling.n`` at most ``MAX_N``, OpenAI's limit: every choice is a whole answer, paid for;
- the penalties in [-2, 2], the range OpenAI's API and vLLM both enforce.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["INT32_MAX", "INT64_MAX", "INT64_MIN", "MAX_N", "RANGES", "Range", "out_of_range"]

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
MAX_N = 128
"""The most choices one request may ask for (OpenAI's ``n`` limit)."""


@dataclass(frozen=True)
class Range:
    """``low <= value <= high`` (``low_open``: ``low < value``), an integer when ``integer``."""

    low: float
    high: float
    integer: bool = False
    low_open: bool = False

    def holds(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.integer and not isinstance(value, int):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high

    @property
    def text(self) -> str:
        """``an integer in [1, 128]``, ``a finite number in (0, 1]``, ``a finite number >= 0``."""
        kind = "an integer" if self.integer else "a finite number"
        if self.high == math.inf:
            return f"{kind} {'>' if self.low_open else '>='} {_shown(self.low)}"
        return f"{kind} in {'(' if self.low_open else '['}{_shown(self.low)}, {_shown(self.high)}]"


def _shown(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


RANGES: dict[str, Range] = {
    "sampling.temperature": Range(0.0, math.inf),
    "sampling.top_p": Range(0.0, 1.0, low_open=True),
    "sampling.top_k": Range(-1, INT32_MAX, integer=True),
    "sampling.max_tokens": Range(0, INT32_MAX, integer=True),
    "sampling.seed": Range(INT64_MIN, INT64_MAX, integer=True),
    "sampling.n": Range(1, MAX_N, integer=True),
    "sampling.frequency_penalty": Range(-2.0, 2.0),
    "sampling.presence_penalty": Range(-2.0, 2.0),
    "scoring.input_top_k": Range(0, INT32_MAX, integer=True),
    "scoring.sampled_top_k": Range(0, INT32_MAX, integer=True),
    "scoring.candidate_token_ids": Range(0, INT32_MAX, integer=True),
    "reasoning.budget_tokens": Range(1, INT32_MAX, integer=True),
    "scheduling.timeout_s": Range(0.0, math.inf, low_open=True),
}
"""Leaf -> its range (for ``scoring.candidate_token_ids``: each id's)."""


def out_of_range(leaf: str, value: object) -> str | None:
    """What ``value`` must be when it is outside ``leaf``'s range (``must be an integer in [1,
    128]``); None when it is inside, or the leaf has no range. A tuple is checked item by item."""
    bounds = RANGES.get(leaf)
    if bounds is None:
        return None
    items = value if isinstance(value, tuple | list) else (value,)
    if all(bounds.holds(item) for item in items):
        return None
    return f"must be {bounds.text}" + (" (each of them)" if isinstance(value, tuple | list) else "")
