"""A tool loop: offer an environment's tools, run the calls the model makes, send the results back,
until the model answers in text or a bound is reached.

An environment is a Python object; its tools are its methods marked ``@tool``, each parameter
annotated (the JSON schema is derived from the annotations by msgspec, the description is the
docstring's first paragraph)::

    class Counter(Environment):
        def __init__(self) -> None:
            self.value = 0

        @tool
        def add(self, amount: int) -> int:
            \"\"\"Add amount to the counter and return the new value.\"\"\"
            self.value += amount
            return self.value

``run_tools(ctx, request, env, bounds)`` sends ``request`` (its conversation; the tools are the
environment's) as turn 1, and for as long as the reply calls tools: each call's arguments are
validated against the tool's schema and the tool run; a call of an unknown tool, arguments that
do not validate, and an exception the tool raises are each sent back as an error result,
``{"error": "..."}`` (the model reads what went wrong; OpenAI's chat wire has no error flag),
never a crash of the sample; several calls in one reply (parallel
calls) are run in their order and answered together. The next turn is the conversation so far
plus the assistant's calls and the results. Each turn is one ``ctx.call`` (``turn1``,
``turn2``, ...), recorded with the sample.

It stops when a reply calls no tool (``stop_reason: answered``), or when a bound is reached
(``stop_reason: budget_exhausted``, ``bound`` naming it): ``turns`` model calls made,
``tool_calls`` tools run (the calls past it are not run), ``output_tokens`` generated over the
loop, ``max_tokens`` a reply ended for length while it called (a call read from a cut reply
may be cut itself: none of its calls is run). A bound reached is its own outcome, counted apart
from a wrong answer. A result is sent back as JSON, cut to ``result_chars`` characters (so that
the forecast can bound it).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import msgspec
from msgspec import UNSET

from ..errors import ContractViolation
from ..ir.request import (
    ChatInput,
    FunctionTool,
    Message,
    Part,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ..ir.response import ToolCall, ended_for_length
from .base import ModelFacts, PlannedCall
from .context import Context

__all__ = ["Bounds", "Environment", "Loop", "Step", "planned_turns", "run_tools", "tool"]

F = TypeVar("F", bound=Callable[..., Any])

_TOOL = "__sieval_tool__"


def tool(method: F) -> F:
    """Mark an ``Environment`` method as a tool."""
    setattr(method, _TOOL, True)
    return method


@dataclass(frozen=True)
class _Tool:
    name: str
    description: str
    arguments: type[msgspec.Struct]
    """The parameters as a Struct: ``msgspec.convert`` validates a call's arguments with it."""
    schema: dict[str, Any]


class Environment:
    """The state a tool loop acts on; its ``@tool`` methods are the tools offered."""

    def tools(self) -> tuple[FunctionTool, ...]:
        """The tools as the IR offers them, in the order the class defines them."""
        return tuple(
            FunctionTool(name=t.name, description=t.description, parameters=t.schema)
            for t in _tools(type(self)).values()
        )

    def run(self, name: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
        """Run one call: ``(result, is_error)``. An unknown tool, arguments that do not fit the
        schema, and an exception in the tool are error results, never raised."""
        declared = _tools(type(self))
        found = declared.get(name)
        if found is None:
            known = ", ".join(declared)
            return f"there is no tool named {name!r}; the tools are: {known}", True
        try:
            given = msgspec.convert(arguments, found.arguments)
        except msgspec.ValidationError as exc:
            return f"invalid arguments for {name}: {exc}", True
        values = {f: getattr(given, f) for f in given.__struct_fields__}
        try:
            return getattr(self, name)(**values), False
        except Exception as exc:  # a tool's failure is the model's to read, not the run's
            return f"{type(exc).__name__}: {exc}", True


_CACHE: dict[type, dict[str, _Tool]] = {}


def _tools(cls: type) -> dict[str, _Tool]:
    """The tools of an environment class, by name (derived once per class)."""
    found = _CACHE.get(cls)
    if found is not None:
        return found
    found = {}
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if getattr(member, _TOOL, False):
            found[name] = _derive(name, member)
    order = {name: i for i, name in enumerate(_definition_order(cls))}
    found = dict(sorted(found.items(), key=lambda item: order.get(item[0], len(order))))
    _CACHE[cls] = found
    return found


def _definition_order(cls: type) -> list[str]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        names.extend(n for n in vars(klass) if n not in names)
    return names


def _derive(name: str, method: Callable[..., Any]) -> _Tool:
    hints = typing.get_type_hints(method)
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for parameter in list(inspect.signature(method).parameters.values())[1:]:
        if parameter.name not in hints:
            raise TypeError(f"tool {name}: parameter {parameter.name} has no annotation")
        if parameter.default is inspect.Parameter.empty:
            fields.append((parameter.name, hints[parameter.name]))
        else:
            fields.append((parameter.name, hints[parameter.name], parameter.default))
    struct = msgspec.defstruct(
        f"{name}_arguments", fields, forbid_unknown_fields=True, kw_only=True
    )
    schema = msgspec.json.schema(struct)
    defs = schema.pop("$defs", {})
    body = dict(defs.pop(struct.__name__, {}))
    body.pop("title", None)
    if defs:  # nested types keep their definitions
        body["$defs"] = defs
    doc = inspect.getdoc(method) or ""
    return _Tool(name, doc.split("\n\n")[0].replace("\n", " "), struct, body)


@dataclass(frozen=True)
class Bounds:
    """Where a tool loop stops if the model has not answered before."""

    turns: int = 8
    """Model calls at most."""
    tool_calls: int = 16
    """Tools run at most (the calls past it are not run)."""
    output_tokens: int | None = None
    """Output tokens over the loop at most (as the replies' usage reports them)."""
    result_chars: int = 2000
    """A tool result is sent back as JSON cut to this many characters."""


@dataclass(frozen=True)
class Step:
    """One tool call the model made, and what it got back."""

    turn: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: Any = None
    is_error: bool = False
    ran: bool = True
    """False: a bound stopped the loop before it was run (no result was sent)."""


@dataclass
class Loop:
    """How a tool loop ended."""

    stop_reason: Literal["answered", "budget_exhausted"]
    bound: Literal["turns", "tool_calls", "output_tokens", "max_tokens"] | None
    answer: str | None
    """The final text answer (None when a bound stopped the loop)."""
    turns: int
    steps: list[Step] = field(default_factory=list)
    output_tokens: int = 0

    def channels(self) -> dict[str, Any]:
        """What a record keeps of the loop beside each turn's request record."""
        return {
            "stop_reason": self.stop_reason,
            "bound": self.bound,
            "answer": self.answer,
            "turns": self.turns,
            "tool_calls": [
                {
                    "turn": s.turn,
                    "name": s.name,
                    "arguments": s.arguments,
                    "result": s.result,
                    "is_error": s.is_error,
                    "ran": s.ran,
                }
                for s in self.steps
            ],
        }


def offered(request: Request, env: Environment) -> Request:
    """``request`` offering the environment's tools (``auto``: the model may answer in text)."""
    if not isinstance(request.input, ChatInput):
        raise TypeError("a tool loop's request is a conversation (ChatInput)")
    tools = msgspec.structs.replace(request.tools, functions=env.tools())
    if tools.choice is UNSET:
        tools = msgspec.structs.replace(tools, choice="auto")
    return msgspec.structs.replace(request, tools=tools)


async def run_tools(
    ctx: Context,
    request: Request,
    env: Environment,
    bounds: Bounds = Bounds(),
    *,
    name: str = "turn",
) -> Loop:
    """Run the loop from ``request`` (see the module); a call that failed raises its error (the
    sample fails, unscored)."""
    current = offered(request, env)
    messages = list(current.input.messages) if isinstance(current.input, ChatInput) else []
    loop = Loop(stop_reason="answered", bound=None, answer=None, turns=0)
    while True:
        if loop.turns >= bounds.turns:
            return _exhausted(loop, "turns")
        loop.turns += 1
        sent = msgspec.structs.replace(current, input=ChatInput(messages=tuple(messages)))
        call = await ctx.call(f"{name}{loop.turns}", sent)
        response = call.result()
        if not response.choices:
            raise ContractViolation("the tool loop's reply has no choices", path="choices")
        choice = response.choices[0]
        produced = response.usage.output_tokens
        loop.output_tokens += produced if isinstance(produced, int) else 0
        calls = choice.tool_calls if isinstance(choice.tool_calls, tuple) else ()
        if not calls:
            loop.answer = choice.text
            return loop
        if ended_for_length(choice.finish_reason):  # the calls may be cut: none is run
            loop.steps.extend(
                Step(loop.turns, c.call_id, c.name, dict(c.arguments), ran=False) for c in calls
            )
            return _exhausted(loop, "max_tokens")
        messages.append(_assistant(choice.text, calls))
        results: list[Part] = []
        for made in calls:
            if len([s for s in loop.steps if s.ran]) >= bounds.tool_calls:
                loop.steps.append(
                    Step(loop.turns, made.call_id, made.name, dict(made.arguments), ran=False)
                )
                continue
            result, is_error = env.run(made.name, dict(made.arguments))
            shown = _shown({"error": result} if is_error else result, bounds.result_chars)
            loop.steps.append(
                Step(loop.turns, made.call_id, made.name, dict(made.arguments), shown, is_error)
            )
            # an error is said in the result ({"error": ...}): not every wire has an error flag
            results.append(ToolResultPart(call_id=made.call_id, result=shown))
        if len(results) < len(calls):
            return _exhausted(loop, "tool_calls")
        messages.extend(_results(results, ctx.facts))
        if bounds.output_tokens is not None and loop.output_tokens >= bounds.output_tokens:
            return _exhausted(loop, "output_tokens")


def _exhausted(
    loop: Loop, bound: Literal["turns", "tool_calls", "output_tokens", "max_tokens"]
) -> Loop:
    loop.stop_reason = "budget_exhausted"
    loop.bound = bound
    return loop


def _assistant(text: str, calls: Sequence[ToolCall]) -> Message:
    parts: list[Part] = [TextPart(text=text)] if text else []
    parts.extend(ToolCallPart(call_id=c.call_id, name=c.name, arguments=c.arguments) for c in calls)
    return Message(role="assistant", content=tuple(parts))


def _results(results: list[Part], facts: ModelFacts) -> list[Message]:
    """The results as the model's wire takes them: one tool message each (OpenAI's chat), or
    all in one turn (Anthropic's, Google's: a turn answers every call of the one before)."""
    if facts.tool_results == "together":
        return [Message(role="tool", content=tuple(results))]
    return [Message(role="tool", content=(r,)) for r in results]


def _shown(result: Any, limit: int) -> Any:
    """A result as sent back: itself when it is JSON within ``limit`` characters, else its JSON
    text cut to ``limit``."""
    try:
        text = msgspec.json.encode(result).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(result)
        return text[:limit]
    if len(text) <= limit:
        return result
    return text[:limit]


def planned_turns(
    request: Request, env: Environment, bounds: Bounds, *, name: str = "turn"
) -> list[PlannedCall]:
    """What planning knows of a tool loop before I/O: turn 1 as sent, and the later turns as
    turn 1 again (``times``: the turns left) holding at most what the earlier turns may add
    unseen: every earlier answer at its ``max_tokens`` and every tool result the loop may run at
    ``result_chars``, counted a token a character (a bound for text of one byte a character;
    the chat template's few tokens around each message are not in it)."""
    first = offered(request, env)
    most = first.sampling.max_tokens if isinstance(first.sampling.max_tokens, int) else 0
    calls = [PlannedCall(f"{name}1", first)]
    if bounds.turns > 1:
        later = bounds.turns - 1
        calls.append(
            PlannedCall(
                f"{name}2..{bounds.turns}",
                first,
                exact=False,
                times=later,
                unseen_tokens=later * most + bounds.tool_calls * bounds.result_chars,
            )
        )
    return calls
