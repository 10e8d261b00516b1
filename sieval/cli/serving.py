"""The serving checks on screen: ``sieval report``'s serving section and ``sieval probe --checks``.

One table per model: each check's outcome and evidence, what a failure means, and what the checks
cost; the fingerprint in one line (engine, model, dtype, numerics digest), and, for a run resumed
onto other numerics, the fingerprints it spans.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text

from .inert import shown

__all__ = ["render_serving"]

_STYLE = {"passed": "green", "failed": "red", "skipped": "yellow"}


def _cost(cost: Mapping[str, Any] | None) -> str:
    if not cost or not cost.get("requests"):
        return ""
    unreported = cost.get("unreported") or 0
    extra = f", {unreported} without usage" if unreported else ""
    return (
        f"{cost['requests']} requests, {cost.get('prompt_tokens', 0)} prompt and "
        f"{cost.get('output_tokens', 0)} output tokens{extra}"
    )


def _headline(fingerprint: Mapping[str, Any] | None) -> str:
    if not fingerprint:
        return "not taken"
    engine = f"{fingerprint.get('engine') or 'unknown engine'} {fingerprint.get('version') or ''}"
    model = fingerprint.get("model") or {}
    name = model.get("root") or model.get("model_path") or model.get("id") or "?"
    dtype = f", {fingerprint['dtype']}" if fingerprint.get("dtype") else ""
    digest = str(fingerprint.get("digest") or "").removeprefix("sha256:")[:12]
    noise = fingerprint.get("noise")
    repeat = "" if not digest else (
        ", repeats exactly" if noise == 0 else ", greedy text does not repeat" if noise == -1
        else f", repeat noise {noise:.3g}"
    )  # fmt: skip
    return f"{engine.strip()}, model {name}{dtype}, numerics {digest or 'not measured'}{repeat}"


def render_serving(section: Mapping[str, Mapping[str, Any]]) -> list[Table | Text]:
    """``report.json``'s ``serving`` (or one probe's, under its label): a borderless table per
    model (check, outcome, evidence and, for a failure, what to do), then its fingerprint, the
    fingerprints a resumed run spans, and the cost: reads at 80 columns."""
    out: list[Table | Text] = []
    for label, entry in section.items():
        findings = entry.get("findings") or []
        if not findings and not entry.get("fingerprint"):
            continue
        table = Table(title=shown(f"serving checks · {label}"), box=None, title_justify="left")
        table.add_column("check", no_wrap=True)
        table.add_column("outcome", no_wrap=True)
        table.add_column("evidence", overflow="fold")
        for finding in findings:
            outcome = str(finding.get("outcome"))
            evidence = shown(str(finding.get("detail") or ""))
            if finding.get("meaning") and outcome != "passed":
                evidence += Text(f"\n→ {finding['meaning']}", style="dim")
            table.add_row(
                str(finding.get("check")), Text(outcome, style=_STYLE.get(outcome, "")), evidence
            )
        out.append(table)
        out.append(Text(f"fingerprint: {_headline(entry.get('fingerprint'))}"))
        if entry.get("spans"):
            spans = "; ".join(str(s) for s in entry["spans"])
            out.append(Text(f"the run spans {len(entry['spans'])} fingerprints: {spans}", "yellow"))
        total = _cost(entry.get("cost"))
        if total:
            out.append(Text(f"the serving checks cost {total}", style="dim"))
    return out
