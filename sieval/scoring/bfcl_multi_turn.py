"""BFCL's multi-turn check, written from its documented behaviour (sieval's own).

A multi-turn entry (Patil et al., "The Berkeley Function Calling Leaderboard (BFCL): From Tool
Use to Agentic Evaluation of Large Language Models", ICML 2025) is a conversation of user turns
over stateful environments; its ground truth is, per turn, the calls that fulfil it. bfcl-eval
2026.3.23 grades it by executing both, turn by turn, on fresh instances of the environments
(``bfcl_env.py`` reaches them), and compares (``tests/scoring/test_bfcl_multi_turn_parity.py``
runs bfcl-eval's own ``multi_turn_checker`` on the same outputs):

- the model's calls of a turn are the decoded calls of each of its steps (a step whose reply
  held no call, or could not be decoded, is left out); a reply list with fewer turns than the
  ground truth (the model was stopped at BFCL's step limit) fails the entry
  (``multi_turn:force_terminated``);
- per turn, in order: the model's calls are executed on the model's instances, the ground
  truth's on the ground truth's (each set of instances lives across the turns); a turn with a
  ground truth and no model call fails (``multi_turn:empty_turn_model_response``); a turn
  without a ground truth (a missing function or parameter: the model should ask, not call) is
  not checked, its calls executed all the same (so the later turns' states are right);
- the **state check**: each class's public attributes (not starting with ``_``) equal the
  ground truth's (``multi_turn:instance_state_mismatch``);
- the **response check**: every result of the turn's ground-truth calls is among the results of
  all the model's calls so far (all turns: a call made earlier need not be repeated), counted
  with multiplicity, in any order (``multi_turn:execution_response_mismatch``);
- the entry passes when every checked turn passes. bfcl-eval's irrelevance check for a turn
  without ground truth (``multi_turn_irrelevance_checker``) exists but its runner does not
  call it; here neither.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .bfcl_decode import NotCalls, python_calls
from .bfcl_env import Call, Environments

__all__ = [
    "TurnVerdict",
    "Verdict",
    "check",
    "executable",
    "fc_calls",
    "ground_truth_call",
    "prompt_calls",
]


@dataclass(frozen=True)
class TurnVerdict:
    """What one turn executed: the model's results, the ground truth's."""

    model: list[list[str]]
    truth: list[str]


@dataclass(frozen=True)
class Verdict:
    """One entry's grade: passed, or the failing turn and bfcl-eval's ``error_type``."""

    valid: bool
    error_type: str | None = None
    error: str | None = None
    turn: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    turns: list[TurnVerdict] = field(default_factory=list)


def ground_truth_call(text: str) -> Call:
    """A ground-truth call (``sort('final_report.pdf')``, ``cd(folder='..')``) read as a call:
    its name, its positional and keyword arguments (Python literals)."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError(f"not a call: {text!r}")
    name = ast.unparse(node.func)
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {str(k.arg): ast.literal_eval(k.value) for k in node.keywords}
    return Call(name=name, kwargs=kwargs, args=tuple(args))


def executable(decoded: Sequence[Mapping[str, Mapping[Any, Any]]]) -> list[Call]:
    """Calls decoded from a Prompt reply (``[{name: {param: value}}]``, ``bfcl_decode``) as
    bfcl-eval executes them: a dict argument whose values are all dicts is a nested call (run
    first), any other dict a dict with its keys as text; an empty dict, which bfcl-eval's
    decoder fails on, makes the reply undecodable (``ValueError``)."""
    return [
        Call(name=name, kwargs=_arguments(args)) for one in decoded for name, args in one.items()
    ]


def prompt_calls(text: str) -> tuple[list[Call], str | None]:
    """A Prompt reply's calls as bfcl-eval executes them, and why there are none when the text
    does not decode (a decode failure ends the turn, as an empty call list does)."""
    try:
        return executable(python_calls(text)), None
    except (NotCalls, ValueError) as exc:
        return [], str(exc)


def fc_calls(made: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Call]:
    """An FC reply's calls (name, arguments) as bfcl-eval executes them: keyword arguments."""
    return [Call(name=name, kwargs=dict(arguments)) for name, arguments in made]


def _arguments(args: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k): _executable(v) for k, v in args.items()}


def _executable(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    if all(isinstance(v, dict) for v in value.values()):
        if not value:
            raise ValueError("an empty dict argument (bfcl-eval's decoder fails on it)")
        name, args = next(iter(value.items()))
        return Call(name=str(name), kwargs=_arguments(args))
    return {str(k): _executable(v) for k, v in value.items()}


def _subset(expected: Sequence[str], made: Sequence[str]) -> list[str]:
    """The expected results missing from ``made`` (each found result used once)."""
    left = list(made)
    missing = []
    for item in expected:
        if item in left:
            left.remove(item)
        else:
            missing.append(item)
    return missing


def check(
    envs: Environments,
    classes: Sequence[str],
    config: Mapping[str, Any],
    long_context: bool,
    model_turns: Sequence[Sequence[Sequence[Call]]],
    ground_truth: Sequence[Sequence[str]],
) -> Verdict:
    """The verdict on ``model_turns`` (per turn, per step with a call, its calls) against the
    entry's ``ground_truth`` (per turn, its calls as text), see the module."""
    if len(model_turns) != len(ground_truth):
        return Verdict(
            False,
            "multi_turn:force_terminated",
            f"the model's turns ({len(model_turns)}) are not the ground truth's "
            f"({len(ground_truth)})",
        )
    model = envs.open(classes, config, long_context)
    truth = envs.open(classes, config, long_context)
    try:
        return _turns(envs, model, truth, model_turns, ground_truth)
    finally:
        envs.close(model)
        envs.close(truth)


def _turns(
    envs: Environments,
    model: str,
    truth: str,
    model_turns: Sequence[Sequence[Sequence[Call]]],
    ground_truth: Sequence[Sequence[str]],
) -> Verdict:
    so_far: list[str] = []
    executed: list[TurnVerdict] = []
    for index, (steps, expected) in enumerate(zip(model_turns, ground_truth, strict=True)):
        steps = [s for s in steps if s]
        made = [[envs.call(model, c) for c in step] for step in steps]
        so_far.extend(r for step in made for r in step)
        wanted = [envs.call(truth, ground_truth_call(c)) for c in expected]
        executed.append(TurnVerdict(made, wanted))
        if not expected:
            continue
        if not steps:
            return Verdict(
                False,
                "multi_turn:empty_turn_model_response",
                f"Model response list is empty for turn {index}",
                index,
                turns=executed,
            )
        state = envs.compare(model, truth)
        if not state["valid"]:
            return Verdict(
                False,
                "multi_turn:instance_state_mismatch",
                f"Model instance for {state['class']} does not match the state with ground "
                "truth instance.",
                index,
                {"differences": state["differences"]},
                executed,
            )
        missing = _subset(wanted, so_far)
        if missing:
            return Verdict(
                False,
                "multi_turn:execution_response_mismatch",
                "Model response execution results so far does not contain all the ground truth "
                f"response execution results for turn {index}.",
                index,
                {"missing": missing},
                executed,
            )
    return Verdict(True, turns=executed)
