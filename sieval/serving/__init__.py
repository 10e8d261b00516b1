"""Serving checks: before trusting a run's numbers, what the server does with them.

Whether the server's numbers depend on batching (``batch.py``), on its prefix cache
(``cache.py``), on nothing at all (``repeat.py``: determinism, seed repeat), which defaults it
puts in fields the run leaves out (``defaults.py``), and which engine, model and numerics produce
them (``fingerprint.py``). ``needs.py`` picks the checks a run's tasks depend on; ``suite.py``
runs them; ``in_eval.py`` and ``across_runs.py`` put them in ``sieval eval`` and ``--resume``.
"""

from __future__ import annotations

from .findings import Finding
from .fingerprint import Fingerprint, compare, numerics_differ
from .needs import ALL, Needs, needs_of, parse_selection
from .observe import Cost
from .suite import DEFAULT_COPIES, Serving, run_serving_checks

__all__ = [
    "ALL",
    "DEFAULT_COPIES",
    "Cost",
    "Finding",
    "Fingerprint",
    "Needs",
    "Serving",
    "compare",
    "needs_of",
    "numerics_differ",
    "parse_selection",
    "run_serving_checks",
]
