from __future__ import annotations

import io
import re

from rich.console import Console

from sieval.runner import NullProgress, PlainProgress, RichProgress, make_progress

STAMP = r"\d\d:\d\d:\d\d"


def test_plain_progress_prints_timestamped_lines_with_rate_and_eta() -> None:
    stream = io.StringIO()
    progress = PlainProgress(stream, interval_s=0.0)
    progress.start("m/t", total=3, done=1)
    progress.advance("m/t", ok=False, tokens=40)
    progress.advance("m/t", ok=True, tokens=60)
    progress.close()
    start, middle, done = stream.getvalue().splitlines()
    assert re.fullmatch(rf"{STAMP} \[start\] m/t: 1/3 samples, 0 failed", start)
    assert re.fullmatch(
        rf"{STAMP} \[progress\] m/t: 2/3 samples, 1 failed, [\d.]+ samples/s, [\d,]+ tokens/s, "
        r"\d+:\d\d:\d\d left",
        middle,
    )
    assert re.fullmatch(rf"{STAMP} \[done\] m/t: 3/3 samples, 1 failed, .* tokens/s", done)
    quiet = io.StringIO()
    slow = PlainProgress(quiet, interval_s=3600)
    slow.start("u", total=5, done=0)
    slow.advance("u", ok=True)
    assert quiet.getvalue().count("\n") == 1


def test_make_progress_picks_by_terminal() -> None:
    assert isinstance(make_progress(Console(file=io.StringIO())), PlainProgress)
    buffer = io.StringIO()
    rich = make_progress(Console(file=buffer, force_terminal=True, width=80))
    assert isinstance(rich, RichProgress)
    rich.start("m/t", total=2, done=0)
    rich.advance("m/t", ok=False, tokens=10)
    rich.advance("m/t", ok=True)
    rich.close()
    shown = buffer.getvalue()
    assert "m/t" in shown and "failed 1" in shown and "tok/s" in shown
    null = NullProgress()
    null.start("x", 1, 0)
    null.advance("x", True)
    null.close()
