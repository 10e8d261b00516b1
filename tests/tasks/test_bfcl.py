"""The BFCL tasks end to end on the embedded reference server (which calls the tool a question
names or shares the most words with, with the arguments it spells out), every miss classified,
and a wire drop found where the server's tool parser loses a call (its fault modes)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sieval.errors import ConfigError, ContractViolation
from sieval.ir.request import ChatInput, CompletionInput
from sieval.model import Model
from sieval.plan.plan import model_facts
from sieval.reference.server import start_in_thread
from sieval.tasks._bfcl import _oracle_data, fc_tools, lost_calls, prompt_system, wire_calls
from sieval.tasks.base import Sample, SampleResult, TaskConfig
from sieval.tasks.bfcl import summaries
from sieval.tasks.context import DirectContext
from sieval.tasks.registry import TASKS

FC, PROMPT = TASKS["bfcl"], TASKS["bfcl_prompt"]
DATA = _oracle_data()
needs_data = pytest.mark.skipif(
    DATA is None,
    reason="bfcl-eval 2026.3.23's data is not installed: run scripts/bfcl-oracle.sh (scripts/test "
    "does)",
)


async def _server(faults: str | None = None) -> AsyncIterator[str]:
    import asyncio

    running = await asyncio.to_thread(start_in_thread, port=0, faults=faults)
    try:
        yield running.url
    finally:
        await asyncio.to_thread(running.stop)


@pytest.fixture(scope="module")
async def url() -> AsyncIterator[str]:
    async for found in _server():
        yield found


def config(task: str, categories: str, **options: Any) -> TaskConfig:
    return TaskConfig(name=task, options={"categories": categories, **options})


def load(task: Any, cfg: TaskConfig, per_category: int = 3) -> list[Sample]:
    seen: dict[str, int] = {}
    out = []
    for sample in task.load(Path("/nonexistent"), cfg):
        if seen.get(str(sample.group), 0) < per_category:
            seen[str(sample.group)] = seen.get(str(sample.group), 0) + 1
            out.append(sample)
    return out


async def solve_all(
    task: Any, url: str, dialect: str, samples: list[Sample], cfg: TaskConfig
) -> dict[str, tuple[SampleResult, DirectContext]]:
    out = {}
    async with Model(dialect=dialect, base_url=url, model_id="sieval-reference") as model:
        for sample in samples:
            ctx = DirectContext(model, sample, cfg, model_facts(model.dialect))
            out[sample.id] = (await task.solve(sample, ctx), ctx)
    return out


@needs_data
@pytest.mark.parametrize(
    "dialect", ["openai_chat", "openai_responses", "anthropic_messages", "google_genai"]
)
async def test_fc_on_every_tool_wire_grades_and_classifies_each_entry(
    url: str, dialect: str
) -> None:
    cfg = config("bfcl", "simple_python,parallel,irrelevance")
    results = await solve_all(FC, url, dialect, load(FC, cfg, 2), cfg)
    got = {k: (r.metrics["accuracy"], r.channels["miss"]) for k, (r, _) in results.items()}
    assert got == {
        "simple_python_0": (1.0, None),
        "simple_python_1": (1.0, None),  # math.factorial, sent and graded as math_factorial
        "parallel_0": (0.0, "wrong_call"),  # the server makes one call where two are asked
        "parallel_1": (0.0, "wrong_call"),
        "irrelevance_0": (0.0, "wrong_call"),  # it calls the closest tool anyway
        "irrelevance_1": (1.0, None),
    }
    parallel, ctx = results["parallel_0"]
    assert parallel.channels["reason"].startswith("parallel_function_checker_no_order:wrong_count")
    assert parallel.channels["made"] == [{"spotify_play": {"artist": "Taylor", "duration": 5}}]
    assert parallel.channels["column"] == "FC" and parallel.channels["lost"] is None
    sent = ctx.calls["answer"].request
    assert [f.name for f in sent.tools.functions] == ["spotify_play"]
    assert sent.tools.choice == "auto"


@needs_data
@pytest.mark.parametrize("dialect", ["openai_chat", "openai_completions"])
async def test_prompt_puts_the_functions_in_the_system_turn_and_reads_text(
    url: str, dialect: str
) -> None:
    cfg = config("bfcl_prompt", "simple_python,irrelevance")
    results = await solve_all(PROMPT, url, dialect, load(PROMPT, cfg, 1), cfg)
    simple, ctx = results["simple_python_0"]
    # the reference server writes no Python calls: a miss with no call, its text kept
    assert (simple.metrics["accuracy"], simple.channels["miss"]) == (0.0, "no_call")
    assert simple.channels["text"] == ctx.calls["answer"].result().choices[0].text
    assert simple.channels["column"] == "Prompt"
    assert results["irrelevance_0"][0].metrics["accuracy"] == 1.0
    sent = ctx.calls["answer"].request
    assert not sent.tools.functions
    if dialect == "openai_completions":
        assert isinstance(sent.input, CompletionInput) and isinstance(sent.input.text, str)
        assert sent.input.text.startswith("System: You are an expert in composing functions.")
        assert sent.input.text.endswith("Assistant:")
    else:
        assert isinstance(sent.input, ChatInput)
        assert [m.role for m in sent.input.messages] == ["system", "user"]


@needs_data
@pytest.mark.parametrize("task, dialect", [(FC, "openai_chat"), (PROMPT, "openai_completions")])
async def test_java_and_javascript_entries_are_sent_as_strings_and_graded(
    url: str, task: Any, dialect: str
) -> None:
    cfg = config(task.name, "simple_java,simple_javascript")
    results = await solve_all(task, url, dialect, load(task, cfg, 1), cfg)
    java, ctx = results["simple_java_0"]
    sent = ctx.calls["answer"].request
    if task is FC:
        # the server calls the tool with words of the question: read as Java, a wrong value
        assert java.channels["made"] == [
            {"GeometryPresentation_createPresentation": {"controller": "GIS", "parent": "UI"}}
        ]
        assert java.channels["reason"].startswith("value_error:string: Invalid value for ")
        (tool,) = sent.tools.functions
        assert {p["type"] for p in tool.parameters["properties"].values()} == {"string"}
        assert tool.description.endswith("Note that the provided function is in Java 8 SDK syntax.")
        script, _ = results["simple_javascript_0"]
        assert script.channels["reason"].startswith("type_error:simple: Incorrect type for ")
    else:
        # the reference server writes no calls: read by the Java grammar, none is found
        assert (java.metrics["accuracy"], java.channels["miss"]) == (0.0, "no_call")
        assert isinstance(sent.input, CompletionInput)
        assert "Note that the provided function is in Java 8 SDK syntax." in sent.input.text
        assert "of any type of Java object in string representation." in sent.input.text
        assert '"type": "string"' in sent.input.text and '"type": "any"' not in sent.input.text
    assert {r.metrics["accuracy"] for r, _ in results.values()} == {0.0}


@needs_data
async def test_format_sensitivity_sends_each_variant_s_prompt_and_reads_its_format(
    url: str,
) -> None:
    from sieval.tasks._bfcl_formats import CONFIGS
    from sieval.tasks.bfcl import FORMATS, sensitivity

    cfg = config("bfcl_prompt", "format_sensitivity")
    samples = list(PROMPT.load(Path("/nonexistent"), cfg))
    assert len(samples) == 5200  # 200 entries, 26 variants each
    assert samples[27].id == f"format_sensitivity_27:{CONFIGS[1]}:{samples[26].id.split(':')[2]}"
    chosen = [s for s in samples[:26] if "ret_fmt=verbose_xml" in s.id or "markdown" in s.id]
    results = await solve_all(PROMPT, url, "openai_chat", chosen, cfg)
    for sample in chosen:
        result, ctx = results[sample.id]
        system = ctx.calls["answer"].request.input.messages[0].content[0].text
        if "markdown" in sample.id:
            assert "\n\n## Tool Call Format\n" in system
        else:
            assert '<param name="param1" value="value1" type="type1"/>' in system
        # the reference server writes no calls in any format: a miss with no call
        assert (result.channels["miss"], result.metrics["acc_format_sensitivity"]) == (
            "no_call",
            0.0,
        )
    pairs = [(s, results[s.id][0]) for s in chosen]
    assert sensitivity(pairs) == {
        "format_sensitivity_max_delta": 0.0,
        "format_sensitivity_std": 0.0,
    }
    # per variant, as BFCL: A passes 1 of 2, B 2 of 2, C 0 of 1: the spread of 0.5, 1 and 0
    spread = [
        (
            Sample(id=f"format_sensitivity_{i}:{v}:x_0", data={}, gold=None, group=FORMATS),
            SampleResult(prediction=None, gold=None, metrics={"accuracy": a}),
        )
        for i, (v, a) in enumerate([("A", 1.0), ("A", 0.0), ("B", 1.0), ("B", 1.0), ("C", 0.0)])
    ]
    assert sensitivity(spread) == {
        "format_sensitivity_max_delta": 1.0,
        "format_sensitivity_std": pytest.approx(0.5),
    }
    with pytest.raises(ConfigError, match="run it with bfcl_prompt"):
        list(FC.load(Path(), config("bfcl", "format_sensitivity")))


@needs_data
async def test_a_call_the_server_s_parser_left_in_the_text_is_a_wire_drop() -> None:
    # the fault rewrites the reply: the call the model made is moved from tool_calls to text
    cfg = config("bfcl", "simple_python,irrelevance")
    samples = load(FC, cfg, 1)
    async for faulty in _server(faults="tool-calls-as-text"):
        results = await solve_all(FC, faulty, "openai_chat", samples, cfg)
    result, _ = results["simple_python_0"]
    assert (result.metrics["accuracy"], result.metrics["wire_drop"]) == (0.0, 1.0)
    assert result.channels["miss"] == "wire_drop" and result.metrics["no_call"] == 0.0
    assert result.channels["lost"] == (
        "the text holds 1 <tool_call> block(s) the server's parser did not read"
    )
    # the model called where it should not: BFCL passes it (no call arrived), the drop is counted
    irrelevant, _ = results["irrelevance_0"]
    assert (irrelevant.metrics["accuracy"], irrelevant.metrics["wire_drop"]) == (1.0, 1.0)
    assert irrelevant.channels["miss"] is None and irrelevant.channels["lost"]


@needs_data
async def test_a_reply_that_says_it_called_and_lists_none_fails_the_sample() -> None:
    # tool_calls finish with an empty list: the dialect refuses the reply (a failed sample,
    # never scored as the model's miss)
    cfg = config("bfcl", "simple_python")
    samples = load(FC, cfg, 1)
    async for faulty in _server(faults="tool-calls-empty"):
        with pytest.raises(ContractViolation, match="finished for tool_calls but carries no"):
            await solve_all(FC, faulty, "openai_chat", samples, cfg)


def test_a_call_listed_on_the_wire_but_not_lifted_is_a_wire_drop() -> None:
    body = {"choices": [{"message": {"tool_calls": [{"id": "a"}, {"id": "b"}]}}]}
    raw = json.dumps(body).encode()
    assert wire_calls("openai_chat", raw) == 2
    assert lost_calls("openai_chat", raw, 1, "", "tool_calls") == (
        "the reply lists 2 calls, the dialect lifted 1"
    )
    assert lost_calls("openai_chat", raw, 2, "", "tool_calls") is None
    responses = {"output": [{"type": "function_call"}, {"type": "message"}]}
    assert wire_calls("openai_responses", json.dumps(responses).encode()) == 1
    anthropic = {"content": [{"type": "tool_use"}, {"type": "text"}, {"type": "tool_use"}]}
    assert wire_calls("anthropic_messages", json.dumps(anthropic).encode()) == 2
    google = {"candidates": [{"content": {"parts": [{"functionCall": {}}, {"text": "x"}]}}]}
    assert wire_calls("google_genai", json.dumps(google).encode()) == 1
    assert wire_calls("openai_chat", b"data: {}\n\n") is None  # a stream: not known
    assert lost_calls("openai_chat", None, 0, "no call here", "stop") is None


def test_fc_schemas_are_sent_as_bfcl_s_handlers_send_them() -> None:
    functions = [
        {
            "name": "geo.distance",
            "description": "Distance.",
            "parameters": {
                "type": "dict",
                "properties": {
                    "km": {"type": "float", "description": "Km."},
                    "points": {"type": "array", "items": {"type": "tuple"}, "description": "P."},
                    "where": {"type": "dict", "properties": {"x": {"type": "any"}}},
                    "odd": {"description": "no type"},
                },
                "required": ["km"],
            },
        }
    ]
    (tool,) = fc_tools(functions)
    assert tool.name == "geo_distance"
    assert tool.description == "Distance. Note that the provided function is in Python 3 syntax."
    props = tool.parameters["properties"]
    assert tool.parameters["type"] == "object"
    assert props["km"] == {
        "type": "number",
        "format": "float",
        "description": "Km. This is a float type value.",
    }
    assert props["points"]["items"] == {"type": "array"}
    assert props["where"] == {"type": "object", "properties": {"x": {"type": "string"}}}
    assert props["odd"]["type"] == "string"
    assert functions[0]["parameters"]["type"] == "dict"  # the entry itself is not changed
    system = prompt_system(functions)
    assert system.startswith(
        "You are an expert in composing functions.You are given a question and a set of"
    )
    assert '"name": "geo.distance"' in system and "[func_name1(params_name1=" in system


def test_bfcl_v4_summaries_weigh_as_bfcl_does() -> None:
    accuracy = {
        "simple_python": 1.0,
        "simple_java": 0.5,
        "simple_javascript": 0.0,
        "multiple": 0.5,
        "parallel": 0.0,
        "parallel_multiple": 0.5,
        "live_simple": 1.0,
        "live_multiple": 0.0,
        "live_parallel": 0.0,
        "live_parallel_multiple": 0.0,
        "irrelevance": 1.0,
        "live_irrelevance": 0.5,
        "live_relevance": 0.25,
    }
    counts = dict.fromkeys(accuracy, 10) | {"live_simple": 30}
    assert summaries(accuracy, counts) == {
        "simple": 0.5,  # unweighted over Python, Java and JavaScript
        "non_live": 0.375,  # unweighted over the four: simple, multiple, parallel, parallel m.
        "live": 0.5,  # 30 of 60 live entries passed: weighted by count
        "irrelevance": 0.75,
        "relevance": 0.25,
    }
    assert summaries({"simple_python": 1.0}, {"simple_python": 4}) == {}
    python_only = {
        k: v for k, v in accuracy.items() if k not in ("simple_java", "simple_javascript")
    }
    assert "non_live" not in summaries(python_only, counts)  # simple needs all three languages


def test_java_and_javascript_parameters_go_as_strings_their_types_described() -> None:
    java = [
        {
            "name": "Cache.put",
            "description": "Puts.",
            "parameters": {
                "type": "dict",
                "properties": {
                    "ttl": {"type": "long", "description": "TTL."},
                    "keys": {"type": "ArrayList", "items": {"type": "String"}, "description": "K."},
                    "owner": {"type": "any", "description": "O."},
                },
                "required": ["ttl"],
            },
        }
    ]
    (tool,) = fc_tools(java, "simple_java")
    assert tool.name == "Cache_put"
    assert tool.description == "Puts. Note that the provided function is in Java 8 SDK syntax."
    props = tool.parameters["properties"]
    assert props["ttl"] == {
        "type": "string",
        "description": "TTL. This is Java long type parameter in string representation.",
    }
    assert props["keys"] == {
        "type": "string",
        "description": "K. This is Java ArrayList type parameter in string representation. The "
        "list elements are of type String; they are not in string representation.",
    }
    assert props["owner"]["description"] == (
        "O. This parameter can be of any type of Java object in string representation."
    )
    assert java[0]["parameters"]["properties"]["ttl"]["type"] == "long"  # entry unchanged
    js = [
        {
            "name": "draw",
            "description": "Draws.",
            "parameters": {
                "type": "dict",
                "properties": {
                    "opts": {
                        "type": "dict",
                        "description": "O.",
                        "properties": {"w": {"type": "integer"}},
                    },
                },
                "required": [],
            },
        }
    ]
    system = prompt_system(js, "simple_javascript")
    assert "Note that the provided function is in JavaScript syntax." in system
    assert (
        "O. This is JavaScript dict type parameter in string representation. The dictionary "
        'entries have the following schema; they are not in string representation. {\\"w\\": '
        '{\\"type\\": \\"integer\\"}}'
    ) in system


@needs_data
def test_categories_are_checked_and_loaded_from_bfcl_eval_s_data() -> None:
    samples = list(FC.load(Path("/nonexistent"), config("bfcl", "parallel,live_relevance")))
    groups = {s.group for s in samples}
    assert groups == {"parallel", "live_relevance"}
    assert sum(s.group == "parallel" for s in samples) == 200
    assert all(s.gold is None for s in samples if s.group == "live_relevance")
    with pytest.raises(ConfigError, match="unknown categories"):
        list(FC.load(Path(), config("bfcl", "simple")))


def test_categories_that_cannot_run_offline_are_refused_naming_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError, match=r"web_search_base is not run: .*SerpAPI"):
        list(FC.load(Path(), config("bfcl", "simple_python,web_search_base")))
    with pytest.raises(ConfigError, match=r"memory_vector is not run: .*all-MiniLM-L6-v2"):
        list(FC.load(Path(), config("bfcl", "memory_vector")))
    with pytest.raises(ConfigError, match=r"memory_kv is an agentic .* run it with bfcl_memory"):
        list(FC.load(Path(), config("bfcl", "memory_kv")))
    if DATA is None:
        return
    import sieval.tasks.bfcl as bfcl_module

    # without tree-sitter the Prompt column refuses Java (FC needs no grammar)
    monkeypatch.setattr(bfcl_module, "parser_available", lambda: "pip install 'sieval[bfcl]'")
    with pytest.raises(ConfigError, match=r"sieval\[bfcl\].*leave out simple_java"):
        list(PROMPT.load(Path(), config("bfcl_prompt", "simple_java")))
    assert len(list(FC.load(Path(), config("bfcl", "simple_java")))) == 100


def test_without_data_the_error_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIEVAL_CACHE", "/nonexistent-cache")
    monkeypatch.delenv("SIEVAL_BFCL_DATA", raising=False)
    with pytest.raises(ConfigError, match=r"run scripts/bfcl-oracle\.sh"):
        list(FC.load(Path("/nonexistent"), config("bfcl", "parallel")))


@needs_data
def test_compare_pairs_the_fc_and_prompt_columns_sample_by_sample(tmp_path: Path) -> None:
    import subprocess
    import sys

    from sieval.analysis.compare import compare_runs

    runs = []
    for task, dialect in (("bfcl_prompt", "openai_chat"), ("bfcl", "openai_chat")):
        out = tmp_path / task
        done = subprocess.run(
            [sys.executable, "-m", "sieval", "eval", "--endpoint", "embedded", "--dialect",
             dialect, "--task", f"{task}:categories=simple_python+irrelevance", "--samples",
             "simple_python_0,simple_python_1,irrelevance_0,irrelevance_1", "--no-preflight",
             "--out", str(out)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
        runs.append(run_dir)
    compared = compare_runs(runs[0], runs[1])
    (unit,) = compared["tasks"]
    assert (unit["task"], unit["paired"], compared["unmatched"]) == ("bfcl_prompt vs bfcl", 4, [])
    accuracy = unit["metrics"]["accuracy"]
    # Prompt: the reference writes no Python call (irrelevance passes); FC: it calls
    assert (accuracy["a"], accuracy["b"]) == (0.5, 0.75)
    assert accuracy["diff"] == 0.25  # FC minus Prompt
    shown = subprocess.run(
        [sys.executable, "-m", "sieval", "samples", str(runs[1]), "--wrong"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    # the one FC miss: the call made, the calls expected (none), the miss class and reason
    assert "bfcl / irrelevance_0  wrong" in shown
    assert 'calls made: [{"determine_body_mass_index": {"weight": 10, "height": 5}}]' in shown
    assert "expected:   null" in shown
    assert "miss: wrong_call — irrelevance_error:decoder_success: a call was made" in shown


@needs_data
def test_the_data_files_enter_the_run_identity() -> None:
    files = FC.data_files(Path("/nonexistent"))
    names = {f.name for f in files}
    assert len(files) == 23  # 13 categories' questions, 10 AST categories' possible answers
    prompt_files = {f.name for f in PROMPT.data_files(Path("/nonexistent"))}
    assert prompt_files == names | {"BFCL_v4_format_sensitivity.json"}
    assert {"BFCL_v4_parallel.json", "BFCL_v4_live_relevance.json"} <= names
    assert sum(f.parent.name == "possible_answer" for f in files) == 10
