"""Choice letter (CLP): the next-token log-probability of each answer letter after the prompt.

One request reads the first sampled position: its top-k list (option ``top_k``; a letter missing
from it fails the sample, since an argmax over the letters that made the cut would be an easier
task), or, on a dialect that scores chosen token ids (``candidate_scoring``), each letter's id
whatever its rank, the ids resolved through the server's tokenizer before the run. Each letter
counts under its spellings ``"A"`` and ``" A"`` (the most likely one). The prediction is the
argmax, ties to the earliest letter. On a chat model the prompt is one user message and the
letter is read at the reply's first token. The letters are the spec's choices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...ir.request import Request, Sampling, Scoring
from ...ir.response import Response
from ...scoring import argmax, candidate_letter_logprobs, letter_logprobs
from .._shared import int_option, prompt_input
from ..base import ModelFacts, Requirement, Sample, SampleResult, TaskConfig
from .base import Base, Prepared

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["ChoiceLetter"]


@dataclass(frozen=True, kw_only=True)
class ChoiceLetter(Base):
    letters: tuple[str, ...] = ("A", "B", "C", "D")
    top_k: int = 100
    protocol_text: str = ""
    """The protocol line (the family's own words, kept verbatim by the task that has it)."""
    kind: str = "choice letter"
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", {"top_k": self.top_k})

    @property
    def spellings(self) -> tuple[str, ...]:
        return tuple(f"{space}{x}" for x in self.letters for space in ("", " "))

    def check_options(self, spec: Spec, config: TaskConfig) -> None:
        self._top_k(spec, config)

    def _top_k(self, spec: Spec, config: TaskConfig) -> int:
        return int_option(spec.name, config, "top_k", self.top_k, len(self.letters))

    def requirements(self, spec: Spec, model: ModelFacts) -> tuple[Requirement, ...]:
        prompt = (
            Requirement("chat", "the k-shot prompt is one user message")
            if model.input_kind == "chat"
            else Requirement("text_prompt", "the k-shot prompt is raw text")
        )
        letters = (
            Requirement("candidate_scoring", "the four letters are scored by token id")
            if "candidate_scoring" in model.capabilities
            else Requirement(
                "sampled_top_k", "all four letters must appear in the top-k", self.top_k
            )
        )
        return (
            prompt,
            Requirement("sampling", "temperature=0 and max_tokens=1 are set explicitly"),
            Requirement("sampled_logprobs", "the letters' logprobs come from the sampled position"),
            letters,
        )

    def protocol(self, spec: Spec) -> str:
        return self.protocol_text or (
            f"{self.kind} ({spec.reference}): next-token logprob of the letters "
            f"{'/'.join(self.letters)} (max over the spellings 'X' and ' X') from the top-k list "
            "(or by token id), prediction = argmax, ties -> earliest letter; a letter missing "
            "from the top-k fails the sample"
        )

    def protocol_for(self, spec: Spec, model: ModelFacts, protocol: str) -> str:
        how = (
            "the letters' token ids (' A' and 'A' spellings, max) scored directly at the first "
            "sampled position (no top-k)"
            if self._by_id(model)
            else protocol
        )
        if model.input_kind == "chat":
            return f"chat: the k-shot prompt as one user message; {how}"
        return how

    def token_texts(self, spec: Spec, config: TaskConfig) -> tuple[str, ...]:
        return self.spellings

    def _by_id(self, model: ModelFacts) -> bool:
        """Score the letters by token id: the dialect can, and every letter has a one-token id."""
        if "candidate_scoring" not in model.capabilities:
            return False
        return all(any(f"{sp}{x}" in model.token_ids for sp in ("", " ")) for x in self.letters)

    def prepare(self, spec: Spec, row: Mapping[str, Any], config: TaskConfig) -> Prepared:
        p = spec.prompt
        target = p.target_of(row)
        gold = p.choices_of(row)[target] if isinstance(target, int) else target
        return Prepared(data={"query": p.text_of(row)}, gold=gold)

    def requests(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> Mapping[str, Request]:
        if self._by_id(model):
            ids = tuple(model.token_ids[t] for t in self.spellings if t in model.token_ids)
            scoring = Scoring(sampled_logprobs=True, candidate_token_ids=ids)
        else:
            scoring = Scoring(sampled_logprobs=True, sampled_top_k=self._top_k(spec, config))
        text = sample.data["fewshot"] + sample.data["query"]
        prompt = prompt_input(sample, text, model.input_kind == "chat")
        return {
            "letter": Request(
                input=prompt, sampling=Sampling(temperature=0.0, max_tokens=1), scoring=scoring
            )
        }

    def score(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult:
        if self._by_id(model):
            logprobs = candidate_letter_logprobs(responses["letter"], self.letters, model.token_ids)
        else:
            logprobs = letter_logprobs(responses["letter"], self.letters)
        prediction = self.letters[argmax([logprobs[x] for x in self.letters])]
        return SampleResult(
            prediction=prediction,
            gold=sample.gold,
            metrics={"acc": float(prediction == sample.gold)},
            channels={"letter_logprobs": logprobs},
        )
