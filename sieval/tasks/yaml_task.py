"""A task YAML in lm-evaluation-harness 0.4.13's format, resolved into a ``Spec``.

Every key of lm-eval's ``TaskConfig`` is either read (``READ``), accepted as changing no score
(``NO_OP``, said in ``sieval tasks NAME``), or refused (``REFUSED``, with what to do instead);
any other key is an error naming it, its file and line, and the keys sieval reads. Every other
problem (a bad value, a template that does not parse, a ``!function`` that cannot be imported,
a data file that is missing) is the same kind of error, raised when the task is resolved: before
any data is read for a run and before anything is sent.

What each key becomes:

- ``dataset_path`` ``json``/``jsonl``/``csv``/``tsv``/``parquet``/``arrow``/``text`` with
  ``dataset_kwargs.data_files`` (a path, a list, or a mapping of split to path(s); relative to
  the folder of the YAML that wrote them; globs allowed): the task's own files
  (``data/file_data.py``). A hub id (``allenai/ai2_arc`` with ``dataset_name: ARC-Easy``) is the
  stored dataset of that id when sieval stores it (read from the data directory), else the hub
  through the optional ``datasets`` package;
- ``test_split`` (else ``validation_split``) is scored; shots come from
  ``fewshot_config.split``/``fewshot_split``, else the training, validation or test split, as
  lm-eval picks them, or from ``fewshot_config.samples``; ``fewshot_config.sampler``
  ``default``/``first_n`` (the row itself excluded when shots and rows share a split);
- ``doc_to_text``/``doc_to_target``/``doc_to_choice``, ``description``, the delimiters:
  ``prompt.py`` (lm-eval's rules); ``process_docs``: a ``!function`` over the split (a
  ``datasets.Dataset``, as lm-eval passes it);
- ``output_type``: ``multiple_choice`` (``families/choice.py``: ``acc``, ``acc_norm``,
  ``acc_mutual_info``), ``loglikelihood`` (``families/target.py``), ``loglikelihood_rolling``
  (``families/rolling.py``), ``generate_until`` (``families/generated.py`` with
  ``filter_list`` and the scorers of ``metric_list``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..data.file_data import FORMATS, FileData, HubData
from ..errors import ConfigError, did_you_mean
from .families import Generated, MultipleChoice, RollingLogLikelihood, TargetLogLikelihood
from .families.checked import MAX_REPEATS
from .filters import NONE, Pipeline, pipeline
from .prompt import Prompt
from .scorers import Scorer, scorer
from .shots import FIRST_N, RANDOM, RANDOM_EXCLUDING_ITEM, Sampler
from .shots import _FirstN as FirstN
from .spec import Data, Spec
from .yaml_file import Function, Located, inside

__all__ = ["NO_OP", "READ", "REFUSED", "definition", "resolve"]

READ = (
    "task",
    "task_alias",
    "tag",
    "group",
    "dataset_path",
    "dataset_name",
    "dataset_kwargs",
    "training_split",
    "validation_split",
    "test_split",
    "fewshot_split",
    "process_docs",
    "doc_to_text",
    "doc_to_target",
    "doc_to_choice",
    "description",
    "target_delimiter",
    "fewshot_delimiter",
    "fewshot_config",
    "num_fewshot",
    "output_type",
    "generation_kwargs",
    "filter_list",
    "metric_list",
    "repeats",
    "metadata",
    "process_results",
    "gen_prefix",
)
"""The keys sieval reads."""
NO_OP = {
    "should_decontaminate": "decontamination changes no score (lm-eval uses it for reports)",
    "doc_to_decontamination_query": "decontamination changes no score",
    "unsafe_code": "sieval always runs code in its sandbox",
    "group_alias": "a display name",
}
"""Keys accepted as changing no score, with why."""
REFUSED = {
    "custom_dataset": "a Python dataset factory; write the rows to a JSONL file instead",
    "class": "a Python task class; write a Python task file (SPEC or a task class) instead",
    "recipe": "a unitxt recipe; unitxt is not supported",
    "use_prompt": "a promptsource prompt; write doc_to_text/doc_to_target instead",
    "doc_to_image": "multimodal tasks are not supported yet",
    "doc_to_audio": "multimodal tasks are not supported yet",
    "aggregate_metric_list": "a group's key; put it in the group's own file",
}
"""Keys of lm-eval's format sieval refuses, with what to do instead."""

_OUTPUT_TYPES = ("multiple_choice", "loglikelihood", "loglikelihood_rolling", "generate_until")
_DEFAULT_METRICS = {
    "loglikelihood": ["perplexity", "acc"],
    "loglikelihood_rolling": ["word_perplexity", "byte_perplexity", "bits_per_byte"],
    "multiple_choice": ["acc", "acc_norm"],
    "generate_until": ["exact_match"],
}
_FAMILY_METRICS = {
    "multiple_choice": ("acc", "acc_norm", "acc_mutual_info"),
    "loglikelihood": ("perplexity", "acc"),
    "loglikelihood_rolling": ("word_perplexity", "byte_perplexity", "bits_per_byte"),
}
_FAMILY_METRICS["multiple_choice"] += ("acc_bytes", "f1", "mcc")
_NATIVE_AGGREGATION = {"mean", "perplexity", "weighted_perplexity", "bits_per_byte"}
"""The aggregations the families compute themselves (the log-likelihood figures, the mean)."""
_ITEM_METRICS = {"f1": "f1", "mcc": "matthews_corrcoef"}
"""Multiple-choice metrics whose default aggregation is corpus-level (lm-eval's)."""
_FEWSHOT_KEYS = {
    "sampler",
    "split",
    "samples",
    "process_docs",
    "doc_to_text",
    "doc_to_target",
    "doc_to_choice",
    "fewshot_delimiter",
    "target_delimiter",
    "gen_prefix",
}
_GENERATION_KEYS = {"until", "max_gen_toks", "do_sample", "temperature", "top_p", "top_k", "seed"}
_DATASET_KWARGS = {
    "data_files",
    "field",
    "trust_remote_code",
    "column_names",
    "revision",
    "verification_mode",
    "streaming",
}


def _fail(located: Located, key: str, message: str, received: Any = None) -> ConfigError:
    at = located.where(key)
    return ConfigError(f"{at}: {key}: {message}", path=at, received=received)


def _known_mapping(
    located: Located, key: str, value: Any, known: Collection[str], verb: str = "reads"
) -> Mapping[str, Any]:
    """``value`` (the file's ``key``) as a mapping whose every key sieval knows: else the error
    naming the key and what sieval ``verb`` there."""
    if not isinstance(value, Mapping):
        raise _fail(located, key, f"must be a mapping, got {value!r}")
    for name in value:
        if name not in known:
            raise _fail(
                located,
                f"{key}.{name}",
                f"not supported; sieval {verb} {', '.join(sorted(known))}",
            )
    return value


def check_keys(located: Located) -> None:
    """Every key known; the first unknown or refused one is the error."""
    for key in located.values:
        if key in READ or key in NO_OP:
            continue
        if key in REFUSED:
            raise _fail(located, key, f"not supported: {REFUSED[key]}")
        raise _fail(
            located,
            key,
            f"unknown key.{did_you_mean(key, [*READ, *NO_OP])} sieval reads lm-eval's task keys: "
            f"{', '.join(READ)} (and ignores {', '.join(NO_OP)}); see docs/task-files.md",
            key,
        )


def _function(located: Located, key: str, value: Any) -> Any:
    return value.load() if isinstance(value, Function) else value


def _field(located: Located, key: str, value: Any) -> Any:
    """A ``doc_to_*`` value as the prompt takes it, its template checked now."""
    value = _function(located, key, value)
    if value is None or callable(value) or isinstance(value, int | list | dict):
        return value
    if not isinstance(value, str):
        raise _fail(
            located, key, f"must be a field name, a template, a list or a !function, got {value!r}"
        )
    from .prompt import _ENV

    try:
        _ENV.parse(value)
    except Exception as exc:  # jinja2.TemplateSyntaxError and kin
        raise _fail(located, key, f"the template does not parse ({exc}); fix it", value) from exc
    return value


def _where_file(located: Located, key: str) -> Path:
    at = located.where(key)
    file = at.rsplit(":", 1)[0] if re.search(r":\d+$", at) else at
    return Path(file)


def _data_files(located: Located, root: Path | None) -> dict[str, tuple[Path, ...]]:
    kwargs = located.values.get("dataset_kwargs") or {}
    files = kwargs.get("data_files")
    if files is None:
        raise _fail(
            located,
            "dataset_path",
            f"{located.values['dataset_path']!r} reads local files: set dataset_kwargs.data_files "
            "(a path, or a mapping of split to path, relative to this YAML's folder)",
        )
    folder = _where_file(located, "dataset_kwargs").parent
    by_split = files if isinstance(files, Mapping) else {"train": files}
    out: dict[str, tuple[Path, ...]] = {}
    for split, given in by_split.items():
        key = (
            f"dataset_kwargs.data_files.{split}"
            if isinstance(files, Mapping)
            else ("dataset_kwargs.data_files")
        )
        names = [given] if isinstance(given, str) else given
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _fail(located, key, f"must be a path or a list of paths, got {given!r}")
        paths: list[Path] = []
        for name in names:
            target = Path(name).expanduser()
            if not target.is_absolute():
                target = inside(folder / target, root, "data file", f"{located.where(key)}: {key}")
            if glob.has_magic(str(target)):
                matched = sorted(Path(p) for p in glob.glob(str(target)))
                if not matched:
                    raise _fail(located, key, f"{name!r} matches no file (in {folder})")
                paths += matched
            else:
                if not target.is_file():
                    raise _fail(
                        located,
                        key,
                        f"{name!r}: no such file ({target}); fix the path (relative to {folder})",
                    )
                paths.append(target)
        out[str(split)] = tuple(paths)
    return out


def _source(located: Located, root: Path | None) -> Any:
    v = located.values
    path = v.get("dataset_path")
    if not isinstance(path, str) or not path:
        raise _fail(
            located,
            "dataset_path",
            "required: json, csv, parquet, arrow, text (with "
            "dataset_kwargs.data_files) or a hub dataset id",
        )
    kwargs = _known_mapping(
        located, "dataset_kwargs", v.get("dataset_kwargs") or {}, _DATASET_KWARGS
    )
    if path in FORMATS:
        columns = kwargs.get("column_names")
        if columns is not None and (
            not isinstance(columns, list) or not all(isinstance(c, str) for c in columns)
        ):
            raise _fail(located, "dataset_kwargs.column_names", "must be a list of names")
        return FileData(
            path,
            _data_files(located, root),
            kwargs.get("field"),
            column_names=tuple(columns) if columns is not None else None,
        )
    if "data_files" in kwargs:
        raise _fail(
            located,
            "dataset_path",
            f"{path!r} with data_files: name the files' format ({', '.join(FORMATS)})",
        )
    from ..data.registry import SOURCES

    name = v.get("dataset_name")
    for folder, stored in SOURCES.items():
        if stored.hub == path and stored.hub_name == name:
            return folder
    splits = tuple(
        s
        for s in (v.get("training_split"), v.get("validation_split"), v.get("test_split"))
        if isinstance(s, str)
    )
    return HubData(path, name, splits, kwargs)


def _sampler(located: Located, name: Any, exclude: bool) -> Sampler:
    if name in (None, "default"):
        return RANDOM_EXCLUDING_ITEM if exclude else RANDOM
    if name == "first_n":
        return FirstN(exclude_item=True) if exclude else FIRST_N
    raise _fail(
        located,
        "fewshot_config.sampler",
        f"unknown sampler {name!r}; sieval draws with default or first_n",
    )


PROCESS_SEEDS = (0, 1234)
"""Python's and numpy's global random seeds while a ``process_docs`` runs: lm-eval's
``simple_evaluate`` seeds them so (``random_seed=0``, ``numpy_random_seed=1234``) before it
builds a task, and a ``process_docs`` that shuffles (GPQA's choices) draws from them; seeded,
a task file's rows are the same in every run and on resume."""


@contextlib.contextmanager
def _seeded() -> Iterator[None]:
    """The global random generators seeded (``PROCESS_SEEDS``), and restored after."""
    import random

    import numpy

    state, numpy_state = random.getstate(), numpy.random.get_state()
    random.seed(PROCESS_SEEDS[0])
    numpy.random.seed(PROCESS_SEEDS[1])
    try:
        yield
    finally:
        random.setstate(state)
        numpy.random.set_state(numpy_state)


def _process(located: Located, key: str, value: Any) -> Any:
    fn = _function(located, key, value)
    if fn is None:
        return None
    if not callable(fn):
        raise _fail(located, key, f"must be a !function, got {fn!r}")

    def whole(rows: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
        try:
            import datasets
        except ImportError:
            raise _fail(
                located,
                key,
                "process_docs receives a datasets.Dataset: install the "
                "optional 'datasets' package (pip install 'sieval[hub]')",
            ) from None
        head = rows[0][0].rsplit(":", 1)[0].split("#", 1)[0] if rows else "rows"
        with _seeded():
            try:
                out = fn(datasets.Dataset.from_list([r for _, r in rows]))
                return [(f"{head} (process_docs) doc {i}", dict(r)) for i, r in enumerate(out)]
            except ConfigError:
                raise
            except Exception as exc:
                raise _fail(located, key, f"{value} raised {type(exc).__name__}: {exc}") from exc

    return whole


def _aggregation(located: Located, key: str, name: Any, given: Any) -> Any:
    """The aggregation of a metric when it is not a mean the family computes: a callable over
    the samples' items; None for a mean (or the log-likelihood figures)."""
    if isinstance(given, Function):
        return given.load()
    if given is None:
        if name in _ITEM_METRICS:
            given = _ITEM_METRICS[name]
        elif (
            isinstance(name, str)
            and name not in sum(_FAMILY_METRICS.values(), ())
            and name
            not in ("exact_match", "number", "math_equiv", "choice_letter", "code", "judge")
        ):
            default = _lm_eval_default_aggregation(name)
            given = default if default not in (None, "mean") else "mean"
        else:
            given = "mean"
    if given in _NATIVE_AGGREGATION:
        return None
    if not isinstance(given, str):
        raise _fail(located, f"{key}.aggregation", f"must be a name or a !function, got {given!r}")
    try:
        from lm_eval.api.registry import get_aggregation
    except ImportError:
        raise _fail(
            located,
            f"{key}.aggregation",
            f"{given!r} is not one of sieval's ({', '.join(sorted(_NATIVE_AGGREGATION))}); "
            "lm-eval's other aggregations need lm-eval (pip install 'sieval[lm-eval]')",
        ) from None
    try:
        found = get_aggregation(given)
    except Exception:
        found = None
    if found is None:
        raise _fail(located, f"{key}.aggregation", f"unknown aggregation {given!r}")
    return found


def _lm_eval_default_aggregation(name: str) -> str | None:
    try:
        from lm_eval.api.registry import AGGREGATION_REGISTRY, get_metric_aggregation
    except ImportError:
        return None
    try:
        fn = get_metric_aggregation(name)
    except Exception:
        return None
    return next((k for k, v in AGGREGATION_REGISTRY.items() if v is fn), None)


def _metrics(located: Located, output: str) -> list[tuple[Any, dict[str, Any], str, Any]]:
    given = located.values.get("metric_list")
    if given is None:
        return [(m, {}, "metric_list", None) for m in _DEFAULT_METRICS[output]]
    if not isinstance(given, list) or not given:
        raise _fail(located, "metric_list", f"must be a list of {{metric: NAME}}, got {given!r}")
    out = []
    for i, entry in enumerate(given):
        key = f"metric_list[{i}]"
        if not isinstance(entry, Mapping) or "metric" not in entry:
            raise _fail(located, key, f"each entry needs 'metric: NAME', got {entry!r}")
        name = _function(located, f"{key}.metric", entry["metric"])
        aggregation = _aggregation(located, key, name, entry.get("aggregation"))
        options = {
            k: v
            for k, v in entry.items()
            if k not in ("metric", "aggregation", "higher_is_better", "hf_evaluate")
        }
        out.append((name, options, key, aggregation))
    return out


def _family(located: Located, output: str) -> tuple[Any, str]:
    """The family and the headline metric."""
    metrics = _metrics(located, output)
    v = located.values
    results = _function(located, "process_results", v.get("process_results"))
    if output in _FAMILY_METRICS:
        if results is not None and output not in ("multiple_choice", "loglikelihood_rolling"):
            raise _fail(
                located,
                "process_results",
                f"is supported for multiple_choice, loglikelihood_rolling and generate_until (this "
                f"task is {output})",
            )
        names = []
        custom: dict[str, Any] = {}
        for name, _options, key, aggregation in metrics:  # lm-eval passes no option to these
            if results is None and name not in _FAMILY_METRICS[output]:
                raise _fail(
                    located,
                    f"{key}.metric",
                    f"{name!r} is not supported for {output}; "
                    f"sieval computes {', '.join(_FAMILY_METRICS[output])}",
                )
            if aggregation is not None:
                if output != "multiple_choice":
                    raise _fail(
                        located,
                        f"{key}.aggregation",
                        f"{output} figures are lm-eval's "
                        "own (perplexity, bits per byte); drop the aggregation",
                    )
                custom[name] = aggregation
            names.append(name)
        if output == "multiple_choice":
            kept = tuple(n for n in names if n not in ("acc_mutual_info", "f1", "mcc"))
            known = tuple(n for n in kept if n in _FAMILY_METRICS[output])
            family: Any = MultipleChoice(
                metrics=known or ("acc",),
                variable_context=None,
                mutual_info_default="acc_mutual_info" in names,
                custom=custom,
                results=results,
            )
        elif output == "loglikelihood":
            family = TargetLogLikelihood()
        else:
            family = RollingLogLikelihood(count=_count(located, results))
        return family, names[0]
    generation = _generation(located)
    pipes = _pipelines(located)
    scorers: list[Scorer] = []
    if results is None:
        scorers = [
            scorer(name, options, f"{located.where(key)}: {key}")
            for name, options, key, _ in metrics
        ]
    keeps = any(p.needs_doc for p in pipes) or any(s.needs_doc for s in scorers)
    custom = {
        (getattr(name, "__name__", None) or str(name)): aggregation
        for name, _, _, aggregation in metrics
        if aggregation is not None
    }
    family = Generated(
        scorers=tuple(scorers),
        pipelines=tuple(pipes),
        generation=generation,
        results=results,
        keeps_doc=keeps,
        custom=custom,
    )
    if results is not None:
        first = str(getattr(metrics[0][0], "__name__", metrics[0][0]))
    else:
        first = scorers[0].name
    single = len(pipes) == 1 and pipes[0].name == "none"
    return family, first if single else f"{first},{pipes[0].name}"


def _count(located: Located, results: Any = None) -> Callable[[Mapping[str, Any]], tuple[int, int]]:
    """The (words, bytes) a rolling task divides by: lm-eval's counts of ``doc_to_target``, or
    what the task's own ``process_results`` pairs with the log-likelihood (WikiText counts the
    page before detokenisation): ``word_perplexity`` and ``byte_perplexity`` are
    ``(loglikelihood, count)``."""
    target = located.values.get("doc_to_target")

    def count(row: Mapping[str, Any]) -> tuple[int, int]:
        if results is not None:
            found = results(row, [0.0])
            try:
                return int(found["word_perplexity"][1]), int(found["byte_perplexity"][1])
            except (KeyError, TypeError, IndexError) as exc:
                raise _fail(
                    located,
                    "process_results",
                    "a rolling task's process_results must "
                    "give word_perplexity and byte_perplexity as (loglikelihood, count)",
                ) from exc
        text = str(Prompt.read(target, row))
        return len(re.split(r"\s+", text)), len(text.encode("utf-8"))

    return count


def _generation(located: Located) -> dict[str, Any]:
    v = located.values
    given = v.get("generation_kwargs")
    delimiter = v.get("fewshot_delimiter", "\n\n")
    if given is None:
        return {"until": [delimiter], "do_sample": False, "temperature": 0.0}  # lm-eval's default
    given = _known_mapping(located, "generation_kwargs", given, _GENERATION_KEYS, "sends")
    out = dict(given)
    if "temperature" in out:
        out["temperature"] = float(out["temperature"])
    if "until" not in out:
        out["until"] = [delimiter]
    until = out["until"]
    if isinstance(until, str):
        out["until"] = [until]
    elif not isinstance(until, list) or not all(isinstance(u, str) for u in until):
        raise _fail(
            located,
            "generation_kwargs.until",
            f"must be a string or a list of strings, got {until!r}",
        )
    if "max_gen_toks" in out and (
        not isinstance(out["max_gen_toks"], int) or out["max_gen_toks"] < 1
    ):
        raise _fail(located, "generation_kwargs.max_gen_toks", "must be an integer >= 1")
    return out


def _pipelines(located: Located) -> list[Pipeline]:
    given = located.values.get("filter_list")
    if given is None:
        return [NONE]
    if not isinstance(given, list) or not given:
        raise _fail(located, "filter_list", f"must be a list of {{name, filter}}, got {given!r}")
    out = []
    for i, entry in enumerate(given):
        key = f"filter_list[{i}]"
        if not isinstance(entry, Mapping) or "name" not in entry or "filter" not in entry:
            raise _fail(located, key, f"each entry needs 'name:' and 'filter:', got {entry!r}")
        functions = [
            {k: _function(located, key, v) for k, v in f.items()} if isinstance(f, Mapping) else f
            for f in entry["filter"] or []
        ]
        out.append(pipeline(str(entry["name"]), functions, _place(located, key)))
    return out


def _place(located: Located, key: str) -> Callable[[int], str]:
    """How a filter pipeline's errors name its function ``j``: ``FILE:LINE: KEY.filter[j]``."""

    def where(j: int) -> str:
        return f"{located.where(f'{key}.filter[{j}]')}: {key}.filter[{j}]"

    return where


def _fewshot(located: Located) -> dict[str, Any]:
    given = located.values.get("fewshot_config") or {}
    return dict(_known_mapping(located, "fewshot_config", given, _FEWSHOT_KEYS))


def _prompts(located: Located, fewshot: Mapping[str, Any]) -> tuple[Prompt, Prompt | None]:
    v = located.values
    text = _field(located, "doc_to_text", v.get("doc_to_text"))
    target = _field(located, "doc_to_target", v.get("doc_to_target"))
    choices = _field(located, "doc_to_choice", v.get("doc_to_choice"))
    description = v.get("description") or ""
    if not isinstance(description, str):
        raise _fail(located, "description", f"must be a string (a template), got {description!r}")
    _field(located, "description", description)  # the template parses
    for key in ("target_delimiter", "fewshot_delimiter"):
        if key in v and not isinstance(v[key], str):
            raise _fail(located, key, f"must be a string, got {v[key]!r}")
    gen_prefix = _field(located, "gen_prefix", v.get("gen_prefix"))
    prompt = Prompt(
        text="" if text is None else text,
        target="" if target is None else target,
        choices=choices,
        description=description,
        target_delimiter=v.get("target_delimiter", " "),
        fewshot_delimiter=v.get("fewshot_delimiter", "\n\n"),
        gen_prefix=gen_prefix,
    )
    overrides = {
        k: fewshot[k]
        for k in (
            "doc_to_text",
            "doc_to_target",
            "doc_to_choice",
            "target_delimiter",
            "fewshot_delimiter",
            "gen_prefix",
        )
        if k in fewshot
    }
    if not overrides:
        return prompt, None
    shot = Prompt(
        text=_field(
            located, "fewshot_config.doc_to_text", overrides.get("doc_to_text", prompt.text)
        ),
        target=_field(
            located, "fewshot_config.doc_to_target", overrides.get("doc_to_target", prompt.target)
        ),
        choices=_field(
            located, "fewshot_config.doc_to_choice", overrides.get("doc_to_choice", prompt.choices)
        ),
        target_delimiter=overrides.get("target_delimiter", prompt.target_delimiter),
        fewshot_delimiter=overrides.get("fewshot_delimiter", prompt.fewshot_delimiter),
        gen_prefix=_field(
            located, "fewshot_config.gen_prefix", overrides.get("gen_prefix", prompt.gen_prefix)
        ),
    )
    return prompt, shot


def _data(located: Located, root: Path | None, fewshot: Mapping[str, Any]) -> Data:
    v = located.values
    source = _source(located, root)
    test, validation, train = (
        v.get("test_split"),
        v.get("validation_split"),
        v.get("training_split"),
    )
    scored = test if test is not None else validation
    if not isinstance(scored, str):
        raise _fail(
            located,
            "test_split",
            "a task scores its test_split (else its validation_split): set one of them",
        )
    shot_split = fewshot.get("split", v.get("fewshot_split"))
    pool = shot_split
    if pool is None:
        pool = next((s for s in (train, validation, test) if s is not None), None)
    from .spec import source as reader

    splits = reader(source).splits
    if not isinstance(source, HubData) and scored not in splits:
        raise _fail(
            located,
            "test_split" if test is not None else "validation_split",
            f"{scored!r} is not a split of the data ({', '.join(splits)})",
        )
    samples = fewshot.get("samples")
    if isinstance(samples, Function):
        samples = samples.load()()
    if samples is not None and not (
        isinstance(samples, list) and all(isinstance(s, Mapping) for s in samples)
    ):
        raise _fail(located, "fewshot_config.samples", "must be a list of rows (mappings)")
    process = _process(located, "process_docs", v.get("process_docs"))
    if "process_docs" in fewshot and fewshot["process_docs"] != v.get("process_docs"):
        raise _fail(
            located,
            "fewshot_config.process_docs",
            "a process_docs of the shots' own is not supported yet",
        )
    exclude = shot_split == test
    return Data(
        source=source,
        split=scored,
        shots=pool if samples is None or shot_split is not None else None,
        sampler=_sampler(located, fewshot.get("sampler"), exclude),
        process_split=process,
        shot_rows=tuple(dict(s) for s in samples)
        if samples is not None and shot_split is None
        else None,
    )


def resolve(located: Located, *, root: Path | None = None) -> Spec:
    """The spec of the task YAML ``located`` (includes merged); a ``ConfigError`` naming the
    file, line and key of the first problem."""
    check_keys(located)
    v = located.values
    name = v.get("task")
    if not isinstance(name, str) or not name:
        raise _fail(located, "task", "every task file names its task (task: NAME)")
    output = v.get("output_type", "generate_until")
    if output not in _OUTPUT_TYPES:
        raise _fail(
            located, "output_type", f"{output!r} is not one of {', '.join(_OUTPUT_TYPES)}", output
        )
    repeats = v.get("repeats", 1)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or not 1 <= repeats <= MAX_REPEATS:
        raise _fail(
            located, "repeats", f"must be an integer in [1, {MAX_REPEATS}], got {repeats!r}"
        )
    if repeats != 1 and output != "generate_until":
        raise _fail(
            located,
            "repeats",
            f"{repeats}: repeats are for generate_until (a {output} request gives the same "
            "log-likelihood every time); drop it",
        )
    num_fewshot = v.get("num_fewshot") or 0
    if not isinstance(num_fewshot, int) or num_fewshot < 0:
        raise _fail(located, "num_fewshot", f"must be an integer >= 0, got {num_fewshot!r}")
    fewshot = _fewshot(located)
    prompt, shot_prompt = _prompts(located, fewshot)
    data = _data(located, root, fewshot)
    family, headline = _family(located, output)
    if repeats != 1:
        family = dataclasses.replace(family, repeat_calls=repeats)
    return Spec(
        name=name,
        about=f"task file {located.file}",
        reference=_reference(located),
        data=data,
        prompt=prompt,
        family=family,
        headline=headline,
        num_fewshot=num_fewshot,
        shot_prompt=shot_prompt,
    )


def _reference(located: Located) -> str:
    text = str(located.file)
    marker = "/lm_eval/tasks/"
    if marker in text:
        return f"lm-eval 0.4.13 tasks/{text.split(marker, 1)[1]}"
    version = (located.values.get("metadata") or {}).get("version")
    return f"{located.file.name}" + (f" (version {version})" if version is not None else "")


def definition(located: Located) -> dict[str, Any]:
    """The task's keys as plain data (a ``!function`` as its name): what the run identity holds
    of the file besides its hash, so a resume names the key that changed."""

    def plain(value: Any) -> Any:
        if isinstance(value, Function):
            return str(value)
        if isinstance(value, Mapping):
            return {str(k): plain(x) for k, x in value.items()}
        if isinstance(value, list | tuple):
            return [plain(x) for x in value]
        if isinstance(value, str | int | float | bool) or value is None:
            return value
        return repr(value)

    return {k: plain(x) for k, x in sorted(located.values.items())}


def functions_of(located: Located) -> Sequence[Path]:
    """The module files the task's ``!function`` values come from (their hashes enter the run
    identity)."""
    found: set[Path] = set()

    def walk(value: Any) -> None:
        if isinstance(value, Function):
            module = value.qualname.rpartition(".")[0]
            path = (value.folder / f"{module.replace('.', '/')}.py").resolve()
            if path.is_file():
                found.add(path)
        elif isinstance(value, Mapping):
            for x in value.values():
                walk(x)
        elif isinstance(value, list):
            for x in value:
                walk(x)

    walk(located.values)
    return sorted(found)
