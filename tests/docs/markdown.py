"""The repository's Markdown, read as a reader's browser reads it: the files, their headings'
anchors (GitHub's rule), their relative links, and their fenced blocks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parents[2]


def documents() -> list[Path]:
    """The user-facing Markdown: the README, the changelog and its fragments, and docs/."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found += [ROOT / "CHANGELOG.md"] if (ROOT / "CHANGELOG.md").exists() else []
    found += sorted((ROOT / "changes").glob("*.md")) if (ROOT / "changes").is_dir() else []
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: tags dropped, lower case, punctuation but `-` and `_`
    removed, each space a hyphen."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def outside_fences(text: str) -> Iterator[tuple[int, str]]:
    """Each line that is not inside a fenced block, with its 1-based number."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def anchors(text: str) -> set[str]:
    """Every anchor a page has: its headings' (a repeated one gets -1, -2, ...) and explicit
    ``<a id="...">``."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in outside_fences(text):
        heading = re.match(r"#{1,6} (.*)", line)
        if heading:
            name = slug(heading.group(1))
            count = seen.get(name, 0)
            seen[name] = count + 1
            found.add(name if count == 0 else f"{name}-{count}")
        found.update(re.findall(r'<a (?:id|name)="([^"]+)"', line))
    return found


@dataclass(frozen=True)
class Link:
    source: Path
    line: int
    target: str

    def __str__(self) -> str:
        return f"{self.source.relative_to(ROOT)}:{self.line}: {self.target}"


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def links(path: Path) -> Iterator[Link]:
    """Each Markdown link or image outside fenced blocks and inline code."""
    for number, line in outside_fences(path.read_text()):
        for match in LINK.finditer(re.sub(r"`[^`]*`", "``", line)):
            yield Link(path, number, match.group(1))


def base(source: Path) -> Path:
    """The folder a page's relative links start from: its own, except a change-note fragment's,
    which is read inside CHANGELOG.md at the repository's root."""
    if source.parent == ROOT / "changes" and source.name != "README.md":
        return ROOT
    return source.parent


def broken(link: Link) -> str | None:
    """Why a relative link leads nowhere (a missing file, a missing anchor), or None. Web links
    are not fetched (the tests are offline)."""
    target = link.target
    if re.match(r"[a-z]+:", target):
        return None
    file, _, anchor = target.partition("#")
    path = (base(link.source) / file).resolve() if file else link.source
    if ROOT.resolve() not in (path, *path.parents):
        return "points outside the repository (a reader of the repository cannot follow it)"
    if not path.exists():
        return "no such file"
    if anchor and path.suffix == ".md" and anchor not in anchors(path.read_text()):
        return f"no heading or <a id> with anchor #{anchor} in {path.name}"
    return None
