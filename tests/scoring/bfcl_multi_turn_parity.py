"""sieval's BFCL multi-turn verdicts beside bfcl-eval's own, on the same outputs (the parity
test's engine, and its table for ``docs/evidence/bfcl-checker-parity.md``).

    python -m tests.scoring.bfcl_multi_turn_parity [LIMIT]     print the table per category

The outputs, in both columns (a step's response as BFCL's inference stores it — FC:
``[{name: arguments_json}]`` or the reply's text; Prompt: the text): every recorded real run
(``tests/fixtures/bfcl/multi_turn/*.jsonl``: Gemma 3 270M through vLLM, ``live``, and sieval's
embedded reference server, ``embedded``), plus outputs planted from each entry's ground truth:
correct (all of a turn's calls in one step; one call a step and a closing text step), a wrong
argument, a call missing, an extra call, the calls in reverse order, a call repeated (a
diverging state), a turn with no call, text that decodes to no call, a turn fewer (stopped at
the step limit), the next turn's calls made a turn early (in miss_func/miss_param, in the turn
that has no ground truth), an unknown function, and (Prompt) an empty dict argument, a nested
call, a dict and a tuple argument, a call without keywords as a value. sieval's verdict: the
task's own decoding (``scoring/bfcl_multi_turn.fc_calls``/``prompt_calls``) and ``check``, the
environments reached through ``scoring/bfcl_env.py``; BFCL's: ``bfcl_multi_turn_oracle_driver.py``
in the oracle venv. Equal means the same pass/fail and, on a fail, the same ``error_type``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from sieval.scoring.bfcl_env import Call, Environments
from sieval.scoring.bfcl_multi_turn import check, fc_calls, ground_truth_call, prompt_calls
from sieval.tasks.bfcl_multi_turn import CATEGORIES, entries

HERE = Path(__file__).parent
DRIVER = HERE / "bfcl_multi_turn_oracle_driver.py"
FIXTURES = HERE.parent / "fixtures" / "bfcl" / "multi_turn"


def _keywords(call: Call, docs: dict[str, list[str]]) -> dict[str, Any]:
    """A ground-truth call's arguments as keywords (its positional ones named by the function
    doc's parameter order)."""
    names = docs.get(call.name, [])
    out = {names[i] if i < len(names) else f"arg{i}": v for i, v in enumerate(call.args)}
    out.update(call.kwargs)
    return out


def _as_fc(calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, str]]:
    return [{name: json.dumps(args)} for name, args in calls]


def _as_prompt(calls: list[tuple[str, dict[str, Any]]]) -> str:
    return (
        "["
        + ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls)
        + "]"
    )


def _wrong(args: dict[str, Any]) -> dict[str, Any]:
    for key, value in args.items():
        if isinstance(value, str):
            return {**args, key: value + "_wrong"}
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {**args, key: value + 7}
    return {**args, "unexpected": 1}


def planted(entry: dict[str, Any], gold: list[list[str]]) -> list[tuple[str, list]]:
    """(name, turns) outputs for one entry; a turn is a list of steps, a step a list of
    (name, arguments) calls, or a string (a reply that holds no call)."""
    docs = {
        f["name"]: list(f["parameters"]["properties"])
        for f in entry["function"] + [d for ds in entry["missed"].values() for d in ds]
    }
    turns = [[(c.name, _keywords(c, docs)) for c in map(ground_truth_call, turn)] for turn in gold]
    called = [i for i, t in enumerate(turns) if t]
    first, last = called[0], called[-1]
    out: list[tuple[str, list]] = [
        ("correct", [[t] if t else ["I cannot do that."] for t in turns]),
        ("one_call_a_step", [[[c] for c in t] + ["Done."] for t in turns]),
    ]

    def changed(index: int, calls: list) -> list:
        return [[calls] if i == index else ([t] if t else []) for i, t in enumerate(turns)]

    name, args = turns[first][0]
    out.append(("wrong_argument", changed(first, [(name, _wrong(args)), *turns[first][1:]])))
    out.append(("missing_call", changed(last, turns[last][:-1])))
    out.append(("missing_first_call", changed(first, turns[first][1:])))
    out.append(("extra_call", changed(first, turns[first] + [turns[first][0]])))
    out.append(("reverse_order", [[t[::-1]] if t else [] for t in turns]))
    out.append(("repeated_call", changed(last, turns[last] + [turns[last][-1]])))
    out.append(("empty_turn", changed(first, [])))
    out.append(
        ("prose_turn", [["I would do it."] if i == first else [t] for i, t in enumerate(turns)])
    )
    out.append(("turn_fewer", [[t] for t in turns[:-1]]))
    out.append(("unknown_function", changed(first, [("no_such_function", {"x": 1})])))
    empty = [i for i, t in enumerate(turns) if not t]
    if empty and empty[0] + 1 < len(turns):
        early = empty[0]
        out.append(
            (
                "called_early",
                [[turns[early + 1]] if i == early else [t] for i, t in enumerate(turns)],
            )
        )
    return out


def as_results(turns: list, column: str) -> list[list[Any]]:
    """Planted turns as BFCL's inference result of that column."""
    out = []
    for turn in turns:
        steps = []
        for step in turn:
            if isinstance(step, str):
                steps.append(step)
            elif column == "fc":
                steps.append(_as_fc(step) if step else "")
            else:
                steps.append(_as_prompt(step))
        out.append(steps)
    return out


PROMPT_ONLY = {
    "empty_dict_argument": "[cd(folder={})]",
    "nested_call": "[cd(folder=pwd(a={'b': 1}))]",
    "dict_argument": "[cd(folder={'a': 'b', 'c': [1, 2]})]",
    "tuple_argument": "[cd(folder=('a', 'b'))]",
    "call_without_keywords": "[cd(folder=pwd())]",
}
"""Prompt steps that exercise the execution decoder's edges, each made before the correct calls
of the first turn with a ground truth."""


def _with_first(correct: list[list[Any]], text: str) -> list[list[Any]]:
    """The correct Prompt result with ``text`` as an extra step before the first turn's calls."""
    first = next(i for i, t in enumerate(correct) if t and t[0].startswith("[") and t[0] != "[]")
    return [[text, *t] if i == first else t for i, t in enumerate(correct)]


def cases(data: Path, categories: tuple[str, ...] = CATEGORIES, limit: int | None = None) -> list:
    items: list[dict[str, Any]] = []
    for category in categories:
        for count, entry in enumerate(entries(data, category)):
            if limit is not None and count >= limit:
                break
            gold = entry["gold"]
            outputs = planted(entry, gold)
            correct = as_results(outputs[0][1], "prompt")
            for name, turns in outputs:
                for column in ("fc", "prompt"):
                    items.append(
                        {
                            "id": entry["id"],
                            "category": category,
                            "column": column,
                            "source": "planted",
                            "case": name,
                            "result": as_results(turns, column),
                        }
                    )
            for name, text in PROMPT_ONLY.items():
                items.append(
                    {
                        "id": entry["id"],
                        "category": category,
                        "column": "prompt",
                        "source": "planted",
                        "case": name,
                        "result": _with_first(correct, text),
                    }
                )
    return items


WRITTEN = {
    "id": "multi_turn_base_written",
    "initial_config": {"GorillaFileSystem": {"root": {"w": {"type": "directory", "contents": {}}}}},
    "involved_classes": ["GorillaFileSystem", "MathAPI"],
}
"""An entry written for the rules the data's ground truths never reach: a turn whose ground
truth has two equal results (counted with multiplicity), a later turn that a result made earlier
satisfies (all turns so far)."""

WRITTEN_CASES: list[tuple[list[list[str]], list[list[str]]]] = [
    ([["pwd()", "pwd()"]], [["[pwd()]"]]),  # one of the two equal results: a miss
    ([["pwd()", "pwd()"]], [["[pwd(), pwd()]"]]),
    ([["pwd()", "pwd()"]], [["[pwd()]", "[pwd()]"]]),  # in two steps
    ([["add(a=1, b=2)"], ["add(a=1, b=2)"]], [["[add(a=1, b=2)]"], ["[pwd()]"]]),
    ([["add(a=1, b=2)"], ["add(a=1, b=2)", "add(a=1, b=2)"]], [["[add(a=1, b=2)]"], ["[pwd()]"]]),
    ([["mkdir(dir_name='x')"], []], [["[mkdir(dir_name='x')]"], ["[cd(folder='x')]"]]),
    ([["mkdir(dir_name='x')"], ["cd(folder='x')"]], [["[mkdir(dir_name='x')]"], []]),
]
"""(ground truth, Prompt result) pairs for ``WRITTEN``."""


def written() -> list[dict[str, Any]]:
    return [
        {
            "id": WRITTEN["id"],
            "category": "multi_turn_base",
            "column": "prompt",
            "source": "planted",
            "case": f"written_{i}",
            "entry": WRITTEN,
            "ground_truth": truth,
            "result": result,
        }
        for i, (truth, result) in enumerate(WRITTEN_CASES)
    ]


def recorded(paths: list[Path]) -> list[dict[str, Any]]:
    out = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                source = "live" if "gemma" in path.name else "embedded"
                out.append({**json.loads(line), "source": source})
    return out


def sieval_verdict(envs: Environments, item: dict[str, Any], entry: dict[str, Any]) -> dict:
    turns = []
    for turn in item["result"]:
        steps = []
        for step in turn:
            if item["column"] == "fc":
                if not isinstance(step, list):
                    continue  # a text reply: no call
                calls = fc_calls([(n, json.loads(a)) for s in step for n, a in s.items()])
            else:
                calls, _ = prompt_calls(step)
            if calls:
                steps.append(calls)
        turns.append(steps)
    long_context = "long_context" in item["category"]
    verdict = check(
        envs,
        entry["involved_classes"],
        entry["initial_config"],
        long_context,
        turns,
        entry["gold"],
    )
    return {"valid": verdict.valid, "error_type": verdict.error_type}


def oracle_verdicts(python: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps(item) + "\n" for item in items)
    done = subprocess.run(
        [python, str(DRIVER)], input=lines, capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def compare(python: str, data: Path, items: list[dict[str, Any]]) -> tuple[Counter, list]:
    """Counts per (category, column, source, pass/fail) and the items whose verdicts differ."""
    by_id: dict[str, dict[str, Any]] = {}
    for category in {item["category"] for item in items}:
        by_id.update({e["id"]: e for e in entries(data, category)})
    theirs = oracle_verdicts(python, items)
    envs = Environments(Path(python))
    counts: Counter = Counter()
    differ = []
    try:
        for item, their in zip(items, theirs, strict=True):
            if "entry" in item:
                entry = {**item["entry"], "gold": item["ground_truth"]}
            else:
                entry = by_id[item["id"]]
            mine = sieval_verdict(envs, item, entry)
            key = (item["category"], item["column"], item["source"])
            counts[(*key, "pass" if their["valid"] else "fail")] += 1
            if (mine["valid"], mine["error_type"]) != (their["valid"], their["error_type"]):
                differ.append((item, mine, their))
    finally:
        envs.stop()
    return counts, differ


def table(counts: Counter) -> str:
    rows = [
        "| category | column | live (pass/fail) | embedded (pass/fail) | planted (pass/fail) |",
        "|---|---|---|---|---|",
    ]
    keys = sorted(
        {(c, col) for c, col, _, _ in counts}, key=lambda k: (CATEGORIES.index(k[0]), k[1])
    )
    for category, column in keys:
        cells = []
        for source in ("live", "embedded", "planted"):
            p = counts[(category, column, source, "pass")]
            f = counts[(category, column, source, "fail")]
            cells.append(f"{p + f} ({p}/{f})")
        rows.append(f"| {category} | {column} | {' | '.join(cells)} |")
    return "\n".join(rows)


def main(argv: list[str]) -> None:
    from sieval.scoring.bfcl_env import oracle_python
    from sieval.tasks._bfcl import data_directory

    limit = int(argv[0]) if argv else None
    data = data_directory(Path("/nonexistent"))
    items = cases(data, limit=limit) + written() + recorded(sorted(FIXTURES.glob("*.jsonl")))
    counts, differ = compare(str(oracle_python()), data, items)
    print(table(counts))
    print(f"\n{sum(counts.values())} outputs, {len(differ)} disagreements.")
    for item, mine, their in differ[:20]:
        print(item["id"], item["column"], item.get("case"), "sieval:", mine, "bfcl-eval:", their)


if __name__ == "__main__":
    main(sys.argv[1:])
