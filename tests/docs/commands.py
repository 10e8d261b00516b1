"""The fenced ``sieval`` commands of the README and docs/, read as a reader reads them.

A command is a line of a shell block (```bash, ```sh, ```console or a bare ```) that starts with
``sieval `` or ``$ sieval `` at its first column, joined with the lines its trailing ``\\``
continues. In a block whose commands are written ``$ sieval ...`` (a transcript), the lines after
a command down to the next ``$`` are the output it shows.

A block that cannot run against the embedded server says why in a marker on the line before its
fence, ``<!-- needs: WHAT -->`` (several: ``<!-- needs: live-vllm, prior-run -->``), with WHAT
one of ``NEEDS``; the test reports such a block as not run, naming the marker.

Placeholders a command may hold, resolved when it runs in its block's workspace: ``<run>`` the
newest run directory under ``results/``; ``<before>`` and ``<a>`` the second newest, ``<after>``
and ``<b>`` the newest (every workspace starts with two small runs of ARC-Easy and MMLU there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.docs.markdown import ROOT

NEEDS = {
    "live-vllm": "the live vLLM of the evidence docs (scripts/live-vllm.sh, 127.0.0.1:18321)",
    "live-servers": "the live vLLM, SGLang or LiteLLM behind the evidence docs",
    "your-server": "a server of the reader's own at the URL it names",
    "lm-eval": "lm-evaluation-harness 0.4.13 installed (pip install 'sieval[lm-eval]')",
}
"""What a marked block may need, and what that is."""

SHELLS = {"", "bash", "sh", "shell", "console"}
PLACEHOLDERS = {"<run>": 1, "<after>": 1, "<b>": 1, "<before>": 2, "<a>": 2}
"""Each placeholder and which run it is: 1 the newest under results/, 2 the one before it."""


def documents() -> list[Path]:
    """The docs whose commands are run: the README and docs/*.md (not docs/evidence/, whose
    blocks record what was run on the live servers at the time)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass
class Command:
    line: int
    text: str
    """The command as written, continuations joined (``$ `` dropped)."""
    shown: list[str] = field(default_factory=list)
    """The output lines a transcript shows after it."""


@dataclass
class Block:
    source: Path
    line: int
    """The line of its opening fence."""
    commands: list[Command]
    needs: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.source.relative_to(ROOT)}:{self.line}"


MARKER = re.compile(r"<!--\s*needs:\s*([^>]*?)\s*-->")


def _needs(lines: list[str], fence: int) -> tuple[str, ...]:
    """The marker on one of the two lines before the fence (0-based index), if any."""
    for above in lines[max(0, fence - 2) : fence][::-1]:
        match = MARKER.search(above)
        if match:
            return tuple(part.strip() for part in match.group(1).split(","))
    return ()


def blocks(path: Path) -> list[Block]:
    """Every shell block of a document that holds at least one ``sieval`` command."""
    lines = path.read_text().split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = lines[i].strip()
        if not opening.startswith("```"):
            i += 1
            continue
        info, start = opening[3:].strip(), i
        i += 1
        body: list[tuple[int, str]] = []
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append((i + 1, lines[i]))
            i += 1
        i += 1
        if info in SHELLS:
            commands = _commands(body)
            if commands:
                found.append(Block(path, start + 1, commands, _needs(lines, start)))
    return found


def _commands(body: list[tuple[int, str]]) -> list[Command]:
    commands: list[Command] = []
    transcript = any(text.startswith("$ ") for _, text in body)
    current: Command | None = None
    k = 0
    while k < len(body):
        number, text = body[k]
        prompt = text.startswith("$ ")
        if text.startswith(("sieval ", "$ sieval ")) and (prompt or not transcript):
            whole = text.removeprefix("$ ")
            while whole.rstrip().endswith("\\") and k + 1 < len(body):
                k += 1
                whole = whole.rstrip()[:-1].rstrip() + " " + body[k][1].strip()
            current = Command(number, whole)
            commands.append(current)
        elif prompt:
            current = None  # another program's command: its output is not ours
        elif current is not None and transcript and text.strip():
            current.shown.append(text)
        k += 1
    return commands


def resolve(command: str, workspace: Path) -> str:
    """The command with its placeholders replaced by the workspace's run directories."""
    runs = sorted(p.name for p in (workspace / "results").iterdir() if p.is_dir())
    for placeholder, back in PLACEHOLDERS.items():
        if placeholder in command:
            command = command.replace(placeholder, runs[-back])
    left = re.findall(r"<[a-z_-]+>", command)
    assert not left, f"unknown placeholder {left[0]} (known: {', '.join(PLACEHOLDERS)})"
    return command


def shown_in(shown: list[str], output: str) -> list[str]:
    """The lines a transcript shows that the real output lacks (spaces compared loosely; a
    ``...`` stands for text left out)."""
    flat = " ".join(output.split())
    missing = []
    for line in shown:
        pieces = [" ".join(p.split()) for p in line.split("...")]
        if any(p and p not in flat for p in pieces):
            missing.append(line)
    return missing
