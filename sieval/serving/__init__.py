"""Serving checks: before trusting a run's numbers, what the server does with them.

Whether the server's numbers depend on batching (``batch_invariance.py``), on its prefix cache
(``cache_invariance.py``), on nothing at all (``determinism.py``: determinism, seed repeat),
which defaults it puts in fields the run leaves out (``defaults.py``), and which engine, model
and numerics produce them (``fingerprint.py``). ``selection.py`` picks the checks a run's tasks
depend on; ``suite.py`` runs them, sending the probes of ``probes.py`` and reading their replies
as ``observation.py``'s; ``finding.py`` is what one found, ``fixes.py`` what to do about a
failure; ``eval_checks.py`` and ``fingerprint_history.py`` put them in ``sieval eval`` and
``--resume``.
"""

from __future__ import annotations

from .finding import Finding
from .fingerprint import Fingerprint, compare, numerics_differ
from .observation import Cost
from .selection import ALL, Needs, needs_of, parse_selection
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
