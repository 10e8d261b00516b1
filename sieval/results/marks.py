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

``judged``
    The headline is a judge's: the task's scores come from the model playing the ``judge`` role,
    named (its label, model id and endpoint), with the judge replies that broke the verdict
    format (``judge_parse_errors``, never scored) and, when the judge is the evaluated model
    (``judge_self``), that too. The fix: another judge's view, ``sieval rejudge``.

``exposed``
    The task's requests leave a sampling field to the server, and the serving checks found that
    the server's default changes answers (``differs``, ``length``) or could not tell
    (``unverified``: the wire cannot send the field and no probe showed it): vLLM and SGLang
    apply the model's ``generation_config.json`` to such a field. The fix is the check's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import UnsetType

from .document import Mark, Report, UnitResult

__all__ = [
    "NOT_CONTENT",
    "exposed_mark",
    "judged_mark",
    "marks_of",
    "partial_mark",
    "result_marks",
]

NOT_CONTENT = frozenset({"TransportError"})
"""Failure classes not tied to a sample's content (a failure of any other class marks the
headline partial)."""

_EXPOSING = {
    "differs": "the server's default changes answers",
    "length": "left to the server, which decides how long answers are",
    "unverified": "cannot be sent on this wire nor verified",
}
"""What each status of the defaults check means for a result that meets the field."""


def partial_mark(result: UnitResult) -> Mark | None:
    """The ``partial`` mark of one result, or None when no sample failed for its content."""
    failures = {k: int(v) for k, v in result.failures.items() if k not in NOT_CONTENT}
    failed = sum(failures.values())
    if not failed:
        return None
    samples = result.samples
    examples = {e.error_class: e.message for e in result.failure_examples}
    classes = ", ".join(
        f"{count} {kind}" + (f" ({_short(examples[kind])})" if kind in examples else "")
        for kind, count in sorted(failures.items())
    )
    return Mark(
        mark="partial",
        why=(
            f"{failed} of {samples.total} samples failed for a reason tied to their "
            f"content: {classes}; the headline is over the other {samples.scored} scored, which "
            "are not a random subset of the task"
        ),
        fix="remove the cause, then retry the failed samples with sieval eval --resume RUN_DIR",
    )


def exposed_mark(result: UnitResult, serving: Mapping[str, Any] | None) -> Mark | None:
    """The ``exposed`` mark of one result from the report's ``serving`` section, or None."""
    entry = (serving or {}).get(result.model) or {}
    task = result.task
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
        return Mark(
            mark="exposed",
            why=f"the task's requests leave to the server's defaults what the serving checks "
            f"could not clear: {said}",
            fix=str(finding.get("meaning") or ""),
        )
    return None


def judged_mark(
    result: UnitResult, label: str, judge: Mapping[str, Any], evaluated: Mapping[str, Any]
) -> Mark:
    """The ``judged`` mark of a judged task's result: ``label`` the judge's config label,
    ``judge`` and ``evaluated`` the judge's and the evaluated model's identities (the run's
    ``inputs``)."""
    errors = result.metrics.get("judge_parse_errors")
    model, endpoint = judge.get("model"), judge.get("endpoint")
    said = f"scored by the judge {label!r} (model {model!r} at {endpoint})"
    if model == evaluated.get("model"):
        said += ", the evaluated model itself (judge_self: true)"
    if isinstance(errors, int | float):
        said += f"; {int(errors)} judge replies broke the verdict format and are not scored"
    return Mark(
        mark="judged",
        why=said,
        fix="judge the same answers with another judge (sieval rejudge RUN --judge LABEL) and "
        "read the agreement in sieval compare",
    )


def marks_of(result: UnitResult, serving: Mapping[str, Any] | None) -> list[Mark]:
    """Every mark of one result (``serving``: the report's ``serving`` section)."""
    return [m for m in (partial_mark(result), exposed_mark(result, serving)) if m is not None]


def result_marks(report: Report, result: UnitResult) -> list[Mark]:
    """A result's marks as its report holds them, or computed for a report written before."""
    if not isinstance(result.marks, UnsetType):
        return list(result.marks)
    return marks_of(result, report.serving)


def _short(message: str, limit: int = 160) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
