from __future__ import annotations

import io

from rich.console import Console

from sieval.runner import NullProgress, PlainProgress, RichProgress, make_progress


def test_plain_progress_prints_periodic_lines() -> None:
    stream = io.StringIO()
    progress = PlainProgress(stream, interval_s=0.0)
    progress.start("m/t", total=3, done=1)
    progress.advance("m/t", ok=False)
    progress.advance("m/t", ok=True)
    progress.close()
    assert stream.getvalue().splitlines() == [
        "[start] m/t: 1/3 samples, 0 failed",
        "[progress] m/t: 2/3 samples, 1 failed",
        "[done] m/t: 3/3 samples, 1 failed",
    ]
    quiet = io.StringIO()
    slow = PlainProgress(quiet, interval_s=3600)
    slow.start("u", total=5, done=0)
    slow.advance("u", ok=True)
    assert quiet.getvalue().count("\n") == 1


def test_make_progress_picks_by_terminal() -> None:
    assert isinstance(make_progress(Console(file=io.StringIO())), PlainProgress)
    buffer = io.StringIO()
    rich = make_progress(Console(file=buffer, force_terminal=True))
    assert isinstance(rich, RichProgress)
    rich.start("m/t", total=2, done=0)
    rich.advance("m/t", ok=False)
    rich.advance("m/t", ok=True)
    rich.close()
    assert "m/t" in buffer.getvalue() and "failed 1" in buffer.getvalue()
    null = NullProgress()
    null.start("x", 1, 0)
    null.advance("x", True)
    null.close()
