"""The Berkeley Function Calling Leaderboard's multi-turn categories, FC column (native tools).

Patil et al., "The Berkeley Function Calling Leaderboard (BFCL): From Tool Use to Agentic
Evaluation of Large Language Models", ICML 2025; data, environments and checker of ``bfcl-eval``
2026.3.23 (``BFCL_v4_multi_turn_<category>.json``, ``possible_answer/``, ``multi_turn_func_doc/``,
read where ``_bfcl.py`` finds BFCL's data).

Categories: ``multi_turn_base``, ``multi_turn_miss_func`` (some functions are held out until a
later turn, which then holds no user message: BFCL adds them there with its message "I have
updated some more functions you can choose from. What about now?"), ``multi_turn_miss_param``
(a turn lacks a parameter: the model should ask; the next turn gives it) and
``multi_turn_long_context`` (the environments filled with long content, BFCL's
``long_context``). Each entry is run as BFCL's inference runs it: the turns' user messages in
order, and per turn the model asked in a loop (steps): the calls of a reply executed against
the entry's environments, their results sent back as tool results, until a reply holds no call
(or its text decodes to none), at most BFCL's step limit (20 steps past the first, then the
entry is stopped: ``multi_turn:force_terminated``). FC (``bfcl_multi_turn``): the functions as
native tools (as the single-turn task sends them, with BFCL's Python hint; a held-out function,
which BFCL adds without it, is added without it), the results as tool messages. Prompt
(``bfcl_multi_turn_prompt``): BFCL's default system prompt with the functions, the calls read
from the text as Python, the results sent back in one user message as BFCL writes them
(``repr`` of ``[{"role": "tool", "name": call, "content": result}]``), a held-out function's
schema in that turn's message.

**The environments** are bfcl-eval's own classes, imported from the installed copy by an
executor process that runs with the bfcl-eval venv's python (``scoring/bfcl_env.py``: JSON
lines; a call executed by its method name and arguments, never an ``eval`` of model text).

**Graded** by sieval's own check (``scoring/bfcl_multi_turn.py``, its verdicts tested equal to
bfcl-eval's ``multi_turn_checker``): the model's calls re-executed on fresh instances turn by
turn beside the ground truth's; per turn with a ground truth, the instances' states equal and
the ground truth's results among the model's; ``accuracy`` is 1 when every turn passes.

**A miss, classified**: ``wrong_call`` (the model called; the check's reason, e.g.
``multi_turn:instance_state_mismatch``, and the turn), ``no_call`` (a turn with a ground truth
where no reply held a call: the texts are kept), ``wire_drop`` (a reply's call was lost on the
way, ``_bfcl.lost_calls``; counted for every entry where one was, as the single-turn task counts
it). ``truncated``: a reply ended for length.

**Figures** as BFCL v4 (bfcl-eval 2026.3.23) aggregates them: each category's accuracy
(``acc_<category>``), and ``multi_turn``, the **unweighted** mean of the four categories'
accuracies (only when all four were run; an unweighted mean of means has no per-sample quantity
as its mean, so no interval is claimed for it). With ``repeats: n`` (and a ``temperature``, the
repeats seeded ``seed + i``) each entry is run n times (ids ``<id>#r<i>``): ``pass@k`` (some of
k draws pass, Chen et al. 2021's estimator) and ``pass^k`` (all k draws pass, Yao et al. 2024
τ-bench's estimator C(c, k) / C(n, k)), each averaged over entries, for k = 1, 2, 4, ... up to
n.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import msgspec

from ..errors import ConfigError, ContractViolation
from ..ir.request import (
    ChatInput,
    CompletionInput,
    FunctionTool,
    Message,
    Part,
    Request,
    Sampling,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Tools,
)
from ..ir.response import ended_for_length
from ..scoring.bfcl_env import Call, Environments, ExecutorError, shared
from ..scoring.bfcl_multi_turn import check, fc_calls, prompt_calls
from ..scoring.repeats import pass_at_k, pass_hat_k
from ._bfcl import (
    HINTS,
    column_requirements,
    data_directory,
    fc_tools,
    lost_calls,
    prompt_system,
    transcript,
)
from ._shared import check_options, int_option, temperature_option
from .base import (
    COMPLETION_MODEL,
    ModelFacts,
    PlannedCall,
    Readiness,
    Requirement,
    Sample,
    SampleResult,
    Task,
    TaskConfig,
)
from .context import Context
from .families.checked import item_of

__all__ = ["CATEGORIES", "TASK", "BfclMultiTurn", "summaries"]

CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
MAX_TOKENS = 512
MAX_REPEATS = 64
STEP_LIMIT = 20
"""BFCL's ``MAXIMUM_STEP_LIMIT``: a turn stops after the step past it (21 replies with calls)."""

FUNC_DOCS = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
"""Each environment class and the file of its function docs (``multi_turn_func_doc/``)."""

MORE_FUNCTIONS = "I have updated some more functions you can choose from. What about now?"
"""BFCL's user message of a turn where held-out functions are added (FC; Prompt: after them)."""


def _categories(config: TaskConfig, name: str) -> tuple[str, ...]:
    given = config.options.get("categories", CATEGORIES)
    if isinstance(given, str):
        given = [c.strip() for c in given.replace("+", ",").split(",") if c.strip()]
    if list(given) == ["all"]:
        return CATEGORIES
    unknown = [c for c in given if c not in CATEGORIES]
    if unknown or not given:
        raise ConfigError(
            f"{name}: unknown categories {unknown}; the categories are: {', '.join(CATEGORIES)} "
            "(or all)"
        )
    return tuple(given)


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def entries(data: Path, category: str) -> Iterator[dict[str, Any]]:
    """Each entry of a multi-turn category as BFCL prepares it: its functions (the involved
    classes' docs in order, the held-out ones moved to ``missed``: turn → docs) and its ground
    truth (``gold``)."""
    docs = {c: list(_lines(data / "multi_turn_func_doc" / f)) for c, f in FUNC_DOCS.items()}
    answers = {
        row["id"]: row["ground_truth"]
        for row in _lines(data / "possible_answer" / f"BFCL_v4_{category}.json")
    }
    for entry in _lines(data / f"BFCL_v4_{category}.json"):
        functions = [f for c in entry["involved_classes"] for f in docs[c]]
        missed: dict[str, list[dict[str, Any]]] = {}
        for turn, names in entry.get("missed_function", {}).items():
            missed[turn] = []
            for name in names:
                found = next(i for i, f in enumerate(functions) if f["name"] == name)
                missed[turn].append(functions.pop(found))
        yield {
            "id": entry["id"],
            "question": entry["question"],
            "initial_config": entry.get("initial_config", {}),
            "involved_classes": entry["involved_classes"],
            "function": functions,
            "missed": missed,
            "gold": answers[entry["id"]],
        }


def summaries(accuracy: Mapping[str, float]) -> dict[str, float]:
    """BFCL v4's multi-turn figure: the unweighted mean of the four categories (when all ran)."""
    if all(c in accuracy for c in CATEGORIES):
        return {"multi_turn": sum(accuracy[c] for c in CATEGORIES) / len(CATEGORIES)}
    return {}


def repeat_figures(results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
    """``pass@k`` and ``pass^k`` of ``accuracy`` for k = 1, 2, 4, ... up to the fewest repeats
    of an entry, when the samples are repeats (ids ``<id>#r<i>``); nothing otherwise."""
    items: dict[str, list[bool]] = {}
    repeated = False
    for sample, result in results:
        item = item_of(sample.id)
        repeated = repeated or item != sample.id
        items.setdefault(item, []).append(result.metrics.get("accuracy", 0.0) >= 1.0)
    if not repeated or not items:
        return {}
    n = min(len(v) for v in items.values())
    out: dict[str, Any] = {"repeats": n}
    k = 1
    while k <= n:
        out[f"pass@{k}"] = sum(pass_at_k(len(v), sum(v), k) for v in items.values()) / len(items)
        out[f"pass^{k}"] = sum(pass_hat_k(len(v), sum(v), k) for v in items.values()) / len(items)
        k *= 2
    return out


class BfclMultiTurn(Task):
    headline = "accuracy"
    listing = ("tool calls", "bfcl-eval")
    cluster_by: Literal["group", "item"] | None = "item"
    defaults = MappingProxyType(
        {
            "categories": ",".join(CATEGORIES),
            "max_tokens": MAX_TOKENS,
            "data": None,
            "repeats": 1,
            "temperature": 0.0,
        }
    )

    def __init__(self, column: Literal["fc", "prompt"]) -> None:
        self.column = column
        self.name = "bfcl_multi_turn" if column == "fc" else "bfcl_multi_turn_prompt"
        self.pairs_with = "bfcl_multi_turn_prompt" if column == "fc" else "bfcl_multi_turn"
        how = (
            "FC: the functions as native tools, results as tool messages"
            if column == "fc"
            else "Prompt: BFCL's default system prompt, calls parsed from the text as Python, "
            "results in a user message"
        )
        self.requirements = tuple(self.requirements_for(COMPLETION_MODEL))
        self.protocol = (
            f"BFCL v4 (bfcl-eval 2026.3.23) multi-turn, {how}; bfcl-eval's environments; per "
            f"turn at most {STEP_LIMIT + 1} steps; greedy unless temperature, max_tokens 512; "
            "state and execution-response check per turn; multi_turn = unweighted mean of the "
            "4 categories"
        )

    # -- what planning asks -------------------------------------------------------------------

    def requirements_for(self, model: ModelFacts) -> Sequence[Requirement]:
        return column_requirements(
            self.column,
            model,
            sampling="max_tokens set, greedy unless a temperature is given",
            asked="the turns",
            history=True,
        )

    def protocol_for(self, model: ModelFacts) -> str:
        if self.column == "prompt" and model.input_kind != "chat":
            return self.protocol + " (conversation written as text: no chat template)"
        return self.protocol

    def data_files(self, data_dir: Path) -> list[Path]:
        try:
            data = data_directory(data_dir)
        except ConfigError:
            return []
        files = [data / f"BFCL_v4_{c}.json" for c in CATEGORIES]
        files += [data / "possible_answer" / f"BFCL_v4_{c}.json" for c in CATEGORIES]
        files += [data / "multi_turn_func_doc" / f for f in FUNC_DOCS.values()]
        return [f for f in files if f.is_file()]

    def check_ready(self, allow_unsafe_code: bool = False) -> Readiness:
        """The executor starts and bfcl-eval's environments import (``ConfigError`` naming
        scripts/bfcl-oracle.sh otherwise)."""
        envs = shared()
        try:
            envs.close(envs.open(list(FUNC_DOCS), {}, False))
        except ExecutorError as exc:
            raise ConfigError(
                f"{self.name}: bfcl-eval's environments do not load with {envs.python}: {exc}; "
                "run scripts/bfcl-oracle.sh (bfcl-eval --no-deps, mpmath)"
            ) from exc
        return Readiness(said=(f"bfcl multi-turn environments: {envs.python}",))

    def samples_per_row(self, config: TaskConfig) -> int:
        return int_option(self.name, config, "repeats", 1, 1, MAX_REPEATS)

    def load(self, data_dir: Path, config: TaskConfig) -> Iterator[Sample]:
        check_options(self.name, config, self.defaults)
        int_option(self.name, config, "max_tokens", MAX_TOKENS, 1)
        temperature_option(self.name, config)
        repeats = self.samples_per_row(config)
        data = data_directory(data_dir, config.options.get("data"))
        for category in _categories(config, self.name):
            for entry in entries(data, category):
                gold = entry.pop("gold")
                entry_id = entry.pop("id")
                for i in range(repeats):
                    yield Sample(
                        id=entry_id if repeats == 1 else f"{entry_id}#r{i}",
                        data=entry if repeats == 1 else {**entry, "repeat": i},
                        gold=gold,
                        group=category,
                    )

    def describe(self, sample: Sample) -> dict[str, Any]:
        return {
            "category": sample.group,
            "question": sample.data["question"],
            "involved_classes": sample.data["involved_classes"],
            "gold": sample.gold,
        }

    def _sampling(self, sample: Sample, config: TaskConfig) -> Sampling:
        tokens = int_option(self.name, config, "max_tokens", MAX_TOKENS, 1)
        temperature = temperature_option(self.name, config)
        repeat = sample.data.get("repeat")
        if isinstance(repeat, int) and temperature > 0:
            return Sampling(temperature=temperature, max_tokens=tokens, seed=config.seed + repeat)
        return Sampling(temperature=temperature, max_tokens=tokens)

    def _first_messages(self, sample: Sample) -> list[dict[str, Any]]:
        turns = [dict(m) for m in sample.data["question"][0]]
        if self.column == "fc":
            return turns
        system = prompt_system(sample.data["function"])
        if turns and turns[0]["role"] == "system":
            turns[0] = {"role": "system", "content": f"{system}\n\n{turns[0]['content']}"}
        else:
            turns.insert(0, {"role": "system", "content": system})
        return turns

    def _request(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool],
        sampling: Sampling,
        facts: ModelFacts,
    ) -> Request:
        if self.column == "fc":
            return Request(
                input=ChatInput(messages=tuple(messages)),
                sampling=sampling,
                tools=Tools(functions=tuple(tools), choice="auto"),
            )
        if facts.input_kind != "chat":
            return Request(
                input=CompletionInput(text=transcript(_plain(messages))), sampling=sampling
            )
        return Request(input=ChatInput(messages=tuple(messages)), sampling=sampling)

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        """The first step of the first turn, as sent; then the later steps as that request
        again, at most BFCL's 21 replies a turn, each holding at most what the earlier turns may
        add: the later turns' user messages, the held-out functions' schemas and every earlier
        reply at its ``max_tokens`` (a token a character for text). The environments' results
        are not in that bound: BFCL sends them back uncut, and their size is the
        environment's."""
        sampling = self._sampling(sample, config)
        messages = [_message(m) for m in self._first_messages(sample)]
        tools = fc_tools(sample.data["function"]) if self.column == "fc" else ()
        first = self._request(messages, tools, sampling, model)
        replies = len(sample.data["question"]) * (STEP_LIMIT + 1)
        added = sum(len(str(m["content"])) for t in sample.data["question"][1:] for m in t)
        added += sum(
            len(json.dumps(d)) + len(MORE_FUNCTIONS) for d in sample.data["missed"].values()
        )
        most = sampling.max_tokens if isinstance(sampling.max_tokens, int) else 0
        later = PlannedCall(
            f"turn1.step2..{replies}",
            first,
            exact=False,
            times=replies - 1,
            unseen_tokens=added + (replies - 1) * most,
        )
        return [PlannedCall("turn1.step1", first), later]

    # -- one entry ----------------------------------------------------------------------------

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        envs = shared()
        data = sample.data
        category = str(sample.group)
        long_context = "long_context" in category
        # the executor's requests run on a thread: a long-context session takes tens of ms
        session = await asyncio.to_thread(
            envs.open, data["involved_classes"], data["initial_config"], long_context
        )
        made: list[list[list[Call]]] = []
        try:
            turns, stopped = await self._converse(sample, ctx, session, made)
        finally:
            await asyncio.to_thread(envs.close, session)
        decoded = [[step["calls"] for step in turn if step.get("calls")] for turn in turns]
        verdict = await asyncio.to_thread(
            check,
            envs,
            data["involved_classes"],
            data["initial_config"],
            long_context,
            made,
            sample.gold,
        )
        lost = [s["lost"] for turn in turns for s in turn if s.get("lost")]
        miss = None
        if not verdict.valid:
            if lost:
                miss = "wire_drop"
            elif verdict.error_type == "multi_turn:empty_turn_model_response":
                miss = "no_call"
            else:
                miss = "wrong_call"
        reason = None if verdict.valid else f"{verdict.error_type}: {verdict.error}"
        channels: dict[str, Any] = {
            "column": "FC" if self.column == "fc" else "Prompt",
            "made": decoded,
            "miss": miss,
            "reason": reason,
            "failed_turn": verdict.turn,
            "details": verdict.details,
            "lost": "; ".join(lost) or None,
            "stopped": stopped,
            "turns": turns,
        }
        channels["turn_status"] = _turn_status(sample.gold, verdict.turn, miss)
        if miss == "no_call" and verdict.turn is not None:
            channels["text"] = "\n---\n".join(s["text"] for s in turns[verdict.turn])
        steps = [s for turn in turns for s in turn]
        metrics = {
            "accuracy": float(verdict.valid),
            f"acc_{category}": float(verdict.valid),
            "wrong_call": float(miss == "wrong_call"),
            "no_call": float(miss == "no_call"),
            "wire_drop": float(bool(lost)),
            "truncated": float(any(s["truncated"] for s in steps)),
            "steps": float(len(steps)),
        }
        return SampleResult(
            prediction=decoded, gold=sample.gold, metrics=metrics, channels=channels
        )

    async def _converse(
        self,
        sample: Sample,
        ctx: Context,
        session: str,
        calls: list[list[list[Call]]],
        prefix: str = "",
    ) -> tuple[list[list[dict[str, Any]]], bool]:
        """BFCL's inference loop over the turns (see the module): each step's record, and
        whether the step limit stopped it; ``calls`` gets each turn's steps' calls (the calls
        named ``<prefix>turn<i>.step<j>``)."""
        envs = shared()
        data = sample.data
        sampling = self._sampling(sample, ctx.config)
        functions = list(data["function"])
        tools = list(fc_tools(functions))
        messages: list[Message] = []
        turns: list[list[dict[str, Any]]] = []
        for index, asked in enumerate(data["question"]):
            held = data["missed"].get(str(index))
            if held:
                tools.extend(_unhinted(fc_tools(held)))
                text = MORE_FUNCTIONS if self.column == "fc" else f"{held}\n{MORE_FUNCTIONS}"
                asked = [{"role": "user", "content": text}]
            elif index == 0:
                asked = self._first_messages(sample)
            messages.extend(_message(m) for m in asked)
            steps: list[dict[str, Any]] = []
            turns.append(steps)
            calls.append([])
            while True:
                name = f"{prefix}turn{index + 1}.step{len(steps) + 1}"
                request = self._request(messages, tools, sampling, ctx.facts)
                call = await ctx.call(name, request)
                response = call.result()
                if not response.choices:
                    raise ContractViolation(f"the reply to {name} has no choices", path="choices")
                choice = response.choices[0]
                step: dict[str, Any] = {
                    "text": choice.text,
                    "truncated": ended_for_length(choice.finish_reason),
                }
                steps.append(step)
                made: list[Call] = []
                if self.column == "fc":
                    lifted = choice.tool_calls if isinstance(choice.tool_calls, tuple) else ()
                    step["lost"] = lost_calls(
                        call.dialect or "", call.raw, len(lifted), choice.text, choice.finish_reason
                    )
                    made = fc_calls([(c.name, c.arguments) for c in lifted])
                    if choice.text or lifted:
                        messages.append(_assistant(choice.text, lifted))
                else:
                    messages.append(_text_message("assistant", choice.text))
                    made, why = prompt_calls(choice.text)
                    if why is not None:
                        step["decode_error"] = why
                if not made:
                    break
                calls[-1].append(made)
                results = await asyncio.to_thread(_executed, envs, session, made)
                step["calls"] = [_shown(c) for c in made]
                step["results"] = results
                if self.column == "fc":
                    parts = [
                        ToolResultPart(call_id=c.call_id, result=r)
                        for c, r in zip(lifted, results, strict=True)
                    ]
                    messages.extend(_tool_messages(parts, ctx.facts))
                else:
                    shown = [
                        {"role": "tool", "name": c.text(), "content": r}
                        for c, r in zip(made, results, strict=True)
                    ]
                    messages.append(_text_message("user", repr(shown)))
                if len(steps) > STEP_LIMIT:
                    return turns, True
        return turns, False

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        kept = list(results)
        sums: dict[str, list[float]] = {}
        total: dict[str, float] = {}
        for _, result in kept:
            for key, value in result.metrics.items():
                if key.startswith("acc_"):
                    sums.setdefault(key[4:], []).append(value)
                else:
                    total[key] = total.get(key, 0.0) + value
        n = len(kept)
        out: dict[str, Any] = {"n": n}
        out.update({k: v / n for k, v in total.items()} if n else {})
        accuracy = {c: sum(v) / len(v) for c, v in sorted(sums.items())}
        out.update({f"acc_{c}": a for c, a in accuracy.items()})
        out.update(summaries(accuracy))
        out.update(repeat_figures(kept))
        return out


def _turn_status(gold: Sequence[Sequence[str]], failed: int | None, miss: str | None) -> list[str]:
    """Each turn's outcome: ``passed``, ``no_ground_truth`` (not checked: the model should not
    call), the miss at the failed turn, ``not_checked`` after it (the check stops there; an entry
    stopped at the step limit has no failed turn: every turn is ``not_checked``)."""
    out = []
    for index, expected in enumerate(gold):
        if miss is not None and (failed is None or index > failed):
            out.append("not_checked")
        elif index == failed and miss is not None:
            out.append(miss)
        else:
            out.append("passed" if expected else "no_ground_truth")
    return out


def _executed(envs: Environments, session: str, calls: Sequence[Call]) -> list[str]:
    """Each call's result, executed in order in the session."""
    return [envs.call(session, c) for c in calls]


# -- what a step's messages are -------------------------------------------------------------------


def _message(turn: Mapping[str, Any]) -> Message:
    return _text_message(turn["role"], str(turn["content"]))


def _text_message(role: str, text: str) -> Message:
    return Message(role=role, content=(TextPart(text=text),))  # type: ignore[arg-type]


def _plain(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [
        {"role": m.role, "content": "".join(p.text for p in m.content if isinstance(p, TextPart))}
        for m in messages
    ]


def _assistant(text: str, calls: Sequence[Any]) -> Message:
    parts: list[Part] = [TextPart(text=text)] if text else []
    parts.extend(ToolCallPart(call_id=c.call_id, name=c.name, arguments=c.arguments) for c in calls)
    return Message(role="assistant", content=tuple(parts))


def _tool_messages(results: list[ToolResultPart], facts: ModelFacts) -> list[Message]:
    """One tool message a result (OpenAI's chat), or all in one (Anthropic's, Google's)."""
    if facts.tool_results == "together":
        return [Message(role="tool", content=tuple(results))]
    return [Message(role="tool", content=(r,)) for r in results]


def _unhinted(tools: Sequence[FunctionTool]) -> list[FunctionTool]:
    """Tools without BFCL's Python hint (a held-out function is added without it)."""
    hint = HINTS["python"]
    return [
        msgspec.structs.replace(t, description=str(t.description).removesuffix(hint)) for t in tools
    ]


def _shown(call: Call) -> dict[str, Any]:
    """A call as a record keeps it: ``{name: arguments}``, a nested call as its text."""
    return {call.name: {k: v.text() if isinstance(v, Call) else v for k, v in call.kwargs.items()}}


TASK = BfclMultiTurn("fc")
