"""RULER's tasks in sieval: lengths decided before the run, refused past the server's context,
run end to end on the embedded reference server, and reported by length."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from runs import options

from sieval.cost.forecast import KNOWN, CostOptions
from sieval.errors import ConfigError
from sieval.ir.request import ChatInput
from sieval.model import Model
from sieval.plan.config import parse_config
from sieval.results.lengths import Cell, effective_length, length_tables
from sieval.runner import run_eval
from sieval.runner.tokenizer import ServedTokenizer
from sieval.scoring.ruler import postprocess, string_match_all, string_match_part, task_score
from sieval.store.records import Shared, expand_requests, read_records
from sieval.tasks.base import ModelFacts, TaskConfig
from sieval.tasks.registry import TASKS
from sieval.tasks.ruler import default_lengths
from sieval.transport import HttpReply, HttpRequest
from sieval.transport.fake import FakeTransport


class Words:
    """A tokenizer that counts words (a test double of the server's: only sizes matter here)."""

    def __init__(self, max_length: int | None, overhead: int = 1, chat: bool = False) -> None:
        self.max_length = max_length
        self._overhead = overhead
        self.chat = chat

    async def count(self, text: str) -> int:
        return len(text.split())

    async def overhead(self) -> int:
        return self._overhead

    async def sent(self, text: str) -> int:
        return len(text.split()) + self._overhead


def _generate(task: str, lengths: list[int] | None, tokenizer: Words, data_dir: Path):
    config = TaskConfig(name=task, n=2, options={} if lengths is None else {"lengths": lengths})
    ruler = TASKS[task]
    samples = list(ruler.load(data_dir, config))[:2]
    return asyncio.run(ruler.generate(samples, config, tokenizer, data_dir))


def test_default_lengths_are_the_powers_of_two_the_server_holds() -> None:
    assert default_lengths(32768, 1) == [4096, 8192, 16384]  # 32768 + 1 BOS does not fit
    assert default_lengths(32769, 1) == [4096, 8192, 16384, 32768]
    assert default_lengths(4096, 0) == [4096]
    assert default_lengths(4000, 0) == []


def test_lengths_default_to_what_the_server_holds(data_dir: Path) -> None:
    made = _generate("niah_single_1", None, Words(9000, overhead=20), data_dir)
    assert made["lengths"] == [4096, 8192] and made["overhead"] == 20
    for length in (4096, 8192):
        samples = made["samples"][str(length)]
        assert len(samples) == 2
        assert all(s["length"] <= length for s in samples)
        assert samples[0]["input"].startswith("A special magic number is hidden")


def test_a_length_past_the_context_is_refused_naming_the_longest_it_holds(data_dir: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        _generate("vt", [4096, 16384], Words(12000, overhead=7), data_dir)
    message = refused.value.message
    assert "length 16384 does not fit" in message and "maximum model length 12000" in message
    assert "the longest length it holds is 11993 (the longest power of two: 8192)" in message
    with pytest.raises(ConfigError, match=r"less than RULER's shortest length 4096"):
        _generate("vt", None, Words(3000), data_dir)
    with pytest.raises(ConfigError, match=r"does not report its maximum model length"):
        _generate("vt", None, Words(None), data_dir)


def test_an_essay_haystack_past_the_stored_essays_is_refused(data_dir: Path) -> None:
    # a word a token: 150k tokens need more words than the 49 essays hold (about 112k)
    with pytest.raises(ConfigError, match=r"the 49 stored essays hold"):
        _generate("niah_single_2", [150000], Words(200000), data_dir)


def test_bad_lengths_options_are_refused(data_dir: Path) -> None:
    for bad in ([], [4096, "8k"], 4096, [0]):
        config = TaskConfig(name="cwe", options={"lengths": bad})
        with pytest.raises(ConfigError, match="option lengths must be"):
            list(TASKS["cwe"].load(data_dir, config))


def test_metrics_as_rulers_evaluate() -> None:
    assert postprocess("  a\x00b\tc \n") == "a\nb\nc"
    assert string_match_all("Apple and PEAR", ["apple", "pear", "plum"]) == 2 / 3
    assert string_match_part("Apple and PEAR", ["plum", "pear"]) == 1.0
    assert string_match_part("nothing", ["plum", "pear"]) == 0.0
    assert task_score([1.0, 0.5, 0.0]) == 50.0 and task_score([1, 1, 0]) == 66.67


def test_effective_length_is_where_the_average_stops_being_above_the_threshold() -> None:
    average = {4096: Cell(95.0), 8192: Cell(86.0), 16384: Cell(85.6), 32768: Cell(90.0)}
    assert effective_length(average, 85.6) == 8192  # 85.6 is not above; 32k does not count
    assert effective_length(average, 80.0) == 32768
    assert effective_length(average, 99.0) is None


def _run(tmp_path: Path, tasks: str, dialect: str = "openai_completions"):
    config = parse_config(
        f"models: [{{name: m, endpoint: embedded, dialect: {dialect}, concurrency_limit: 4}}]\n"
        f"tasks: [{tasks}]"
    )
    return run_eval(config, options(out=tmp_path))


def test_end_to_end_on_the_embedded_server(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        "{name: niah_single_1, n: 2, options: {lengths: [1024, 2048]}}, "
        "{name: vt, n: 2, options: {lengths: [1024]}}",
    )
    assert result.exit_code == 0 and result.report is not None
    by_task = {r.task: r for r in result.report.results}
    niah = by_task["niah_single_1"]
    assert niah.samples.scored == 2
    assert set(niah.metrics) >= {"len_1024", "len_2048", "score"}
    assert "completion wire: RULER's base template" in niah.protocol
    assert "lengths 1024, 2048" in niah.protocol
    generated = result.setup.facts["m"].generated
    assert generated is not None and generated["vt"]["lengths"] == [1024]
    unit = result.run_dir / "m" / "niah_single_1"
    shared = Shared.load(unit / "shared.jsonl")
    for record in read_records(unit / "records.jsonl").records.values():
        requests = expand_requests(record.requests, shared)
        assert set(requests) == {"length:1024", "length:2048"}
        for length in (1024, 2048):
            made = generated["niah_single_1"]["samples"][str(length)][int(record.sample_id)]
            body = requests[f"length:{length}"].body
            assert body["prompt"] == made["input"] + made["answer_prefix"]
            assert body["max_tokens"] == 128 and body["temperature"] == 0.0
            channel = record.channels[f"length:{length}"]
            assert channel["prompt_tokens"] + 128 == made["length"] <= length
            # the server's count of the prompt as sent: its own tokens and the BOS
            assert channel["server_prompt_tokens"] == channel["prompt_tokens"] + 1
    # a RULER run is long: its forecast (tokens and time at the measured rate) is made unasked
    forecast = (result.run_dir / "forecast.json").read_text()
    assert '"task":"niah_single_1"' in forecast.replace(" ", "")
    assert '"prefill"' in forecast and '"seconds"' in forecast
    _check_the_reports(result, tmp_path)


def _check_the_reports(result, tmp_path: Path) -> None:
    """The score-by-length table in the terminal report and in the HTML one (table and plot)."""
    from rich.console import Console

    from sieval.cli.report import render_lengths, write_html

    console = Console(width=100, record=True)
    for part in render_lengths(result.report, threshold=50.0):
        console.print(part)
    text = console.export_text()
    assert "score by context length (%) · m" in text
    cells = {
        parts[1]: parts[2:4]
        for line in text.splitlines()
        if len(parts := [p.strip() for p in line.split("│")]) == 5 and parts[1]
    }
    (table,) = length_tables(result.report, 50.0)
    niah, vt = (result.report.results[i].metrics for i in (0, 1))
    assert table.lengths == [1024, 2048]
    # 2048: niah_single_1's alone; 1024: the mean of the two tasks'
    assert table.average[2048].value == 100 * niah["len_2048"]
    assert table.average[1024].value == 100 * (niah["len_1024"] + vt["len_1024"]) / 2
    assert cells["average"] == [f"{table.average[n].value:.1f}" for n in (1024, 2048)]
    assert cells["vt"][1] == "-"  # vt was not asked at 2048
    assert "threshold 50%" in text
    page = write_html(result.run_dir, result.report, tmp_path / "page.html", threshold=50.0)
    html = page.read_text()
    assert '<section id="lengths">' in html and 'id="plot-lengths"' in html
    assert "(threshold 50.0%)" in html


def test_no_forecast_turns_a_ruler_runs_forecast_off(tmp_path: Path) -> None:
    config = parse_config(
        "models: [{name: m, endpoint: embedded}]\n"
        "tasks: [{name: vt, n: 1, options: {lengths: [1024]}}]"
    )
    result = run_eval(config, options(out=tmp_path, cost=CostOptions(forecast=False)))
    assert result.exit_code == 0 and not (result.run_dir / "forecast.json").exists()


def test_a_run_past_the_embedded_servers_context_is_refused_before_any_sample(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as refused:
        _run(tmp_path, "{name: vt, n: 1, options: {lengths: [2048, 8192]}}")
    assert "length 8192 does not fit" in refused.value.message
    assert "maximum model length 4096; the longest length it holds is 4095" in (
        refused.value.message
    )


def test_word_needles_are_niahs_sorted_pairs_without_building_them() -> None:
    from sieval.tasks._ruler.generate import _Pairs

    adjectives = ["blue", "blue-eyed", "big", "big'un", "x-rated", "x", "blue-eyed-x", "a", "a",
                  "Zed", "b-", "b"]  # fmt: skip
    nouns = ["eyed-cat", "cat", "apple", "x", "Zebra", "cat", "rated", "-", ""]
    pairs = _Pairs(adjectives, nouns)
    expected = sorted({f"{a}-{n}" for a in adjectives for n in nouns})
    assert [pairs[i] for i in range(len(pairs))] == expected
    with pytest.raises(IndexError):
        pairs[len(expected)]


def test_a_chat_wire_whose_server_cannot_count_the_template_is_refused() -> None:
    # a /tokenize that takes a prompt only, not vLLM's messages (the embedded server takes both)
    def handler(request: HttpRequest) -> HttpReply:
        if b'"messages"' in (request.body or b""):
            return HttpReply(status=400, headers={}, body=b'{"error": "prompt must be a string"}')
        return HttpReply(status=200, headers={}, body=b'{"count": 1, "tokens": [5]}')

    model = Model(
        dialect="openai_chat", base_url="http://x", model_id="m", transport=FakeTransport(handler)
    )
    with pytest.raises(ConfigError) as refused:
        asyncio.run(ServedTokenizer(model, 4096, chat=True).overhead())
    message = refused.value.message
    assert "the chat template's own tokens are counted" in message
    assert "answered HTTP 400" in message and "use a completion wire" in message


def test_a_chat_wire_s_prompts_are_counted_as_sent_when_generated(data_dir: Path) -> None:
    # the chat template's tokens come with each prompt as sent (here: 7 a prompt), counted once
    # at generation, so the forecast needs no estimate of what the template adds
    made = _generate("vt", [1024], Words(4096, overhead=7, chat=True), data_dir)
    ruler = TASKS["vt"]
    config = TaskConfig(name="vt", n=2, options={"lengths": [1024]})
    facts = ModelFacts(input_kind="chat", generated={"vt": made})
    for sample in list(ruler.load(data_dir, config))[:2]:
        (call,) = ruler.calls(sample, config, facts)
        entry = made["samples"]["1024"][int(sample.id)]
        assert call.prompt_tokens == len(entry["input"].split()) + 7 == entry["sent_tokens"]
        assert isinstance(call.request.input, ChatInput)
    # a completion wire's prompts are text the forecast counts itself through /tokenize
    plain = _generate("vt", [1024], Words(4096), data_dir)
    assert "sent_tokens" not in plain["samples"]["1024"][0]
    (call,) = ruler.calls(sample, config, ModelFacts(generated={"vt": plain}))
    assert call.prompt_tokens is None


def test_a_chat_wire_s_forecast_is_the_server_s_own_count(tmp_path: Path) -> None:
    # the chat wire has no tokenize route of its own: the forecast's prompt tokens are the
    # counts made at generation, each as the reply's usage then says
    config = parse_config(
        "models: [{name: m, endpoint: embedded, dialect: openai_chat, concurrency_limit: 4}]\n"
        "tasks: [{name: vt, n: 2, options: {lengths: [1024]}}]"
    )
    result = run_eval(config, options(out=tmp_path, cost=CostOptions(forecast=True)))
    assert result.exit_code == 0 and result.report is not None
    (entry,) = result.report.results
    forecast = entry.cost.forecast
    assert forecast is not None and forecast.exact and forecast.method == KNOWN
    assert forecast.prompt_tokens == entry.cost.actual.input_tokens > 2 * 900
