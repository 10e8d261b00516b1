"""The Berkeley Function Calling Leaderboard's single-turn categories, FC column (native tools).

Patil et al., "The Berkeley Function Calling Leaderboard (BFCL): From Tool Use to Agentic
Evaluation of Large Language Models", ICML 2025 (https://gorilla.cs.berkeley.edu/leaderboard.html);
data and checker of ``bfcl-eval`` 2026.3.23 (``_bfcl.py`` says where the data is read from).

Each entry is one request: the question's messages, the entry's functions offered (FC: native
tools on the wire, ``bfcl``; Prompt: the schemas in the system turn, the calls written as Python
and parsed from the text, ``bfcl_prompt``; a Java or JavaScript entry's calls are read with
BFCL's tree-sitter grammars, the optional extra ``sieval[bfcl]``), greedy. The reply's calls
are graded by sieval's own copy of BFCL's AST checker (``scoring/bfcl_checker.py``, its
verdicts tested equal to ``bfcl-eval``'s): ``accuracy`` is 1 when they pass (an AST category)
or when a call was made as the category asks (``irrelevance``/``live_irrelevance``: none;
``live_relevance``: one).

Every miss is classified (``miss`` in the record, a rate each in the report): ``wrong_call``
(the checker's reason: ``reason``), ``no_call`` (the reply held no parsable call: its raw text is
kept), ``wire_drop`` (the server made a call that was lost on the way: ``lost`` says how; the
``wire_drop`` rate counts every such reply, also where BFCL's verdict passes). A
reply cut at ``max_tokens`` is graded as what it holds (BFCL does the same) and counted in
``truncated``.

Figures as BFCL 2026.3.23 (v4) aggregates them: each category's accuracy (``acc_<category>``);
``non_live`` the unweighted mean of simple, multiple, parallel and parallel multiple, simple
itself the unweighted mean of Python's, Java's and JavaScript's (``simple``); ``live`` the four
live AST categories weighted by their entry counts; ``irrelevance`` the unweighted mean of the two
irrelevance categories; ``relevance`` live relevance's. A category that was not run is absent,
and so is every summary that needs it. BFCL's overall figure also weighs multi-turn (30) and
agentic (40: web search and memory; memory_kv and memory_rec_sum are the ``bfcl_memory`` tasks',
the rest refused by name, ``_bfcl.REFUSED`` says why) categories that this task does not run, so
it is not reported. ``format_sensitivity`` (Prompt only,
``_bfcl_formats.py``) counts in no summary; its spread over its 26 variants is
``format_sensitivity_max_delta`` and ``format_sensitivity_std``. ``accuracy`` and the miss
rates are per-sample means (the report gives their intervals); a category's accuracy
has one when that category is run alone; the unweighted means of means have no per-sample
quantity as their mean, so no interval is claimed for them.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ..errors import ConfigError, ContractViolation
from ..ir.request import (
    ChatInput,
    CompletionInput,
    Message,
    Request,
    Sampling,
    TextPart,
    Tools,
)
from ..ir.response import Response, ended_for_length
from ..scoring.bfcl_checker import grade, made_a_call
from ..scoring.bfcl_decode import NotCalls, python_calls
from ..scoring.bfcl_decode_formats import format_calls
from ..scoring.bfcl_decode_langs import java_calls, javascript_calls, parser_available
from ..scoring.bfcl_langs import language_of
from ._bfcl import (
    AST_CATEGORIES,
    CATEGORIES,
    REFUSED,
    column_requirements,
    data_directory,
    entries,
    fc_tools,
    hinted,
    lost_calls,
    prompt_system,
    transcript,
)
from ._bfcl_formats import format_entries, parse_config, system_prompt
from ._shared import check_options, int_option
from .base import (
    COMPLETION_MODEL,
    ModelFacts,
    Requirement,
    Sample,
    SampleResult,
    StaticTask,
    TaskConfig,
)
from .context import Context

__all__ = ["TASK", "Bfcl"]

DEFAULT_CATEGORIES = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
)
MAX_TOKENS = 512


FORMATS = "format_sensitivity"
"""The Prompt column's 26 system-prompt variants over 200 entries (``_bfcl_formats.py``)."""


def _categories(config: TaskConfig, column: str = "fc") -> tuple[str, ...]:
    known = CATEGORIES + ((FORMATS,) if column == "prompt" else ())
    given = config.options.get("categories", DEFAULT_CATEGORIES)
    if isinstance(given, str):  # "a,b" or "a+b" (a comma separates tasks on the command line)
        given = [c.strip() for c in given.replace("+", ",").split(",") if c.strip()]
    if given == ["all"]:
        return known
    refused = [c for c in given if c in REFUSED]
    if refused:
        raise ConfigError(f"bfcl: {refused[0]} is not run: {REFUSED[refused[0]]}")
    elsewhere = [c for c in given if c in ("memory_kv", "memory_rec_sum")]
    if elsewhere:
        raise ConfigError(
            f"bfcl: {elsewhere[0]} is an agentic conversation over BFCL's memory: run it with "
            f"bfcl_memory (FC) or bfcl_memory_prompt (Prompt)"
        )
    if FORMATS in given and column == "fc":
        raise ConfigError(
            "bfcl: format_sensitivity varies the Prompt column's system prompt: run it with "
            "bfcl_prompt (BFCL runs it for prompting models only)"
        )
    unknown = [c for c in given if c not in known]
    if unknown or not given:
        raise ConfigError(
            f"bfcl: unknown categories {unknown}; the categories are: {', '.join(known)} (or all)"
        )
    return tuple(given)


class Bfcl(StaticTask):
    headline = "accuracy"
    listing = ("tool calls", "bfcl-eval")
    cluster_by = "group"
    defaults = MappingProxyType(
        {
            "categories": ",".join(DEFAULT_CATEGORIES),
            "max_tokens": MAX_TOKENS,
            "data": None,
            "tool_choice": "auto",
        }
    )

    def __init__(self, column: Literal["fc", "prompt"]) -> None:
        self.column = column
        self.name = "bfcl" if column == "fc" else "bfcl_prompt"
        self.pairs_with = "bfcl_prompt" if column == "fc" else "bfcl"
        how = (
            "FC: the functions as native tools (JSON Schema as BFCL's handlers send it, dots in "
            "names as _), tool_choice auto"
            if column == "fc"
            else "Prompt: BFCL's default system prompt with the functions as JSON, calls parsed "
            "from the text as Python (Java, JavaScript: by BFCL's tree-sitter grammars)"
        )
        self.requirements = tuple(self.requirements_for(COMPLETION_MODEL))
        self.protocol = (
            f"BFCL v4 (bfcl-eval 2026.3.23) single-turn, {how}; greedy, max_tokens 512; AST "
            "checker (Python, Java, JavaScript) or relevance; v4 aggregation"
        )

    # -- what planning asks -------------------------------------------------------------------

    def requirements_for(self, model: ModelFacts) -> Sequence[Requirement]:
        return column_requirements(
            self.column, model, sampling="greedy, max_tokens set", asked="the question"
        )

    def protocol_for(self, model: ModelFacts) -> str:
        if self.column == "prompt" and model.input_kind != "chat":
            return self.protocol + " (conversation written as text: no chat template)"
        return self.protocol

    def data_files(self, data_dir: Path) -> list[Path]:
        """Every category's questions and possible answers where BFCL's data is found by default
        (a ``data`` option is in the run identity as the path it names); none when it is not
        installed (``load`` then says how to install it)."""
        try:
            data = data_directory(data_dir)
        except ConfigError:
            return []
        files = [data / f"BFCL_v4_{c}.json" for c in CATEGORIES]
        if self.column == "prompt":
            files.append(data / f"BFCL_v4_{FORMATS}.json")
        files += [data / "possible_answer" / f"BFCL_v4_{c}.json" for c in AST_CATEGORIES]
        return [f for f in files if f.is_file()]

    def load(self, data_dir: Path, config: TaskConfig) -> Iterator[Sample]:
        check_options(self.name, config, self.defaults)
        int_option(self.name, config, "max_tokens", MAX_TOKENS, 1)
        _choice(config)
        data = data_directory(data_dir, config.options.get("data"))
        categories = _categories(config, self.column)
        if self.column == "prompt" and any(language_of(c) != "python" for c in categories):
            missing = parser_available()
            if missing:
                raise ConfigError(
                    f"{self.name}: {missing}; or leave out simple_java and simple_javascript "
                    "(categories=...)"
                )
        for category in categories:
            if category == FORMATS:
                for entry, answer, variant, _ in format_entries(data, entries):
                    yield Sample(
                        id=entry["id"],
                        data={
                            "question": entry["question"],
                            "function": entry["function"],
                            "variant": variant,
                        },
                        gold=answer,
                        group=category,
                    )
                continue
            for entry, answer in entries(data, category):
                yield Sample(
                    id=entry["id"],
                    data={"question": entry["question"], "function": entry["function"]},
                    gold=answer,
                    group=category,
                )

    def describe(self, sample: Sample) -> dict[str, Any]:
        return {"category": sample.group, "question": sample.data["question"], "gold": sample.gold}

    def _request(self, sample: Sample, config: TaskConfig, model: ModelFacts) -> Request:
        tokens = int_option(self.name, config, "max_tokens", MAX_TOKENS, 1)
        sampling = Sampling(temperature=0.0, max_tokens=tokens)
        turns = [dict(m) for m in sample.data["question"][0]]
        functions = sample.data["function"]
        category = str(sample.group)
        if self.column == "fc":
            return Request(
                input=ChatInput(messages=tuple(_message(m) for m in turns)),
                sampling=sampling,
                tools=Tools(functions=fc_tools(functions, category), choice=_choice(config)),
            )
        variant = sample.data.get("variant")
        if variant:
            system = system_prompt(variant, hinted(functions))
        else:
            system = prompt_system(functions, category)
        if turns and turns[0]["role"] == "system":
            turns[0] = {"role": "system", "content": f"{system}\n\n{turns[0]['content']}"}
        else:
            turns.insert(0, {"role": "system", "content": system})
        if model.input_kind != "chat":
            return Request(input=CompletionInput(text=transcript(turns)), sampling=sampling)
        return Request(
            input=ChatInput(messages=tuple(_message(m) for m in turns)), sampling=sampling
        )

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        return {"answer": self._request(sample, config, model)}

    # -- one entry ----------------------------------------------------------------------------

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        """The one call, graded with its raw reply at hand (a wire drop is read from it)."""
        call = await ctx.call("answer", self._request(sample, ctx.config, ctx.facts))
        return self._graded(sample, call.result(), call.dialect, call.raw)

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        return self._graded(sample, responses["answer"], None, None)

    def _graded(
        self, sample: Sample, response: Response, dialect: str | None, raw: bytes | None
    ) -> SampleResult:
        if not response.choices:
            raise ContractViolation("the reply has no choices", path="choices")
        choice = response.choices[0]
        category = str(sample.group)
        channels: dict[str, Any] = {"column": "FC" if self.column == "fc" else "Prompt"}
        lost = None
        if self.column == "fc":
            made = choice.tool_calls if isinstance(choice.tool_calls, tuple) else ()
            decoded: Any = [{c.name: dict(c.arguments)} for c in made]
            if not made:
                decoded = None if choice.text else []
            lost = lost_calls(dialect or "", raw, len(made), choice.text, choice.finish_reason)
        else:
            try:
                variant = sample.data.get("variant")
                if variant:
                    settings = parse_config(variant)
                    decoded = format_calls(
                        choice.text, settings["ret_fmt"], settings["tool_call_tag"]
                    )
                else:
                    decoded = prompt_calls(category, choice.text)
            except NotCalls as exc:
                decoded = None
                channels["decode_error"] = str(exc)
        # a format-sensitivity entry is checked as its original entry's category (its id)
        checked_as = sample.id.rsplit(":", 1)[-1] if category == FORMATS else category
        verdict = grade(
            checked_as, sample.data["function"], sample.gold, decoded, dotted=self.column == "fc"
        )
        valid = verdict.valid
        reason = None if valid else f"{verdict.error_type}: {verdict.error}"
        miss = None
        if not valid:
            if lost is not None:
                miss = "wire_drop"
            elif decoded is None or not made_a_call(decoded):
                miss = "no_call"
            else:
                miss = "wrong_call"
        channels.update({"made": decoded, "miss": miss, "reason": reason, "lost": lost})
        if miss == "no_call":
            channels["text"] = choice.text
        metrics = {
            "accuracy": float(valid),
            f"acc_{category}": float(valid),
            "truncated": float(ended_for_length(choice.finish_reason)),
            "wrong_call": float(miss == "wrong_call"),
            "no_call": float(miss == "no_call"),
            # every call lost on the way, also where BFCL's verdict passes (an irrelevance entry)
            "wire_drop": float(lost is not None),
        }
        return SampleResult(
            prediction=decoded, gold=sample.gold, metrics=metrics, channels=channels
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        sums: dict[str, list[float]] = {}
        total: dict[str, float] = {}
        n = 0
        for _, result in results:
            n += 1
            for key, value in result.metrics.items():
                if key.startswith("acc_"):
                    sums.setdefault(key[4:], []).append(value)
                else:
                    total[key] = total.get(key, 0.0) + value
        out: dict[str, Any] = {"n": n}
        out.update({k: v / n for k, v in total.items()} if n else {})
        accuracy = {c: sum(v) / len(v) for c, v in sorted(sums.items())}
        out.update({f"acc_{c}": a for c, a in accuracy.items()})
        out.update(summaries(accuracy, {c: len(v) for c, v in sums.items()}))
        out.update(sensitivity(results))
        return out


def sensitivity(results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, float]:
    """Format sensitivity's spread as BFCL reports it, from each variant's accuracy: the largest
    minus the smallest (``format_sensitivity_max_delta``) and their sample standard deviation
    (``format_sensitivity_std``); as fractions (BFCL prints them in points); with two variants
    or more."""
    by: dict[str, list[float]] = {}
    for sample, result in results:
        if sample.group == FORMATS:  # its id: format_sensitivity_k:VARIANT:original id
            by.setdefault(sample.id.split(":")[1], []).append(result.metrics["accuracy"])
    if len(by) < 2:
        return {}
    accuracies = [sum(v) / len(v) for v in by.values()]
    return {
        "format_sensitivity_max_delta": max(accuracies) - min(accuracies),
        "format_sensitivity_std": statistics.stdev(accuracies),
    }


def prompt_calls(category: str, text: str) -> Any:
    """A Prompt answer's calls, read in the category's language (``NotCalls``: none)."""
    language = language_of(category)
    if language == "java":
        return java_calls(text)
    if language == "javascript":
        return javascript_calls(text)
    return python_calls(text)


SIMPLE = ("simple_python", "simple_java", "simple_javascript")


def summaries(accuracy: dict[str, float], counts: dict[str, int]) -> dict[str, float]:
    """BFCL v4's summary figures from per-category accuracies (see the module): each only
    when every category it needs was run."""
    out: dict[str, float] = {}
    if all(c in accuracy for c in SIMPLE):
        out["simple"] = sum(accuracy[c] for c in SIMPLE) / len(SIMPLE)
    non_live = ("simple", "multiple", "parallel", "parallel_multiple")
    if all(c in accuracy or c in out for c in non_live):
        parts = [out["simple"], *(accuracy[c] for c in non_live[1:])]
        out["non_live"] = sum(parts) / len(parts)
    live = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
    if all(c in accuracy for c in live):
        out["live"] = sum(accuracy[c] * counts[c] for c in live) / sum(counts[c] for c in live)
    if "irrelevance" in accuracy and "live_irrelevance" in accuracy:
        out["irrelevance"] = (accuracy["irrelevance"] + accuracy["live_irrelevance"]) / 2
    if "live_relevance" in accuracy:
        out["relevance"] = accuracy["live_relevance"]
    return out


def _choice(config: TaskConfig) -> Literal["auto", "required"]:
    """FC's ``tool_choice``: BFCL's ``auto``, or ``required`` (not BFCL's protocol: a model
    forced to call, for probing the checker and the server's parser with real calls)."""
    given = config.options.get("tool_choice", "auto")
    if given not in ("auto", "required"):
        raise ConfigError(f"bfcl: tool_choice is auto or required, not {given!r}")
    return "required" if given == "required" else "auto"


def _message(turn: dict[str, Any]) -> Message:
    return Message(role=turn["role"], content=(TextPart(text=str(turn["content"])),))


TASK = Bfcl("fc")
