"""scripts/changelog.py: fragments in changes/ become one release section of CHANGELOG.md."""

from __future__ import annotations

import datetime
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[2]


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("changelog", ROOT / "scripts" / "changelog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["changelog"] = module
    spec.loader.exec_module(module)
    return module


changelog = load()
DAY = datetime.date(2026, 12, 8)


def project(tmp_path: Path, notes: dict[str, str]) -> Path:
    (tmp_path / "changes").mkdir()
    (tmp_path / "changes" / "README.md").write_text("# how\n")
    for name, text in notes.items():
        (tmp_path / "changes" / name).write_text(text)
    (tmp_path / "CHANGELOG.md").write_text(
        f"# Changelog\n\nintro\n\n{changelog.MARKER}\n\n## 0.1.0 (2026-12-01)\n\n- old\n"
    )
    return tmp_path


def test_a_release_gathers_fragments_by_issue_above_the_older_ones(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "40.csv-export.md": "sieval report --format csv\nwrites one row a metric.\n",
            "34.readme-split.md": "The README is short.\n",
            "34.changelog.md": "A changelog.\n",
            "0.typo.md": "A typo fixed.\n",
            "9.early.md": "An early fix.\n",
        },
    )
    assert changelog.main(["0.2.0", "--date", "2026-12-08", "--root", str(root)]) == 0
    text = (root / "CHANGELOG.md").read_text()
    assert text == (
        f"# Changelog\n\nintro\n\n{changelog.MARKER}\n\n## 0.2.0 (2026-12-08)\n\n"
        "- A typo fixed. (no issue)\n"
        "- An early fix. (issue 9)\n"
        "- A changelog. (issue 34)\n"
        "- The README is short. (issue 34)\n"
        "- sieval report --format csv writes one row a metric. (issue 40)\n"
        "\n## 0.1.0 (2026-12-01)\n\n- old\n"
    )
    assert sorted(p.name for p in (root / "changes").iterdir()) == ["README.md"]


def test_a_dry_run_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path, {"34.readme-split.md": "The README is short.\n"})
    before = (root / "CHANGELOG.md").read_text()
    assert changelog.main(["0.2.0", "--dry-run", "--root", str(root)]) == 0
    assert "- The README is short. (issue 34)" in capsys.readouterr().out
    assert (root / "CHANGELOG.md").read_text() == before
    assert (root / "changes" / "34.readme-split.md").exists()


@pytest.mark.parametrize(
    ("notes", "version", "says"),
    [
        ({"readme.md": "x"}, "0.2.0", "readme.md: not a fragment name"),
        ({"34.Readme_Split.md": "x"}, "0.2.0", "not a fragment name"),
        ({"34.empty.md": " \n"}, "0.2.0", "34.empty.md: empty"),
        ({"34.heading.md": "# Title\n"}, "0.2.0", "starts with a heading"),
        ({}, "0.2.0", "nothing to release"),
        ({"34.x.md": "x"}, "0.1.0", "already has a section for 0.1.0"),
        ({"34.x.md": "x"}, "next", "not a version"),
    ],
)
def test_what_cannot_be_released_is_refused_naming_why(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    notes: dict[str, str],
    version: str,
    says: str,
) -> None:
    root = project(tmp_path, notes)
    before = (root / "CHANGELOG.md").read_text()
    assert changelog.main([version, "--root", str(root)]) == 2
    assert says in capsys.readouterr().err
    assert (root / "CHANGELOG.md").read_text() == before


def test_a_changelog_without_its_marker_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path, {"34.x.md": "x"})
    (root / "CHANGELOG.md").write_text("# Changelog\n")
    with pytest.raises(changelog.FragmentError, match="marker"):
        changelog.release(root, "0.2.0", DAY)


def test_the_repositorys_fragments_are_well_formed() -> None:
    assert changelog.main(["--check"]) == 0
    assert changelog.MARKER in (ROOT / "CHANGELOG.md").read_text()
