"""Replay mode: serve recorded replies instantly (client-overhead benchmarks, offline tests).

Record format (the same as the fixture files under ``tests/fixtures/<dialect>/<version>/``)::

    {"route": "/v1/completions", "request": {...body sent...}, "status": 200,
     "reply": {...json body...}}            # or "reply_sse": "<raw SSE text>"

``ReferenceServer(replay=...)`` takes a folder (every ``*.json`` below it is loaded) or a list of
such records. A request is looked up by ``(route, canonical JSON of its body)``, canonical
meaning sorted keys and compact separators; a request with no recording gets 404 with a
message that says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Recording", "ReplayBook", "canonical"]


def canonical(body: Any) -> str:
    """The canonical JSON text of a request body (the lookup key)."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Recording:
    """One recorded reply, pre-encoded."""

    status: int
    body: bytes
    content_type: str


class ReplayBook:
    """Recorded replies keyed by ``(route, canonical body)``."""

    def __init__(self, source: str | Path | Iterable[dict[str, Any]]) -> None:
        records: Iterable[dict[str, Any]]
        if isinstance(source, str | Path):
            folder = Path(source)
            if not folder.is_dir():
                raise ValueError(f"replay folder {folder} does not exist")
            records = [
                json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.rglob("*.json"))
            ]
        else:
            records = source
        self._book: dict[tuple[str, str], Recording] = {}
        for rec in records:
            route, request = rec["route"], rec["request"]
            status = int(rec.get("status", 200))
            if "reply_sse" in rec:
                recording = Recording(status, rec["reply_sse"].encode(), "text/event-stream")
            else:
                recording = Recording(status, json.dumps(rec["reply"]).encode(), "application/json")
            self._book[(route, canonical(request))] = recording

    def __len__(self) -> int:
        return len(self._book)

    def lookup(self, route: str, body: Any) -> Recording | None:
        """The recording for this request, or ``None``."""
        return self._book.get((route, canonical(body)))
