"""Configured names become one plain path segment or are refused: nothing escapes a run."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runs import options

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.runner import arun_eval
from sieval.store.paths import MAX_NAME, RUN_FILES, results_dirname, segment, unsafe
from sieval.store.records import records_path, wire_log_path

from .fakes import FakeTask, fake_transport, write_data

BAD = [
    ("", "empty"),
    (".", "names a directory above"),
    ("..", "names a directory above"),
    ("a/b", "path separator"),
    ("a\\b", "path separator"),
    ("a\x00b", "U+0000"),
    ("a\x1b[2Jb", "U+001B"),
    ("a\nb", "U+000A"),
    ("a\u202eb", "U+202E"),
    (".hidden", "starts with '.'"),
    ("-rf", "starts with '-'"),
    ("run.json", "a run's own file"),
    ("Report.JSON", "a run's own file"),
    ("records.jsonl", "a run's own file"),
    ("shards", "a run's own file"),
    ("x" * 300, "300 bytes long"),
    ("é" * 65, "130 bytes long"),
]


@pytest.mark.parametrize(("name", "why"), BAD)
def test_segment_refuses_what_is_not_one_plain_segment(name: str, why: str) -> None:
    with pytest.raises(ConfigError, match="models\\[0\\].name") as caught:
        segment(name, key="models[0].name")
    assert why in caught.value.message and caught.value.path == "models[0].name"


def test_segment_keeps_plain_names() -> None:
    for name in ("gemma-3-270m", "arc_easy_kshot_ppl", "v1.2", "a" * MAX_NAME, "modèle"):
        assert segment(name, key="k") == name


def test_a_label_becomes_a_file_safe_directory_or_is_refused() -> None:
    assert results_dirname("google/gemma-3") == "google_gemma-3"
    assert results_dirname("a b:c") == "a_b_c"
    for label in ("..", ".", "run.json", "plan.json", ".x", "x" * 300, "a\x1bb", "\x00"):
        with pytest.raises(ConfigError):
            results_dirname(label)


@settings(max_examples=400, deadline=None)
@given(label=st.text(min_size=0, max_size=200), task=st.text(min_size=0, max_size=40))
def test_no_name_can_leave_the_run_directory(label: str, task: str) -> None:
    run = Path("/runs/r1")
    try:
        path = records_path(run, results_dirname(label), task)
    except ConfigError:
        return
    # exactly three components below the run, none of them '..' or hidden, none a run file
    rel = path.relative_to(run)
    assert len(rel.parts) == 3 and rel.parts[2] == "records.jsonl"
    assert os.path.normpath(path).startswith(str(run) + os.sep)
    for part in rel.parts[:2]:
        assert unsafe(part) is None and part.casefold() not in RUN_FILES
    assert wire_log_path(run, rel.parts[0]).parent == run / rel.parts[0]


CONFIG = """
models:
  - name: {name}
    endpoint: http://fake.invalid
    model: fake-model
tasks:
  - name: fake_qa
"""


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("'..'", "names a directory above"),
        ("run.json", "a run's own file"),
        ("'x" + "y" * 299 + "'", "300 bytes long"),
        ('".\\u001b[2J"', "U+001B"),
    ],
)
def test_a_config_label_is_refused_naming_the_key(name: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=r"models\[0\]\.name") as caught:
        parse_config(CONFIG.format(name=name), source="eval.yaml")
    assert needle in caught.value.message and "name:" in caught.value.message


async def test_a_label_dotdot_no_longer_shares_records_across_runs(tmp_path: Path) -> None:
    """Before: ``name: ..`` wrote ``<out>/fake_qa/records.jsonl`` and a second run resumed from
    it. Now the label is refused before anything is written, and a run.json crafted to hold it
    (which skips the config check) is refused at the join itself."""
    data = write_data(tmp_path / "data", ["aa", "bb"]).parent
    out = tmp_path / "results"
    with pytest.raises(ConfigError, match="names a directory above"):
        parse_config(CONFIG.format(name="'..'"))
    good = parse_config(CONFIG.format(name="m"))
    first = await arun_eval(
        good,
        options(out=out, data_dir=data, run_name="r1"),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: fake_transport(),
    )
    assert first.exit_code == 0
    # a crafted config (as run.json would hold it) bypasses parse_config: the plan refuses it
    crafted = msgspec.structs.replace(
        good, models=[msgspec.structs.replace(good.models[0], name="..")]
    )
    with pytest.raises(ConfigError, match="names a directory above"):
        await arun_eval(
            crafted,
            options(out=out, data_dir=data, run_name="r2"),
            tasks={"fake_qa": FakeTask()},
            transport_factory=lambda cfg: fake_transport(),
        )
    assert sorted(p.name for p in out.iterdir()) == ["r1"]
    assert not (out / "fake_qa").exists()


def test_a_run_name_is_one_segment(tmp_path: Path) -> None:
    from sieval.store.rundir import new_run_dir

    for name in ("..", "a/b", "run.json", ""):
        with pytest.raises(ConfigError, match="run name"):
            new_run_dir(tmp_path, name, "sha256:00")
    assert new_run_dir(tmp_path, "ok", "sha256:00") == tmp_path / "ok"


def test_a_plan_whose_identity_was_edited_is_refused(tmp_path: Path) -> None:
    """The identity names the jobs of the generated scripts: a crafted one could add lines."""
    import json

    from sieval.cluster.shards import read_plan

    plan = {
        "plan_version": 1,
        "identity": "sha256:x\nrm -rf ~",
        "shards": 2,
        "data_dir": "d",
        "tasks": {},
        "concurrency": [1, 1],
        "concurrency_limit": {},
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    with pytest.raises(ConfigError, match="is not a sieval run identity"):
        read_plan(tmp_path)
    plan["identity"] = "sha256:" + "0" * 64
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    assert read_plan(tmp_path).shards == 2
