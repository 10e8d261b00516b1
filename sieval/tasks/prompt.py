"""A task's text from a row, by lm-evaluation-harness 0.4.13's rules, written once.

A spec names its prompt as lm-eval's YAML does, verbatim: ``doc_to_text``, ``doc_to_target`` and
``doc_to_choice`` are each a row field's name, a jinja2 template, a constant, or a function of the
row, and they are read as ``lm_eval/api/task.py`` (``ConfigurableTask``) reads them:

- a string that names a field of the row is that field's value;
- any other string is a template rendered with lm-eval's environment (``StrictUndefined``,
  ``keep_trailing_newline``, its ``regex_replace`` filter); a rendered text or target made only of
  digits, in a task with choices, is the integer it spells (an index into the choices); a
  rendered target that looks like a list is that list; rendered choices are always a list
  (``ast.literal_eval``, as lm-eval does);
- an ``int`` or ``list`` is itself; a function is called with the row.

The context of one row (``fewshot_context`` with no chat template) is the description, then each
shot as ``text + target_delimiter + answer + fewshot_delimiter``, then the row's text. A text
that is an integer marks a *variable-context* task (WinoGrande): the choices are the contexts and
the target the shared continuation; a shot is then ``choices[text] + target_delimiter + target``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2

from ..errors import ConfigError

__all__ = ["Field", "Prompt", "Shot", "render", "shown"]

Field = str | int | list[Any] | Callable[[Mapping[str, Any]], Any]
"""What ``doc_to_text`` / ``doc_to_target`` / ``doc_to_choice`` may be (see the docstring)."""


def shown(field: Any) -> str:
    """A field as a protocol line names it: a template or constant as written, a function by
    its module and name (never its address: the protocol enters the run identity)."""
    if callable(field):
        inner = getattr(field, "func", field)  # a functools.partial: the function it wraps
        name = getattr(inner, "__qualname__", type(inner).__qualname__)
        return f"{getattr(inner, '__module__', '?')}.{name}"
    return repr(field)


def _regex_replace(string: str, pattern: str, repl: str, count: int = 0) -> str:
    return re.sub(pattern, repl, string, count=count)


_ENV = jinja2.Environment(
    loader=jinja2.BaseLoader(), undefined=jinja2.StrictUndefined, keep_trailing_newline=True
)
_ENV.filters["regex_replace"] = _regex_replace


@lru_cache(maxsize=512)
def _template(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


def render(template: str, row: Mapping[str, Any]) -> str:
    """``template`` rendered with the row's fields (lm-eval's ``utils.apply_template``)."""
    try:
        return _template(template).render(**row)
    except jinja2.TemplateError as exc:
        raise ConfigError(
            f"template {template!r} cannot be rendered for this row ({exc}); the row lacks a "
            "field the template reads, or the template is wrong",
            path="template",
        ) from exc


@dataclass(frozen=True, kw_only=True)
class Shot:
    """One shot as its context renders it: its text and its answer."""

    text: str
    answer: str
    gen_prefix: str = ""
    """The assistant prefix rendered for this shot (lm-eval's ``gen_prefix``), or nothing."""


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """The prompt of a task, as lm-eval's YAML keys name it (``doc_to_*``, delimiters,
    ``description``)."""

    text: Field
    """``doc_to_text``."""
    target: Field
    """``doc_to_target``: the gold choice's index (or its text), or the scored continuation."""
    choices: Field | None = None
    """``doc_to_choice``; None for a task without choices (LAMBADA, generation)."""
    description: str = ""
    """Rendered with the row and put before everything (MMLU's subject line)."""
    target_delimiter: str = " "
    fewshot_delimiter: str = "\n\n"
    gen_prefix: Field | None = None
    """lm-eval's ``gen_prefix``: the start of the answer, written after the text (a field or
    template of the row)."""

    def prefix_of(self, row: Mapping[str, Any]) -> str:
        """``gen_prefix`` for this row (lm-eval's ``doc_to_prefix``), or nothing."""
        if self.gen_prefix is None:
            return ""
        value = self.read(self.gen_prefix, row)
        return "" if value is None else str(value)

    def tail(self, row: Mapping[str, Any], text: str) -> str:
        """What follows the row's text in its context: the delimiter and ``gen_prefix`` (lm-eval's
        ``build_qa_turn`` without an answer), nothing without one."""
        prefix = self.prefix_of(row)
        if not prefix:
            return ""
        return (self.target_delimiter if _needs_delimiter(text, prefix) else "") + prefix

    def text_of(self, row: Mapping[str, Any]) -> str | int:
        """``doc_to_text``: a string, or an int in a variable-context task."""
        value = self.read(self.text, row)
        if self._rendered(self.text, row) and value.isdigit() and self.choices is not None:
            value = ast.literal_eval(value)
        if not isinstance(value, str | int):
            raise _bad("text", value)
        return value

    def target_of(self, row: Mapping[str, Any]) -> Any:
        """``doc_to_target``: an index, a string, or a list (several gold indices)."""
        value = self.read(self.target, row)
        if not self._rendered(self.target, row):
            return value
        if value.isdigit() and self.choices is not None:
            return ast.literal_eval(value)
        if len(value) >= 2 and value[0] == "[" and value[-1] == "]":
            try:
                return ast.literal_eval(value)
            except (SyntaxError, ValueError):
                return value
        return value

    def choices_of(self, row: Mapping[str, Any]) -> list[str]:
        """``doc_to_choice``: the choices as a list of strings."""
        field = self.choices
        if self._rendered(field, row):
            assert isinstance(field, str)
            rendered = render(field, row)
            try:
                value: Any = ast.literal_eval(rendered)
            except (SyntaxError, ValueError) as exc:
                raise _bad("choices", rendered) from exc
        elif isinstance(field, dict):
            value = list(field.values())
        else:
            value = self.read(field, row)
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise _bad("choices", value)
        return value

    def answer_of(self, row: Mapping[str, Any]) -> str:
        """The text a shot shows as its answer (lm-eval's ``build_qa_turn``): the target, or
        the choice it indexes; the first of several targets."""
        target = self.target_of(row)
        variable = isinstance(self.text_of(row), int)
        if isinstance(target, int) and self.choices is not None and not variable:
            target = self.choices_of(row)[target]
        elif isinstance(target, list):
            target = target[0]
        if not isinstance(target, str):
            raise _bad("target", target)
        return target

    def shot(self, row: Mapping[str, Any]) -> Shot:
        text = self.text_of(row)
        if isinstance(text, int):  # a variable-context shot shows the gold context
            text = self.choices_of(row)[text]
        return Shot(text=text, answer=self.answer_of(row), gen_prefix=self.prefix_of(row))

    def prefix(
        self, row: Mapping[str, Any], shots: Sequence[Shot], shot_prompt: Prompt | None = None
    ) -> str:
        """The description and the shots: everything of the context before the row's text (a
        shot without an answer is its text alone, as lm-eval renders it); the shots joined by
        ``shot_prompt``'s delimiters when it is given (lm-eval's ``fewshot_config``)."""
        description = render(self.description, row) if self.description else ""
        delims = shot_prompt or self
        return description + "".join(_shot_text(s, delims) for s in shots)

    def turns(self, row: Mapping[str, Any], shots: Sequence[Shot]) -> dict[str, Any]:
        """The description and the shots as chat turns (lm-eval's ``fewshot_as_multiturn``): the
        description the system message, each shot its text as a user turn and its answer (after
        its ``gen_prefix``) as an assistant turn; a shot without an answer is a user turn alone."""
        description = render(self.description, row) if self.description else ""
        turns = [[s.text, _shot_answer(s) if s.answer else None] for s in shots]
        return {"fewshot_system": description, "fewshot_turns": turns}

    @staticmethod
    def _rendered(field: Field | None, row: Mapping[str, Any]) -> bool:
        """Whether lm-eval renders ``field`` as a template (a string naming no field)."""
        return isinstance(field, str) and field not in row

    @staticmethod
    def read(field: Field | None, row: Mapping[str, Any]) -> Any:
        if isinstance(field, str):
            return row[field] if field in row else render(field, row)
        if callable(field):
            return field(row)
        return field


def _needs_delimiter(prefix: str, suffix: str) -> bool:
    """lm-eval's ``requires_delimiter``: neither side has whitespace at the join."""
    return prefix != "" and not (prefix[-1].isspace() or suffix[0].isspace())


def _shot_text(shot: Shot, delims: Prompt) -> str:
    """One shot as lm-eval's ``build_qa_turn`` renders it as text (a shot without an answer is
    its text alone; with a ``gen_prefix``, the answer follows it, space-delimited)."""
    if not shot.answer:
        return shot.text
    if not shot.gen_prefix:
        return shot.text + delims.target_delimiter + shot.answer + delims.fewshot_delimiter
    gap = delims.target_delimiter if _needs_delimiter(shot.text, shot.gen_prefix) else ""
    return shot.text + gap + _shot_answer(shot) + delims.fewshot_delimiter


def _shot_answer(shot: Shot) -> str:
    """A shot's answer after its ``gen_prefix`` (space-delimited where neither side has one)."""
    if _needs_delimiter(shot.gen_prefix, shot.answer):
        return shot.gen_prefix + " " + shot.answer
    return shot.gen_prefix + shot.answer


def _bad(what: str, value: Any) -> ConfigError:
    return ConfigError(
        f"the task's {what} for this row is {value!r}, which lm-eval's rules cannot use "
        f"(doc_to_{'choice' if what == 'choices' else what}); fix the spec's prompt",
        path=f"prompt.{what}",
    )
