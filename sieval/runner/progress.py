"""Progress: a rich bar on a terminal, plain timestamped lines otherwise (CI logs, pipes).

Each (model, task) unit shows samples done of total, failures, samples/s, the time left at that
rate, and tokens/s (prompt + generated tokens the server reported).
"""

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
    TimeRemainingColumn,
)

__all__ = ["NullProgress", "PlainProgress", "ProgressSink", "RichProgress", "make_progress"]


class ProgressSink(Protocol):
    """What the engine reports to: one unit per (model, task)."""

    def start(self, unit: str, total: int, done: int) -> None: ...

    def advance(self, unit: str, ok: bool, tokens: int = 0) -> None: ...

    def close(self) -> None: ...


class NullProgress:
    def start(self, unit: str, total: int, done: int) -> None:
        pass

    def advance(self, unit: str, ok: bool, tokens: int = 0) -> None:
        pass

    def close(self) -> None:
        pass


class _Rate:
    """Samples and tokens per second since a unit started (this session's work only)."""

    def __init__(self, done: int) -> None:
        self.t0 = time.monotonic()
        self.start_done = done
        self.tokens = 0

    def per_s(self, done: int) -> tuple[float, float]:
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        return (done - self.start_done) / elapsed, self.tokens / elapsed


def _eta(left: int, rate: float) -> str:
    if rate <= 0:
        return "?"
    seconds = int(left / rate)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class PlainProgress:
    """One timestamped line per unit at most every ``interval_s`` seconds, and at its end."""

    def __init__(self, stream: IO[str] | None = None, interval_s: float = 10.0) -> None:
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self._state: dict[str, list[int]] = {}
        self._rates: dict[str, _Rate] = {}
        self._last: dict[str, float] = {}

    def start(self, unit: str, total: int, done: int) -> None:
        self._state[unit] = [total, done, 0]
        self._rates[unit] = _Rate(done)
        self._last[unit] = time.monotonic()
        self._line(unit, "start")

    def advance(self, unit: str, ok: bool, tokens: int = 0) -> None:
        state = self._state[unit]
        state[1] += 1
        state[2] += 0 if ok else 1
        self._rates[unit].tokens += tokens
        now = time.monotonic()
        if state[1] >= state[0]:
            self._line(unit, "done")
        elif now - self._last[unit] >= self.interval_s:
            self._last[unit] = now
            self._line(unit, "progress")

    def _line(self, unit: str, what: str) -> None:
        total, done, failed = self._state[unit]
        rate, tokens = self._rates[unit].per_s(done)
        stamp = time.strftime("%H:%M:%S")
        speed = f", {rate:.1f} samples/s, {tokens:,.0f} tokens/s" if what != "start" else ""
        left = f", {_eta(total - done, rate)} left" if what == "progress" else ""
        self.stream.write(
            f"{stamp} [{what}] {unit}: {done}/{total} samples, {failed} failed{speed}{left}\n"
        )
        self.stream.flush()

    def close(self) -> None:
        pass


class _Speed(TextColumn):
    """samples/s and tokens/s of one unit."""

    def __init__(self, rates: dict[TaskID, _Rate]) -> None:
        super().__init__("")
        self.rates = rates

    def render(self, task):  # type: ignore[no-untyped-def]
        from rich.text import Text

        rate = self.rates.get(task.id)
        if rate is None:
            return Text("")
        samples, tokens = rate.per_s(int(task.completed))
        return Text(f"{samples:.1f}/s {tokens:,.0f} tok/s", style="progress.data.speed")


class RichProgress:
    def __init__(self, console: Console) -> None:
        self._rates: dict[TaskID, _Rate] = {}
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=None),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"),
            _Speed(self._rates),
            TimeRemainingColumn(),
            console=console,
            expand=False,
        )
        self._ids: dict[str, TaskID] = {}
        self._failed: dict[str, int] = {}
        self._bar.start()

    def start(self, unit: str, total: int, done: int) -> None:
        self._failed[unit] = 0
        task = self._bar.add_task(unit, total=total, completed=done, failed=0)
        self._ids[unit] = task
        self._rates[task] = _Rate(done)

    def advance(self, unit: str, ok: bool, tokens: int = 0) -> None:
        if not ok:
            self._failed[unit] += 1
        task = self._ids[unit]
        self._rates[task].tokens += tokens
        self._bar.update(task, advance=1, failed=self._failed[unit])

    def close(self) -> None:
        self._bar.stop()


def make_progress(console: Console | None = None) -> ProgressSink:
    """A rich bar when ``console`` is a terminal, plain timestamped lines on stderr otherwise."""
    console = console or Console(stderr=True)
    if console.is_terminal:
        return RichProgress(console)
    return PlainProgress()
