"""Progress: a rich bar on a terminal, plain periodic lines otherwise (CI logs, pipes)."""

from __future__ import annotations

import sys
import time
from typing import IO, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

__all__ = ["NullProgress", "PlainProgress", "ProgressSink", "RichProgress", "make_progress"]


class ProgressSink(Protocol):
    """What the engine reports to: one unit per (model, task)."""

    def start(self, unit: str, total: int, done: int) -> None: ...

    def advance(self, unit: str, ok: bool) -> None: ...

    def close(self) -> None: ...


class NullProgress:
    def start(self, unit: str, total: int, done: int) -> None:
        pass

    def advance(self, unit: str, ok: bool) -> None:
        pass

    def close(self) -> None:
        pass


class PlainProgress:
    """One line per unit at most every ``interval_s`` seconds, and one when a unit finishes."""

    def __init__(self, stream: IO[str] | None = None, interval_s: float = 10.0) -> None:
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self._state: dict[str, list[int]] = {}
        self._last: dict[str, float] = {}

    def start(self, unit: str, total: int, done: int) -> None:
        self._state[unit] = [total, done, 0]
        self._last[unit] = time.monotonic()
        self._line(unit, "start")

    def advance(self, unit: str, ok: bool) -> None:
        state = self._state[unit]
        state[1] += 1
        state[2] += 0 if ok else 1
        now = time.monotonic()
        if state[1] >= state[0]:
            self._line(unit, "done")
        elif now - self._last[unit] >= self.interval_s:
            self._last[unit] = now
            self._line(unit, "progress")

    def _line(self, unit: str, what: str) -> None:
        total, done, failed = self._state[unit]
        self.stream.write(f"[{what}] {unit}: {done}/{total} samples, {failed} failed\n")
        self.stream.flush()

    def close(self) -> None:
        pass


class RichProgress:
    def __init__(self, console: Console) -> None:
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"),
            TimeElapsedColumn(),
            console=console,
        )
        self._ids: dict[str, TaskID] = {}
        self._failed: dict[str, int] = {}
        self._bar.start()

    def start(self, unit: str, total: int, done: int) -> None:
        self._failed[unit] = 0
        self._ids[unit] = self._bar.add_task(unit, total=total, completed=done, failed=0)

    def advance(self, unit: str, ok: bool) -> None:
        if not ok:
            self._failed[unit] += 1
        self._bar.update(self._ids[unit], advance=1, failed=self._failed[unit])

    def close(self) -> None:
        self._bar.stop()


def make_progress(console: Console | None = None) -> ProgressSink:
    """A rich bar when ``console`` is a terminal, plain lines on stderr otherwise."""
    console = console or Console(stderr=True)
    if console.is_terminal:
        return RichProgress(console)
    return PlainProgress()
