"""The tool-call check: does the server's tool parser deliver the calls its model makes?

Five probes, each one request offering function tools (greedy, 128 tokens at most: a call to
these tools takes about 20), each with what it proves:

* ``forced``: one tool, ``tool_choice: required``: a server that honours it returns a call;
* ``parallel``: one tool, two cities asked, ``required``: every call made is delivered (one call
  of two is reported, not failed: the model may make one);
* ``empty``: a greeting with ``tool_choice: auto``: a reply without calls comes back as a text
  answer (an empty call list is not refused);
* ``dotted``: a tool named ``weather.get_current``, ``required``: the call comes back under that
  exact name;
* ``nested``: a parameter that is an object (``location: {city, country}``), ``required``: the
  arguments keep it an object.

A probe **fails** on proof that calls were lost or changed: a forced probe with no call, a call
left in the text as ``<tool_call>`` markup (the parser did not read it), a reply that says it
called (``tool_calls`` finish) and lists none, a name changed, a nested object flattened, a
server that refused the request. A reply cut at the 128 tokens proves nothing (the model ran on,
the parser had no whole call to read): that probe is ``inconclusive``, with its text. The
finding fails when any probe does, with each probe's evidence, and passes only when every probe
passed; it is skipped on a wire without native tools. A failure matters to every task that
offers tools: the parser, not the model, will lose calls.
"""

from __future__ import annotations

from typing import Any

from ..errors import SievalError
from ..ir.request import ChatInput, FunctionTool, Message, Request, Sampling, TextPart, Tools
from ..ir.response import ToolCall, ended_for_length
from ..model import Call, Model
from ..scoring.bfcl_decode import hermes_calls
from .finding import Finding
from .observation import Sender

__all__ = ["MAX_TOKENS", "PROBES", "check_tool_calls", "check_tool_prompt"]

MAX_TOKENS = 128

_WEATHER = FunctionTool(
    name="get_weather",
    description="Get the current weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city's name."}},
        "required": ["city"],
    },
)
_DOTTED = FunctionTool(
    name="weather.get_current",
    description=_WEATHER.description,
    parameters=_WEATHER.parameters,
)
_NESTED = FunctionTool(
    name="get_forecast",
    description="Get the weather forecast for a location.",
    parameters={
        "type": "object",
        "properties": {
            "location": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
                "required": ["city", "country"],
            },
            "days": {"type": "integer"},
        },
        "required": ["location", "days"],
    },
)

PROBES: dict[str, tuple[str, FunctionTool, str]] = {
    "forced": ("What is the weather in Paris?", _WEATHER, "required"),
    "parallel": (
        "Call get_weather for Paris and get_weather for London.",
        _WEATHER,
        "required",
    ),
    "empty": ("Hello! How are you today?", _WEATHER, "auto"),
    "dotted": ("What is the weather in Paris?", _DOTTED, "required"),
    "nested": ("Get the weather forecast for Paris, France for 3 days.", _NESTED, "required"),
}
"""Each probe: the user's message, the tool offered, the tool choice."""


def _request(text: str, tool: FunctionTool, choice: str) -> Request:
    message = Message(role="user", content=(TextPart(text=text),))
    return Request(
        input=ChatInput(messages=(message,)),
        sampling=Sampling(temperature=0.0, max_tokens=MAX_TOKENS),
        tools=Tools(functions=(tool,), choice="required" if choice == "required" else "auto"),
    )


def _judged(name: str, calls: tuple[ToolCall, ...], text: str, tool: FunctionTool) -> str | None:
    """Why probe ``name`` failed on a reply with ``calls`` and ``text`` (None: it passed)."""
    left = hermes_calls(text)
    if left:
        return f"{len(left)} call(s) left in the text as <tool_call> markup: {text[:160]!r}"
    if name == "empty":
        return None
    if not calls:
        return f"tool_choice required, no call came back; text {text[:160]!r}"
    names = {c.name for c in calls}
    if names != {tool.name}:
        return f"the call came back named {sorted(names)}, the tool is {tool.name!r}"
    if name == "nested" and not all(isinstance(c.arguments.get("location"), dict) for c in calls):
        shown = [c.arguments.get("location") for c in calls]
        return f"location came back as {shown!r}, not an object"
    return None


async def check_tool_calls(sender: Sender, model: Model) -> Finding:
    """The five probes through ``model`` (see the module)."""
    capabilities = _capabilities(model)
    if "function_tools" not in capabilities:
        return Finding(
            check="tool_calls",
            outcome="skipped",
            detail=f"{model.dialect.id} carries no function tools",
        )
    mark = sender.mark()
    evidence: dict[str, Any] = {}
    failed: list[str] = []
    unsure: list[str] = []
    for name, (text, tool, choice) in PROBES.items():
        await sender.one(_request(text, tool, choice))
        call = sender.calls[-1]
        cut = _cut(call)
        if cut is not None:
            evidence[name] = {"outcome": "inconclusive", "why": cut}
            unsure.append(name)
            continue
        if call.response is None:
            error = call.error
            why = "no reply"
            if isinstance(error, SievalError):
                why = f"{type(error).__name__}: {error}"
            if call.reply:  # the refused reply, as received
                why += f"; the reply: {call.reply[:300]}"
            evidence[name] = {"outcome": "failed", "why": why}
            failed.append(f"{name}: {why}")
            continue
        choice_ = call.response.choices[0]
        calls = choice_.tool_calls if isinstance(choice_.tool_calls, tuple) else ()
        why_failed = _judged(name, calls, choice_.text, tool)
        entry: dict[str, Any] = {
            "outcome": "failed" if why_failed else "passed",
            "calls": [{c.name: c.arguments} for c in calls],
            "finish": choice_.finish_reason if isinstance(choice_.finish_reason, str) else None,
        }
        if name == "parallel" and not why_failed:
            entry["note"] = f"{len(calls)} of the 2 calls asked for came back"
        if why_failed:
            entry["why"] = why_failed
            failed.append(f"{name}: {why_failed}")
        evidence[name] = entry
    cost = sender.since(mark)
    if failed:
        return Finding(
            check="tool_calls",
            outcome="failed",
            detail="; ".join(failed),
            meaning=(
                "the server's tool parser (not the model) loses or changes calls: a tool-calling "
                "score measures the parser too; check the server's tool-call parser flags "
                "(vLLM: --enable-auto-tool-choice --tool-call-parser NAME)"
            ),
            matters=True,
            evidence=evidence,
            cost=cost,
        )
    if unsure:
        return Finding(
            check="tool_calls",
            outcome="skipped",
            detail=f"inconclusive: the probes {', '.join(unsure)} were cut at {MAX_TOKENS} "
            "tokens before a whole call (the model ran on); the others passed",
            evidence=evidence,
            cost=cost,
        )
    return Finding(
        check="tool_calls",
        outcome="passed",
        detail=f"all {len(PROBES)} probes delivered their calls (forced, parallel: "
        f"{len(evidence['parallel']['calls'])}, empty, dotted, nested)",
        evidence=evidence,
        cost=cost,
    )


async def check_tool_prompt(sender: Sender, model: Model) -> Finding:
    """Whether the offered tools reach the model: one question sent with a tool offered and
    without, one token each; the prompt must count more tokens with the tool. A chat template
    that does not render tools (Gemma 3's) counts the same: the model never sees the functions,
    and an FC score measures it answering without them."""
    if "function_tools" not in _capabilities(model):
        return Finding(
            check="tool_prompt",
            outcome="skipped",
            detail=f"{model.dialect.id} carries no function tools",
        )
    mark = sender.mark()
    text, tool, _ = PROBES["empty"]  # a greeting: no call is made, one token answers
    offered = _request(text, tool, "auto")
    bare = Request(input=offered.input, sampling=Sampling(temperature=0.0, max_tokens=1))
    offered = Request(input=offered.input, sampling=bare.sampling, tools=offered.tools)
    counts = []
    for request in (offered, bare):
        await sender.one(request)
        response = sender.calls[-1].response
        tokens = response.usage.input_tokens if response is not None else None
        counts.append(tokens if isinstance(tokens, int) else None)
    cost = sender.since(mark)
    evidence = {"with_tool": counts[0], "without": counts[1]}
    if counts[0] is None or counts[1] is None:
        return Finding(
            check="tool_prompt",
            outcome="skipped",
            detail="the server did not count the prompt tokens of both probes",
            evidence=evidence,
            cost=cost,
        )
    if counts[0] <= counts[1]:
        return Finding(
            check="tool_prompt",
            outcome="failed",
            detail=f"the tool did not reach the prompt: {counts[0]} prompt tokens with it, "
            f"{counts[1]} without (the chat template does not render tools)",
            meaning="the model never sees the functions offered as tools: a native-tool (FC) "
            "score measures it answering without them; run the Prompt column (bfcl_prompt) or "
            "serve a chat template that renders tools",
            matters=True,
            evidence=evidence,
            cost=cost,
        )
    return Finding(
        check="tool_prompt",
        outcome="passed",
        detail=f"the tool reached the prompt: {counts[0]} prompt tokens with it, {counts[1]} "
        "without",
        evidence=evidence,
        cost=cost,
    )


def _cut(call: Call) -> str | None:
    """Why a probe's reply proves nothing: it ended for length (None: it did not)."""
    if call.response is not None:
        finish = call.response.choices[0].finish_reason
        if ended_for_length(finish) and not call.response.choices[0].tool_calls:
            return f"cut at {MAX_TOKENS} tokens: {call.response.choices[0].text[:160]!r}"
        return None
    if call.error is not None and "finish_reason='length'" in str(call.error):
        return f"cut at {MAX_TOKENS} tokens: {str(call.reply or '')[:300]}"
    return None


def _capabilities(model: Model) -> frozenset[str]:
    from ..plan.plan import model_facts  # the plan layer reads the dialect's table

    return model_facts(model.dialect).capabilities
