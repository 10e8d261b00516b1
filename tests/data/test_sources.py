"""Every dataset module against the stored files: row counts per split (as each SOURCE.md gives
them), field names and value types (the hub dataset's), a known first row, the file order, and
the files' checksums (each listed in its SOURCE.md).

GPQA's rows never appear here: only its counts, column names and value types are checked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sieval.data.bbh import SUBTASKS
from sieval.data.gpqa_diamond import COLUMNS as GPQA_COLUMNS
from sieval.data.registry import SOURCES, get_source
from sieval.data.source import file_sha256

# A value's shape: a type, [shape] for a list of it, {key: shape} for a dict with exactly those
# keys, or a tuple of types or shapes (one of them).
Shape = Any

CHOICES = {"text": [str], "label": [str]}

SHAPES: dict[str, dict[str, Shape]] = {
    "arc_easy": {"id": str, "question": str, "choices": CHOICES, "answerKey": str},
    "arc_challenge": {"id": str, "question": str, "choices": CHOICES, "answerKey": str},
    "gsm8k": {"question": str, "answer": str},
    "hellaswag": {"activity_label": str, "ctx_a": str, "ctx_b": str, "ctx": str,
                  "endings": [str], "split": str, "label": str},
    "mmlu": {"question": str, "subject": str, "choices": [str], "answer": int},
    "winogrande": {"sentence": str, "option1": str, "option2": str, "answer": str},
    "piqa": {"goal": str, "sol1": str, "sol2": str, "label": int},
    "openbookqa": {"id": str, "question_stem": str, "choices": CHOICES, "answerKey": str},
    "sciq": {"question": str, "distractor3": str, "distractor1": str, "distractor2": str,
             "correct_answer": str, "support": str},
    "boolq": {"question": str, "passage": str, "idx": int, "label": int},
    "truthfulqa_mc": {"question": str, "mc1_targets": {"choices": [str], "labels": [int]},
                      "mc2_targets": {"choices": [str], "labels": [int]}},
    "lambada_openai": {"text": str},
    "wikitext": {"page": str},
    "ifeval": {"key": int, "prompt": str, "instruction_id_list": [str], "kwargs": [dict]},
    "bbh": {"input": str, "target": str},
    "math500": {"problem": str, "solution": str, "answer": str, "subject": str, "level": int,
                "unique_id": str},
    "aime2024": {"ID": str, "Problem": str, "Solution": str, "Answer": int},
    "aime2025": {"problem": str, "answer": int, "id": str},
    "gpqa_diamond": dict.fromkeys(GPQA_COLUMNS, str),
    "mmlu_pro": {"question_id": int, "question": str, "options": [str], "answer": str,
                 "answer_index": int, "cot_content": str, "category": str, "src": str},
    "humaneval": {"task_id": str, "prompt": str, "canonical_solution": str, "test": str,
                  "entry_point": str},
    "mbpp": {"task_id": int, "text": str, "code": str, "test_list": [str], "test_setup_code": str,
             "challenge_test_list": [str]},
    "mt_bench": {"question_id": int, "category": str, "turns": [str],
                 "reference": ([str], type(None))},
    "arena_hard_v2": {"uid": str, "category": str, "subcategory": str, "prompt": str},
}  # fmt: skip
SUBSET_SHAPES = {
    ("mbpp", "sanitized"): {"source_file": str, "task_id": int, "prompt": str, "code": str,
                            "test_imports": [str], "test_list": [str]},
}  # fmt: skip

# SOURCE.md: 27 subtasks of 250 examples but three
BBH_SMALLER = {"causal_judgement": 187, "penguins_in_a_table": 146, "snarks": 178}
BBH_SUBTASKS = sorted(
    p.stem for p in (Path(__file__).parents[3] / "shared/data/bbh/bbh").glob("*.json")
)

# (dataset, split, subset): rows stored
COUNTS: dict[tuple[str, str, str | None], int] = {
    ("arc_easy", "train", None): 2251,
    ("arc_easy", "validation", None): 570,
    ("arc_easy", "test", None): 2376,
    ("arc_challenge", "train", None): 1119,
    ("arc_challenge", "validation", None): 299,
    ("arc_challenge", "test", None): 1172,
    ("gsm8k", "train", None): 7473,
    ("gsm8k", "test", None): 1319,
    ("hellaswag", "validation", None): 10042,
    ("mmlu", "test", None): 14042,
    ("mmlu", "validation", None): 1531,
    ("mmlu", "dev", None): 285,
    ("mmlu", "test", "anatomy"): 135,
    ("winogrande", "train", None): 40398,
    ("winogrande", "validation", None): 1267,
    ("winogrande", "test", None): 1767,
    ("piqa", "train", None): 16113,
    ("piqa", "validation", None): 1838,
    ("piqa", "test", None): 3084,
    ("openbookqa", "train", None): 4957,
    ("openbookqa", "validation", None): 500,
    ("openbookqa", "test", None): 500,
    ("sciq", "train", None): 11679,
    ("sciq", "validation", None): 1000,
    ("sciq", "test", None): 1000,
    ("boolq", "validation", None): 3270,
    ("truthfulqa_mc", "validation", None): 817,
    ("lambada_openai", "test", None): 5153,
    ("wikitext", "test", None): 62,
    ("wikitext", "validation", None): 60,
    ("ifeval", "train", None): 541,
    **{("bbh", "test", t): BBH_SMALLER.get(t, 250) for t in SUBTASKS},
    ("math500", "test", None): 500,
    ("aime2024", "train", None): 30,
    ("aime2025", "test", None): 30,
    ("gpqa_diamond", "train", None): 198,
    ("mmlu_pro", "test", None): 12032,
    ("mmlu_pro", "validation", None): 70,
    ("mmlu_pro", "test", "computer science"): 410,
    ("mmlu_pro", "validation", "math"): 5,
    ("humaneval", "test", None): 164,
    # SOURCE.md and the release README: prompt 1-10, test 11-510, validation 511-600, train 601-974
    ("mbpp", "prompt", "full"): 10,
    ("mbpp", "test", "full"): 500,
    ("mbpp", "validation", "full"): 90,
    ("mbpp", "train", "full"): 374,
    ("mbpp", "prompt", "sanitized"): 7,
    ("mbpp", "test", "sanitized"): 257,
    ("mbpp", "validation", "sanitized"): 43,
    ("mbpp", "train", "sanitized"): 120,
    ("mt_bench", "test", None): 80,
    ("arena_hard_v2", "test", None): 750,
}

# (dataset, split, subset): (field, value) of the first and the last row
ENDS: dict[tuple[str, str, str | None], tuple[tuple[str, Any], tuple[str, Any]]] = {
    ("arc_easy", "test", None): (("id", "Mercury_417466"), ("id", "VASoL_2009_5_34")),
    ("arc_challenge", "test", None): (("id", "Mercury_7175875"), ("id", "MEA_2013_8_15")),
    ("gsm8k", "test", None): (
        ("answer", "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = "
         "$<<9*2=18>>18 every day at the farmer’s market.\n#### 18"),
        ("question", "Henry and 3 of his friends order 7 pizzas for lunch. Each pizza is cut into "
         "8 slices. If Henry and his friends want to share the pizzas equally, how many slices "
         "can each of them have?"),
    ),
    ("hellaswag", "validation", None): (("ctx", "A man is sitting on a roof. he"), ("label", "2")),
    ("mmlu", "test", None): (
        ("answer", 1),
        ("choices", ["Divine power", "Sexual virility", "Military acumen",
                     "Philosophical intellect"]),
    ),
    ("mmlu", "test", "anatomy"): (("question", "A lesion causing compression of the facial nerve "
                                   "at the stylomastoid foramen will cause ipsilateral"),
                                  ("subject", "anatomy")),
    ("winogrande", "validation", None): (
        ("sentence", "Sarah was a much better surgeon than Maria so _ always got the easier "
         "cases."),
        ("sentence", "She chose the black car over the green car, because the _ has more brighter "
         "color."),
    ),
    ("piqa", "validation", None): (
        ("goal", "How do I ready a guinea pig cage for it's new occupants?"),
        ("sol2", "You can purchase a tennis racket at any sports store"),
    ),
    ("piqa", "train", None): (("label", 1), ("goal", "how do you frost a cupcake?")),
    ("openbookqa", "train", None): (("id", "7-980"), ("id", "14-1512")),
    ("openbookqa", "validation", None): (("id", "8-376"), ("id", "7-242")),
    ("openbookqa", "test", None): (("id", "8-343"), ("id", "7-7")),
    ("sciq", "test", None): (("correct_answer", "oxidants"),
                             ("correct_answer", "sulfur dioxide (so2)")),
    ("boolq", "validation", None): (
        ("question", "does ethanol take more energy make that produces"),
        ("idx", 3269),
    ),
    ("truthfulqa_mc", "validation", None): (
        ("question", "What is the smallest country in the world that is at least one square mile "
         "in area?"),
        ("question", 'Known for jets and batteries, this brilliant inventor and businessman never '
         'graduated college but founded a major company. His name is "Bill" what?'),
    ),
    ("ifeval", "train", None): (("key", 1000), ("key", 3757)),
    ("bbh", "test", "date_understanding"): (
        ("input", "Today is Christmas Eve of 1937. What is the date tomorrow in MM/DD/YYYY?\n"
         "Options:\n(A) 12/11/1937\n(B) 12/25/1937\n(C) 01/04/1938\n(D) 12/04/1937\n"
         "(E) 12/25/2006\n(F) 07/25/1937"),
        ("target", "(F)"),
    ),
    ("math500", "test", None): (("answer", "\\left( 3, \\frac{\\pi}{2} \\right)"),
                                ("unique_id", "test/geometry/615.json")),
    ("aime2024", "train", None): (("ID", "2024-I-1"), ("ID", "2024-II-9")),
    ("aime2025", "test", None): (("id", "0"), ("id", "29")),
    ("mmlu_pro", "test", None): (("question_id", 70), ("question_id", 12256)),
    ("mmlu_pro", "validation", None): (("question_id", 0), ("question_id", 69)),
    ("humaneval", "test", None): (("entry_point", "has_close_elements"),
                                  ("task_id", "HumanEval/163")),
}  # fmt: skip


def shape_errors(value: Any, shape: Shape, at: str) -> list[str]:
    """What in ``value`` does not have ``shape`` (empty when it does)."""
    if isinstance(shape, dict):
        if not isinstance(value, dict) or list(value) != list(shape):
            return [f"{at}: keys {list(value) if isinstance(value, dict) else value!r}"]
        return [e for k, s in shape.items() for e in shape_errors(value[k], s, f"{at}.{k}")]
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [f"{at}: {type(value).__name__}, not a list"]
        return [e for i, v in enumerate(value) for e in shape_errors(v, shape[0], f"{at}[{i}]")]
    if isinstance(shape, tuple) and not all(isinstance(t, type) for t in shape):  # one of them
        alternatives = [shape_errors(value, alt, at) for alt in shape]
        return [] if any(not e for e in alternatives) else alternatives[0]
    types = shape if isinstance(shape, tuple) else (shape,)
    if isinstance(value, bool) and bool not in types:
        return [f"{at}: bool"]
    return [] if isinstance(value, types) else [f"{at}: {type(value).__name__}"]


def position(where: str) -> tuple[str, int]:
    """``(file, line or row)`` of a row's place, to check the order."""
    match = re.fullmatch(r"(.*?)(?::(\d+)|#row (\d+))", where)
    assert match, where
    return match[1], int(match[2] or match[3])


@pytest.mark.parametrize(("dataset", "split", "subset"), sorted(COUNTS, key=str), ids=str)
def test_rows_fields_and_order(
    data_dir: Path, dataset: str, split: str, subset: str | None
) -> None:
    source = get_source(dataset)
    rows = source.rows(data_dir, split, subset)
    assert len(rows) == COUNTS[dataset, split, subset]
    shape = SUBSET_SHAPES.get((dataset, subset), SHAPES[dataset])
    if (dataset, subset) not in SUBSET_SHAPES:
        assert tuple(shape) == source.fields
    errors = [e for where, fields in rows for e in shape_errors(fields, shape, where)]
    assert errors[:5] == []
    places = [position(where) for where, _ in rows]
    files = [str(p) for p in source.files(data_dir, split, subset)]
    assert {f.split("!")[0] for f, _ in places} <= set(files)
    assert places == sorted(places, key=lambda p: (files.index(p[0].split("!")[0]), p[1]))
    assert len(set(places)) == len(places)
    if (dataset, split, subset) in ENDS:
        (first_key, first), (last_key, last) = ENDS[dataset, split, subset]
        assert (rows[0][1][first_key], rows[-1][1][last_key]) == (first, last)


def test_every_split_is_counted() -> None:
    counted = {(d, s) for d, s, _ in COUNTS}
    assert counted == {(d, s) for d, source in SOURCES.items() for s in source.splits}


# Folders whose SOURCE.md gives no per-file checksum (MMLU: 171 CSV files, one table row).
NO_FILE_SUMS = {"mmlu"}


@pytest.mark.parametrize("dataset", sorted(SOURCES))
def test_the_files_read_are_the_ones_source_md_describes(data_dir: Path, dataset: str) -> None:
    source = get_source(dataset)
    text = (data_dir / dataset / "SOURCE.md").read_text()
    subsets = source.subsets if source.subset_required else (None,)
    paths = {p for s in source.splits for sub in subsets for p in source.files(data_dir, s, sub)}
    assert paths and all(p.is_file() for p in paths)
    if dataset not in NO_FILE_SUMS:
        assert [p.name for p in sorted(paths) if file_sha256(p) not in text] == []


def test_piqa_release_and_cache_agree(data_dir: Path) -> None:
    """Validation is read from the release files; the zipped cache holds the same rows."""
    from sieval.data import piqa

    cached = piqa._cache_rows(data_dir / "piqa" / "piqa.zip", "validation")
    release = get_source("piqa").rows(data_dir, "validation")
    assert [msgspec.to_builtins(row) for _, row in cached] == [row for _, row in release]
    assert sum(row["label"] for _, row in release) == 928  # SOURCE.md: 910 x 0, 928 x 1


@pytest.mark.parametrize("split", ["train", "validation", "test"])
def test_openbookqa_release_files_equal_the_hub_cache(data_dir: Path, split: str) -> None:
    """The release's JSON Lines and TSV, converted, are the hub's rows (its zipped Arrow cache)."""
    from sieval.data.arrow import zipped_stream_rows

    member = (
        f"openbookqa/main/0.0.0/388097ea7776314e93a529163e0fea805b8a6454/openbookqa-{split}.arrow"
    )
    source = get_source("openbookqa")
    cache = zipped_stream_rows(data_dir / "openbookqa" / "openbookqa.zip", member, source.fields)
    assert [row for _, row in source.rows(data_dir, split)] == [row for _, row in cache]


def test_sciq_support_is_empty_where_the_readme_says(data_dir: Path) -> None:
    """SOURCE.md: support is empty in 1,198 train, 113 validation and 116 test rows."""
    source = get_source("sciq")
    empty = {s: sum(not r["support"] for _, r in source.rows(data_dir, s)) for s in source.splits}
    assert empty == {"train": 1198, "validation": 113, "test": 116}


def test_boolq_labels_become_ints(data_dir: Path) -> None:
    """SOURCE.md: "true" 2,033, "false" 1,237; idx runs 0-3269."""
    rows = get_source("boolq").rows(data_dir, "validation")
    assert [r["label"] for _, r in rows].count(1) == 2033
    assert {r["label"] for _, r in rows} == {0, 1}
    assert [r["idx"] for _, r in rows] == list(range(3270))


def test_truthfulqa_targets_keep_the_release_order(data_dir: Path) -> None:
    """SOURCE.md: mc1's true answer always first; mc2 5,882 answers, 2,585 true, and its trues a
    leading block except at rows 25 and 208."""
    rows = [r for _, r in get_source("truthfulqa_mc").rows(data_dir, "validation")]
    assert all(r["mc1_targets"]["labels"] == [1] + [0] * (len(r["mc1_targets"]["labels"]) - 1)
               for r in rows)  # fmt: skip
    mc2 = [r["mc2_targets"]["labels"] for r in rows]
    assert (sum(map(len, mc2)), sum(map(sum, mc2))) == (5882, 2585)
    assert [i for i, labels in enumerate(mc2) if 1 in labels[labels.index(0) :]] == [25, 208]


def test_lambada_duplicates_are_kept_where_openai_has_them(data_dir: Path) -> None:
    """SOURCE.md: 5,151 distinct texts; lines 1754 = 1890 and 3470 = 3625 (1-based)."""
    rows = get_source("lambada_openai").rows(data_dir, "test")
    texts = [r["text"] for _, r in rows]
    assert len(set(texts)) == 5151
    assert (texts[1753], texts[3469]) == (texts[1889], texts[3624])
    assert texts[0].endswith("I don't care about signs")
    assert rows[1889][0].endswith("lambada_test.jsonl:1890")


def test_wikitext_pages_are_the_whole_text(data_dir: Path) -> None:
    """SOURCE.md: the 62 test pages are 1,290,527 bytes with 4,296 newlines and 241,211
    whitespace-separated tokens; the 60 validation pages 1,146,785 bytes; a page opens with its
    top-level heading."""
    source = get_source("wikitext")
    test = "".join(r["page"] for _, r in source.rows(data_dir, "test"))
    assert (len(test.encode()), test.count("\n"), len(test.split())) == (1290527, 4296, 241211)
    validation = "".join(r["page"] for _, r in source.rows(data_dir, "validation"))
    assert len(validation.encode()) == 1146785
    assert source.rows(data_dir, "test")[0][1]["page"].startswith(" = Robert Boulter = \n")


def test_ifeval_instructions_and_their_arguments(data_dir: Path) -> None:
    """SOURCE.md: 834 instructions, 25 distinct ids; the first row's kwargs as stored."""
    rows = [r for _, r in get_source("ifeval").rows(data_dir, "train")]
    ids = [i for r in rows for i in r["instruction_id_list"]]
    assert (len(ids), len(set(ids))) == (834, 25)
    assert rows[0]["kwargs"] == [
        {},
        {"num_highlights": 3},
        {"relation": "at least", "num_words": 300},
    ]


def test_bbh_has_the_27_subtasks_and_their_prompts(data_dir: Path) -> None:
    from sieval.data import bbh

    assert list(SUBTASKS) == sorted(p.stem for p in (data_dir / "bbh/bbh").glob("*.json"))
    assert len(bbh.SUBTASKS) == 27
    prompts = {t: bbh.cot_prompt(data_dir, t) for t in bbh.SUBTASKS}
    for task, prompt in prompts.items():
        assert not prompt.startswith(("BENCHMARK", "-----")), task
        assert prompt.count("Q: ") == 3 and prompt.count("So the answer is") == 3, task
        file = bbh.cot_prompt_file(data_dir, task).read_text()
        assert file.endswith("\n-----\n" + prompt) and file.count("\n") == prompt.count("\n") + 2
    assert prompts["date_understanding"].startswith("Infer the date from context.\n\nQ: ")
    # SOURCE.md: the three logical_deduction_* tasks share one prompt, and so do tracking_*
    assert len({prompts[t] for t in bbh.SUBTASKS if t.startswith("logical_deduction")}) == 1


def test_math500_subjects_and_levels(data_dir: Path) -> None:
    """SOURCE.md: subjects Algebra 124 ... Counting & Probability 38; levels 43/90/105/128/134."""
    from collections import Counter

    rows = [r for _, r in get_source("math500").rows(data_dir, "test")]
    assert Counter(r["subject"] for r in rows)["Counting & Probability"] == 38
    assert [Counter(r["level"] for r in rows)[k] for k in range(1, 6)] == [43, 90, 105, 128, 134]


# SOURCE.md: the official answer keys, problems 1-15 of each exam
AIME_KEYS = {
    "2024-I": [204, 25, 809, 116, 104, 294, 540, 197, 480, 113, 371, 385, 110, 104, 721],
    "2024-II": [73, 236, 45, 33, 80, 55, 699, 127, 902, 468, 601, 23, 321, 211, 315],
    "2025-I": [70, 588, 16, 117, 279, 504, 821, 77, 62, 81, 259, 510, 204, 60, 735],
    "2025-II": [468, 49, 82, 106, 336, 293, 237, 610, 149, 907, 113, 19, 248, 104, 240],
}


def test_aime_answers_are_the_official_keys(data_dir: Path) -> None:
    keys = {
        f"{exam}-{i}": a for exam, answers in AIME_KEYS.items() for i, a in enumerate(answers, 1)
    }
    rows24 = [r for _, r in get_source("aime2024").rows(data_dir, "train")]
    assert {r["ID"]: r["Answer"] for r in rows24} == {k: v for k, v in keys.items() if "2024" in k}
    rows25 = [r for _, r in get_source("aime2025").rows(data_dir, "test")]
    assert [r["answer"] for r in rows25] == AIME_KEYS["2025-I"] + AIME_KEYS["2025-II"]
    assert [r["id"] for r in rows25] == [str(i) for i in range(30)]


def test_gpqa_columns_and_counts_only(data_dir: Path) -> None:
    """No GPQA text here: the header (read with csv), 198 distinct Record IDs, the domains'
    counts (SOURCE.md: Chemistry 93, Physics 86, Biology 19)."""
    import csv
    from collections import Counter

    with (data_dir / "gpqa_diamond" / "gpqa_diamond.csv").open(newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert list(GPQA_COLUMNS) == header and len(header) == 78
    rows = [r for _, r in get_source("gpqa_diamond").rows(data_dir, "train")]
    assert len({r["Record ID"] for r in rows}) == 198
    domains = Counter(r["High-level domain"] for r in rows)
    assert domains == {"Chemistry": 93, "Physics": 86, "Biology": 19}
    assert all(r[c].strip() for r in rows for c in ("Question", "Correct Answer"))


def test_mmlu_pro_categories_and_options(data_dir: Path) -> None:
    """SOURCE.md: test by category, 10 options in 9,981 test rows, 5 validation rows a category,
    cot_content only in validation; validation row 0 as SOURCE.md shows it."""
    from collections import Counter

    source = get_source("mmlu_pro")
    test = [r for _, r in source.rows(data_dir, "test")]
    assert Counter(r["category"] for r in test) == {
        "math": 1351, "physics": 1299, "chemistry": 1132, "law": 1101, "engineering": 969,
        "other": 924, "economics": 844, "health": 818, "psychology": 798, "business": 789,
        "biology": 717, "philosophy": 499, "computer science": 410, "history": 381,
    }  # fmt: skip
    assert Counter(len(r["options"]) for r in test)[10] == 9981
    assert not any(r["cot_content"] for r in test)
    validation = [r for _, r in source.rows(data_dir, "validation")]
    assert Counter(r["category"] for r in validation) == dict.fromkeys(source.subsets, 5)
    first = validation[0]
    assert first["options"] == ["0", "30", "3", "10", "12", "50", "2", "100", "20", "5"]
    assert (first["answer"], first["answer_index"], first["src"]) == (
        "A",
        0,
        "cot_lib-abstract_algebra",
    )
    for category in source.subsets:
        part = source.rows(data_dir, "test", category)
        assert [r["category"] for _, r in part] == [category] * len(part)


def test_humaneval_task_ids_in_order(data_dir: Path) -> None:
    rows = [r for _, r in get_source("humaneval").rows(data_dir, "test")]
    assert [r["task_id"] for r in rows] == [f"HumanEval/{i}" for i in range(164)]
    assert all(f"def {r['entry_point']}(" in r["prompt"] for r in rows)
    assert all("def check(candidate)" in r["test"] for r in rows)


def test_mbpp_splits_are_the_readme_id_ranges(data_dir: Path) -> None:
    from sieval.data.mbpp import SANITIZED_FIELDS

    assert tuple(SUBSET_SHAPES["mbpp", "sanitized"]) == SANITIZED_FIELDS
    source = get_source("mbpp")
    full = {s: [r["task_id"] for _, r in source.rows(data_dir, s, "full")] for s in source.splits}
    ranges = {"prompt": (1, 11), "test": (11, 511), "validation": (511, 601), "train": (601, 975)}
    assert full == {s: list(range(*r)) for s, r in ranges.items()}
    sanitized = [r for s in source.splits for _, r in source.rows(data_dir, s, "sanitized")]
    assert len({r["task_id"] for r in sanitized}) == 427
    assert sum(bool(r["test_imports"]) for r in sanitized) == 13  # SOURCE.md: 13 tasks need them
    assert all("\r\n" in r["code"] for _, r in source.rows(data_dir, "test", "full")[:3])
