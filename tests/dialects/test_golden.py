"""Every recorded reply, and every mutation of one that the golden file lists, lifts to exactly
what it lifted to when the file was written (``golden.py`` says how it is built)."""

from __future__ import annotations

import json

from dialects import golden


def test_every_recorded_and_mutated_reply_lifts_as_the_golden_file_says() -> None:
    expected = json.loads(golden.GOLDEN.read_text())
    actual = json.loads(json.dumps(golden.compute()))
    changed = golden.differences(expected, actual)
    assert not changed, f"{len(changed)} outcomes changed:\n" + "\n".join(changed[:20])


def test_the_golden_file_covers_every_dialect_and_both_outcomes() -> None:
    """A golden file that lost its cases (an empty CASES, a renamed folder) would pass the test
    above vacuously."""
    expected = json.loads(golden.GOLDEN.read_text())
    dialects = {key.split("/")[0] for key in expected if "@" not in key}
    assert set(golden.VERSIONS) <= dialects
    believed = [v for v in expected.values() if isinstance(v, dict)]
    refused = [v for v in expected.values() if isinstance(v, list) and v[0] == "ContractViolation"]
    assert len(believed) >= 100 and len(refused) >= 2000
