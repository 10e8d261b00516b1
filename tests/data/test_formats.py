"""Each stored format's reader against small synthetic files built in a temp data directory, good
and malformed: a bad JSON line, a truncated zip or gzip, a missing member, a damaged Arrow stream
or Parquet file, a wrong column or header, a missing file beside its split's others. Every error
is a ``ConfigError`` naming the place (``FILE:LINE``, ``FILE#row N``, ``ZIP!MEMBER``) and what is
wrong there.

GPQA's rows here are synthetic placeholders in its 78-column layout, never real ones.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import sys
import types
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq
import pytest

from sieval.data import bbh
from sieval.data.gpqa_diamond import COLUMNS as GPQA_COLUMNS
from sieval.data.registry import get_source
from sieval.errors import ConfigError


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def jsonl(*rows: object) -> str:
    """One line per row: dicts as JSON, strings as written (for broken lines)."""
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def arrow_stream(columns: dict[str, list[Any]]) -> bytes:
    table = pa.table(columns)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def zipped(path: Path, members: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def fails(call: Callable[[], object], where: str, problem: str) -> ConfigError:
    """``call`` raises a ConfigError whose path is ``where`` and whose message names it first
    and says ``problem``."""
    with pytest.raises(ConfigError) as info:
        call()
    assert info.value.path == where, info.value.message
    assert info.value.message.startswith(f"{where}: "), info.value.message
    assert problem in info.value.message, info.value.message
    return info.value


def rows(dataset: str, data_dir: Path, split: str, subset: str | None = None) -> list[Any]:
    return get_source(dataset).rows(data_dir, split, subset)


# JSON Lines (boolq) -------------------------------------------------------------------------


def boolq(**changes: Any) -> dict[str, Any]:
    return {"question": "is it", "passage": "T -- it is", "idx": 0, "label": "true", **changes}


def test_jsonl_rows_and_their_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "boolq/val.jsonl", "\n" + jsonl(boolq(), boolq(idx=1, label="false")))
    assert rows("boolq", tmp_path, "validation") == [
        (f"{path}:2", {"question": "is it", "passage": "T -- it is", "idx": 0, "label": 1}),
        (f"{path}:3", {"question": "is it", "passage": "T -- it is", "idx": 1, "label": 0}),
    ]


@pytest.mark.parametrize(
    ("content", "line", "problem"),
    [
        (jsonl(boolq(), "{not json"), 2, "not valid JSON"),
        (jsonl(boolq(idx="0")), 1, "Expected `int`, got `str` - at `$.idx`"),
        (jsonl({k: v for k, v in boolq().items() if k != "passage"}), 1, "`passage`"),
        (jsonl(boolq(), boolq(label="True")), 2, 'label \'True\' is not "true" or "false"'),
        (jsonl(boolq(label=True)), 1, "Expected `str`, got `bool`"),
    ],
)
def test_a_bad_jsonl_row_names_its_line(
    tmp_path: Path, content: str, line: int, problem: str
) -> None:
    path = write(tmp_path / "boolq/val.jsonl", content)
    fails(lambda: rows("boolq", tmp_path, "validation"), f"{path}:{line}", problem)


def test_an_empty_file_has_no_samples(tmp_path: Path) -> None:
    path = write(tmp_path / "lambada_openai/lambada_test.jsonl", "\n")
    with pytest.raises(ConfigError, match=f"^no samples in {path}"):
        rows("lambada_openai", tmp_path, "test")


def test_each_loader_checks_what_its_task_needs(tmp_path: Path) -> None:
    lambada = write(tmp_path / "lambada_openai/lambada_test.jsonl", jsonl({"text": "one"}))
    fails(lambda: rows("lambada_openai", tmp_path, "test"), f"{lambada}:1", "no last word")
    ifeval = {"key": 1, "prompt": "p", "instruction_id_list": ["a", "b"], "kwargs": [{}]}
    path = write(tmp_path / "ifeval/input_data.jsonl", jsonl(ifeval))
    fails(lambda: rows("ifeval", tmp_path, "train"), f"{path}:1", "2 instruction ids but 1 kwargs")
    write(path, jsonl({**ifeval, "kwargs": [{}, {"n": 3}]}, {**ifeval, "kwargs": [{}, {}]}))
    fails(lambda: rows("ifeval", tmp_path, "train"), f"{path}:2", "key 1 is already used")
    aime = {
        "id": 60,
        "problem": "p",
        "solution": "s",
        "answer": "025",
        "question": "p",
        "url": "https://artofproblemsolving.com/wiki/index.php/2024_AIME_II_Problems/Problem_7",
    }
    path = write(tmp_path / "aime2024/test.jsonl", jsonl(aime))
    assert rows("aime2024", tmp_path, "train")[0][1] == {
        "ID": "2024-II-7", "Problem": "p", "Solution": "s", "Answer": 25,
    }  # fmt: skip
    write(path, jsonl({**aime, "answer": "2.5"}))
    fails(lambda: rows("aime2024", tmp_path, "train"), f"{path}:1", "'2.5' is not an integer")
    write(path, jsonl({**aime, "url": "https://example.org/p7"}))
    fails(lambda: rows("aime2024", tmp_path, "train"), f"{path}:1", "does not name a YEAR_AIME")
    math = {"problem": "p", "solution": "s", "answer": " ", "subject": "A", "level": 1,
            "unique_id": "u"}  # fmt: skip
    path = write(tmp_path / "math500/test.jsonl", jsonl(math))
    fails(lambda: rows("math500", tmp_path, "test"), f"{path}:1", "the answer is empty")


def test_arc_challenge_rows_are_checked_like_arc_easy(tmp_path: Path) -> None:
    row = {"id": "q", "question": "?", "choices": {"text": ["a", "b"], "label": ["A", "B"]},
           "answerKey": "B"}  # fmt: skip
    path = write(tmp_path / "arc_challenge/ARC-Challenge-train.jsonl", jsonl(row, row))
    fails(lambda: rows("arc_challenge", tmp_path, "train"), f"{path}:2", "id 'q' is already used")
    write(path, jsonl({**row, "answerKey": "C"}))
    fails(lambda: rows("arc_challenge", tmp_path, "train"), f"{path}:1", "answerKey 'C' is not")


# gzipped JSON Lines (humaneval) -------------------------------------------------------------

HUMANEVAL = {"task_id": "HumanEval/0", "prompt": "def f():\n", "entry_point": "f",
             "canonical_solution": "    return 1\n", "test": "def check(c): pass\n"}  # fmt: skip


def test_gzipped_jsonl(tmp_path: Path) -> None:
    path = write(
        tmp_path / "humaneval/HumanEval.jsonl.gz", gzip.compress(jsonl(HUMANEVAL).encode())
    )
    [(where, row)] = rows("humaneval", tmp_path, "test")
    assert where == f"{path}:1"
    assert list(row) == ["task_id", "prompt", "canonical_solution", "test", "entry_point"]
    write(path, gzip.compress(jsonl(HUMANEVAL, "]").encode()))
    fails(lambda: rows("humaneval", tmp_path, "test"), f"{path}:2", "not valid JSON")
    write(path, gzip.compress(jsonl(HUMANEVAL, HUMANEVAL).encode()))
    fails(lambda: rows("humaneval", tmp_path, "test"), f"{path}:2", "is already used at")
    write(path, gzip.compress(jsonl({**HUMANEVAL, "entry_point": "f()"}).encode()))
    fails(lambda: rows("humaneval", tmp_path, "test"), f"{path}:1", "is not a Python name")


def test_a_truncated_gzip_file(tmp_path: Path) -> None:
    data = gzip.compress(jsonl(HUMANEVAL).encode())
    path = write(tmp_path / "humaneval/HumanEval.jsonl.gz", data[: len(data) // 2])
    with pytest.raises(ConfigError, match="not a readable gzip file") as info:
        rows("humaneval", tmp_path, "test")
    assert info.value.path == str(path)


# a JSON array (truthfulqa_mc, mbpp sanitized) and a JSON object (bbh) ----------------------

TARGETS = '{"question": "Q%d", "mc1_targets": {"yes": 1, "no": 0}, "mc2_targets": %s}'


def test_json_array_keeps_the_order_of_each_targets_object(tmp_path: Path) -> None:
    mc2 = '{"b": 1, "a": 0, "c": 1}'
    path = write(tmp_path / "truthfulqa_mc/mc_task.json", f"[{TARGETS % (0, mc2)}]")
    assert rows("truthfulqa_mc", tmp_path, "validation") == [
        (f"{path}#row 0", {"question": "Q0",
                           "mc1_targets": {"choices": ["yes", "no"], "labels": [1, 0]},
                           "mc2_targets": {"choices": ["b", "a", "c"], "labels": [1, 0, 1]}}),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("content", "where", "problem"),
    [
        ("[" + TARGETS % (0, '{"a": 1, "b": 0}') + ", " + TARGETS % (1, '{"a": 1, "a": 0}') + "]",
         "#row 1", "mc2_targets lists the answer 'a' twice"),
        ("[" + TARGETS % (0, '{"a": 1, "b": 2}') + "]", "#row 0", "mc2_targets['b'] is 2"),
        ("[" + TARGETS % (0, '{"a": 0, "b": 0}') + "]", "#row 0", "has no true answer"),
        ("[" + TARGETS % (0, '{"a": 1}') + "]", "#row 0", "needs at least two"),
        ("[" + TARGETS % (0, '["a"]') + "]", "#row 0", "is not an object"),
        ('[{"question": 7}]', "#row 0", "Expected `str`, got `int`"),
        ('{"question": "Q"}', "", "expected a JSON array of rows"),
        ('[{"question": "Q"', "", "not valid JSON"),
    ],
)  # fmt: skip
def test_a_bad_json_array_row_names_its_index(
    tmp_path: Path, content: str, where: str, problem: str
) -> None:
    path = write(tmp_path / "truthfulqa_mc/mc_task.json", content)
    fails(lambda: rows("truthfulqa_mc", tmp_path, "validation"), f"{path}{where}", problem)


def sanitized(task_id: int) -> dict[str, Any]:
    return {"source_file": "f", "task_id": task_id, "prompt": "p", "code": "c",
            "test_imports": [], "test_list": ["assert True"]}  # fmt: skip


def test_mbpp_splits_by_task_id(tmp_path: Path) -> None:
    full = {"text": "t", "code": "c", "test_setup_code": "", "test_list": [],
            "challenge_test_list": []}  # fmt: skip
    write(
        tmp_path / "mbpp/mbpp.jsonl",
        jsonl(*({**full, "task_id": i} for i in (1, 10, 11, 600, 601))),
    )
    split_ids = {s: [r["task_id"] for _, r in rows("mbpp", tmp_path, s, "full")]
                 for s in ("prompt", "test", "validation", "train")}  # fmt: skip
    assert split_ids == {"prompt": [1, 10], "test": [11], "validation": [600], "train": [601]}
    path = write(tmp_path / "mbpp/sanitized-mbpp.json", json.dumps([sanitized(11), sanitized(12)]))
    assert [w for w, _ in rows("mbpp", tmp_path, "test", "sanitized")] == [
        f"{path}#row 0", f"{path}#row 1",
    ]  # fmt: skip
    write(path, json.dumps([sanitized(12), sanitized(11)]))
    fails(lambda: rows("mbpp", tmp_path, "test", "sanitized"), f"{path}#row 1", "must ascend")
    write(path, json.dumps([sanitized(975)]))
    fails(lambda: rows("mbpp", tmp_path, "train", "sanitized"), f"{path}#row 0", "outside")


def test_bbh_task_file_and_prompt(tmp_path: Path) -> None:
    example = {"input": "not ( True ) is", "target": "False"}
    path = write(tmp_path / "bbh/bbh/boolean_expressions.json",
                 json.dumps({"canary": "c", "examples": [example, example]}))  # fmt: skip
    got = rows("bbh", tmp_path, "test", "boolean_expressions")
    assert got == [(f"{path}#row 0", example), (f"{path}#row 1", example)]
    write(path, json.dumps({"canary": "c", "examples": [example, {"input": "x"}]}))
    fails(lambda: rows("bbh", tmp_path, "test", "boolean_expressions"), f"{path}#row 1", "`target`")
    write(path, json.dumps({"canary": "c", "rows": []}))
    fails(lambda: rows("bbh", tmp_path, "test", "boolean_expressions"), str(path), '"examples"')
    write(path, "{")
    fails(lambda: rows("bbh", tmp_path, "test", "boolean_expressions"), str(path), "not valid JSON")
    write(path, json.dumps({"canary": "c", "examples": []}))
    with pytest.raises(ConfigError, match=f"^no samples in {path}"):
        rows("bbh", tmp_path, "test", "boolean_expressions")
    prompt = write(
        tmp_path / "bbh/cot-prompts/boolean_expressions.txt", "CANARY\n-----\nQ: x\nA: y"
    )
    assert bbh.cot_prompt(tmp_path, "boolean_expressions") == "Q: x\nA: y"
    write(prompt, "Q: x\nA: y")
    fails(lambda: bbh.cot_prompt(tmp_path, "boolean_expressions"), f"{prompt}:2", "'-----'")
    prompt.unlink()
    with pytest.raises(ConfigError, match="is missing: point --data-dir"):
        bbh.cot_prompt(tmp_path, "boolean_expressions")


# zip members (sciq: JSON; winogrande, piqa: Arrow streams) ---------------------------------

SCIQ = {"question": "q", "distractor3": "d3", "distractor1": "d1", "distractor2": "d2",
        "correct_answer": "a", "support": ""}  # fmt: skip
SCIQ_MEMBER = "SciQ dataset-2 3/valid.json"


def test_zip_json_member(tmp_path: Path) -> None:
    path = zipped(tmp_path / "sciq/SciQ.zip", {SCIQ_MEMBER: json.dumps([SCIQ]).encode()})
    assert rows("sciq", tmp_path, "validation") == [(f"{path}!{SCIQ_MEMBER}#row 0", SCIQ)]
    zipped(path, {SCIQ_MEMBER: json.dumps([SCIQ, {**SCIQ, "support": None}]).encode()})
    fails(
        lambda: rows("sciq", tmp_path, "validation"), f"{path}!{SCIQ_MEMBER}#row 1", "`$.support`"
    )
    where = f"{path}!SciQ dataset-2 3/test.json"
    fails(lambda: rows("sciq", tmp_path, "test"), where, "the zip has no member")


def test_a_truncated_zip(tmp_path: Path) -> None:
    path = zipped(tmp_path / "sciq/SciQ.zip", {SCIQ_MEMBER: json.dumps([SCIQ] * 50).encode()})
    path.write_bytes(path.read_bytes()[:-30])  # the central directory's end is cut off
    fails(lambda: rows("sciq", tmp_path, "validation"), str(path), "not a readable zip file")


def test_a_zip_member_with_damaged_bytes(tmp_path: Path) -> None:
    data = json.dumps([SCIQ] * 50).encode()
    path = tmp_path / "sciq/SciQ.zip"
    path.parent.mkdir(parents=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(SCIQ_MEMBER, data)
    raw = bytearray(path.read_bytes())
    at = raw.index(b'"distractor3"')
    raw[at + 1] = ord("D")  # the stored bytes no longer match the CRC
    path.write_bytes(bytes(raw))
    fails(lambda: rows("sciq", tmp_path, "validation"), f"{path}!{SCIQ_MEMBER}", "cannot be read")


WINOGRANDE = {"sentence": ["A or _ ?"], "option1": ["a"], "option2": ["b"], "answer": ["2"]}
WINOGRANDE_MEMBER = "winogrande/validation/data-00000-of-00001.arrow"


def winogrande_zip(data_dir: Path, columns: dict[str, list[Any]] | bytes) -> Path:
    data = columns if isinstance(columns, bytes) else arrow_stream(columns)
    return zipped(data_dir / "winogrande/winogrande.zip", {WINOGRANDE_MEMBER: data})


def test_zipped_arrow_stream(tmp_path: Path) -> None:
    path = winogrande_zip(tmp_path, WINOGRANDE)
    assert rows("winogrande", tmp_path, "validation") == [
        (f"{path}!{WINOGRANDE_MEMBER}#row 0",
         {"sentence": "A or _ ?", "option1": "a", "option2": "b", "answer": "2"}),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("columns", "where", "problem"),
    [
        ({k: v for k, v in WINOGRANDE.items() if k != "answer"}, "", "no column 'answer'"),
        ({**WINOGRANDE, "answer": [2]}, "#row 0", "Expected `str`, got `int`"),
        ({**WINOGRANDE, "answer": ["3"]}, "#row 0", "answer '3' is not '1' or '2'"),
        ({**WINOGRANDE, "sentence": ["no blank"]}, "#row 0", "has 0 blanks"),
        (arrow_stream(WINOGRANDE)[:-40], "", "not a readable Arrow stream"),
        (b"not arrow at all", "", "not a readable Arrow stream"),
        ({k: [] for k in WINOGRANDE}, "", "holds no rows"),
    ],
)
def test_a_bad_arrow_stream_names_the_member(
    tmp_path: Path, columns: Any, where: str, problem: str
) -> None:
    path = winogrande_zip(tmp_path, columns)
    member = f"{path}!{WINOGRANDE_MEMBER}"
    with pytest.raises(ConfigError) as info:
        rows("winogrande", tmp_path, "validation")
    assert info.value.path == member + where and problem in info.value.message


PIQA_CACHE = (
    "piqa/plain_text/1.1.0/6c611c1a9bf220943c4174e117d3b660859665baf1d43156230116185312d011"
)


def test_piqa_release_files_and_cache(tmp_path: Path) -> None:
    text = {"goal": "g", "sol1": "a ", "sol2": "b"}
    jsonl_path = write(tmp_path / "piqa/valid.jsonl", jsonl(text, text))
    labels = write(tmp_path / "piqa/valid-labels.lst", "1\n0\n")
    assert [r["label"] for _, r in rows("piqa", tmp_path, "validation")] == [1, 0]
    assert rows("piqa", tmp_path, "validation")[1] == (f"{jsonl_path}:2", {**text, "label": 0})
    write(labels, "1\n")
    fails(lambda: rows("piqa", tmp_path, "validation"), str(labels), "1 labels for the 2 rows")
    write(labels, "1\nyes\n")
    fails(lambda: rows("piqa", tmp_path, "validation"), f"{labels}:2", "'yes' is not 0 or 1")
    labels.unlink()
    fails(lambda: rows("piqa", tmp_path, "validation"), str(labels), "missing, while its split's")
    stream = arrow_stream({"goal": ["g"], "sol1": ["a"], "sol2": ["b"], "label": [-1]})
    path = zipped(tmp_path / "piqa/piqa.zip", {f"{PIQA_CACHE}/piqa-test.arrow": stream})
    assert rows("piqa", tmp_path, "test")[0][1]["label"] == -1
    stream = arrow_stream({"goal": ["g"], "sol1": ["a"], "sol2": ["b"], "label": [-1]})
    zipped(path, {f"{PIQA_CACHE}/piqa-train.arrow": stream})
    where = f"{path}!{PIQA_CACHE}/piqa-train.arrow#row 0"
    fails(lambda: rows("piqa", tmp_path, "train"), where, "label -1 is not 0 or 1")


# Arrow on disk (wikitext) and Parquet (mmlu_pro) -------------------------------------------


def test_arrow_stream_file(tmp_path: Path) -> None:
    path = write(tmp_path / "wikitext/wikitext-2-raw-v1/test/data-00000-of-00001.arrow",
                 arrow_stream({"page": [" = A = \n", " = B = \n"]}))  # fmt: skip
    assert rows("wikitext", tmp_path, "test") == [
        (f"{path}#row 0", {"page": " = A = \n"}), (f"{path}#row 1", {"page": " = B = \n"}),
    ]  # fmt: skip
    write(path, arrow_stream({"text": ["x"]}))
    fails(lambda: rows("wikitext", tmp_path, "test"), str(path), "no column 'page' (it has text")
    write(path, arrow_stream({"page": [" = A = ", None]}))
    fails(lambda: rows("wikitext", tmp_path, "test"), f"{path}#row 1", "got `null`")


def mmlu_pro_row(i: int, category: str, **changes: Any) -> dict[str, Any]:
    row = {"question_id": i, "question": "q", "options": ["x", "y", "z"], "answer": "B",
           "answer_index": 1, "cot_content": "", "category": category, "src": "s"}  # fmt: skip
    return {**row, **changes}


def parquet(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(records), path)
    return path


def test_parquet_rows_and_categories(tmp_path: Path) -> None:
    records = [mmlu_pro_row(0, "law"), mmlu_pro_row(1, "math"), mmlu_pro_row(2, "law")]
    path = parquet(tmp_path / "mmlu_pro/test-00000-of-00001.parquet", records)
    assert [r for _, r in rows("mmlu_pro", tmp_path, "test")] == records
    law = rows("mmlu_pro", tmp_path, "test", "law")
    assert [w for w, _ in law] == [f"{path}#row 0", f"{path}#row 2"]
    parquet(path, [mmlu_pro_row(0, "law", answer="D")])
    fails(lambda: rows("mmlu_pro", tmp_path, "test"), f"{path}#row 0", "answer 'D' is not one")
    parquet(path, [mmlu_pro_row(0, "law", answer_index=3)])
    fails(lambda: rows("mmlu_pro", tmp_path, "test"), f"{path}#row 0", "answer_index 3 is not")
    parquet(path, [mmlu_pro_row(0, "Law")])
    fails(lambda: rows("mmlu_pro", tmp_path, "test"), f"{path}#row 0", "category 'Law' is not")
    parquet(path, [{k: v for k, v in mmlu_pro_row(0, "law").items() if k != "src"}])
    fails(lambda: rows("mmlu_pro", tmp_path, "test"), str(path), "no column 'src'")
    data = path.read_bytes()
    write(path, data[: len(data) // 2])
    fails(lambda: rows("mmlu_pro", tmp_path, "test"), str(path), "not a readable Parquet file")


# CSV with a header (gpqa_diamond: synthetic placeholders only), TSV (openbookqa), CSV (mmlu)


def gpqa_csv(
    data_dir: Path, records: list[dict[str, str]], header: list[str] | None = None
) -> Path:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header or GPQA_COLUMNS)
    for record in records:
        writer.writerow([record.get(c, "") for c in GPQA_COLUMNS])
    return write(data_dir / "gpqa_diamond/gpqa_diamond.csv", out.getvalue())


def gpqa_record(i: int, **changes: str) -> dict[str, str]:
    used = ("Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2",
            "Incorrect Answer 3")  # fmt: skip
    record = {c: f"placeholder {c} {i}\nsecond line, with a comma" for c in used}
    return {**record, "Record ID": f"rec{i}", **changes}


def test_csv_with_a_header(tmp_path: Path) -> None:
    path = gpqa_csv(tmp_path, [gpqa_record(0), gpqa_record(1)])
    got = rows("gpqa_diamond", tmp_path, "train")
    # five quoted fields of two lines each: a record takes six lines
    assert [w for w, _ in got] == [f"{path}:2", f"{path}:8"]
    assert [list(r) for _, r in got] == [list(GPQA_COLUMNS)] * 2
    assert got[1][1]["Question"] == "placeholder Question 1\nsecond line, with a comma"
    assert got[1][1]["Explanation"] == ""


def test_gpqa_errors_name_line_and_column_never_a_cell(tmp_path: Path) -> None:
    path = gpqa_csv(tmp_path, [gpqa_record(0), gpqa_record(1, **{"Correct Answer": " "})])
    error = fails(lambda: rows("gpqa_diamond", tmp_path, "train"), f"{path}:8",
                  "column 'Correct Answer' is empty")  # fmt: skip
    assert "placeholder" not in error.message
    gpqa_csv(tmp_path, [gpqa_record(0), gpqa_record(1, **{"Record ID": "rec0"})])
    error = fails(lambda: rows("gpqa_diamond", tmp_path, "train"), f"{path}:8", f"{path}:2")
    assert "rec0" not in error.message
    gpqa_csv(tmp_path, [gpqa_record(0)], header=["Question", *GPQA_COLUMNS[1:]])
    fails(lambda: rows("gpqa_diamond", tmp_path, "train"), f"{path}:1", "expected the header")
    gpqa_csv(tmp_path, [gpqa_record(0)])
    write(path, path.read_text() + "a,b\n")
    fails(lambda: rows("gpqa_diamond", tmp_path, "train"), f"{path}:8", "expected 78 fields, got 2")


OBQA_HEADER = "ID\tQuestion Stem\tChoices\tComplete Question\tAnswer Key\n"


def test_tsv(tmp_path: Path) -> None:
    line = '7-1\tA "quoted" stem\t(A) one (B) two, 2 (C) three (D) four\tstem (A) one\tB\n'
    path = write(tmp_path / "openbookqa/dev.tsv", OBQA_HEADER + line)
    assert rows("openbookqa", tmp_path, "validation") == [
        (f"{path}:2", {"id": "7-1", "question_stem": 'A "quoted" stem',
                       "choices": {"text": ["one", "two, 2", "three", "four"],
                                   "label": ["A", "B", "C", "D"]},
                       "answerKey": "B"}),
    ]  # fmt: skip
    write(path, OBQA_HEADER + line.replace("(C)", "(E)"))
    fails(lambda: rows("openbookqa", tmp_path, "validation"), f"{path}:2", "do not split")
    write(path, OBQA_HEADER + line.replace("\tB\n", "\tE\n"))
    fails(lambda: rows("openbookqa", tmp_path, "validation"), f"{path}:2", "answerKey 'E'")
    write(path, OBQA_HEADER + line.replace("\tB\n", "\n"))
    fails(lambda: rows("openbookqa", tmp_path, "validation"), f"{path}:2", "expected 5 fields")
    write(path, OBQA_HEADER.replace("ID", "Id") + line)
    fails(lambda: rows("openbookqa", tmp_path, "validation"), f"{path}:1", "expected the header")
    write(path, OBQA_HEADER)
    with pytest.raises(ConfigError, match=f"^no samples in {path}"):
        rows("openbookqa", tmp_path, "validation")


def test_openbookqa_release_jsonl_is_converted(tmp_path: Path) -> None:
    release = {"id": "7-1", "question": {"stem": "s", "choices": [
        {"text": "a", "label": "A"}, {"text": "b", "label": "B"}]}, "answerKey": "A"}  # fmt: skip
    path = write(tmp_path / "openbookqa/test.jsonl", jsonl(release))
    assert rows("openbookqa", tmp_path, "test") == [
        (f"{path}:1", {"id": "7-1", "question_stem": "s",
                       "choices": {"text": ["a", "b"], "label": ["A", "B"]}, "answerKey": "A"}),
    ]  # fmt: skip


def test_headerless_csv_per_subject(tmp_path: Path) -> None:
    path = write(tmp_path / "mmlu/val/anatomy_val.csv", '"q, with\nlines",a,b,c,d,C\nr,a,b,c,d,A\n')
    assert rows("mmlu", tmp_path, "validation", "anatomy") == [
        (f"{path}:1", {"question": "q, with\nlines", "subject": "anatomy",
                       "choices": ["a", "b", "c", "d"], "answer": 2}),
        (f"{path}:3", {"question": "r", "subject": "anatomy", "choices": ["a", "b", "c", "d"],
                       "answer": 0}),
    ]  # fmt: skip
    missing = tmp_path / "mmlu/val/abstract_algebra_val.csv"  # the first subject
    fails(lambda: rows("mmlu", tmp_path, "validation"), str(missing), "missing, while")


def test_bz2_six_line_text(tmp_path: Path) -> None:
    path = write(tmp_path / "hellaswag/hellaswag_val_full.txt.bz2",
                 bz2.compress(b"Label: A man. he\n1\ne0\ne1\ne2\ne3\n"))  # fmt: skip
    assert rows("hellaswag", tmp_path, "validation") == [
        (f"{path}:1", {"activity_label": "Label", "ctx_a": "A man. he", "ctx_b": "",
                       "ctx": "A man. he", "endings": ["e0", "e1", "e2", "e3"], "split": "val",
                       "label": "1"}),
    ]  # fmt: skip


def test_ids_must_be_unique(tmp_path: Path) -> None:
    url = "https://artofproblemsolving.com/wiki/index.php/2024_AIME_I_Problems/Problem_1"
    aime = {"problem": "p", "solution": "s", "answer": "7", "url": url}
    path = write(tmp_path / "aime2024/test.jsonl", jsonl(aime, aime))
    fails(
        lambda: rows("aime2024", tmp_path, "train"), f"{path}:2", "ID '2024-I-1' is already used at"
    )
    row = {"problem": "p", "answer": 1, "id": "0"}
    path = write(tmp_path / "aime2025/test.jsonl", jsonl(row, row))
    fails(lambda: rows("aime2025", tmp_path, "test"), f"{path}:2", "id '0' is already used")
    math = {"problem": "p", "solution": "s", "answer": "1", "subject": "A", "level": 1,
            "unique_id": "u"}  # fmt: skip
    path = write(tmp_path / "math500/test.jsonl", jsonl(math, math))
    fails(lambda: rows("math500", tmp_path, "test"), f"{path}:2", "unique_id 'u' is already used")


def test_choice_texts_and_labels_pair_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    release = {"id": "7-1", "question": {"stem": "s", "choices": [{"text": "a", "label": "A"}]},
               "answerKey": "A"}  # fmt: skip
    write(tmp_path / "openbookqa/train.jsonl", jsonl(release))
    assert rows("openbookqa", tmp_path, "train")[0][1]["choices"] == {"text": ["a"], "label": ["A"]}
    hub = {"id": "7-1", "question_stem": "s", "choices": {"text": ["a"], "label": ["A", "B"]},
           "answerKey": "A"}  # fmt: skip
    fake = types.SimpleNamespace(load_dataset=lambda path, name, split: [hub])
    monkeypatch.setitem(sys.modules, "datasets", fake)
    with pytest.raises(ConfigError, match=r"row 0: 1 choice texts but 2 labels"):
        rows("openbookqa", tmp_path, "validation")
