"""BIG-Bench Hard (Suzgun et al. 2022): ``bbh/bbh/<subtask>.json``, the authors' release, one JSON
object a subtask (``{"canary", "examples": [{"input", "target"}, ...]}``); 27 subtasks, 6,511
examples. ``bbh/cot-prompts/<subtask>.txt`` holds each subtask's 3-shot chain-of-thought prompt.

The subtask is the ``subset`` (required); the one split is ``test``. lm-eval 0.4.13
``bbh_cot_fewshot_<subtask>`` reads ``SaylorTwift/bbh`` with the subtask as config, split test:
``input`` and ``target`` (and embeds the same 3-shot prompts in its YAMLs). Rows: ``input,
target``, both strings; ``FILE#row N`` is ``examples[N]``. ``cot_prompt`` returns a prompt file
without its first two lines (the canary and ``-----``), which is what lm-eval embeds; a task that
uses it adds ``cot_prompt_file`` to its data files.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ..errors import ConfigError
from .files import present
from .rows import as_fields, bad_row, from_hub, local_files, no_samples, read_text
from .source import Row, Source

__all__ = ["SOURCE", "SUBTASKS", "cot_prompt", "cot_prompt_file", "files", "rows"]

SUBTASKS = (
    "boolean_expressions", "causal_judgement", "date_understanding", "disambiguation_qa",
    "dyck_languages", "formal_fallacies", "geometric_shapes", "hyperbaton",
    "logical_deduction_five_objects", "logical_deduction_seven_objects",
    "logical_deduction_three_objects", "movie_recommendation", "multistep_arithmetic_two",
    "navigate", "object_counting", "penguins_in_a_table", "reasoning_about_colored_objects",
    "ruin_names", "salient_translation_error_detection", "snarks", "sports_understanding",
    "temporal_sequences", "tracking_shuffled_objects_five_objects",
    "tracking_shuffled_objects_seven_objects", "tracking_shuffled_objects_three_objects",
    "web_of_lies", "word_sorting",
)  # fmt: skip

SOURCE = Source(
    folder="bbh",
    splits=("test",),
    hub="SaylorTwift/bbh",
    hub_name=None,
    format='one JSON object {"canary", "examples"} a subtask: bbh/<subtask>.json',
    fields=("input", "target"),
    subsets=SUBTASKS,
    subset_required=True,
)
_PROMPT_RULE = "-----"


class _Fields(msgspec.Struct):
    input: str
    target: str


class _File(msgspec.Struct):
    canary: str
    examples: list[msgspec.Raw]


_file = msgspec.json.Decoder(_File)
_example = msgspec.json.Decoder(_Fields)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "bbh" / f"{subset}.json"]


def _read(path: Path) -> list[tuple[str, _Fields]]:
    try:
        stored = _file.decode(read_text(path))
    except msgspec.ValidationError as exc:
        raise bad_row(str(path), f'expected {{"canary", "examples": [...]}} ({exc})') from exc
    except msgspec.DecodeError as exc:
        raise bad_row(str(path), f"not valid JSON ({exc})") from exc
    if not stored.examples:
        raise no_samples(str(path))
    typed = []
    for i, raw in enumerate(stored.examples):
        where = f"{path}#row {i}"
        try:
            typed.append((where, _example.decode(raw)))
        except msgspec.ValidationError as exc:
            raise bad_row(where, f"unexpected row ({exc})") from exc
    return typed


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if local_files(paths):
        return as_fields(_read(paths[0]))
    return as_fields(from_hub(SOURCE, split, paths, _Fields, subset))


def cot_prompt_file(data_dir: Path, subset: str) -> Path:
    """``bbh/cot-prompts/<subtask>.txt``."""
    SOURCE.check(data_dir, "test", subset)
    return data_dir / SOURCE.folder / "cot-prompts" / f"{subset}.txt"


def cot_prompt(data_dir: Path, subset: str) -> str:
    """A subtask's 3-shot chain-of-thought prompt: the file after its canary and ``-----`` lines
    (the task description, then three ``Q: ... A: Let's think step by step. ...`` exemplars)."""
    path = cot_prompt_file(data_dir, subset)
    if not present(path):
        raise ConfigError(
            f"{path} is missing: point --data-dir (or $SIEVAL_DATA_DIR) at a directory holding "
            "bbh/cot-prompts/",
            path=str(path),
        )
    lines = read_text(path).split("\n", 2)
    if len(lines) < 3 or lines[1] != _PROMPT_RULE or not lines[2].strip():
        raise bad_row(
            f"{path}:2", f"expected the canary line, then {_PROMPT_RULE!r}, then the prompt"
        )
    return lines[2]
