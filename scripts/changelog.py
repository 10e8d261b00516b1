"""Collect the change-note fragments in changes/ into CHANGELOG.md at a release.

    python scripts/changelog.py VERSION [--date YYYY-MM-DD] [--dry-run]
    python scripts/changelog.py --check

Each fragment is ``changes/<issue>.<slug>.md`` (changes/README.md says how to write one). A release
becomes one section, inserted below CHANGELOG.md's marker line, newest first: one bullet per
fragment, grouped by issue in ascending order; the fragments taken are deleted."""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- releases, newest first: scripts/changelog.py inserts each one below this line -->"
NAME = re.compile(r"(?P<issue>\d+)\.(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.md")
VERSION = re.compile(r"\d+\.\d+\.\d+(?:[.-]?[a-z0-9]+)*")


class FragmentError(Exception):
    """A fragment that cannot go into the changelog as it is: says which file and why."""


@dataclass(frozen=True)
class Fragment:
    path: Path
    issue: int
    slug: str
    text: str


def fragments(folder: Path) -> list[Fragment]:
    """Every fragment in folder, checked, in issue then name order."""
    found = []
    for path in sorted(folder.iterdir()):
        if path.name == "README.md" or path.name.startswith("."):
            continue
        match = NAME.fullmatch(path.name)
        if match is None:
            raise FragmentError(
                f"{path.name}: not a fragment name; name it <issue>.<short-slug>.md, "
                "e.g. 34.readme-split.md (changes/README.md)"
            )
        text = " ".join(path.read_text().split())
        if not text:
            raise FragmentError(f"{path.name}: empty; write one to three sentences for users")
        if text.startswith("#"):
            raise FragmentError(f"{path.name}: starts with a heading; write plain sentences")
        found.append(Fragment(path, int(match["issue"]), match["slug"], text))
    return sorted(found, key=lambda f: (f.issue, f.slug))


def section(version: str, date: datetime.date, found: list[Fragment]) -> str:
    """The release's section: a heading, then per issue its fragments as bullets."""
    lines = [f"## {version} ({date.isoformat()})", ""]
    for fragment in found:
        where = f"issue {fragment.issue}" if fragment.issue else "no issue"
        lines.append(f"- {fragment.text} ({where})")
    return "\n".join(lines) + "\n"


def release(root: Path, version: str, date: datetime.date, *, dry_run: bool = False) -> str:
    """Insert the release's section into root/CHANGELOG.md and delete its fragments; returns
    the section. Refuses (FragmentError) when there is nothing to release, the version is
    already there, or the marker line is missing."""
    if not VERSION.fullmatch(version):
        raise FragmentError(f"{version!r} is not a version; give one such as 0.2.0")
    found = fragments(root / "changes")
    if not found:
        raise FragmentError("changes/ holds no fragment: nothing to release")
    changelog = root / "CHANGELOG.md"
    text = changelog.read_text()
    if MARKER not in text:
        raise FragmentError(f"CHANGELOG.md lacks its marker line; put it back: {MARKER}")
    if re.search(rf"^## {re.escape(version)} ", text, re.M):
        raise FragmentError(f"CHANGELOG.md already has a section for {version}")
    new = section(version, date, found)
    if not dry_run:
        changelog.write_text(text.replace(MARKER, f"{MARKER}\n\n{new.rstrip()}", 1))
        for fragment in found:
            fragment.path.unlink()
    return new


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("version", nargs="?", help="the release's version, e.g. 0.2.0")
    parser.add_argument("--date", type=datetime.date.fromisoformat, default=datetime.date.today())
    parser.add_argument("--dry-run", action="store_true", help="print the section, change nothing")
    parser.add_argument("--check", action="store_true", help="only validate the fragments")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        if args.check:
            found = fragments(args.root / "changes")
            print(f"{len(found)} fragment(s) ready")
            return 0
        if args.version is None:
            parser.error("give the release's VERSION, or --check")
        print(release(args.root, args.version, args.date, dry_run=args.dry_run), end="")
    except FragmentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
