"""The dataset table: one module per stored folder, discovered; names, splits and subsets that do
not exist are errors naming the choices; discovery never imports pyarrow."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from sieval.data import registry
from sieval.data.registry import SOURCES, discover, get_source
from sieval.data.source import Source
from sieval.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


GENERATED = {"ruler": "RULER's samples are generated from its haystack (issue 39), not rows"}
"""Stored folders that are not rows a module reads: their SOURCE.md says what they are for."""


def test_every_stored_folder_has_a_module(data_dir: Path) -> None:
    folders = sorted(p.name for p in data_dir.iterdir() if (p / "SOURCE.md").is_file())
    assert len(folders) == 25
    assert list(SOURCES) == [f for f in folders if f not in GENERATED]
    for folder in GENERATED:
        assert "generated" in (data_dir / folder / "SOURCE.md").read_text().lower()


def test_each_source_is_its_modules() -> None:
    for name, source in SOURCES.items():
        module = sys.modules[f"sieval.data.{name}"]
        assert module.SOURCE is source
        assert source.fields and len(set(source.fields)) == len(source.fields)
        assert source.splits and source.format and source.hub
        assert not source.subset_required or source.subsets


def test_a_typo_gets_the_closest_name() -> None:
    with pytest.raises(ConfigError, match=r"unknown dataset 'hellaswg'\. Did you mean 'hellaswag'"):
        get_source("hellaswg")
    with pytest.raises(ConfigError) as info:
        get_source("squad")
    assert "Did you mean" not in info.value.message
    assert info.value.message.endswith("Known datasets: " + ", ".join(SOURCES))


@pytest.mark.parametrize(
    ("dataset", "split", "stored"),
    [("boolq", "train", "validation"), ("wikitext", "train", "test, validation"),
     ("hellaswag", "train", "validation"), ("mmlu", "val", "test, validation, dev")],
)  # fmt: skip
def test_a_split_not_stored_names_the_stored_ones(
    tmp_path: Path, dataset: str, split: str, stored: str
) -> None:
    source = get_source(dataset)
    for call in (source.files, source.rows):
        with pytest.raises(ConfigError) as info:
            call(tmp_path, split)
        message = info.value.message
        assert message.startswith(
            f"{dataset}: split {split!r} is not stored in {tmp_path / dataset}"
        )
        assert f"(stored: {stored})" in message
        assert info.value.path == str(tmp_path / dataset)
    if split == "val":
        assert "Did you mean 'validation'?" in message


def test_subsets_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^bbh: choose a subset, one of its 27: boolean_exp"):
        get_source("bbh").files(tmp_path, "test")
    with pytest.raises(
        ConfigError, match=r"^mbpp: choose a subset, one of its 2: full, sanitized$"
    ):
        get_source("mbpp").rows(tmp_path, "test")
    with pytest.raises(ConfigError, match=r"has no subset 'anatomi'\. Did you mean 'anatomy'\?"):
        get_source("mmlu").files(tmp_path, "test", "anatomi")
    with pytest.raises(ConfigError, match=r"^boolq has no subsets \(got 'x'\); leave the subset"):
        get_source("boolq").files(tmp_path, "validation", "x")
    assert len(get_source("mmlu").files(tmp_path, "test")) == 57
    assert get_source("mmlu_pro").files(tmp_path, "test", "law") == get_source("mmlu_pro").files(
        tmp_path, "test"
    )


def test_discovery_wants_a_module_named_after_its_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    package = tmp_path / "fake_data"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_private.py").write_text("SOURCE = 1\n")
    (package / "plain.py").write_text("X = 1\n")
    good = (
        "Source(folder='good', splits=('test',), hub='h', hub_name=None, format='f', fields=('a',))"
    )
    (package / "good.py").write_text(f"from sieval.data.source import Source\nSOURCE = {good}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert list(discover("fake_data")) == ["good"]
    (package / "bad.py").write_text(
        f"from sieval.data.source import Source\nSOURCE = {good.replace('good', 'other')}\n"
    )
    with pytest.raises(AssertionError, match=r"bad\.py declares folder 'other'"):
        discover("fake_data")


def test_source_dispatches_to_its_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[tuple[object, ...]] = []
    fake = types.SimpleNamespace(
        files=lambda *a: calls.append(("files", *a)) or [tmp_path],
        rows=lambda *a: calls.append(("rows", *a)) or [("here", {"a": 1})],
    )
    monkeypatch.setitem(sys.modules, "sieval.data.zz_fake", fake)
    source = Source(folder="zz_fake", splits=("test",), hub="h", hub_name=None, format="f",
                    fields=("a",))  # fmt: skip
    assert source.files(tmp_path, "test") == [tmp_path]
    assert source.rows(tmp_path, "test", "s") == [("here", {"a": 1})]
    assert calls == [("files", tmp_path, "test", None), ("rows", tmp_path, "test", "s")]
    assert registry.get_source("boolq").folder == "boolq"


_PROBE = """
import json, sys
from pathlib import Path
from sieval.data.registry import SOURCES
after_import = "pyarrow" in sys.modules
rows = SOURCES["arc_easy"].rows(Path(sys.argv[1]), "validation")
after_jsonl = "pyarrow" in sys.modules
SOURCES["wikitext"].rows(Path(sys.argv[1]), "test")
print(json.dumps([after_import, after_jsonl, "pyarrow" in sys.modules, len(rows)]))
"""


def test_pyarrow_is_imported_only_to_read_arrow(data_dir: Path) -> None:
    out = subprocess.check_output(
        [sys.executable, "-c", _PROBE, str(data_dir)], cwd=ROOT, text=True
    )
    assert json.loads(out) == [False, False, True, 570]
    code = "import sys, sieval, sieval.data; print('pyarrow' in sys.modules)"
    assert subprocess.check_output([sys.executable, "-c", code], cwd=ROOT, text=True) == "False\n"
