"""What a model or a server wrote, made inert for a terminal: the one way such text is printed.

A generation, a prompt, a wire body, a server's error message or model id can hold anything: an
escape sequence that clears the screen (``ESC [2J``) or retitles the terminal (``ESC ]0;...BEL``),
a carriage return that overwrites what was printed, a right-to-left override that reorders it,
rich markup (``[bold]``) or an emoji shortcode (``:smile:``). ``inert`` shows every control
character as its Python escape (``\\x1b``, ``\\r``, ``\\x9b``, ``\\u202e``; newline and tab
stay as they are, so a generation keeps its lines) and leaves every other character exactly as
written; ``shown`` wraps that in a ``rich.text.Text``, which rich prints without reading markup
or emoji codes. Every command that prints such text (``samples``, ``report``, ``compare``,
``eval``'s summary, ``finalize``, ``probe``, error lines) goes through ``shown``.
"""

from __future__ import annotations

import re
from typing import Any

from rich.text import Text

__all__ = ["inert", "markup", "shown"]

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but newline and tab, DEL, C1 controls (``\\x9b`` is a one-byte CSI), and the
bidirectional marks, embeddings, overrides and isolates."""


def _visible(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]  # as Python writes it: \x1b, \r, \x9b, \u202e


def inert(text: Any) -> str:
    """``text`` (``str()`` of it) with every control character written as its escape."""
    return _CONTROL.sub(_visible, text if isinstance(text, str) else str(text))


def shown(text: Any, style: str = "") -> Text:
    """``inert(text)`` as rich text: printed as it is, no markup, no emoji codes (``None``: the
    tables' ``-``)."""
    return Text("-" if text is None else inert(text), style=style)


def markup(text: Any) -> str:
    """``inert(text)`` for a line written in rich markup: brackets escaped too. Print such lines
    on a console made with ``emoji=False`` (``text.console``), so ``:smile:`` stays as written."""
    from rich.markup import escape

    return escape(inert(text))
