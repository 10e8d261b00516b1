"""Rolling log-likelihood (WikiText): whole documents scored in windows the server's context holds.

As lm-evaluation-harness 0.4.13's ``loglikelihood_rolling`` output type on its API models: the
document (``doc_to_target``) is tokenised without special tokens through the server's tokenize
route before the run, cut into lm-eval's disjoint rolling windows (``scoring/rolling.py``) of at
most ``max_length - 2`` predicted tokens after the BOS or the tokens before them, and each window
is sent as a token prompt with ``max_tokens=1``. ``max_length`` is the server's maximum model
length (read by the pre-flight from ``/v1/models``), or the ``max_length`` option (lm-eval's
``max_length`` model argument). A document's log-likelihood is the sum over its windows.

Per sample: ``loglikelihood`` and the ``words`` and ``bytes`` the task counts (``count`` below:
WikiText counts them in the page before detokenisation, as lm-eval's ``process_results`` does).
The figures are lm-eval's: ``word_perplexity = exp(-sum(ll) / sum(words))``, ``byte_perplexity
= exp(-sum(ll) / sum(bytes))``, ``bits_per_byte = -sum(ll) / sum(bytes) / ln 2``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError
from ...ir.ranges import INT32_MAX, Range
from ...ir.request import CompletionInput, Request, Sampling, Scoring
from ...ir.response import Response
from ...scoring.rolling import rolling_windows, window_logprob
from ...scoring.uncertainty import Derived
from ..base import ModelFacts, Requirement, Sample, SampleResult, TaskConfig
from ..prompt import shown
from .base import Base, Prepared, option

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["RollingLogLikelihood"]

_TOKEN_COUNT = Range(0, INT32_MAX, integer=True)
"""A window length or a token id, as the wire carries them."""


@dataclass(frozen=True, kw_only=True)
class RollingLogLikelihood(Base):
    count: Callable[[Mapping[str, Any]], tuple[int, int]]
    """The (words, bytes) of a row that the per-word and per-byte figures divide by."""
    kind: str = "rolling log-likelihood"
    options: Mapping[str, Any] = field(
        default_factory=lambda: {"max_length": None, "prefix_token_id": None}
    )
    ranges = MappingProxyType(
        {"loglikelihood": (-math.inf, 0.0), "words": (0.0, math.inf), "bytes": (0.0, math.inf)}
    )
    # the figures are ratios of sums over the documents: each interval is the ratio's, mapped
    derived = MappingProxyType(
        {
            "word_perplexity": Derived(of="loglikelihood", per="words", scale=-1, exp=True),
            "byte_perplexity": Derived(of="loglikelihood", per="bytes", scale=-1, exp=True),
            "bits_per_byte": Derived(of="loglikelihood", per="bytes", scale=-1 / math.log(2)),
        }
    )

    def requirements(self, spec: Spec, model: ModelFacts) -> tuple[Requirement, ...]:
        return (
            Requirement("token_prompt", "each window is sent as the token ids it holds"),
            Requirement("input_scoring", "the window's log-likelihood comes from input logprobs"),
            Requirement("sampling", "temperature=0 and max_tokens=1 are set explicitly"),
        )

    def check_options(self, spec: Spec, config: TaskConfig) -> None:
        for name in self.options:
            value = config.options.get(name)
            if value is not None and not _TOKEN_COUNT.holds(value):
                raise ConfigError(
                    f"task {spec.name}: option {name} must be an integer in [0, {INT32_MAX}], "
                    f"got {value!r}",
                    path=f"tasks.{spec.name}.options.{name}",
                    received=value,
                )
        length = config.options.get("max_length")
        if length is not None and length < 3:
            raise ConfigError(
                f"task {spec.name}: option max_length must be >= 3, got {length}",
                path=f"tasks.{spec.name}.options.max_length",
                received=length,
            )

    def protocol(self, spec: Spec) -> str:
        return (
            f"{self.kind} ({spec.reference}): the whole document {shown(spec.prompt.target)}, "
            "tokenised by the server without special tokens, in lm-eval's disjoint rolling "
            "windows of max_length - 2 predicted tokens (max_length = the server's max model "
            "length, or the max_length option) after the BOS or the tokens before; each window a "
            "token prompt, max_tokens 1; word_perplexity, byte_perplexity, bits_per_byte over "
            "the words and bytes of the page before detokenisation (lm-eval)"
        )

    def protocol_for(self, spec: Spec, model: ModelFacts, protocol: str) -> str:
        seq = self._max_seq_len(spec, TaskConfig(name=spec.name), model, quiet=True)
        return protocol if seq is None else f"{protocol}; here at most {seq} predicted a window"

    def prepare(self, spec: Spec, row: Mapping[str, Any], config: TaskConfig) -> Prepared:
        words, n_bytes = self.count(row)
        text = spec.prompt.target_of(row)
        return Prepared(data={"text": text, "words": words, "bytes": n_bytes}, gold=None)

    def arguments(self, spec: Spec, sample: Sample, config: TaskConfig) -> dict[str, tuple[str]]:
        """The document scored, as lm-eval's instance's ``arguments`` (windows are cut from its
        tokens)."""
        return {"document": (sample.data["text"],)}

    def documents(self, spec: Spec, samples: Iterable[Sample], config: TaskConfig) -> Iterator[str]:
        return (s.data["text"] for s in samples)

    def _max_seq_len(
        self, spec: Spec, config: TaskConfig, model: ModelFacts, quiet: bool = False
    ) -> int | None:
        length = option(config, "max_length", self.options) or model.max_length
        if length is None:
            if quiet:
                return None
            raise ConfigError(
                f"task {spec.name}: the server does not report its maximum model length; set "
                f"options: {{max_length: N}} for {spec.name}",
                path=f"tasks.{spec.name}.options.max_length",
            )
        if int(length) < 3:  # the option is checked when given: this is the server's
            if quiet:
                return None
            raise ConfigError(
                f"task {spec.name}: the server reports a maximum model length of {length}, too "
                "short for a window of one predicted token after its context; set options: "
                f"{{max_length: N}} for {spec.name}",
                path=f"tasks.{spec.name}.options.max_length",
            )
        return int(length) - 2

    def _windows(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> list[tuple[list[int], list[int]]]:
        if model.documents is None:  # the plan's dry lowering: the request's shape, no tokens
            return [([0], [0])]
        prefix = option(config, "prefix_token_id", self.options)
        if prefix is None:
            prefix = model.prefix_token_id
        if prefix is None:
            raise ConfigError(
                f"task {spec.name}: the server's tokenizer adds no BOS to start each document's "
                f"first window with; set options: {{prefix_token_id: N}} for {spec.name}",
                path=f"tasks.{spec.name}.options.prefix_token_id",
            )
        tokens = model.documents[sample.data["text"]]
        seq = self._max_seq_len(spec, config, model)
        assert seq is not None
        return list(rolling_windows(tokens, prefix, seq))

    def requests(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> Mapping[str, Request]:
        return {
            f"window:{i}": Request(
                input=CompletionInput(token_ids=tuple(context + predicted)),
                sampling=Sampling(temperature=0.0, max_tokens=1),
                scoring=Scoring(input_logprobs=True),
            )
            for i, (context, predicted) in enumerate(self._windows(spec, sample, config, model))
        }

    def score(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult:
        windows = self._windows(spec, sample, config, model)
        sums = [
            window_logprob(responses[f"window:{i}"], context + predicted, len(predicted))
            for i, (context, predicted) in enumerate(windows)
        ]
        total = sum(sums)
        return SampleResult(
            prediction=None,
            gold=None,
            metrics={
                "loglikelihood": total,
                "words": float(sample.data["words"]),
                "bytes": float(sample.data["bytes"]),
            },
            channels={
                "windows": [
                    {"tokens": len(c) + len(p), "predicted": len(p), "logprob_sum": s}
                    for (c, p), s in zip(windows, sums, strict=True)
                ]
            },
        )

    def aggregate(
        self, spec: Spec, results: Iterable[tuple[Sample, SampleResult]]
    ) -> dict[str, Any]:
        lls: list[float] = []
        words: list[float] = []
        n_bytes: list[float] = []
        for _, result in results:
            lls.append(result.metrics["loglikelihood"])
            words.append(result.metrics["words"])
            n_bytes.append(result.metrics["bytes"])
        per_word, per_byte = sum(lls) / sum(words), sum(lls) / sum(n_bytes)
        return {
            "n": len(lls),
            "word_perplexity": math.exp(-per_word),
            "byte_perplexity": math.exp(-per_byte),
            "bits_per_byte": -per_byte / math.log(2),
            "loglikelihood": sum(lls) / len(lls),
        }
