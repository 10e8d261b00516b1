"""Progress: a rich bar on a terminal, plain timestamped lines otherwise (CI logs, pipes).

Each (model, task) unit shows samples done of total, failures, samples/s, the time left at that
rate, and tokens/s (prompt + generated tokens the server reported). On a terminal each unit is
one line fitted to its width (``progress_line``): at 80 columns the count and the time left stay.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import IO, NamedTuple, Protocol

from rich.console import Console, Group
from rich.progress import Progress, TaskID
from rich.text import Text

__all__ = [
    "NullProgress",
    "PlainProgress",
    "ProgressSink",
    "RichProgress",
    "Unit",
    "make_progress",
    "progress_line",
    "progress_lines",
]


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
        return "-:--:--"
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


_BAR_MIN, _BAR_MAX = 8, 40
_ECHO_ROOM = 3
"""Columns left free at the end of each line: Ctrl-C makes the terminal echo ``^C`` after the
last line, and a full line would wrap, so the live display would redraw one row too low and
leave its last frame on screen twice."""


class Unit(NamedTuple):
    """One (model, task) as its progress line shows it."""

    name: str
    done: int
    total: int
    failed: int
    rate: tuple[float, float]
    """samples/s and tokens/s."""


def progress_line(
    name: str, done: int, total: int, failed: int, rate: tuple[float, float], width: int
) -> Text:
    """One unit's line fitted to ``width`` columns (``progress_lines`` for several)."""
    return progress_lines([Unit(name, done, total, failed, rate)], width)[0]


def progress_lines(units: Sequence[Unit], width: int) -> list[Text]:
    """One line per unit, fitted to ``width`` columns and aligned in columns: the sample count and
    the time left always stay; less important fields go first (tokens/s, samples/s, ``failed 0``,
    the bar), then the model part of the names, then the rest of a name is cut with ``…``."""
    if not units:
        return []
    rows = [_fields(u) for u in units]
    failing = ("fail",) if any(u.failed for u in units) else ()
    levels: list[tuple[bool, tuple[str, ...], int]] = [
        (True, ("count", "fail", "speed", "tokens", "eta"), _BAR_MIN),
        (True, ("count", "fail", "speed", "eta"), _BAR_MIN),
        (True, ("count", "fail", "eta"), _BAR_MIN),
        (True, ("count", *failing, "eta"), _BAR_MIN),
        (True, ("count", *failing, "eta"), 0),
        (False, ("count", *failing, "eta"), 0),
    ]
    for whole, keys, bar_min in levels:
        labels = [u.name if whole else u.name.rsplit("/", 1)[-1] for u in units]
        widths = {k: max(len(r[k]) for r in rows) for k in keys}
        room = width - max(map(len, labels)) - sum(w + 1 for w in widths.values())
        room -= 1 if bar_min else 0
        if room >= bar_min:
            break
    else:  # even the task names do not fit: cut them
        keep = max(room + max(map(len, labels)), 2)
        labels = [label if len(label) <= keep else label[: keep - 1] + "…" for label in labels]
    bar = min(room, _BAR_MAX) if bar_min else 0
    size = max(map(len, labels))
    return [
        _line(label.ljust(size), [_cell(k, row[k], widths[k]) for k in keys], bar, unit)
        for label, row, unit in zip(labels, rows, units, strict=True)
    ]


def _fields(unit: Unit) -> dict[str, str]:
    samples_s, tokens_s = unit.rate
    left = unit.total - unit.done
    return {
        "count": f"{unit.done}/{unit.total}",
        "fail": f"failed {unit.failed}",
        "speed": f"{samples_s:.1f}/s",
        "tokens": f"{tokens_s:,.0f} tok/s",
        "eta": "done" if left <= 0 else _eta(left, samples_s),
    }


def _cell(key: str, text: str, width: int) -> Text:
    style = "red" if key == "fail" and text != "failed 0" else ""
    return Text(text.ljust(width) if key == "fail" else text.rjust(width), style=style)


def _line(label: str, cells: list[Text], bar: int, unit: Unit) -> Text:
    line = Text(label)
    if bar:
        done, total = unit.done, unit.total
        filled = bar if total <= 0 else min(bar, round(bar * done / total))
        line.append(" ")
        line.append("━" * filled, style="bar.complete" if done < total else "bar.finished")
        line.append("━" * (bar - filled), style="bar.back")
    for cell in cells:
        line.append(" ")
        line.append_text(cell)
    return line


class _Lines(Progress):
    """A rich live display whose every unit is one ``progress_line`` at the console's width."""

    def __init__(self, console: Console, rates: dict[TaskID, _Rate]) -> None:
        self.rates = rates
        self.screen = console  # read before the live display exists
        super().__init__(console=console, auto_refresh=True, refresh_per_second=4)

    def get_renderables(self):  # type: ignore[no-untyped-def]
        units = []
        for task in list(self.tasks):
            rate = self.rates.get(task.id)
            done = int(task.completed)
            units.append(
                Unit(
                    str(task.description),
                    done,
                    int(task.total or 0),
                    int(task.fields.get("failed", 0)),
                    rate.per_s(done) if rate else (0.0, 0.0),
                )
            )
        yield Group(*progress_lines(units, self.screen.width - _ECHO_ROOM))


class RichProgress:
    """A live line per (model, task) on a terminal; the lines stay on screen once when it ends
    (or is interrupted)."""

    def __init__(self, console: Console) -> None:
        self._rates: dict[TaskID, _Rate] = {}
        self._bar = _Lines(console, self._rates)
        self._ids: dict[str, TaskID] = {}
        self._failed: dict[str, int] = {}
        self._closed = False
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
        if not self._closed:  # the engine and, on Ctrl-C, the command both close it
            self._closed = True
            self._bar.stop()


def make_progress(console: Console | None = None) -> ProgressSink:
    """A rich bar when ``console`` is a terminal, plain timestamped lines on stderr otherwise."""
    console = console or Console(stderr=True)
    if console.is_terminal:
        return RichProgress(console)
    return PlainProgress()
