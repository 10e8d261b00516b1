"""The cost forecast (``cost/forecast.py``) against the reference server: exact through its
``/tokenize``, each distinct prompt asked once, an estimate marked as one with its method where
the wire has no tokenize route, and ``--dry-run`` sends no model request and writes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec
import pytest
from runs import options

from sieval.cost.counting import PromptCounter, max_output, prompt_text
from sieval.cost.forecast import FORECAST_FILE, KNOWN, CostOptions, read_forecast
from sieval.errors import ConfigError
from sieval.ir.request import ChatInput, Message, Request, Sampling, TextPart
from sieval.model import Model
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval
from sieval.store.records import Shared, expand_requests, read_records
from sieval.tasks._shared import user_message
from sieval.tasks.base import COMPLETION_MODEL, ModelFacts, PlannedCall, Sample, TaskConfig
from sieval.transport import FakeTransport, HttpTransport, json_reply
from sieval.transport.types import HttpReply, HttpRequest

from .fakes import FakeTask, write_data

TASKS = (
    "[{name: arc_easy_kshot_ppl, n: 3, num_fewshot: 1},"
    " {name: mmlu_kshot_clp, n: 3, num_fewshot: 1},"
    " {name: gsm8k_kshot_base_gen, n: 2, num_fewshot: 1}]"
)


class Counting:
    """A real HTTP transport that keeps the method and path of every request it sends."""

    def __init__(self) -> None:
        self.inner = HttpTransport()
        self.sent: list[str] = []

    async def send(self, request: HttpRequest) -> HttpReply:
        self.sent.append(f"{request.method} /" + request.url.split("//", 1)[1].split("/", 1)[1])
        return await self.inner.send(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def config(url: str, *, kind: str = "completion", tasks: str = TASKS, extra: str = "") -> object:
    return parse_config(
        f"models: [{{name: m, endpoint: '{url}', model: sieval-reference, kind: {kind}, "
        f"concurrency_limit: 2{extra}}}]\ntasks: {tasks}"
    )


def spent(run_dir: Path, task: str) -> tuple[int, int, int]:
    """Requests, prompt and output tokens the server reported for a task, read from the records
    directly (not through the code under test)."""
    records = read_records(run_dir / "m" / task / "records.jsonl").records.values()
    usages = [r.usage for record in records for r in record.requests.values()]
    return (
        len(usages),
        sum(u["input_tokens"] for u in usages),
        sum(u["output_tokens"] for u in usages),
    )


async def test_the_forecast_is_exact_where_the_wire_has_a_tokenize_route(tmp_path: Path) -> None:
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url, extra=", price: {input: 2, output: 10, currency: EUR}"),  # type: ignore[arg-type]
            options(out=tmp_path),
        )
    assert result.forecast is not None  # a price asks for a forecast
    stored = read_forecast(result.run_dir)
    assert stored == msgspec.convert(msgspec.to_builtins(result.forecast), type(stored))
    (counting,) = stored.counting
    assert counting.method == "exact: POST /tokenize"
    for result_entry in result.report.results:
        task = result_entry.task
        requests, prompt, output = spent(result.run_dir, task)
        forecast = result_entry.cost.forecast
        assert forecast.exact and forecast.requests == requests
        assert forecast.prompt_tokens == prompt  # what the server counted, to the token
        assert output <= forecast.max_output_tokens
        assert forecast.cost == pytest.approx((prompt * 2 + forecast.max_output_tokens * 10) / 1e6)
        actual = result_entry.cost.actual
        assert (actual.input_tokens, actual.output_tokens) == (prompt, output)
        assert actual.cost == pytest.approx((prompt * 2 + output * 10) / 1e6)
        assert result_entry.cost.price.currency == "EUR"
    gsm8k = next(r for r in result.report.results if r.task == "gsm8k_kshot_base_gen")
    assert gsm8k.cost.forecast.max_output_tokens == 2 * 256  # max_tokens per request


@pytest.mark.parametrize("probe", [False, None])
async def test_dry_run_sends_no_model_request_but_the_rate_probe_s_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, probe: bool | None
) -> None:
    monkeypatch.setenv("SIEVAL_CACHE", str(tmp_path / "cache"))
    counting = Counting()
    stages: list[str] = []
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url),  # type: ignore[arg-type]
            options(
                out=tmp_path / "out",
                on_stage=stages.append,
                cost=CostOptions(dry_run=True, rate_probe=probe),
            ),
            transport_factory=lambda cfg: counting,
        )
        await counting.aclose()
    assert not (tmp_path / "out").exists()
    routes = {line.split("?")[0] for line in counting.sent}
    assert routes - {"POST /v1/completions"} <= {
        "GET /v1/models", "GET /version", "GET /health", "POST /tokenize"
    }  # fmt: skip
    assert "POST /tokenize" in routes
    # the rate probe's three short requests (a local server, no price), or none without it
    assert counting.sent.count("POST /v1/completions") == (0 if probe is False else 3)
    assert result.forecast is not None
    assert result.forecast.rates[0].known is (probe is None)
    assert result.forecast is not None and len(result.forecast.units) == 3
    requests = [
        r
        for pt in result.plan.tasks
        for sample in pt.samples
        for r in pt.task.requests(sample, pt.config, result.plan.models[0].facts).values()
    ]
    assert any(s.startswith(f"forecast for m: {len(requests)} requests") for s in stages), stages
    distinct = {prompt_text(r) for r in requests}
    assert counting.sent.count("POST /tokenize") == len(distinct)
    assert result.forecast.counting[0].tokenized == len(distinct)


async def test_a_prompt_is_tokenized_once_however_often_it_is_sent() -> None:
    async with ReferenceServer() as server:
        counting = Counting()
        async with Model(
            dialect="openai_completions",
            base_url=server.url,
            model_id="sieval-reference",
            transport=counting,
        ) as model:
            counter = PromptCounter("/tokenize")
            same = Request.completion("the same prompt", sampling=Sampling(max_tokens=3))
            other = Request.completion("another prompt", sampling=Sampling(max_tokens=3))
            counts = await asyncio.gather(*(counter.count(r, model) for r in [same] * 5 + [other]))
            again = await counter.count(same, model)
    assert counting.sent.count("POST /tokenize") == 2 == counter.tokenized
    assert counts[0] == again and all(c == counts[0] for c in counts[:5])
    assert counts[0][1] is True and counts[0][0] > 0


def _chat(text: str) -> Request:
    return Request(
        input=ChatInput(messages=(Message(role="user", content=(TextPart(text=text),)),)),
        sampling=Sampling(max_tokens=7, n=2),
    )


async def test_a_wire_without_tokenize_is_estimated_and_says_so(tmp_path: Path) -> None:
    tasks = "[{name: gsm8k_0shot_gen, n: 3}]"
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url, kind="chat", tasks=tasks),  # type: ignore[arg-type]
            options(out=tmp_path, cost=CostOptions(forecast=True)),
        )
    (entry,) = result.report.results
    forecast = entry.cost.forecast
    assert forecast.method == "estimate: bytes / 4" and not forecast.exact
    assert forecast.exact_requests == 0
    path = result.run_dir / "m" / "gsm8k_0shot_gen" / "records.jsonl"
    shared = Shared.load(path.with_name("shared.jsonl"))
    texts = [  # what was sent: the messages' text, read from the exact bodies
        "\n".join(p["text"] for m in r.body["messages"] for p in _parts(m["content"]))
        for record in read_records(path).records.values()
        for r in expand_requests(record.requests, shared).values()
    ]
    assert forecast.prompt_tokens == sum(round(len(t.encode()) / 4) for t in texts)
    _, prompt, _ = spent(result.run_dir, "gsm8k_0shot_gen")
    assert forecast.prompt_tokens != prompt  # the template is not in the estimate


def _parts(content: object) -> list[dict[str, str]]:
    return [{"text": content}] if isinstance(content, str) else list(content)  # type: ignore[arg-type]


async def test_an_estimate_is_calibrated_through_another_model_s_tokenizer(
    tmp_path: Path,
) -> None:
    async with ReferenceServer() as server:
        cfg = parse_config(
            f"models:\n  - {{name: raw, endpoint: '{server.url}', model: sieval-reference}}\n"
            f"  - {{name: chat, endpoint: '{server.url}', model: sieval-reference, kind: chat}}\n"
            "tasks: [{name: mmlu_kshot_clp, n: 4, num_fewshot: 1, options: {top_k: 19}}]"
        )
        result = await arun_eval(cfg, options(cost=CostOptions(dry_run=True)))
        model = Model(
            dialect="openai_completions", base_url=server.url, model_id="sieval-reference"
        )
        async with model:
            chat = next(u for u in result.forecast.units if u.model == "chat")
            raw = next(u for u in result.forecast.units if u.model == "raw")
            # the ratio, measured here on the same prompts through the same route
            texts = [prompt_text(r) for r in _chat_requests(result, "chat")]
            tokens = 0
            for text in texts:
                _, data = await model.fetch(
                    "/tokenize",
                    {"model": "sieval-reference", "prompt": text, "add_special_tokens": False},
                )
                tokens += len(data["tokens"])
    ratio = tokens / sum(len(t.encode()) for t in texts)
    assert raw.exact and not chat.exact
    assert chat.method == (
        f"estimate: {ratio:.3f} tokens a byte, measured on 4 prompts through POST /tokenize "
        "of 'raw'"
    )
    assert chat.prompt_tokens == sum(round(len(t.encode()) * ratio) for t in texts)


def _chat_requests(result: object, label: str) -> list[Request]:
    plan = result.plan  # type: ignore[attr-defined]
    pm = next(p for p in plan.models if p.label == label)
    (pt,) = plan.tasks
    return [r for s in pt.samples for r in pt.task.requests(s, pt.config, pm.facts).values()]


def test_the_most_a_request_may_generate() -> None:
    assert max_output(_chat("x")) == 14  # max_tokens 7, n 2
    assert max_output(Request.completion("x")) is None  # no maximum set
    assert prompt_text(_chat("héllo")) == "héllo"


async def test_dry_run_refuses_a_resume(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--dry-run forecasts a new run"):
        await arun_eval(
            config("http://127.0.0.1:9"),  # type: ignore[arg-type]
            options(resume=tmp_path, cost=CostOptions(dry_run=True)),
        )


def test_a_damaged_forecast_file_is_named(tmp_path: Path) -> None:
    (tmp_path / FORECAST_FILE).write_text("{not json")
    with pytest.raises(ConfigError, match=f"{FORECAST_FILE}: not a sieval forecast"):
        read_forecast(tmp_path)
    assert read_forecast(tmp_path / "nowhere") is None


@pytest.mark.parametrize(
    "reply",
    [
        {"tokens": [], "count": 0, "max_model_len": 2048},  # a text spelled by no token
        {"tokens": [5, -1], "count": 2},  # a negative id
        {"tokens": [5, 6], "count": 3},  # the count disagrees with the ids
        {"tokens": ["a", "b"]},  # texts, not ids
        {"tokens": [True]},
    ],
)
async def test_a_tokenize_reply_without_believable_ids_is_no_exact_count(reply: object) -> None:
    """It said "exact: 0 tokens" for an empty list: a tokenizer spells every character of a text
    that is not empty, so such a reply is no count, and the prompt is estimated, marked so."""
    transport = FakeTransport(lambda request: json_reply(reply))
    async with Model(
        dialect="openai_completions", base_url="http://h", model_id="m", transport=transport
    ) as model:
        counter = PromptCounter("/tokenize")
        text = "a prompt of some words"
        counted = await counter.count(
            Request.completion(text, sampling=Sampling(max_tokens=1)), model
        )
    assert counted == (counter.estimate(text), False) and counted[0] > 0
    assert counter.method == "estimate: bytes / 4" and counter.tokenized == 0


class CountedChat(FakeTask):
    """A chat task whose calls carry their prompts' tokens as the server counts them (as RULER's
    generator counts each chat prompt through the template): the forecast takes them as exact."""

    def __init__(self, counted: bool) -> None:
        super().__init__(requirements=(), per_sample=1)
        self.counted = counted

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        sampling = Sampling(max_tokens=4, temperature=0.0)
        text = f"Q: {sample.data['word']}"
        return {"r0": Request(input=user_message(text), sampling=sampling)}

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        (request,) = self.requests(sample, config, model).values()
        known = 100 + len(sample.data["word"]) if self.counted else None
        return [PlannedCall("r0", request, prompt_tokens=known)]


@pytest.mark.parametrize("counted", [True, False])
async def test_prompts_the_task_counted_as_sent_are_exact_on_a_chat_wire(
    tmp_path: Path, counted: bool
) -> None:
    write_data(tmp_path / "data", ["alpha", "be"])
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url, kind="chat", tasks="[{name: fake_qa}]"),  # type: ignore[arg-type]
            options(
                out=tmp_path / "o",
                data_dir=tmp_path / "data",
                cost=CostOptions(dry_run=True, rate_probe=False),
            ),
            tasks={"fake_qa": CountedChat(counted)},
        )
    assert result.forecast is not None
    (unit,) = result.forecast.units
    if counted:  # the chat wire has no tokenize route: without the task's counts, an estimate
        assert unit.exact and unit.prompt_tokens == 105 + 102 and unit.method == KNOWN
        assert result.forecast.counting[0].method == KNOWN
    else:
        assert not unit.exact and unit.method.startswith("estimate")
