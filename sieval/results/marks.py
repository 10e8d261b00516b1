"""Marks on a headline: what a reader must know before trusting it, with the reason.

Each result of ``report.json`` carries ``marks``, a list of ``{mark, why, fix}``; every view
shows them beside the figure (the run's summary, ``sieval report`` in each ``--format``, the
HTML report, ``sieval compare``). A report written before marks existed gets them from its own
figures when it is read (``marks_of``).

``partial``
    Samples failed for a reason tied to their content, so the headline is over the others, which
    are not a random subset of the task: a checker that could not run on some answers (a
    dependency it imports for some instructions only), a request the dialect or the server
    refused (a prompt too long), a reply that broke its contract, a scoring error. Every failure
    class is taken as such but ``TransportError`` (connect, timeout, 429 or 5xx after the
    retries), which is about the server, not the sample; a transport failure is counted beside
    the headline, not marked.

``exposed``
    The task's requests leave a sampling field to the server, and the serving checks found that
    the server's default changes answers (``differs``, ``length``) or could not tell
    (``unverified``: the wire cannot send the field and no probe showed it): vLLM and SGLang
    apply the model's ``generation_config.json`` to such a field. The fix is the check's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["NOT_CONTENT", "exposed_mark", "marks_of", "partial_mark", "result_marks"]

NOT_CONTENT = frozenset({"TransportError"})
"""Failure classes not tied to a sample's content (a failure of any other class marks the
headline partial)."""

_EXPOSING = {
    "differs": "the server's default changes answers",
    "length": "left to the server, which decides how long answers are",
    "unverified": "cannot be sent on this wire nor verified",
}
"""What each status of the defaults check means for a result that meets the field."""


def partial_mark(result: Mapping[str, Any]) -> dict[str, str] | None:
    """The ``partial`` mark of one result, or None when no sample failed for its content."""
    failures = {
        k: int(v) for k, v in (result.get("failures") or {}).items() if k not in NOT_CONTENT
    }
    failed = sum(failures.values())
    if not failed:
        return None
    samples = result.get("samples") or {}
    examples = {
        str(e.get("class")): str(e.get("message", ""))
        for e in result.get("failure_examples") or []
        if isinstance(e, Mapping)
    }
    classes = ", ".join(
        f"{count} {kind}" + (f" ({_short(examples[kind])})" if kind in examples else "")
        for kind, count in sorted(failures.items())
    )
    scored = samples.get("scored", "?")
    return {
        "mark": "partial",
        "why": (
            f"{failed} of {samples.get('total', '?')} samples failed for a reason tied to their "
            f"content: {classes}; the headline is over the other {scored} scored, which are not "
            "a random subset of the task"
        ),
        "fix": "remove the cause, then retry the failed samples with sieval eval --resume RUN_DIR",
    }


def exposed_mark(
    result: Mapping[str, Any], serving: Mapping[str, Any] | None
) -> dict[str, str] | None:
    """The ``exposed`` mark of one result from the report's ``serving`` section, or None."""
    entry = (serving or {}).get(str(result.get("model"))) or {}
    task = result.get("task")
    for finding in entry.get("findings") or []:
        if not isinstance(finding, Mapping) or finding.get("check") != "server_defaults":
            continue
        found = {
            leaf: str(v.get("status"))
            for leaf, v in (finding.get("evidence") or {}).items()
            if isinstance(v, Mapping)
            and v.get("status") in _EXPOSING
            and task in v.get("tasks", [])
        }
        if not found:
            return None
        said = "; ".join(
            f"{', '.join(leaf.rpartition('.')[2] for leaf, s in found.items() if s == status)} "
            f"({status}): {what}"
            for status, what in _EXPOSING.items()
            if status in found.values()
        )
        return {
            "mark": "exposed",
            "why": f"the task's requests leave to the server's defaults what the serving checks "
            f"could not clear: {said}",
            "fix": str(finding.get("meaning") or ""),
        }
    return None


def marks_of(result: Mapping[str, Any], serving: Mapping[str, Any] | None) -> list[dict[str, str]]:
    """Every mark of one result (``serving``: the report's ``serving`` section)."""
    return [m for m in (partial_mark(result), exposed_mark(result, serving)) if m is not None]


def result_marks(report: Mapping[str, Any], result: Mapping[str, Any]) -> list[dict[str, str]]:
    """A result's marks as its report holds them, or computed for a report written before."""
    held = result.get("marks")
    if isinstance(held, Sequence) and not isinstance(held, str):
        return [dict(m) for m in held if isinstance(m, Mapping)]
    return marks_of(result, report.get("serving"))


def _short(message: str, limit: int = 160) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
