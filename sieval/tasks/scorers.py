"""Named scorers of a generated answer: what a task YAML's ``metric_list`` names for
``generate_until``, each a rule the record names.

- ``exact_match``: lm-eval 0.4.13's (Hugging Face evaluate's): the answer equals the gold after
  ``regexes_to_ignore`` (each removed), ``ignore_case``, ``ignore_punctuation``,
  ``ignore_numbers``; with several gold answers, any;
- ``number``: both read as numbers (``,`` ``$`` and spaces dropped) and equal within ``rel_tol``
  (default 1e-9) or ``abs_tol`` (default 0);
- ``math_equiv``: math-verify's equivalence (``scoring/math_answer.py``; the ``instruct``
  extra), of the answer's last ``\\boxed{}`` when it has one, else the whole answer;
- ``choice_letter``: the answer's first standalone capital letter among the task's choices
  (``doc_to_choice``: the letters) equals the gold letter: multiple choice by letters, for a
  chat model;
- ``code``: the answer's code (its first fenced block, else the text) followed by ``test`` (a
  template rendered with the row: the unit tests) exits 0 in the sandbox
  (``scoring/sandbox.py``);
- ``judge``: the judge role (``roles: {judge: LABEL}`` in the config) asked whether the answer
  is equivalent to the reference (``JUDGE_PROMPT``, or the option ``prompt``: a text holding
  ``{question}``, ``{answer}`` and ``{reference}``), after the generation; its verdict is the first
  ``GRADE: C`` or ``GRADE: I`` of the reply (1 or 0), as Inspect's model-graded QA reads its
  grade; a reply without one is a ``judge_parse_error``, counted and never scored. With the
  option ``cascade`` (``math_equiv`` or ``number``) the rule decides first and the judge is asked
  only where it cannot (``math_equiv``: math-verify reads no value from the answer or the gold,
  or the gold is a number and the answer holds free symbols, as words do; ``number``: the answer
  or the gold is no number); the share each decided is recorded (``decided_by_judge``);
- any other name: lm-eval's own metric function when lm-eval is installed, averaged (its
  ``aggregation`` must be ``mean``).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

__all__ = ["JUDGE_GRADE", "JUDGE_PROMPT", "NATIVE", "Scorer", "scorer"]

JUDGE_PROMPT = """You are checking a submitted answer against the reference answer to a question.

[Question]: {question}
***
[Submission]: {answer}
***
[Criterion]: {reference}
***

Does the submission give the same answer as the reference (wording, format and working aside)?
Explain in a sentence or two, then end with one line: GRADE: C if it does, GRADE: I if it does
not."""
"""The judge scorer's default prompt: question, answer and reference in Inspect's
model-graded sections, a verdict of ``GRADE: C`` (correct) or ``GRADE: I``."""

JUDGE_GRADE = re.compile(r"GRADE:\s*([CI])")
"""The judge scorer's verdict: the first match wins (``re.search``)."""


@dataclass(frozen=True)
class Scorer:
    """One metric of ``metric_list``: its name, how it scores, and its rule in words."""

    name: str
    score: Callable[[Any, Any, Mapping[str, Any]], float | Awaitable[tuple[float, dict[str, Any]]]]
    """``(prediction, gold, doc)``: the value, or (code) a coroutine of (value, channels)."""
    rule: str
    needs_doc: bool = False
    judge_prompt: str | None = None
    """A ``judge`` scorer's prompt: the family asks the judge role with it (``score`` unused)."""
    cascade: Callable[[Any, Any], float | None] | None = None
    """A ``judge`` scorer's rule first: ``(answer, gold)`` to 1 or 0, None where it cannot
    decide (only then the judge is asked)."""


def _exact_match(
    regexes_to_ignore: list[str] | None = None,
    ignore_case: bool = False,
    ignore_punctuation: bool = False,
    ignore_numbers: bool = False,
    multiple_targets: bool = False,
) -> Callable[[Any, Any, Mapping[str, Any]], float]:
    patterns = [re.compile(p) for p in regexes_to_ignore or []]
    punctuation = str.maketrans("", "", string.punctuation)
    digits = str.maketrans("", "", string.digits)

    def norm(value: Any) -> str:
        text = str(value)
        for p in patterns:
            text = str(p.sub("", text))
        if ignore_case:
            text = text.lower()
        if ignore_punctuation:
            text = text.translate(punctuation)
        if ignore_numbers:
            text = text.translate(digits)
        return text

    def score(prediction: Any, gold: Any, doc: Mapping[str, Any]) -> float:
        golds = gold if isinstance(gold, list) else [gold]
        return float(any(norm(prediction) == norm(g) for g in golds))

    return score


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _as_number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    text = str(value).replace(",", "").replace("$", "").replace(" ", "").rstrip(".")
    try:
        return float(text)
    except ValueError:
        found = _NUMBER.findall(text)
        return float(found[-1]) if found else None


def _number(rel_tol: float = 1e-9, abs_tol: float = 0.0) -> Any:
    def score(prediction: Any, gold: Any, doc: Mapping[str, Any]) -> float:
        golds = gold if isinstance(gold, list) else [gold]
        got = _as_number(prediction)
        if got is None:
            return 0.0
        wanted = [_as_number(g) for g in golds]
        return float(
            any(
                w is not None and math.isclose(got, w, rel_tol=rel_tol, abs_tol=abs_tol)
                for w in wanted
            )
        )

    return score


def _math_equiv() -> Any:
    def score(prediction: Any, gold: Any, doc: Mapping[str, Any]) -> float:
        from ..scoring.math_answer import extract_boxed, is_equivalent

        text = str(prediction)
        boxed = extract_boxed(text)
        answer = boxed.answer if boxed.answer is not None else text
        golds = gold if isinstance(gold, list) else [gold]
        return float(any(is_equivalent(answer, str(g)) for g in golds))

    return score


def _choice_letter() -> Any:
    def score(prediction: Any, gold: Any, doc: Mapping[str, Any]) -> float:
        letters = doc.get("__choices__") or list(string.ascii_uppercase)
        found = re.findall(r"\b([A-Z])\b", str(prediction))
        picked = next((x for x in found if x in letters), None)
        return float(picked is not None and picked == str(gold).strip())

    return score


def _code(test: str, timeout: float | None = None) -> Any:
    from .prompt import render

    async def run(
        prediction: Any, gold: Any, doc: Mapping[str, Any]
    ) -> tuple[float, dict[str, Any]]:
        from ._code import answer_code, execution_channel, sandbox

        code, _, _ = answer_code(str(prediction))
        if not code.strip():
            return 0.0, {"execution": None}
        program = code + "\n\n" + render(test, doc) + "\n"
        outcome = await sandbox().run(program)
        return float(outcome.passed), {"execution": execution_channel(outcome)}

    return run


NATIVE: dict[str, tuple[Callable[..., Any], str]] = {
    "exact_match": (_exact_match, "exact match"),
    "number": (_number, "numeric equality"),
    "math_equiv": (_math_equiv, "math-verify equivalence"),
    "choice_letter": (_choice_letter, "first standalone choice letter"),
    "code": (_code, "the code and the tests exit 0 in the sandbox"),
}


def _lm_eval_metric(name: str, kwargs: Mapping[str, Any], where: str) -> Any:
    try:
        from lm_eval.api.registry import get_metric
    except ImportError:
        raise ConfigError(
            f"{where}: unknown metric {name!r} for generate_until; sieval scores "
            f"{', '.join(NATIVE)} (and lm-eval's own metrics once lm-eval is installed)",
            path=where,
            received=name,
        ) from None
    try:
        fn = get_metric(name)
    except Exception:
        fn = None
    if fn is None:
        raise ConfigError(
            f"{where}: unknown metric {name!r}; sieval scores {', '.join(NATIVE)} and lm-eval's "
            "registered metrics",
            path=where,
            received=name,
        )

    def score(prediction: Any, gold: Any, doc: Mapping[str, Any]) -> Any:
        try:
            value = fn(references=[gold], predictions=[prediction], **kwargs)
        except TypeError:
            value = fn([gold, prediction])
        if isinstance(value, Mapping):
            value = value[name]
        return value  # a number, or (a corpus-level metric) the item its aggregation reads

    return score


def _math_decides(prediction: Any, gold: Any) -> float | None:
    from ..scoring.math_answer import decided, extract_boxed

    text = str(prediction)
    boxed = extract_boxed(text)
    answer = boxed.answer if boxed.answer is not None else text
    verdicts = [decided(answer, str(g)) for g in (gold if isinstance(gold, list) else [gold])]
    if any(v is True for v in verdicts):
        return 1.0
    return 0.0 if verdicts and all(v is False for v in verdicts) else None


def _number_decides(prediction: Any, gold: Any) -> float | None:
    golds = gold if isinstance(gold, list) else [gold]
    if _as_number(prediction) is None or any(_as_number(g) is None for g in golds):
        return None
    return float(_number()(prediction, gold, {}))


CASCADES: dict[str, Callable[[Any, Any], float | None]] = {
    "math_equiv": _math_decides,
    "number": _number_decides,
}
"""The rules a judge scorer may ask first (``cascade``), each None where it cannot decide."""


def _judge(options: Mapping[str, Any], where: str) -> Scorer:
    unknown = sorted(set(options) - {"prompt", "cascade"})
    prompt = options.get("prompt", JUDGE_PROMPT)
    cascade = options.get("cascade")
    missing = [k for k in ("{answer}", "{reference}") if k not in str(prompt)]
    bad_cascade = cascade is not None and cascade not in CASCADES
    if unknown or not isinstance(prompt, str) or missing or bad_cascade:
        raise ConfigError(
            f"{where}: metric judge takes the options prompt (a text holding {{question}}, "
            f"{{answer}} and {{reference}}) and cascade ({', '.join(CASCADES)})"
            + (f"; {', '.join(unknown)} is not one" if unknown else "")
            + (f"; the prompt lacks {', '.join(missing)}" if missing else "")
            + (f"; cascade {cascade!r} is not a rule it knows" if bad_cascade else ""),
            path=where,
        )

    def unused(prediction: Any, gold: Any, doc: Mapping[str, Any]) -> float:
        raise RuntimeError("a judge scorer is scored by its family's solve")  # pragma: no cover

    rule = (
        "the judge role asked whether the answer equals the reference; the first "
        "'GRADE: C' (1) or 'GRADE: I' (0) of its reply, none a judge_parse_error"
    )
    if cascade is not None:
        rule = f"{cascade} where it decides, else {rule}"
    return Scorer(
        "judge",
        unused,
        rule,
        needs_doc=True,
        judge_prompt=prompt,
        cascade=CASCADES[cascade] if cascade is not None else None,
    )


def scorer(name: Any, options: Mapping[str, Any], where: str) -> Scorer:
    """The scorer ``name`` with its options (the metric's other keys in ``metric_list``)."""
    if callable(name):
        fn = name
        key = getattr(fn, "__name__", "metric")

        def custom(prediction: Any, gold: Any, doc: Mapping[str, Any]) -> Any:
            value = fn(references=[gold], predictions=[prediction], **options)
            return value[key] if isinstance(value, Mapping) else value

        return Scorer(key, custom, f"{getattr(fn, '__module__', '?')}.{key}")
    if name == "judge":
        return _judge(options, where)
    if name in NATIVE:
        make, rule = NATIVE[name]
        try:
            fn = make(**options)
        except TypeError as exc:
            raise ConfigError(
                f"{where}: metric {name} takes no option among {sorted(options)} ({exc}); "
                "see docs/task-files.md for its options",
                path=where,
            ) from exc
        except re.error as exc:
            raise ConfigError(f"{where}: metric {name}: a bad regex ({exc})", path=where) from exc
        shown = f"{rule} {dict(options)}" if options else rule
        return Scorer(name, fn, shown, needs_doc=name in ("choice_letter", "code"))
    return Scorer(name, _lm_eval_metric(name, options, where), f"lm-eval's {name}", True)
