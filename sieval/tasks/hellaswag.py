"""HellaSwag, k-shot, scored by the log-likelihood of each ending.

Zellers et al. 2019, "HellaSwag: Can a Machine Really Finish Your Sentence?",
https://arxiv.org/abs/1905.07830

The text is lm-evaluation-harness's (``tasks/hellaswag/utils.py``): the query is
``preprocess({activity_label}: {ctx_a} {ctx_b.capitalize()})``, the endings are
``preprocess(ending)``, and each is scored as ``" {ending}"``. ``acc_norm`` is lm-eval's: the sum
divided by ``len(ending)``, the preprocessed ending without the leading space.

Read from the original JSON Lines (or the hub), the text is exactly lm-eval's. The derived local
file differs in two ways that cannot be undone. ``ctx_b`` is unknown there, so the first letter of
the context's last sentence fragment is upper-cased instead, an approximation of
``ctx_b.capitalize()`` (which also lower-cases the rest of ``ctx_b``, and ``ctx_b`` need not start
that fragment). And the file was already cleaned by its maker's own rules, close to
``preprocess`` but not identical (see the data's SOURCE.md); ``preprocess`` runs again on top,
removing the ``[...]`` markers those rules left.

Shots (default 10) come from train when it is available (a local ``hellaswag_train.jsonl``, or the
hub when the evaluation set also comes from the hub). Otherwise they come from validation and
never include the item scored: k+1 items are drawn once and each sample takes the first k that are
not itself. ``data["shot_split"]`` records which. Headline ``acc_norm``, as in lm-eval.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..data.hellaswag import HellaSwagItem, hellaswag_file, load_hellaswag
from ..errors import ConfigError
from ..ir.request import Request
from ..ir.response import Response
from ..scoring import continuation_score, pick_acc, pick_acc_norm
from ._shared import (
    check_options,
    draw_shots,
    join_shots,
    means,
    num_shots,
    score_channels,
    scoring_request,
)
from .base import COMPLETION_MODEL, ModelFacts, Requirement, Sample, SampleResult, TaskConfig

QUERY = "{activity_label}: {ctx}"
CONTINUATION = " {ending}"
DEFAULT_SHOTS = 10
EVAL_SPLIT = "validation"
_SENTENCE_END = re.compile(r"[.!?] ")


def preprocess(text: str) -> str:
    """lm-eval's clean-up: strip, `` [title]`` to ``. ``, drop ``[...]``, squash double spaces."""
    text = text.strip().replace(" [title]", ". ")
    text = re.sub(r"\[.*?\]", "", text)
    return text.replace("  ", " ")


def _capitalize_last_fragment(ctx: str) -> str:
    starts = [m.end() for m in _SENTENCE_END.finditer(ctx)]
    at = starts[-1] if starts else 0
    return ctx[:at] + ctx[at : at + 1].upper() + ctx[at + 1 :]


def query(item: HellaSwagItem) -> str:
    """The cleaned query of one item (no trailing space; endings start with one)."""
    if item.derived:
        ctx = _capitalize_last_fragment(item.ctx_a)
    else:
        ctx = item.ctx_a + " " + item.ctx_b.capitalize()
    return preprocess(QUERY.format(activity_label=item.activity_label, ctx=ctx))


def clean_endings(item: HellaSwagItem) -> list[str]:
    """The preprocessed endings; one that cleans to nothing is refused (acc_norm divides by its
    length)."""
    cleaned = [preprocess(e) for e in item.endings]
    for i, ending in enumerate(cleaned):
        if not ending:
            raise ConfigError(
                f"{item.where}: ending {i} ({item.endings[i]!r}) is empty after lm-eval's "
                "preprocess, so acc_norm cannot divide by its length; fix or remove the item",
                path=item.where,
            )
    return cleaned


def _shot(item: HellaSwagItem) -> str:
    return query(item) + CONTINUATION.format(ending=preprocess(item.endings[item.label]))


class HellaSwagPPL:
    name = "hellaswag_kshot_ppl"
    headline = "acc_norm"
    defaults = MappingProxyType({"num_fewshot": DEFAULT_SHOTS})
    protocol = (
        "loglikelihood of ' {ending}' after k seeded shots (train, else validation minus the "
        "item) + lm-eval's preprocessed query via input scoring; acc = argmax sum, "
        "acc_norm = argmax sum/len(ending), characters of the preprocessed ending without its "
        "leading space (lm-eval); ties -> lowest index"
    )
    requirements = (
        Requirement("text_prompt", "each ending is scored as a raw-text prompt"),
        Requirement("input_scoring", "the ending's log-likelihood comes from input logprobs"),
        Requirement("sampling", "temperature=0 and max_tokens=1 are set explicitly"),
    )

    @staticmethod
    def _train_shots(data_dir: Path) -> bool:
        local_eval = hellaswag_file(data_dir, EVAL_SPLIT)
        return hellaswag_file(data_dir, "train") is not None or local_eval is None

    def data_files(self, data_dir: Path) -> list[Path]:
        files = [hellaswag_file(data_dir, s) for s in (EVAL_SPLIT, "train")]
        return [p for p in files if p is not None]

    def load(self, data_dir: Path, config: TaskConfig) -> list[Sample]:
        check_options(self.name, config)
        k = num_shots(self.name, config, DEFAULT_SHOTS)
        items = load_hellaswag(data_dir, EVAL_SPLIT)
        shot_split = "train" if k and self._train_shots(data_dir) else EVAL_SPLIT
        if shot_split == "train":
            picked = draw_shots(self.name, load_hellaswag(data_dir, "train"), k, config.seed)
        else:  # one spare, to stand in for a shot that is the item scored
            picked = draw_shots(self.name, items, k + 1 if k else 0, config.seed)
        common = picked[:k]
        common_prefix = join_shots(_shot(s) for s in common)
        common_ids = {s.index for s in common} if shot_split == EVAL_SPLIT else set()
        samples = []
        for item in items:
            shots = common
            if item.index in common_ids:
                shots = [s for s in picked if s.index != item.index][:k]
            samples.append(
                Sample(
                    id=f"{EVAL_SPLIT}/{item.index}",
                    data={
                        "fewshot": common_prefix
                        if shots is common
                        else join_shots(map(_shot, shots)),
                        "query": query(item),
                        "endings": clean_endings(item),
                        "shot_ids": [f"{shot_split}/{s.index}" for s in shots],
                        "shot_split": shot_split,
                    },
                    gold=item.label,
                )
            )
        return samples

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        context = sample.data["fewshot"] + sample.data["query"]
        return {
            f"choice:{i}": scoring_request(context + CONTINUATION.format(ending=ending))
            for i, ending in enumerate(sample.data["endings"])
        }

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        context = len(sample.data["fewshot"]) + len(sample.data["query"])
        scores = [
            continuation_score(responses[f"choice:{i}"], context, CONTINUATION.format(ending=e))
            for i, e in enumerate(sample.data["endings"])
        ]
        endings = sample.data["endings"]
        picks = {"acc": pick_acc(scores), "acc_norm": pick_acc_norm(scores, endings)}
        return SampleResult(
            prediction=picks[self.headline],
            gold=sample.gold,
            metrics={name: float(pick == sample.gold) for name, pick in picks.items()},
            channels={"choices": score_channels(scores, endings)},
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        return means(results)


TASK = HellaSwagPPL()
