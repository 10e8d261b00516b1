"""What a checker imports beyond sieval's own dependencies, declared where it imports it.

The instruct suite's checkers import optional packages on first use (the ``instruct`` extra:
NLTK and its Punkt model, langdetect, math-verify). A checker that cannot import one fails only
the answers that reach the code needing it (IFEval's sentence counts, not its keyword checks),
so a run without the extra once scored the rest and printed a headline over them. A task names
its checker's ``Dependency`` values; its check before the run (``Task.check_ready``, which the
runner calls before the first request) imports each, and ``require`` refuses the run with the
install command.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["Dependency", "missing", "require"]


@dataclass(frozen=True)
class Dependency:
    """A module a checker imports, and how to install it."""

    module: str
    """What the checker imports: ``nltk.tokenize.punkt``."""
    package: str
    """The distribution that provides it (PyPI): ``nltk``."""
    extra: str = "instruct"
    """The sieval extra that installs it."""

    @property
    def install(self) -> str:
        return f"pip install 'sieval[{self.extra}]'"


def missing(dependencies: Iterable[Dependency]) -> list[tuple[Dependency, str]]:
    """Each dependency whose module does not import here, with why (the import's own error)."""
    out = []
    for dependency in dependencies:
        try:
            importlib.import_module(dependency.module)
        except ImportError as exc:
            out.append((dependency, f"{type(exc).__name__}: {exc}"))
    return out


def require(task: str, dependencies: Iterable[Dependency]) -> None:
    """A ``ConfigError`` naming ``task``, what does not import and the install command, when
    one of ``dependencies`` does not import here."""
    lacking = missing(dependencies)
    if not lacking:
        return
    names = ", ".join(sorted({d.package for d, _ in lacking}))
    said = "; ".join(f"{d.module}: {why}" for d, why in lacking[:3])
    raise ConfigError(
        f"task {task!r} cannot be scored here: its checker needs {names}, which does not import "
        f"({said}); install it with {lacking[0][0].install}, then run again (no request was "
        "sent)",
        path=f"tasks.{task}",
    )
