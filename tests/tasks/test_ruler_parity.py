"""RULER's samples and metrics, sample for sample equal to RULER's own scripts.

The oracle is RULER's code in ``shared/data/ruler/reference/`` (run from a copy in a temporary
directory: its scripts read ``json/`` beside themselves), in the venv ``scripts/ruler-oracle.sh``
installs (wonderwords, nltk, numpy, scipy, transformers, ...), with the live vLLM's model
directory as the tokenizer (``--tokenizer_type hf``). sieval's generator counts through the same
tokenizer (a counting process in that venv): same seed, tokenizer and length, the same inputs,
answers, answer prefixes and lengths. RULER's ``prepare.py`` runs each task as its pipeline does
(base template, ``--random_seed 42``).

Each push runs ``SIEVAL_RULER_PARITY_N`` samples (default 2) of four tasks at
``SIEVAL_RULER_PARITY_LENGTHS`` (default 4096); ``docs/evidence/ruler-parity.md`` has the run of
all eleven at 25 samples, 4096 and 8192.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sieval.data.haystack import essay_files, essay_words, word_list
from sieval.scoring.ifeval.text import split_sentences
from sieval.scoring.ruler import postprocess, string_match_all, string_match_part, task_score
from sieval.tasks._ruler.configs import TASKS
from sieval.tasks._ruler.generate import ZETA_2, Haystacks, generate

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("SIEVAL_CACHE", "~/.cache/sieval")).expanduser()
MODEL_DIR = Path(
    os.environ.get("SIEVAL_RULER_TOKENIZER", CACHE / "models" / "gemma-3-270m-bf16")
).expanduser()
N = int(os.environ.get("SIEVAL_RULER_PARITY_N", "2"))
LENGTHS = [int(n) for n in os.environ.get("SIEVAL_RULER_PARITY_LENGTHS", "4096").split(",")]
EACH_KIND = "niah_multikey_1,vt,cwe,fwe"
"""Each push: each generator and the essay haystack (needles in essays; chains, word lists, coded
words); the noise and needle haystacks are in the evidence run (``niah_multikey_3`` took 20 s of
every push); ``SIEVAL_RULER_PARITY_TASKS=all`` runs the eleven (each RULER script loads the
tokenizer and builds its word lists anew: 10 s to 2.5 min a task on two shared cores)."""
CHOSEN = os.environ.get("SIEVAL_RULER_PARITY_TASKS", EACH_KIND)
PARITY_TASKS = list(TASKS) if CHOSEN == "all" else CHOSEN.split(",")


def _data_dir() -> Path:
    return Path(os.environ.get("SIEVAL_DATA_DIR", ROOT.parent / "shared" / "data"))


def _oracle_python() -> str | None:
    given = os.environ.get("SIEVAL_RULER_ORACLE")
    if given:
        return given
    where = subprocess.run(
        [str(ROOT / "scripts" / "ruler-oracle.sh"), "--where"], capture_output=True, text=True
    )
    return where.stdout.strip() if where.returncode == 0 else None


ORACLE = _oracle_python()
REFERENCE = _data_dir() / "ruler" / "reference"
NLTK_DATA = CACHE / "ifeval-oracle" / "nltk_data" / "tokenizers" / "punkt_tab"
pytestmark = [
    pytest.mark.skipif(
        ORACLE is None,
        reason="RULER's oracle venv is not installed: scripts/ruler-oracle.sh installs it "
        "(scripts/test does)",
    ),
    pytest.mark.skipif(
        not (MODEL_DIR / "tokenizer.json").exists(),
        reason=f"no tokenizer at {MODEL_DIR} (the live vLLM's model: scripts/live-vllm.sh)",
    ),
    pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"RULER's reference is not in {REFERENCE}"),
    pytest.mark.skipif(
        not NLTK_DATA.is_dir(), reason="NLTK's Punkt model: scripts/ifeval-oracle.sh installs it"
    ),
]

_COUNTER = """
import json, sys
from transformers import AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
for line in sys.stdin:
    sys.stdout.write(json.dumps(len(tokenizer.tokenize(json.loads(line)))) + "\\n")
    sys.stdout.flush()
"""


class Counter:
    """The model directory's tokenizer, as RULER's ``HFTokenizer.text_to_tokens`` counts."""

    def __init__(self) -> None:
        assert ORACLE is not None
        self.process = subprocess.Popen(
            [ORACLE, "-c", _COUNTER, str(MODEL_DIR)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "TRANSFORMERS_VERBOSITY": "error"},
        )

    async def count(self, text: str) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(text) + "\n")
        self.process.stdin.flush()
        return int(self.process.stdout.readline())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def counter():
    made = Counter()
    yield made
    made.close()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """RULER's scripts in a temporary copy with what they read beside them: the essay JSON as
    RULER's download script writes it (the 49 essays here sorted and joined), an empty
    ``english_words.json`` (used only past wonderwords' lists, never at these lengths), and an
    NLTK data directory with the Punkt model."""
    root = tmp_path_factory.mktemp("ruler")
    copy = root / "scripts" / "data"  # RULER's layout: prepare.py reads ../synthetic.yaml
    shutil.copytree(REFERENCE, copy)
    shutil.copy(REFERENCE / "synthetic.yaml", root / "scripts" / "synthetic.yaml")
    (copy / "synthetic" / "json").mkdir()
    text = "".join(p.read_text(encoding="utf-8") for p in essay_files(_data_dir()))
    (copy / "synthetic" / "json" / "PaulGrahamEssays.json").write_text(json.dumps({"text": text}))
    (copy / "synthetic" / "json" / "english_words.json").write_text("{}")
    nltk = root / "nltk_data" / "tokenizers"
    nltk.mkdir(parents=True)
    (nltk / "punkt_tab").symlink_to(NLTK_DATA)
    (nltk / "punkt").mkdir()  # prepare.py looks for it before it runs a script
    assert ORACLE is not None
    bin_dir = Path(ORACLE).parent  # prepare.py runs each script as `python ...` from PATH
    return {"root": root, "reference": copy, "nltk": root / "nltk_data", "bin": bin_dir}


def _ruler_samples(workspace: dict[str, Path], task: str, length: int) -> list[dict]:
    out = workspace["root"] / "out" / str(length)
    command = [
        str(workspace["bin"] / "python"), "prepare.py", "--save_dir", str(out),
        "--benchmark", "synthetic", "--task", task, "--tokenizer_path", str(MODEL_DIR),
        "--tokenizer_type", "hf", "--max_seq_length", str(length),
        "--model_template_type", "base", "--num_samples", str(N),
    ]  # fmt: skip
    done = subprocess.run(
        command,
        cwd=workspace["reference"],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PATH": f"{workspace['bin']}:{os.environ['PATH']}",
            "NLTK_DATA": str(workspace["nltk"]),
            "TRANSFORMERS_VERBOSITY": "error",
        },
        timeout=1800,
    )
    written = out / task / "validation.jsonl"
    assert written.exists(), f"RULER's prepare.py wrote nothing:\n{done.stdout}\n{done.stderr}"
    return [json.loads(line) for line in written.read_text().splitlines()]


def _haystacks() -> Haystacks:
    return Haystacks(
        essay=essay_words(_data_dir()),
        sentences=split_sentences,
        nouns=word_list("nounlist.txt"),
        adjectives=word_list("adjectivelist.txt"),
        verbs=word_list("verblist.txt"),
    )


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("task", PARITY_TASKS)
def test_samples_equal_rulers(task, length, workspace, counter) -> None:
    theirs = _ruler_samples(workspace, task, length)
    ours = asyncio.run(
        generate(
            TASKS[task],
            seed=42,
            max_seq_length=length,
            num_samples=N,
            count=counter.count,
            haystacks=_haystacks(),
        )
    )
    assert len(theirs) == len(ours) == N
    for index, (t, o) in enumerate(zip(theirs, ours, strict=True)):
        where = f"{task} at {length}, sample {index}"
        assert o.input == t["input"], where
        assert list(o.outputs) == t["outputs"], where
        assert o.answer_prefix == t["answer_prefix"], where
        assert o.length == t["length"] <= length, where


def test_zeta_two_is_scipys() -> None:
    special = pytest.importorskip("scipy.special", reason="scipy is a dev dependency")
    assert float(special.zeta(2.0)) == ZETA_2


# -- metrics ------------------------------------------------------------------------------------

PLANTED = [
    # (task, references, prediction): edge cases RULER's evaluate.py decides
    ("niah_single_1", ["1234567"], " 1234567."),
    ("niah_single_1", ["1234567"], "\x00\x1f1234567\t"),
    ("niah_single_1", ["1234567"], ""),
    ("niah_single_1", ["1234567"], "123456 7"),
    ("niah_multivalue", ["111", "222", "333", "444"], "111 and 333\n"),
    ("niah_multivalue", ["111", "222", "333", "444"], "444, 333, 222, 111"),
    ("niah_multivalue", ["111", "222", "333", "444"], "none"),
    ("cwe", ["Apple", "pear"], "APPLE, Pear"),
    ("cwe", ["Apple", "pear"], "apples"),
    ("cwe", ["Apple", "pear"], "  \x0bap\x0cple pe\rar "),
    ("vt", ["ABCDE", "FGHIJ", "KLMNO"], "abcde fghij"),
    ("qa_1", ["Paris", "the city of Paris"], "It is paris."),
    ("qa_1", ["Paris", "the city of Paris"], "London"),
    ("qa_1", ["Paris", "the city of Paris"], "THE CITY OF PARIS"),
    ("qa_2", ["İstanbul"], "i̇stanbul"),
    ("qa_2", ["ß"], "SS"),
]

_NEMO_STUB = """
import json
def read_manifest(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
def write_manifest(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\\n")
"""


def _ruler_scores(tmp_path: Path, rows: list[tuple[str, list[str], str]]) -> dict[str, float]:
    """RULER's evaluate.py on the predictions, NeMo's manifest reader stood in for (its one
    import from NeMo: reading and writing JSON lines)."""
    stub = tmp_path / "stub" / "nemo" / "collections" / "asr" / "parts" / "utils"
    stub.mkdir(parents=True)
    (stub / "manifest_utils.py").write_text(_NEMO_STUB)
    preds = tmp_path / "preds"
    preds.mkdir()
    by_task: dict[str, list[dict]] = {}
    for task, refs, pred in rows:
        rows_of = by_task.setdefault(task, [])
        row = {"index": len(rows_of), "input": "", "outputs": refs, "pred": pred, "others": {}}
        rows_of.append(row)
    for task, lines in by_task.items():
        (preds / f"{task}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    nltk = tmp_path / "nltk_data" / "tokenizers"
    nltk.mkdir(parents=True)
    (nltk / "punkt").mkdir()
    assert ORACLE is not None
    done = subprocess.run(
        [ORACLE, str(REFERENCE / "eval" / "evaluate.py"), "--data_dir", str(preds)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "stub"), "NLTK_DATA": str(nltk.parent)},
        timeout=300,
    )
    summary = preds / ("summary.csv" if len(by_task) > 1 else f"summary-{next(iter(by_task))}.csv")
    assert summary.exists(), f"RULER's evaluate.py wrote nothing:\n{done.stdout}\n{done.stderr}"
    table = list(csv.reader(summary.read_text().splitlines()))
    return {task: float(score) for task, score in zip(table[1][1:], table[2][1:], strict=True)}


def _our_scores(rows: list[tuple[str, list[str], str]]) -> dict[str, float]:
    per: dict[str, list[float]] = {}
    for task, refs, pred in rows:
        match = string_match_part if task.startswith("qa_") else string_match_all
        per.setdefault(task, []).append(match(postprocess(pred), refs))
    return {task: task_score(scores) for task, scores in per.items()}


def test_metrics_equal_rulers_evaluate_on_planted_predictions(tmp_path) -> None:
    ours = _our_scores(PLANTED)
    assert ours == _ruler_scores(tmp_path, PLANTED)
    assert ours["niah_multivalue"] == 50.0  # (2/4 + 4/4 + 0) / 3 in percent


RECORDED = ROOT / "tests" / "fixtures" / "ruler" / "predictions.jsonl"


@pytest.mark.skipif(not RECORDED.exists(), reason="no recorded live predictions")
def test_metrics_equal_rulers_evaluate_on_live_predictions(tmp_path) -> None:
    """Gemma 3 270M's predictions on the live vLLM (docs/evidence/ruler-live.md: the eleven
    tasks at 4096 and 8192), as the records keep them."""
    rows = [
        (r["task"], r["outputs"], r["pred"])
        for r in map(json.loads, RECORDED.read_text().splitlines())
    ]
    assert len(rows) == 22  # the eleven tasks at 4096 and 8192
    assert _our_scores(rows) == _ruler_scores(tmp_path, rows)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
