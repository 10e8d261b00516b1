"""The Berkeley Function Calling Leaderboard's memory categories, FC column (native tools).

Patil et al., "The Berkeley Function Calling Leaderboard (BFCL): From Tool Use to Agentic
Evaluation of Large Language Models", ICML 2025; data, memory backends and checker of
``bfcl-eval`` 2026.3.23 (``BFCL_v4_memory.json``, ``possible_answer/BFCL_v4_memory.json``,
``memory_prereq_conversation/memory_<scenario>.json``, ``multi_turn_func_doc/memory_*.json``,
read where ``_bfcl.py`` finds BFCL's data).

Categories: ``memory_kv`` (a core and an archival key-value store, BM25 key search: bfcl-eval's
``MemoryAPI_kv``) and ``memory_rec_sum`` (one text the model appends to and rewrites:
``MemoryAPI_rec_sum``). ``memory_vector`` is not run (``_bfcl.REFUSED`` says why).

**As bfcl-eval runs them**: five scenarios (student, customer, finance, healthcare,
notetaker), each with prerequisite conversations (37 in all, 4 to 14 user turns each) and
questions (155 in all, one user turn each). The model **lives through the prerequisite
conversations** in order, with the memory's functions as its tools: each is a multi-turn entry
run by the multi-turn loop (``bfcl_multi_turn.py``: BFCL's steps per turn, its step limit),
its memory loaded from the snapshot the previous one left (the first starts empty), with
bfcl-eval's memory system prompt (the scenario's setting and the memory's content then); at its
end the memory is saved (bfcl-eval's own snapshot files, in a temporary directory of the
sample). Then each **question** is asked from that final memory (not saved after: the questions
do not see each other), with bfcl-eval's answer-format system prompt (``{'answer': ...,
'context': ...}``) after the memory's. The backends, their snapshots and the system prompts are
bfcl-eval's own, reached through the executor (``scoring/bfcl_env.py``; nothing copied).

**A sample is a scenario** of a category (its questions share the memory its prerequisite
conversations built, so they are not independent draws: the scenario is the unit an interval
can rest on). Its questions' verdicts are in the record's ``questions`` channel.

**Graded** by sieval's own agentic check (``scoring/bfcl_agentic.py``, its verdicts tested equal
to bfcl-eval's ``agentic_checker``): a question passes when its last reply that is not a call
holds one of its possible answers as a whole word, after BFCL's standardisation. A miss:
``wrong_answer`` (``agentic:answer_not_found``), ``no_answer`` (``agentic:no_last_message``: no
reply without a call, or an empty one), ``wire_drop`` (a call lost on the way, counted over
the whole scenario, prerequisites included).

**Figures**: ``accuracy``, the share of questions passed (over all questions run, as bfcl-eval
counts a category; its interval a ratio estimate over the scenarios, ``uncertainty.Derived``),
``acc_<category>``, ``questions`` (their number), ``wrong_answer`` and ``no_answer`` (shares
of the questions, so too). BFCL v4's ``memory`` summary is the
unweighted mean of ``memory_kv``, ``memory_vector`` and ``memory_rec_sum``: with
``memory_vector`` not run it is not reported, nor is BFCL's overall figure.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ..errors import ConfigError
from ..scoring.bfcl_agentic import answer_of, check_answer
from ..scoring.bfcl_env import Environments, ExecutorError, shared
from ..scoring.uncertainty import UNIT, Derived
from ._bfcl import data_directory, fc_tools
from ._shared import check_options, int_option, temperature_option
from .base import (
    COMPLETION_MODEL,
    ModelFacts,
    PlannedCall,
    Readiness,
    Sample,
    SampleResult,
    TaskConfig,
)
from .bfcl_multi_turn import STEP_LIMIT, BfclMultiTurn, _message
from .context import Context

__all__ = ["CATEGORIES", "SCENARIOS", "TASK", "BfclMemory"]

CATEGORIES = ("memory_kv", "memory_rec_sum")
SCENARIOS = ("student", "customer", "finance", "healthcare", "notetaker")
"""bfcl-eval's ``MEMORY_SCENARIO_NAME``, in its order."""


def _listed(config: TaskConfig, name: str, key: str, known: tuple[str, ...]) -> tuple[str, ...]:
    given = config.options.get(key, known)
    if isinstance(given, str):
        given = [c.strip() for c in given.replace("+", ",").split(",") if c.strip()]
    if list(given) == ["all"]:
        return known
    unknown = [c for c in given if c not in known]
    if unknown or not given:
        raise ConfigError(
            f"{name}: unknown {key} {unknown}; the {key} are: {', '.join(known)} (or all)"
        )
    return tuple(c for c in known if c in given)


def _lines(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def scenarios(data: Path, category: str, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Each scenario of a memory category as bfcl-eval prepares it: its prerequisite
    conversations and questions (ids with ``memory`` read as the category, as bfcl-eval
    writes them), the category's functions, each question's possible answers."""
    functions = _lines(data / "multi_turn_func_doc" / f"{category}.json")
    answers = {
        row["id"]: row["ground_truth"]
        for row in _lines(data / "possible_answer" / "BFCL_v4_memory.json")
    }
    questions = _lines(data / "BFCL_v4_memory.json")
    for scenario in SCENARIOS:
        prereqs = _lines(data / "memory_prereq_conversation" / f"memory_{scenario}.json")
        asked = [q for q in questions if q["scenario"] == scenario][:limit]
        yield {
            "scenario": scenario,
            "function": functions,
            "prereqs": [
                {"id": p["id"].replace("memory", category), "question": p["question"]}
                for p in prereqs
            ],
            "questions": [
                {
                    "id": q["id"].replace("memory", category),
                    "question": q["question"],
                    "possible": answers[q["id"]],
                }
                for q in asked
            ],
        }


class BfclMemory(BfclMultiTurn):
    headline = "accuracy"
    cluster_by: Literal["group", "item"] | None = None
    derived = MappingProxyType(
        {
            name: Derived(of=count, per="n_questions", bounds=UNIT)
            for name, count in (
                ("accuracy", "n_correct"),
                ("wrong_answer", "n_wrong"),
                ("no_answer", "n_unanswered"),
            )
        }
    )
    defaults = MappingProxyType(
        {
            "categories": ",".join(CATEGORIES),
            "scenarios": ",".join(SCENARIOS),
            "questions": None,
            "max_tokens": 512,
            "data": None,
            "temperature": 0.0,
        }
    )

    def __init__(self, column: Literal["fc", "prompt"]) -> None:
        super().__init__(column)
        self.name = "bfcl_memory" if column == "fc" else "bfcl_memory_prompt"
        self.pairs_with = "bfcl_memory_prompt" if column == "fc" else "bfcl_memory"
        how = (
            "FC: the memory's functions as native tools"
            if column == "fc"
            else "Prompt: BFCL's default system prompt, calls parsed from the text as Python"
        )
        self.protocol = (
            f"BFCL v4 (bfcl-eval 2026.3.23) memory, {how}; bfcl-eval's memory backends; the "
            "prerequisite conversations lived through by the model, then each question from "
            f"the final memory; per turn at most {STEP_LIMIT + 1} steps; greedy unless "
            "temperature, max_tokens 512; agentic answer check; a sample is a scenario"
        )

    def samples_per_row(self, config: TaskConfig) -> int:
        return 1

    def data_files(self, data_dir: Path) -> list[Path]:
        try:
            data = data_directory(data_dir)
        except ConfigError:
            return []
        files = [data / "BFCL_v4_memory.json", data / "possible_answer" / "BFCL_v4_memory.json"]
        files += [data / "memory_prereq_conversation" / f"memory_{s}.json" for s in SCENARIOS]
        files += [data / "multi_turn_func_doc" / f"{c}.json" for c in CATEGORIES]
        return [f for f in files if f.is_file()]

    def check_ready(self, allow_unsafe_code: bool = False) -> Readiness:
        """The executor starts and bfcl-eval's memory backends import (``ConfigError`` naming
        scripts/bfcl-oracle.sh otherwise: ``memory_kv`` needs ``rank_bm25``)."""
        envs = shared()
        with tempfile.TemporaryDirectory(prefix="sieval-bfcl-memory-") as where:
            for category in CATEGORIES:
                try:
                    envs.close(
                        envs.open(
                            *_config(category, "student", f"{category}_prereq_0-student-0", where)
                        )
                    )
                except ExecutorError as exc:
                    raise ConfigError(
                        f"{self.name}: bfcl-eval's {category} backend does not load with "
                        f"{envs.python}: {exc}; run scripts/bfcl-oracle.sh (bfcl-eval --no-deps, "
                        "overrides, rank_bm25 and numpy)"
                    ) from exc
        return Readiness(said=(f"bfcl memory backends: {envs.python}",))

    def load(self, data_dir: Path, config: TaskConfig) -> Iterator[Sample]:
        check_options(self.name, config, self.defaults)
        int_option(self.name, config, "max_tokens", 512, 1)
        temperature_option(self.name, config)
        limit = config.options.get("questions")
        most = None if limit is None else int_option(self.name, config, "questions", 1, 1)
        data = data_directory(data_dir, config.options.get("data"))
        wanted = _listed(config, self.name, "scenarios", SCENARIOS)
        for category in _listed(config, self.name, "categories", CATEGORIES):
            for scenario in scenarios(data, category, most):
                if scenario["scenario"] not in wanted:
                    continue
                gold = {q["id"]: q["possible"] for q in scenario["questions"]}
                yield Sample(
                    id=f"{category}-{scenario['scenario']}",
                    data=scenario,
                    gold=gold,
                    group=category,
                )

    def describe(self, sample: Sample) -> dict[str, Any]:
        return {
            "category": sample.group,
            "scenario": sample.data["scenario"],
            "prerequisites": len(sample.data["prereqs"]),
            "questions": [q["question"][0][-1]["content"] for q in sample.data["questions"]],
            "gold": sample.gold,
        }

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        """One request standing for them all (the first prerequisite's first user message with
        the functions; the memory's system prompt is known only once the executor runs), and
        the rest: at most BFCL's 21 replies a turn, each with what the conversation may add (its
        user messages and every earlier reply of it at ``max_tokens``, a token a character for
        text; the memory and the tool results are the backend's, not in the bound)."""
        sampling = self._sampling(sample, config)
        first_turn = sample.data["prereqs"][0]["question"][0]
        tools = fc_tools(sample.data["function"]) if self.column == "fc" else ()
        first = self._request([_message(m) for m in first_turn], tools, sampling, model)
        conversations = [p["question"] for p in sample.data["prereqs"]]
        conversations += [q["question"] for q in sample.data["questions"]]
        replies = sum(len(c) for c in conversations) * (STEP_LIMIT + 1)
        longest = max(sum(len(str(m["content"])) for t in c for m in t) for c in conversations)
        most = sampling.max_tokens if isinstance(sampling.max_tokens, int) else 0
        return [
            PlannedCall(
                "prereq1.turn1.step1..",
                first,
                exact=False,
                times=replies,
                unseen_tokens=longest + STEP_LIMIT * most * max(len(c) for c in conversations),
            )
        ]

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        envs = shared()
        data = sample.data
        category = str(sample.group)
        scenario = str(data["scenario"])
        lost: list[str] = []
        steps = 0
        truncated = False
        prereqs: list[dict[str, Any]] = []
        questions: list[dict[str, Any]] = []
        with tempfile.TemporaryDirectory(prefix="sieval-bfcl-memory-") as where:
            for index, entry in enumerate(data["prereqs"]):
                turns, stopped = await self._live(
                    envs, ctx, sample, category, entry, where, f"prereq{index + 1}.", keep=True
                )
                prereqs.append({"id": entry["id"], "turns": turns, "stopped": stopped})
            for index, entry in enumerate(data["questions"]):
                turns, stopped = await self._live(
                    envs, ctx, sample, category, entry, where, f"q{index + 1}.", keep=False
                )
                said = [(str(s["text"]), bool(s.get("calls"))) for s in turns[0]]
                verdict = check_answer(answer_of(said), entry["possible"])
                miss = None
                if not verdict.valid:
                    miss = "wrong_answer" if verdict.answer else "no_answer"
                questions.append(
                    {
                        "id": entry["id"],
                        "question": entry["question"][0][-1]["content"],
                        "answer": verdict.answer,
                        "possible": entry["possible"],
                        "valid": verdict.valid,
                        "reason": verdict.error_type,
                        "miss": miss,
                        "stopped": stopped,
                        "steps": turns[0],
                    }
                )
            for record in [*prereqs, *questions]:
                for turn in record.get("turns", [record.get("steps", [])]):
                    for step in turn:
                        steps += 1
                        truncated = truncated or bool(step["truncated"])
                        if step.get("lost"):
                            lost.append(str(step["lost"]))
        correct = sum(q["valid"] for q in questions)
        n = len(questions)
        wrong = sum(q["miss"] == "wrong_answer" for q in questions)
        unanswered = sum(q["miss"] == "no_answer" for q in questions)
        # the shares of the scenario's questions; the counts they are made of (``n_*``) are what
        # the run's figures sum (``derived``: over all questions, not a mean of scenarios)
        metrics = {
            "accuracy": correct / n if n else 0.0,
            f"acc_{category}": correct / n if n else 0.0,
            "wrong_answer": wrong / n if n else 0.0,
            "no_answer": unanswered / n if n else 0.0,
            "n_correct": float(correct),
            "n_wrong": float(wrong),
            "n_unanswered": float(unanswered),
            "n_questions": float(n),
            "wire_drop": float(bool(lost)),
            "truncated": float(truncated),
            "steps": float(steps),
        }
        made = {q["id"]: q["answer"] for q in questions}
        failed = [f"{q['id']}: {q['reason']}" for q in questions if q["reason"]]
        # ``made``, ``miss`` and ``reason`` as ``sieval samples --wrong`` shows a BFCL miss: the
        # answers given, the possible answers (gold), each failed question's reason
        channels: dict[str, Any] = {
            "column": "FC" if self.column == "fc" else "Prompt",
            "made": made,
            "reason": "; ".join(failed) or None,
            "scenario": scenario,
            "questions": questions,
            "prereqs": prereqs,
            "lost": "; ".join(lost) or None,
            "miss": next((q["miss"] for q in questions if q["miss"]), None),
        }
        return SampleResult(prediction=made, gold=sample.gold, metrics=metrics, channels=channels)

    async def _live(
        self,
        envs: Environments,
        ctx: Context,
        sample: Sample,
        category: str,
        entry: Mapping[str, Any],
        where: str,
        prefix: str,
        keep: bool,
    ) -> tuple[list[list[dict[str, Any]]], bool]:
        """One conversation (a prerequisite, ``keep``: its memory saved after; or a question)
        run by the multi-turn loop over a memory loaded as bfcl-eval loads it."""
        scenario = str(sample.data["scenario"])
        session = await asyncio.to_thread(
            envs.open, *_config(category, scenario, str(entry["id"]), where)
        )
        try:
            question = await asyncio.to_thread(
                envs.memory_prompt, session, entry["question"], str(entry["id"]), category, scenario
            )
            one = Sample(
                id=sample.id,
                data={"question": question, "function": sample.data["function"], "missed": {}},
                gold=None,
                group=category,
            )
            turns, stopped = await self._converse(one, ctx, session, [], prefix=prefix)
            if keep:
                await asyncio.to_thread(envs.flush, session)
        finally:
            await asyncio.to_thread(envs.close, session)
        return turns, stopped

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        kept = list(results)
        out: dict[str, Any] = {"n": len(kept)}
        correct: dict[str, float] = {}
        asked: dict[str, float] = {}
        total: dict[str, float] = {}
        for sample, result in kept:
            group = str(sample.group)
            correct[group] = correct.get(group, 0.0) + result.metrics.get("n_correct", 0.0)
            asked[group] = asked.get(group, 0.0) + result.metrics.get("n_questions", 0.0)
            for key in ("n_wrong", "n_unanswered", "wire_drop", "truncated", "steps"):
                total[key] = total.get(key, 0.0) + result.metrics.get(key, 0.0)
        questions = sum(asked.values())
        out["questions"] = questions
        out["accuracy"] = sum(correct.values()) / questions if questions else 0.0
        for group in sorted(asked):
            out[f"acc_{group}"] = correct[group] / asked[group] if asked[group] else 0.0
        if questions:
            out["wrong_answer"] = total["n_wrong"] / questions
            out["no_answer"] = total["n_unanswered"] / questions
        if kept:
            out["wire_drop"] = total["wire_drop"] / len(kept)
            out["truncated"] = total["truncated"] / len(kept)
            out["steps"] = total["steps"] / len(kept)
        return out


def _config(
    category: str, scenario: str, test_id: str, where: str
) -> tuple[list[str], dict[str, Any], bool]:
    """The executor's ``open`` arguments for a memory entry, as bfcl-eval sets its initial
    config (``populate_initial_settings_for_memory_test_cases``)."""
    name = f"MemoryAPI_{category.removeprefix('memory_')}"
    prereq = "prereq" in test_id
    config = {
        name: {
            "model_result_dir": where,
            "scenario": scenario,
            "test_id": test_id,
            "test_category": f"{category}_prereq" if prereq else category,
        }
    }
    return [name], config, False


TASK = BfclMemory("fc")
