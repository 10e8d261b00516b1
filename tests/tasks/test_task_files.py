"""Task files: lm-eval's YAML format resolved into specs, Python task files, the include path.

Every error names the file, the line and the key; hostile files fail before anything is read
for a run or sent (``test_hostile_task_files``).
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import msgspec
import pytest

from sieval.errors import ConfigError
from sieval.tasks.base import TaskConfig
from sieval.tasks.catalogue import load_python, registry, scan
from sieval.tasks.yaml_file import MAX_BYTES, read_yaml
from sieval.tasks.yaml_task import READ, resolve

EXAMPLES = Path(__file__).parents[2] / "examples" / "private"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def _rows(folder: Path, rows: list[dict[str, object]], name: str = "rows.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


MC = [{"q": f"question {i}", "choices": ["a", "bb", "ccc"], "gold": i % 3} for i in range(6)]


def test_the_examples_resolve_to_the_families_and_prompts_they_say() -> None:
    tasks = registry([EXAMPLES])
    mc, qa = tasks["quiz_mc"], tasks["quiz_qa"]
    samples = list(mc.load(EXAMPLES, TaskConfig(name="quiz_mc")))
    assert len(samples) == 30 and samples[3].gold == 1
    assert samples[0].data["query"] == (
        "Question: Which planet in our solar system has the shortest year?\nAnswer:"
    )
    pairs = mc.arguments(samples[0], TaskConfig(name="quiz_mc"))  # type: ignore[attr-defined]
    assert pairs["choice:1"][1] == " Venus"
    assert mc.headline == "acc" and qa.headline == "exact_match"
    request = qa.requests(
        next(iter(qa.load(EXAMPLES, TaskConfig(name="quiz_qa")))), TaskConfig(name="quiz_qa")
    )["gen"]
    assert request.sampling.stop == ("\n",) and request.sampling.max_tokens == 16


def test_shots_come_from_the_train_split_and_the_description_leads(tmp_path: Path) -> None:
    _rows(tmp_path, MC, "train.jsonl")
    _rows(tmp_path, MC[:2], "test.jsonl")
    _write(
        tmp_path,
        "t.yaml",
        """
        task: t
        dataset_path: json
        dataset_kwargs: {data_files: {train: train.jsonl, test: test.jsonl}}
        test_split: test
        training_split: train
        output_type: multiple_choice
        description: "Quiz:\\n"
        doc_to_text: "{{q}}?"
        doc_to_choice: choices
        doc_to_target: gold
        num_fewshot: 2
        fewshot_config: {sampler: first_n}
    """,
    )
    task = registry([tmp_path])["t"]
    sample = next(iter(task.load(tmp_path, TaskConfig(name="t"))))
    assert sample.data["fewshot"] == "Quiz:\nquestion 0? a\n\nquestion 1? bb\n\n"


def test_includes_merge_and_the_including_file_wins(tmp_path: Path) -> None:
    _rows(tmp_path, MC)
    _write(
        tmp_path,
        "base.yaml",
        """
        dataset_path: json
        dataset_kwargs: {data_files: {test: rows.jsonl}}
        test_split: test
        output_type: multiple_choice
        doc_to_text: "base {{q}}"
        doc_to_choice: choices
        doc_to_target: gold
    """,
    )
    _write(
        tmp_path,
        "t.yaml",
        """
        include: base.yaml
        task: t
        doc_to_text: "own {{q}}"
    """,
    )
    located = read_yaml(tmp_path / "t.yaml")
    assert located.values["doc_to_text"] == "own {{q}}"
    assert located.where("doc_to_text") == f"{tmp_path / 't.yaml'}:3"
    assert located.where("test_split") == f"{tmp_path / 'base.yaml'}:3"
    assert resolve(located).prompt.text == "own {{q}}"


def test_generation_filters_and_scorers_score_as_lm_eval_names_them(tmp_path: Path) -> None:
    import asyncio

    from sieval.ir.response import Choice, Response

    _rows(tmp_path, [{"q": "2+2", "a": "4"}])
    _write(
        tmp_path,
        "g.yaml",
        """
        task: g
        dataset_path: json
        dataset_kwargs: {data_files: {test: rows.jsonl}}
        test_split: test
        doc_to_text: "{{q}}="
        doc_to_target: a
        filter_list:
          - name: strict
            filter: [{function: regex, regex_pattern: "#### (\\\\d+)"}, {function: take_first}]
          - name: loose
            filter: [{function: regex, regex_pattern: "(\\\\d+)", group_select: -1}]
        metric_list:
          - {metric: exact_match}
          - {metric: number}
    """,
    )
    task = registry([tmp_path])["g"]
    config = TaskConfig(name="g")
    sample = next(iter(task.load(tmp_path, config)))
    reply = Response(choices=(Choice(index=0, text=" it is 3 or maybe 4"),))
    result = asyncio.run(task.score_async(sample, {"gen": reply}, config))  # type: ignore[attr-defined]
    assert result.metrics == {
        "exact_match,strict": 0.0,
        "number,strict": 0.0,
        "exact_match,loose": 1.0,
        "number,loose": 1.0,
    }
    assert result.channels["extracted"] == {"strict": "[invalid]", "loose": "4"}
    assert task.headline == "exact_match,strict"


SELF_CONSISTENCY = """
    task: sc
    dataset_path: json
    dataset_kwargs: {data_files: {test: rows.jsonl}}
    test_split: test
    doc_to_text: "{{q}}="
    doc_to_target: a
    repeats: 4
    generation_kwargs: {do_sample: true, temperature: 0.7, until: ["\\n\\n"]}
    filter_list:
      - name: score-first
        filter: [{function: regex, regex_pattern: "#### (\\\\d+)"}, {function: take_first}]
      - name: maj@4
        filter:
          - {function: regex, regex_pattern: "#### (\\\\d+)"}
          - {function: majority_vote}
          - {function: take_first}
      - name: first-2
        filter: [{function: take_first_k, k: 2}, {function: regex, regex_pattern: "#### (\\\\d+)"}]
    metric_list:
      - {metric: exact_match}
"""


def test_repeats_send_the_request_n_times_and_the_filters_see_the_list(tmp_path: Path) -> None:
    import asyncio

    from sieval.ir.response import Choice, Response

    _rows(tmp_path, [{"q": "3+4", "a": "7"}])
    _write(tmp_path, "sc.yaml", SELF_CONSISTENCY)
    task = registry([tmp_path])["sc"]
    config = TaskConfig(name="sc")
    sample = next(iter(task.load(tmp_path, config)))
    sent = task.requests(sample, config)
    assert list(sent) == ["gen", "gen_2", "gen_3", "gen_4"]
    assert len({msgspec.json.encode(r) for r in sent.values()}) == 1  # one body, four times
    assert sent["gen"].sampling.temperature == 0.7
    assert list(task.arguments(sample, config)) == list(sent)  # type: ignore[attr-defined]
    texts = [" #### 5", " #### 7", " so #### 7", " no answer"]
    replies = {
        name: Response(choices=(Choice(index=0, text=t),))
        for name, t in zip(sent, texts, strict=True)
    }
    result = asyncio.run(task.score_async(sample, replies, config))  # type: ignore[attr-defined]
    assert result.channels["texts"] == texts
    assert result.channels["extracted"] == {
        "score-first": "5", "maj@4": "7", "first-2": ["5", "7"],
    }  # fmt: skip
    assert result.metrics["exact_match,score-first"] == 0.0
    assert result.metrics["exact_match,maj@4"] == 1.0
    assert "the request sent 4 times" in task.protocol


def test_repeats_filters_agree_with_lm_evals_own() -> None:
    ensemble = pytest.importorskip("lm_eval.filters").build_filter_ensemble
    from sieval.tasks.filters import pipeline

    steps = [
        ("regex", {"regex_pattern": r"#### (\d+)"}),
        ("majority_vote", {}),
        ("take_first", {}),
    ]
    cases = [
        [" #### 5", " #### 7", " so #### 7", " none"],
        [" #### 1", " #### 2", " #### 2", " #### 1"],  # a tie: the first seen wins on both
        [" none", " none", " #### 3", " #### 4"],
        [" #### 8"],
    ]
    for k in (None, 2):
        chosen = steps if k is None else [("take_first_k", {"k": k}), *steps]
        ours = pipeline("p", [{"function": n, **kw} for n, kw in chosen], lambda i: f"f{i}")
        theirs = ensemble("p", [[n, kw or None] for n, kw in chosen])
        for texts in cases:
            if k is not None and len(texts) < k:
                continue

            inst = SimpleNamespace(resps=list(texts), doc={}, filtered_resps={})
            theirs.apply([inst])  # type: ignore[list-item]
            assert ours.run(list(texts), {}) == inst.filtered_resps["p"], (k, texts)


def test_exact_match_options_agree_with_lm_evals_metric() -> None:
    lm_metrics = pytest.importorskip("lm_eval.api.metrics")
    from sieval.tasks.scorers import scorer

    cases = [
        ("The Answer.", "the answer", {"ignore_case": True, "ignore_punctuation": True}),
        ("$1,234", "1234", {"regexes_to_ignore": [",", "\\$"]}),
        ("abc 12", "abc ", {"ignore_numbers": True}),
        ("Yes", "yes", {}),
    ]
    for prediction, gold, options in cases:
        theirs = lm_metrics.exact_match_hf_evaluate([prediction], [gold], **options)["exact_match"]
        mine = scorer("exact_match", options, "here").score(prediction, gold, {})
        assert mine == theirs, (prediction, gold, options)


def test_a_python_task_file_loads_a_spec_and_a_task_class(tmp_path: Path) -> None:
    _rows(tmp_path, MC)
    _write(
        tmp_path,
        "spec_task.py",
        f"""
        from pathlib import Path
        from sieval.data.file_data import FileData
        from sieval.tasks.families import MultipleChoice
        from sieval.tasks.prompt import Prompt
        from sieval.tasks.spec import Data, Spec

        SPEC = Spec(
            name="py_mc", about="a test", reference="here",
            data=Data(
                source=FileData("jsonl", {{"test": (Path({str(tmp_path / "rows.jsonl")!r}),)}}),
                split="test",
            ),
            prompt=Prompt(text="{{{{q}}}}", target="gold", choices="choices"),
            family=MultipleChoice(), headline="acc",
        )
    """,
    )
    _write(
        tmp_path,
        "class_task.py",
        """
        from sieval.tasks.base import Sample

        class Echo:
            name = "echo"
            protocol = "echo"
            headline = "acc"

            def load(self, data_dir, config):
                return [Sample(id="0", data={}, gold=1)]

            async def solve(self, sample, ctx):
                raise NotImplementedError
    """,
    )
    listed = scan([tmp_path])
    assert {"py_mc", "echo"} <= set(listed.entries)
    tasks = registry([tmp_path])
    assert tasks["py_mc"].headline == "acc"
    assert len(list(tasks["py_mc"].load(tmp_path, TaskConfig(name="py_mc")))) == 6
    assert tasks["echo"].source["file"] == str(tmp_path / "class_task.py")  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="declares SPEC"):
        load_python(_write(tmp_path, "none.py", "X = 1\n"))


def test_groups_and_tags_expand_to_their_tasks(tmp_path: Path) -> None:
    _rows(tmp_path, MC)
    for name in ("a", "b"):
        _write(
            tmp_path,
            f"{name}.yaml",
            f"""
            task: {name}
            tag: [letters]
            dataset_path: json
            dataset_kwargs: {{data_files: {{test: rows.jsonl}}}}
            test_split: test
            output_type: multiple_choice
            doc_to_text: q
            doc_to_choice: choices
            doc_to_target: gold
        """,
        )
    _write(tmp_path, "g.yaml", "group: both\ntask: [a, letters]\n")
    tasks = registry([tmp_path])
    assert tasks.expand("letters") == ["a", "b"]
    assert tasks.expand("both") == ["a", "b"]


# -- hostile task files: each a clear error, nothing sent ------------------------------------------

_BASE = """
task: h
dataset_path: json
dataset_kwargs: {data_files: {test: rows.jsonl}}
test_split: test
doc_to_text: q
doc_to_target: a
"""


def _hostile(tmp_path: Path, extra: str) -> Path:
    _rows(tmp_path, [{"q": "x", "a": "y"}])
    return _write(tmp_path, "h.yaml", _BASE + extra)


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ("doc_to_txt: q\n", r"h.yaml:7: doc_to_txt: unknown key\. Did you mean 'doc_to_text'"),
        ("use_prompt: p\n", r"h.yaml:7: use_prompt: not supported: a promptsource prompt"),
        ('description: "{{ q "\n', r"h.yaml:7: description"),
        ("output_type: rank\n", r"h.yaml:7: output_type: 'rank' is not one of"),
        ("generation_kwargs: {until: 3}\n", r"h.yaml:7: generation_kwargs.until: must be a string"),
        (
            "generation_kwargs: {beams: 3}\n",
            r"h.yaml:7: generation_kwargs.beams: not supported; sieval sends ",
        ),
        ("generation_kwargs: [3]\n", r"h.yaml:7: generation_kwargs: must be a mapping, got \[3\]"),
        (
            "fewshot_config: {shuffle: true}\n",
            r"h.yaml:7: fewshot_config.shuffle: not supported; sieval reads ",
        ),
        ("num_fewshot: -1\n", r"h.yaml:7: num_fewshot: must be an integer >= 0"),
        (
            "process_docs: !function boom.run\n",
            r"h.yaml:7: !function boom.run: importing .*boom.py "
            r"failed \(RuntimeError: exploded on import\)",
        ),
        (
            "process_docs: !function nosuch.run\n",
            r"h.yaml:7: !function nosuch.run: importing nosuch",
        ),
        ("repeats: 0\n", r"h.yaml:7: repeats: must be an integer in \[1, 1000\], got 0"),
        (
            "metric_list: [{metric: exact_match, aggregation: nosuch}]\n",
            # the second: without lm-eval installed (test_an_aggregation_without_lm_eval)
            r"h.yaml:7: metric_list\[0\].aggregation: (unknown aggregation 'nosuch'|"
            r"'nosuch' is not one of sieval's)",
        ),
    ],
)
def test_hostile_task_files(tmp_path: Path, extra: str, says: str) -> None:
    (tmp_path / "boom.py").write_text("raise RuntimeError('exploded on import')\n")
    _hostile(tmp_path, extra)
    with pytest.raises(ConfigError, match=says):
        registry([tmp_path])["h"]


def test_an_aggregation_without_lm_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without lm-eval, sieval's own aggregations still resolve and another is refused, naming
    them and the extra (lm-eval's absence stood in for by a failing import)."""
    monkeypatch.setitem(sys.modules, "lm_eval.api.registry", None)
    _hostile(tmp_path, "metric_list: [{metric: exact_match, aggregation: mean}]\n")
    assert registry([tmp_path])["h"].headline == "exact_match"
    _hostile(tmp_path, "metric_list: [{metric: exact_match, aggregation: median}]\n")
    with pytest.raises(
        ConfigError,
        match=r"h.yaml:7: metric_list\[0\].aggregation: 'median' is not one of sieval's "
        r"\(bits_per_byte, mean, perplexity, weighted_perplexity\); lm-eval's other "
        r"aggregations need lm-eval \(pip install 'sieval\[lm-eval\]'\)",
    ):
        registry([tmp_path])["h"]


def test_a_bad_template_names_its_line(tmp_path: Path) -> None:
    _rows(tmp_path, [{"q": "x", "a": "y"}])
    _write(tmp_path, "h.yaml", _BASE.replace("doc_to_text: q", 'doc_to_text: "{{ q "'))
    with pytest.raises(ConfigError, match=r"h.yaml:5: doc_to_text: the template does not parse"):
        registry([tmp_path])["h"]


def test_a_path_that_escapes_the_include_path_is_refused(tmp_path: Path) -> None:
    inner = tmp_path / "tasks"
    inner.mkdir()
    _rows(tmp_path, [{"q": "x", "a": "y"}], "secret.jsonl")
    _write(inner, "h.yaml", _BASE.replace("rows.jsonl", "../secret.jsonl"))
    with pytest.raises(
        ConfigError,
        match=r"h.yaml:3: dataset_kwargs.data_files.test: data file '.*secret.jsonl' leaves",
    ):
        registry([inner])["h"]
    _write(inner, "i.yaml", "include: ../outside.yaml\ntask: i\n")
    (tmp_path / "outside.yaml").write_text("dataset_path: json\n")
    with pytest.raises(ConfigError, match=r"i.yaml:1: include: include '.*/outside.yaml' leaves"):
        registry([inner])["i"]


def test_a_huge_file_an_alias_bomb_and_a_cycle_are_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    huge.write_text("task: huge\n" + "# padding\n" * (MAX_BYTES // 10 + 1))
    with pytest.raises(ConfigError, match="over sieval's limit"):
        read_yaml(huge)
    bomb = ["task: bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i, name in enumerate("bcdefg"):
        prev = "abcdefg"[i]
        bomb.append(
            f"{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, "
            f"*{prev}, *{prev}, *{prev}, *{prev}]"
        )
    (tmp_path / "bomb.yaml").write_text("\n".join(bomb) + "\n")
    with pytest.raises(ConfigError, match="expands to more than"):
        read_yaml(tmp_path / "bomb.yaml")
    (tmp_path / "x.yaml").write_text("include: y.yaml\ntask: x\n")
    (tmp_path / "y.yaml").write_text("include: x.yaml\n")
    with pytest.raises(ConfigError, match="include cycle"):
        read_yaml(tmp_path / "x.yaml")
    (tmp_path / "list.yaml").write_text("- task: x\n")
    with pytest.raises(ConfigError, match="a task file is a mapping"):
        read_yaml(tmp_path / "list.yaml")
    (tmp_path / "broken.yaml").write_text("task: x\n  bad: [\n")
    with pytest.raises(ConfigError, match=r"broken.yaml:2: not valid YAML"):
        read_yaml(tmp_path / "broken.yaml")


def test_an_unknown_task_names_the_task_files_that_could_not_be_read(tmp_path: Path) -> None:
    from sieval.plan.plan import resolve_task

    _write(tmp_path, "bad.yaml", 'task: bad\ndataset_path: json\ndoc_to_text: "(\\d+)"\n')
    _write(tmp_path, "good.yaml", "task: good\ndataset_path: json\n")
    tasks = registry([tmp_path])
    assert "good" in tasks and "bad" not in tasks
    with pytest.raises(ConfigError) as info:
        resolve_task("bad", tasks)
    said = info.value.message
    assert "unknown task 'bad'. 1 task file(s) of the include path could not be read" in said
    assert re.search(
        r"bad.yaml:3: not valid YAML \(found unknown escape character, column \d+\); fix", said
    )


def test_a_hostile_task_file_sends_nothing(tmp_path: Path) -> None:
    """Through the whole engine: the error comes from the plan, and the transport never runs."""
    from sieval.plan.config import parse_config
    from sieval.runner import RunOptions, run_eval

    (tmp_path / "boom.py").write_text("raise RuntimeError('exploded on import')\n")
    _hostile(tmp_path, "process_docs: !function boom.run\n")
    sent: list[object] = []

    def transport(*args: object, **kwargs: object) -> object:
        sent.append(args)
        raise AssertionError("a transport was made")

    config = parse_config(
        "models: [{name: m, endpoint: 'http://127.0.0.1:9', model: m}]\ntasks: [{name: h}]\n"
    )
    with pytest.raises(ConfigError, match="exploded on import"):
        run_eval(
            config,
            RunOptions(data_dir=tmp_path, out=tmp_path / "runs"),
            tasks=registry([tmp_path]),
            transport_factory=transport,  # type: ignore[arg-type]
        )
    assert sent == [] and not (tmp_path / "runs").exists()


def test_every_key_lm_eval_reads_is_read_or_named() -> None:
    """The keys of lm-eval's TaskConfig: each read, a no-op with its reason, or refused."""
    config = pytest.importorskip("lm_eval.config.task")
    import dataclasses

    from sieval.tasks.yaml_task import NO_OP, REFUSED

    fields = {f.name for f in dataclasses.fields(config.TaskConfig)}
    handled = set(READ) | set(NO_OP) | set(REFUSED)
    assert fields - handled == set()


def _lm_eval_form(value: object) -> object:
    """sieval's reading in the form lm-eval's ``load_yaml(resolve_func=False)`` gives: a
    ``!function`` as ``FOLDER/module.name``."""
    from sieval.tasks.yaml_file import Function

    if isinstance(value, Function):
        return str(value.folder.expanduser() / value.qualname)
    if isinstance(value, dict):
        return {k: _lm_eval_form(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lm_eval_form(v) for v in value]
    return value


def test_the_yaml_reader_agrees_with_lm_evals_own_parse() -> None:
    """Every stock YAML of the folders the parity covers, and every 25th file of the rest: the
    keys sieval reads (includes merged) are lm-eval's, value for value."""
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks._yaml_loader import load_yaml

    tasks_dir = Path(lm_eval.__file__).parent / "tasks"
    covered = (
        "arc",
        "gsm8k",
        "hellaswag",
        "mmlu/default",
        "bbh",
        "truthfulqa",
        "winogrande",
        "humaneval",
        "ifeval",
        "lambada",
        "wikitext",
        "piqa",
        "sciq",
        "openbookqa",
    )
    every = sorted(tasks_dir.rglob("*.yaml"))
    picked = [p for p in every if str(p.relative_to(tasks_dir)).startswith(covered)]
    picked += every[::25]
    compared = 0
    for path in dict.fromkeys(picked):
        try:
            theirs = load_yaml(path, resolve_func=False)
        except Exception:  # lm-eval cannot read it either (a broken include): not a comparison
            continue
        assert _lm_eval_form(read_yaml(path).values) == theirs, path
        compared += 1
    assert compared > 500


_ORACLE_CASES = {
    "mc_gen_prefix": {
        "output_type": "multiple_choice",
        "doc_to_text": "Q: {{q}}",
        "doc_to_choice": "choices",
        "doc_to_target": "gold",
        "gen_prefix": "Answer:",
        "description": "Pick one.\n\n",
    },
    "gen_first_n": {
        "output_type": "generate_until",
        "doc_to_text": "{{q}}?",
        "doc_to_target": "{{choices[gold]}}",
        "fewshot_config": {"sampler": "first_n"},
        "target_delimiter": " =",
        "generation_kwargs": {"until": ["\n"], "max_gen_toks": 8},
    },
    "mc_shot_format": {
        "output_type": "multiple_choice",
        "doc_to_text": "{{q}}",
        "doc_to_choice": "choices",
        "doc_to_target": "gold",
        "fewshot_config": {"doc_to_text": "Shot: {{q}}", "fewshot_delimiter": "\n--\n"},
    },
}


@pytest.mark.parametrize("case", sorted(_ORACLE_CASES))
def test_requests_are_lm_evals_own_for_the_same_file(
    tmp_path: Path, case: str, request: pytest.FixtureRequest
) -> None:
    """lm-eval's ConfigurableTask, given the same YAML keys over the same JSONL, builds the same
    requests as sieval, at 0 and 3 shots (shots from train, rows from test)."""
    pytest.importorskip("lm_eval.api.task")
    import logging

    from lm_eval.api.task import ConfigurableTask

    logging.disable(logging.WARNING)  # lm-eval's own warnings; the later tests' logs kept
    request.addfinalizer(lambda: logging.disable(logging.NOTSET))
    _rows(tmp_path, MC, "train.jsonl")
    _rows(tmp_path, [dict(r, q=f"test {i}") for i, r in enumerate(MC)], "test.jsonl")
    keys = {
        "task": f"oracle_{case}",
        "dataset_path": "json",
        "dataset_kwargs": {
            "data_files": {
                "train": str(tmp_path / "train.jsonl"),
                "test": str(tmp_path / "test.jsonl"),
            }
        },
        "training_split": "train",
        "test_split": "test",
        **_ORACLE_CASES[case],
    }
    from sieval.tasks.catalogue import FileTask
    from sieval.tasks.yaml_file import Located

    for k in (0, 3):
        theirs = ConfigurableTask(config=json.loads(json.dumps(keys)))
        theirs.set_config(key="num_fewshot", value=k)
        theirs.set_fewshot_seed(seed=1234)
        theirs.build_all_requests(limit=None, rank=0, world_size=1)
        by_doc: dict[int, list[object]] = {}
        for inst in sorted(theirs.instances, key=lambda i: (i.doc_id, i.idx)):
            by_doc.setdefault(inst.doc_id, []).append(list(inst.arguments))
        spec = resolve(Located(json.loads(json.dumps(keys)), tmp_path / "x.yaml"))
        task = FileTask(spec, {"file": "x"})
        config = TaskConfig(name=spec.name, num_fewshot=k)
        for sample in task.load(tmp_path, config):
            ours = [
                [dict(a) if isinstance(a, dict) else a for a in args]
                for args in task.arguments(sample, config).values()
            ]
            assert ours == by_doc[int(sample.id.rpartition("/")[2])], (case, k, sample.id)


def test_a_corpus_level_metric_aggregates_the_items(tmp_path: Path) -> None:
    """f1 over (gold, pick) of every sample, as lm-eval's f1 aggregation computes it."""
    from sieval.tasks.aggregations import aggregate
    from sieval.tasks.base import Sample, SampleResult

    metrics = pytest.importorskip("lm_eval.api.metrics")
    golds, picks = [0, 1, 1, 0, 1], [0, 1, 0, 0, 0]
    results = [
        (
            Sample(id=str(i), data={}, gold=g),
            SampleResult(
                prediction={"answer": p, "items": {"f1": [g, p]}},
                gold=g,
                metrics={"acc": float(g == p)},
            ),
        )
        for i, (g, p) in enumerate(zip(golds, picks, strict=True))
    ]
    out = aggregate(results, {"f1": metrics.f1_score})
    assert out["acc"] == pytest.approx(3 / 5)
    assert out["f1"] == metrics.f1_score(list(zip(golds, picks, strict=True)))
    assert out["f1"] != out["acc"]


def test_the_environment_adds_folders_to_the_include_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    _rows(other, MC)
    _write(other, "env.yaml", _BASE.replace("task: h", "task: from_env"))
    assert "from_env" not in registry([])
    monkeypatch.setenv("SIEVAL_INCLUDE_PATH", f"{tmp_path / 'missing-is-refused'}")
    with pytest.raises(ConfigError, match="is not a folder"):
        registry([])
    monkeypatch.setenv("SIEVAL_INCLUDE_PATH", str(other))
    assert "from_env" in registry([])


def test_process_results_of_a_multiple_choice_task_reads_lm_evals_pairs(tmp_path: Path) -> None:
    """A task's own process_results gets [(log-likelihood, is_greedy)] per choice, as lm-eval
    gives it; the requests then ask for the top-1 alternative (is_greedy)."""
    from sieval.ir.response import Choice, Response, Token, TopEntry

    _rows(tmp_path, MC[:1])
    (tmp_path / "utils.py").write_text(
        "def results(doc, pairs):\n"
        "    return {'best_ll': max(ll for ll, _ in pairs), 'greedy_first': float(pairs[0][1])}\n"
    )
    _write(
        tmp_path,
        "p.yaml",
        """
        task: p
        dataset_path: json
        dataset_kwargs: {data_files: {test: rows.jsonl}}
        test_split: test
        output_type: multiple_choice
        doc_to_text: q
        doc_to_choice: choices
        doc_to_target: gold
        process_results: !function utils.results
        metric_list: [{metric: best_ll}, {metric: greedy_first}]
    """,
    )
    task = registry([tmp_path])["p"]
    config = TaskConfig(name="p")
    sample = next(iter(task.load(tmp_path, config)))
    requests = task.requests(sample, config)
    assert {r.scoring.input_top_k for r in requests.values()} == {1}

    def reply(name: str, logprob: float, greedy: bool) -> Response:
        text = requests[name].input.text  # type: ignore[union-attr]
        cut = len(sample.data["query"])
        top = TopEntry(token=text[cut:] if greedy else "other", logprob=logprob if greedy else 0.0)
        tokens = (
            Token(text=text[:cut], logprob=-9.0, offset=0),
            Token(
                text=text[cut:],
                logprob=logprob,
                offset=cut,
                top=(top,),
                scored_rank=0 if greedy else 1,
            ),
        )
        return Response(choices=(Choice(index=0, text="\n"),), input_tokens=tokens)

    responses = {
        "choice:0": reply("choice:0", -1.5, True),
        "choice:1": reply("choice:1", -0.5, False),
        "choice:2": reply("choice:2", -2.5, False),
    }
    result = task.score(sample, responses, config)
    assert result.metrics == {"best_ll": -0.5, "greedy_first": 1.0}
    assert task.headline == "best_ll"


def test_the_code_scorer_runs_the_answer_and_the_rows_tests(tmp_path: Path) -> None:
    import asyncio

    from sieval.ir.response import Choice, Response

    _rows(tmp_path, [{"q": "add", "a": "", "want": 5}])
    _write(
        tmp_path,
        "c.yaml",
        """
        task: c
        dataset_path: json
        dataset_kwargs: {data_files: {test: rows.jsonl}}
        test_split: test
        doc_to_text: "Write {{q}}(x, y)."
        doc_to_target: a
        metric_list: [{metric: code, test: "assert add(2, 3) == {{want}}"}]
    """,
    )
    task = registry([tmp_path])["c"]
    config = TaskConfig(name="c")
    sample = next(iter(task.load(tmp_path, config)))

    def scored(text: str) -> float:
        reply = Response(choices=(Choice(index=0, text=text),))
        result = asyncio.run(task.score_async(sample, {"gen": reply}, config))  # type: ignore[attr-defined]
        assert result.channels["execution"]["status"]
        return float(result.metrics["code"])

    assert scored("```python\ndef add(x, y):\n    return x + y\n```") == 1.0
    assert scored("```python\ndef add(x, y):\n    return x - y\n```") == 0.0


def test_letters_over_chat_score_the_written_letter(tmp_path: Path) -> None:
    import asyncio

    from sieval.ir.response import Choice, Response

    _rows(tmp_path, [{"q": "Which is largest?", "options": "A. 1\nB. 2\nC. 9\nD. 3", "gold": 2}])
    _write(
        tmp_path,
        "letters.yaml",
        """
        task: letters
        dataset_path: json
        dataset_kwargs: {data_files: {test: rows.jsonl}}
        test_split: test
        output_type: generate_until
        doc_to_text: "{{q}}\\n{{options}}\\nAnswer with a letter."
        doc_to_choice: [A, B, C, D]
        doc_to_target: gold
        metric_list: [{metric: choice_letter}]
    """,
    )
    task = registry([tmp_path])["letters"]
    config = TaskConfig(name="letters")
    sample = next(iter(task.load(tmp_path, config)))

    def scored(text: str) -> float:
        reply = Response(choices=(Choice(index=0, text=text),))
        result = asyncio.run(task.score_async(sample, {"gen": reply}, config))  # type: ignore[attr-defined]
        return float(result.metrics["choice_letter"])

    assert scored("The answer is C.") == 1.0
    assert scored("I think B, not C") == 0.0
    assert scored("I pick 9") == 0.0


def test_a_shuffling_process_docs_gives_the_same_rows_in_every_run(tmp_path: Path) -> None:
    """A ``process_docs`` that draws from the global generators (GPQA's shuffles its choices)
    draws as under lm-eval's ``simple_evaluate`` seeds, the same in every run, and leaves the
    caller's generators as they were."""
    import random

    import numpy

    pytest.importorskip("datasets")
    _rows(tmp_path, [{"q": f"q{i}", "a": str(i)} for i in range(12)])
    _write(
        tmp_path,
        "shuffle.py",
        """
        import random
        import numpy

        def run(dataset):
            rows = list(dataset)
            random.shuffle(rows)
            return [dict(r, q=f"{r['q']}/{numpy.random.randint(1000)}") for r in rows]
        """,
    )
    _write(tmp_path, "h.yaml", _BASE + "process_docs: !function shuffle.run\n")
    random.seed(99)
    numpy.random.seed(99)
    before = (random.random(), numpy.random.random())
    random.seed(99)
    numpy.random.seed(99)
    config = TaskConfig(name="h")
    first = [s.data for s in registry([tmp_path])["h"].load(tmp_path, config)]
    assert (random.random(), numpy.random.random()) == before  # the caller's draws, untouched
    second = [s.data for s in registry([tmp_path])["h"].load(tmp_path, config)]
    assert first == second
    order = list(range(12))
    random.seed(0)  # lm-eval's simple_evaluate: random_seed=0, numpy_random_seed=1234
    random.shuffle(order)
    numpy.random.seed(1234)
    draws = [int(numpy.random.randint(1000)) for _ in order]
    rows = [s.data for s in registry([tmp_path])["h"].load(tmp_path, config)]
    assert [r["query"] for r in rows] == [f"q{i}/{n}" for i, n in zip(order, draws, strict=True)]
