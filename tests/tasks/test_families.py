"""Each family against the embedded reference server, its scores checked against the reference
model's own computation (``ReferenceModel.score``): choice log-likelihood (plain, variable
context, probability mass, mutual information), target log-likelihood, rolling log-likelihood
through the whole engine."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import options

from sieval.model import Model
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.reference.lm import get_model
from sieval.runner import run_eval
from sieval.scoring.rolling import rolling_windows
from sieval.store.records import read_records
from sieval.tasks.base import TaskConfig
from sieval.tasks.registry import TASKS


def oracle(context: str, continuation: str) -> float:
    """The reference model's log-likelihood of the continuation's tokens after the context."""
    ref = get_model()
    ctx, full = ref.tokenize(context), ref.tokenize(context + continuation)
    assert full[: len(ctx)] == ctx
    scores = ref.score(full)
    return sum(s for s in scores[len(ctx) :] if s is not None)


async def scored(name: str, config: TaskConfig, data_dir: Path, n: int) -> list[Any]:
    task: Any = TASKS[name]
    samples = list(task.load(data_dir, config))[:n]
    async with (
        ReferenceServer(port=0) as server,
        Model(dialect="openai_completions", base_url=server.url, model_id=server.model_name) as m,
    ):
        out = []
        for sample in samples:
            requests = task.requests(sample, config)
            responses = {k: await m.run(r) for k, r in requests.items()}
            out.append(
                (sample, task.arguments(sample, config), task.score(sample, responses, config))
            )
        return out


@pytest.mark.parametrize("name", ["arc_easy", "winogrande", "truthfulqa_mc2", "mmlu", "boolq"])
async def test_choice_log_likelihoods_are_the_models(name: str, data_dir: Path) -> None:
    config = TaskConfig(name=name, options={"acc_mutual_info": True})
    for sample, arguments, result in await scored(name, config, data_dir, 3):
        choices = result.channels["choices"]
        lls = [c["logprob_sum"] for c in choices]
        for i, channel in enumerate(choices):
            context, continuation = arguments[f"choice:{i}"]
            assert channel["logprob_sum"] == pytest.approx(oracle(context, continuation), abs=1e-9)
        priors = [c["logprob_sum"] for c in result.channels["prior"]]
        for i, prior in enumerate(priors):  # after the BOS alone
            assert arguments[f"prior:{i}"][0] == ""
            assert prior == pytest.approx(oracle("", arguments[f"prior:{i}"][1]), abs=1e-9)
        best = max(range(len(lls)), key=lambda i: (lls[i], -i))
        if name == "truthfulqa_mc2":
            labels = sample.data["labels"]
            mass = sum(math.exp(x) for x, y in zip(lls, labels, strict=True) if y == 1)
            assert result.metrics["acc"] == pytest.approx(mass / sum(map(math.exp, lls)))
        else:
            gold = sample.gold
            assert result.metrics["acc"] == float(best == gold)
        mi = [c - p for c, p in zip(lls, priors, strict=True)]
        mi_pick = max(range(len(mi)), key=lambda i: (mi[i], -i))
        assert result.metrics["acc_mutual_info"] == float(mi_pick == sample.gold)


async def test_winogrande_scores_the_shared_ending_after_each_filled_sentence(
    data_dir: Path,
) -> None:
    config = TaskConfig(name="winogrande")
    ((sample, arguments, _),) = await scored("winogrande", config, data_dir, 1)
    (a, end_a), (b, end_b) = arguments["choice:0"], arguments["choice:1"]
    assert end_a == end_b and a != b and end_a.startswith(" ")
    assert sample.data["contexts"] == [a, b]


async def test_target_log_likelihood_and_is_greedy(data_dir: Path) -> None:
    config = TaskConfig(name="lambada_openai")
    ref = get_model()
    for _, arguments, result in await scored("lambada_openai", config, data_dir, 3):
        context, target = arguments["target"]
        assert target.startswith(" ") and " " not in target[1:]
        assert result.metrics["loglikelihood"] == pytest.approx(oracle(context, target), abs=1e-9)
        full, ctx = ref.tokenize(context + target), ref.tokenize(context)
        greedy = all(
            ref.distribution(full[:i]).argmax() == full[i] for i in range(len(ctx), len(full))
        )
        assert result.metrics["acc"] == float(greedy)


def test_rolling_log_likelihood_through_the_engine(tmp_path: Path, data_dir: Path) -> None:
    """wikitext on the embedded server: each document tokenised by its /tokenize, cut into
    windows of max_model_len - 2 (4094) predicted tokens, each window's sum the model's."""
    config = parse_config(
        "models: [{name: m, endpoint: embedded, concurrency_limit: 4}]\n"
        "tasks: [{name: wikitext, n: 2}]"
    )
    result = run_eval(config, options(out=tmp_path, data_dir=data_dir))
    assert result.exit_code == 0
    ref = get_model()
    (entry,) = result.report.results
    records = read_records(result.run_dir / "m" / "wikitext" / "records.jsonl").records
    samples = list(TASKS["wikitext"].load(data_dir, TaskConfig(name="wikitext")))[:2]
    lls, words, n_bytes = [], [], []
    for sample in samples:
        tokens = ref.tokenize(sample.data["text"], add_bos=False)
        windows = list(rolling_windows(tokens, ref.tokenize("", add_bos=True)[0], 4094))
        expected = 0.0
        for context, predicted in windows:
            scores = ref.score(context + predicted)
            expected += sum(s for s in scores[len(context) :] if s is not None)
        record = records[sample.id]
        assert len(record.channels["windows"]) == len(windows) > 1
        assert record.metrics["loglikelihood"] == pytest.approx(expected, rel=1e-12)
        lls.append(record.metrics["loglikelihood"])
        words.append(sample.data["words"])
        n_bytes.append(sample.data["bytes"])
    metrics = entry.metrics
    assert metrics["word_perplexity"] == pytest.approx(math.exp(-sum(lls) / sum(words)))
    assert metrics["bits_per_byte"] == pytest.approx(-sum(lls) / sum(n_bytes) / math.log(2))
    assert entry.protocol.endswith("here at most 4094 predicted a window")
    assert msgspec.json.encode(entry)  # the report is plain data


async def test_rolling_windows_need_a_length_a_prefix_and_a_tokenize_route(data_dir: Path) -> None:
    from sieval.errors import ConfigError
    from sieval.runner.checks import resolve_documents
    from sieval.tasks.base import ModelFacts

    task: Any = TASKS["wikitext"]
    sample = next(iter(task.load(data_dir, TaskConfig(name="wikitext"))))
    tokens = {sample.data["text"]: tuple(range(10))}
    config = TaskConfig(name="wikitext")
    with pytest.raises(ConfigError, match="maximum model length; set options: {max_length: N}"):
        task.requests(sample, config, ModelFacts(documents=tokens, prefix_token_id=2))
    with pytest.raises(ConfigError, match="adds no BOS"):
        task.requests(sample, config, ModelFacts(documents=tokens, max_length=8))
    given = TaskConfig(name="wikitext", options={"max_length": 6, "prefix_token_id": 7})
    requests = task.requests(sample, given, ModelFacts(documents=tokens, max_length=4096))
    assert [r.input.token_ids for r in requests.values()] == [
        (7, 0, 1, 2, 3), (3, 4, 5, 6, 7), (5, 6, 7, 8, 9)]  # fmt: skip
    for bad, message in (({"max_length": "4k"}, "must be an integer"), ({"max_length": 2}, ">= 3")):
        with pytest.raises(ConfigError, match=message):
            list(task.load(data_dir, TaskConfig(name="wikitext", options=bad)))
    async with Model(dialect="openai_chat", base_url="http://127.0.0.1:9", model_id="m") as chat:
        with pytest.raises(ConfigError, match="no tokenize route"):
            await resolve_documents(chat, ["x"], 4096)


def test_means_keep_the_metrics_every_result_has() -> None:
    """A run resumed across a version that added a metric (``censored``) holds records with and
    without it, in either order: the mean keeps the metrics every result has (it raised a
    KeyError when the first result had one a later one lacked)."""
    from sieval.tasks._shared import means
    from sieval.tasks.base import Sample, SampleResult

    sample = Sample(id="s", data={}, gold=None)
    new = SampleResult(prediction=None, gold=None, metrics={"acc": 1.0, "censored": 0.0})
    old = SampleResult(prediction=None, gold=None, metrics={"acc": 0.0})
    assert means([(sample, new), (sample, old)]) == {"n": 2, "acc": 0.5}
    assert means([(sample, old), (sample, new)]) == {"n": 2, "acc": 0.5}
