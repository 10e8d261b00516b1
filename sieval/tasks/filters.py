"""lm-evaluation-harness's answer filters (``filter_list``), applied to a sample's answers.

A task YAML's ``filter_list`` names pipelines (``strict-match``, ``flexible-extract``), each a
list of filter functions run in order on the model's text; each pipeline's output is scored by
every metric of ``metric_list`` (``exact_match,strict-match``). Written here, as lm-eval 0.4.13's
``lm_eval/filters/``: ``regex`` (``findall``, ``group_select``, a tuple's first non-empty group,
stripped, else ``fallback``), ``take_first``, ``remove_whitespace`` (strip), ``lowercase``,
``uppercase``, ``map``, ``custom`` (``filter_fn``), ``majority_vote`` and ``take_first_k``. Any
other name is lm-eval's own filter class when lm-eval is installed (``multi_choice_regex``, ...),
else an error naming those above. A task without ``filter_list`` has one pipeline, ``none`` (take
the text as it is).

With one answer a sample (``repeats: 1``) a pipeline starts from its text; with a task's
``repeats: n`` from the list of its n answers, as lm-eval's filters see a document's responses:
the filters of one answer map over the list, ``take_first`` keeps the first, ``take_first_k`` the
first k, ``majority_vote`` the most common (a tie to the one seen first, as ``Counter`` keeps).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

__all__ = ["NATIVE", "NONE", "Pipeline", "Step", "pipeline"]


@dataclass(frozen=True)
class Step:
    """One filter function with its arguments."""

    name: str
    apply: Callable[[Any, Mapping[str, Any]], Any]
    """``(answer, doc) -> answer``."""


@dataclass(frozen=True)
class Pipeline:
    """A named filter pipeline: its steps in order."""

    name: str
    steps: tuple[Step, ...]
    needs_doc: bool = False
    """A step reads the row (``custom``, lm-eval's own classes): samples then keep it."""

    def run(self, text: str | list[str], doc: Mapping[str, Any]) -> Any:
        """The pipeline over one answer's text, or over the list of a sample's repeats."""
        value: Any = text
        for step in self.steps:
            value = step.apply(value, doc)
        return value

    @property
    def rule(self) -> str:
        """The pipeline in words, for the protocol and the records."""
        return f"{self.name}: " + (" -> ".join(s.name for s in self.steps) or "the text as is")


NONE = Pipeline("none", ())


Apply = Callable[[Any, Mapping[str, Any]], Any]


def _each(apply: Apply) -> Apply:
    """A filter of one answer, mapped over a list of answers (a sample's repeats)."""
    return lambda value, doc: (
        [apply(v, doc) for v in value] if isinstance(value, list) else apply(value, doc)
    )


def _regex(
    regex_pattern: str = r"#### (\-?[0-9\.\,]+)", group_select: int = 0, fallback: str = "[invalid]"
) -> Apply:
    compiled = re.compile(regex_pattern)

    def apply(value: Any, doc: Mapping[str, Any]) -> Any:
        found = compiled.findall(value if isinstance(value, str) else "")
        if not found:
            return fallback
        match = found[group_select]
        if isinstance(match, tuple):
            kept = [m for m in match if m]
            match = kept[0] if kept else fallback
        return match.strip()

    return _each(apply)


def _map(mapping_dict: Mapping[Any, Any] | None = None, default_value: Any = None) -> Any:
    table = dict(mapping_dict or {})
    return _each(lambda value, doc: table.get(value, default_value))


def _custom(filter_fn: Callable[..., Any]) -> Any:
    def apply(value: Any, doc: Mapping[str, Any]) -> Any:
        if isinstance(value, list):
            return next(iter(filter_fn([value], [doc])))
        return next(iter(filter_fn([[value]], [doc])))[0]

    return apply


def _take_first_k(k: int) -> Apply:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise TypeError(f"k must be an integer >= 1, got {k!r}")
    return lambda value, doc: value[:k] if isinstance(value, list) else value


def _majority_vote(value: Any, doc: Mapping[str, Any]) -> Any:
    if not isinstance(value, list):
        return value
    return [Counter(value).most_common(1)[0][0]]


NATIVE: dict[str, Callable[..., Apply]] = {
    "regex": _regex,
    "take_first": lambda: lambda value, doc: value[0] if isinstance(value, list) else value,
    "remove_whitespace": lambda: _each(lambda value, doc: value.strip()),
    "lowercase": lambda: _each(lambda value, doc: value.lower()),
    "uppercase": lambda: _each(lambda value, doc: value.upper()),
    "map": _map,
    "custom": _custom,
    "take_first_k": _take_first_k,
    "majority_vote": lambda: _majority_vote,
}
"""The filters sieval runs itself (``take_first`` is the identity on one answer a sample)."""


def _lm_eval_filter(name: str, kwargs: Mapping[str, Any], where: str) -> Any:
    try:
        from lm_eval.api.registry import get_filter
    except ImportError:
        get_filter = None
    found = None
    if get_filter is not None:
        try:
            found = get_filter(name)
        except Exception:  # lm-eval raises its own KeyError/ValueError types here
            found = None
    if found is None:
        raise ConfigError(
            f"{where}: unknown filter function {name!r}; sieval runs {', '.join(NATIVE)}"
            + ("" if get_filter else ", and lm-eval's own filters once lm-eval is installed"),
            path=where,
            received=name,
        )
    return _applied(found(**kwargs))


def _applied(instance: Any) -> Apply:
    """An lm-eval filter object applied to one answer, or to a sample's list of repeats (its
    ``apply`` takes a list of each document's responses)."""

    def apply(value: Any, doc: Mapping[str, Any]) -> Any:
        if isinstance(value, list):
            return next(iter(instance.apply([value], [doc])))
        return next(iter(instance.apply([[value]], [doc])))[0]

    return apply


def pipeline(name: str, functions: Sequence[Any], where: Callable[[int], str]) -> Pipeline:
    """The pipeline ``name`` of ``filter_list``; ``where(i)`` names the place of function i."""
    steps = []
    needs_doc = False
    for i, entry in enumerate(functions):
        at = where(i)
        if isinstance(entry, Mapping) and callable(entry.get("function")):  # a !function class
            kwargs = {k: v for k, v in entry.items() if k != "function"}
            try:
                instance = entry["function"](**kwargs)
            except TypeError as exc:
                raise ConfigError(
                    f"{at}: filter {entry['function']!r} cannot take {kwargs} "
                    f"({exc}); fix its arguments",
                    path=at,
                ) from exc
            steps.append(Step(getattr(entry["function"], "__name__", "custom"), _applied(instance)))
            needs_doc = True
            continue
        if not isinstance(entry, Mapping) or not isinstance(entry.get("function"), str):
            raise ConfigError(
                f"{at}: a filter is a mapping with a 'function:' name (regex, take_first, ...), "
                f"got {entry!r}",
                path=at,
            )
        fname = entry["function"]
        kwargs = {k: v for k, v in entry.items() if k != "function"}
        try:
            if fname in NATIVE:
                apply = NATIVE[fname](**kwargs)
                needs_doc = needs_doc or fname == "custom"
            else:
                apply = _lm_eval_filter(fname, kwargs, at)
                needs_doc = True
        except (TypeError, re.error) as exc:
            raise ConfigError(
                f"{at}: filter {fname!r} cannot take {kwargs} ({exc}); fix its arguments",
                path=at,
            ) from exc
        steps.append(Step(fname, apply))
    return Pipeline(name, tuple(steps), needs_doc)
