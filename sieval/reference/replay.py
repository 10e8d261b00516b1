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


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a readable JSON recording ({exc})") from None


class ReplayBook:
    """Recorded replies keyed by ``(route, canonical body)``."""

    def __init__(self, source: str | Path | Iterable[dict[str, Any]]) -> None:
        records: Iterable[tuple[str, Any]]
        if isinstance(source, str | Path):
            folder = Path(source)
            if not folder.is_dir():
                raise ValueError(f"replay folder {folder} does not exist")
            files = sorted(folder.rglob("*.json"))
            if not files:
                raise ValueError(
                    f"replay folder {folder} holds no recorded replies (*.json files); point "
                    "--replay at a folder of recordings such as tests/fixtures/<dialect>/"
                )
            records = ((str(p), _read(p)) for p in files)
        else:
            records = (("a recording", rec) for rec in source)
        self._book: dict[tuple[str, str], Recording] = {}
        for where, rec in records:
            try:
                route, request = rec["route"], rec["request"]
                status = int(rec.get("status", 200))
                if "reply_sse" in rec:
                    recording = Recording(status, rec["reply_sse"].encode(), "text/event-stream")
                else:
                    reply = json.dumps(rec["reply"]).encode()
                    recording = Recording(status, reply, "application/json")
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ValueError(
                    f"{where} is not a recording (needs route, request and reply or reply_sse: "
                    f"{type(exc).__name__} {exc})"
                ) from None
            self._book[(route, canonical(request))] = recording

    def __len__(self) -> int:
        return len(self._book)

    def lookup(self, route: str, body: Any) -> Recording | None:
        """The recording for this request, or ``None``."""
        return self._book.get((route, canonical(body)))
