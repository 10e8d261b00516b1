"""sieval's BFCL verdicts beside bfcl-eval's own, on the same outputs (the parity test's engine,
and its table for ``docs/evidence/bfcl-checker-parity.md``).

    python -m tests.scoring.bfcl_parity [LIVE.jsonl ...]     print the table per category

The outputs: every recorded real reply given (``tests/fixtures/bfcl/*.jsonl``: Gemma 3 270M
through vLLM's hermes parser), plus planted ones built from each entry's possible answer, in
both columns (FC: ``[{name: arguments_json}]`` with dots as underscores; Prompt: Python call
text): the first possible value of each parameter, the last one (multiple possible answers),
optional parameters left out, integers for floats and floats for integers (type coercion),
numbers as strings, strings in another case and spacing, calls in reverse order (parallel), a
call dropped, a wrong value, an unexpected parameter, a required parameter left out, a wrong
function name, text that is no call. sieval's verdict: the task's own reading of the output
(``bfcl.py``) and ``scoring/bfcl_checker.grade``; BFCL's: ``bfcl_oracle_driver.py`` in the
oracle venv. Equal means the same pass/fail and, on a fail, the same ``error_type``.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sieval.scoring.bfcl_checker import grade
from sieval.scoring.bfcl_decode import NotCalls
from sieval.scoring.bfcl_langs import language_of
from sieval.tasks._bfcl import AST_CATEGORIES, CATEGORIES, RELEVANCE_CATEGORIES, entries
from sieval.tasks.bfcl import prompt_calls

HERE = Path(__file__).parent
DRIVER = HERE / "bfcl_oracle_driver.py"
FIXTURES = HERE.parent / "fixtures" / "bfcl"


def _pick(values: list[Any], last: bool) -> Any:
    given = [v for v in values if v != ""]
    if not given:
        return None
    return given[-1] if last else given[0]


def _calls(answer: list[dict[str, Any]], *, last: bool = False, optional: bool = True) -> list:
    out = []
    for item in answer:
        name, params = next(iter(item.items()))
        args = {}
        for param, values in params.items():
            if not optional and "" in values:
                continue
            value = _pick(values, last)
            if value is not None:
                args[param] = copy.deepcopy(value)
        out.append({name: args})
    return out


def _mapped(calls: list, change: Any) -> list:
    return [{n: {k: change(v) for k, v in a.items()}} for c in calls for n, a in c.items()]


def _to_int(v: Any) -> Any:
    return int(v) if type(v) is float and v == int(v) else v


def _to_float(v: Any) -> Any:
    return float(v) if type(v) is int else v


def _to_str(v: Any) -> Any:
    return str(v) if type(v) in (int, float) else v


def _case(v: Any) -> Any:
    if type(v) is str:
        return v.upper().replace(" ", "  ") if len(v) > 1 else v.upper()
    if type(v) is list:
        return [_case(x) for x in v]
    return v


def _wrong(v: Any) -> Any:
    if type(v) is str:
        return v + " zz"
    if type(v) in (int, float):
        return v + 7
    return v


def planted(answer: list[dict[str, Any]], functions: list[dict[str, Any]]) -> Iterator[tuple]:
    """``(label, calls)`` edge cases built from one entry's possible answer."""
    first = _calls(answer)
    yield "first", first
    yield "last", _calls(answer, last=True)
    yield "optional_left_out", _calls(answer, optional=False)
    yield "int_for_float", _mapped(first, _to_int)
    yield "float_for_int", _mapped(first, _to_float)
    yield "number_as_string", _mapped(first, _to_str)
    yield "case_and_spacing", _mapped(first, _case)
    if len(first) > 1:
        yield "reversed", list(reversed(first))
        yield "call_dropped", first[:-1]
    yield (
        "wrong_value",
        [
            {
                n: dict(list(a.items())[:-1])
                | dict([(k, _wrong(v)) for k, v in list(a.items())[-1:]])
            }
            for c in first
            for n, a in c.items()
        ],
    )
    yield "unexpected_param", [{n: {**a, "zz_unexpected": 1}} for c in first for n, a in c.items()]
    required = functions[0]["parameters"].get("required") or []
    name0, args0 = next(iter(first[0].items()))
    if required and required[0] in args0:
        dropped = {k: v for k, v in args0.items() if k != required[0]}
        yield "required_left_out", [{name0: dropped}, *first[1:]]
    yield "wrong_name", [{name0 + "_zz": args0}, *first[1:]]


def as_fc(calls: list) -> list:
    return [{n.replace(".", "_"): json.dumps(a)} for c in calls for n, a in c.items()]


def as_prompt(calls: list) -> str:
    def one(name: str, args: dict[str, Any]) -> str:
        return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"

    return "[" + ", ".join(one(n, a) for c in calls for n, a in c.items()) + "]"


TEXTS = ("I cannot answer that with these functions.", "", "```\n[]\n```", "[f(x=1)")

# -- Java and JavaScript: each value written as source text --------------------------------------

_JAVA_ELEMENT = {
    "String": "String",
    "integer": "int",
    "long": "long",
    "char": "char",
    "any": "Object",
}


def _java(value: Any, declared: str, items: str, style: str) -> tuple[Any, Any]:
    """``(FC text, Prompt source)`` of a Java value of type ``declared``."""
    if type(value) is bool:
        text = "true" if value else "false"
        return text, text
    if type(value) in (int, float):
        suffix = {"long": "L", "float": "f"}.get(declared, "") if style != "bare" else ""
        text = f"{value}{suffix}"
        return text, text
    if type(value) is str:
        quote = "'" if declared == "char" and len(value) == 1 else '"'
        return value, quote + value.replace('"', '\\"') + quote
    if type(value) is list:
        parts = [_java(v, items, "", style)[1] for v in value]
        if declared == "Array":
            text = f"new {_JAVA_ELEMENT.get(items, 'Object')}[]{{{', '.join(parts)}}}"
        elif style == "add":
            text = "new ArrayList<>() {{ " + " ".join(f"add({p});" for p in parts) + " }}"
        else:
            text = f"new ArrayList<>(Arrays.asList({', '.join(parts)}))"
        return text, text
    if type(value) is dict:
        puts = [
            f'put("{k}", {_java(_pick(v, False), "any", "", style)[1]});' for k, v in value.items()
        ]
        text = "new HashMap<String, Object>() {{ " + " ".join(puts) + " }}"
        return (text if style != "empty" else "new HashMap<>()"), text
    return str(value), str(value)


def _js(value: Any, declared: str, items: str, style: str) -> tuple[Any, Any]:
    """``(FC text, Prompt source)`` of a JavaScript value of type ``declared``."""
    if type(value) is bool:
        text = "true" if value else "false"
        return text, text
    if type(value) in (int, float):
        text = f"{value}n" if declared == "Bigint" and style != "bare" else str(value)
        return text, text
    if type(value) is str:
        quoted = "'" + value.replace("'", "\\'") + "'"
        return (quoted if style == "quoted" else value), quoted
    if type(value) is list:
        parts = [_js(v, items, "", style)[1] for v in value]
        text = f"new Array({', '.join(parts)})" if style == "new" else f"[{', '.join(parts)}]"
        return text, text
    if type(value) is dict:
        pairs = [f"{k}: {_js(_pick(v, False), 'any', '', style)[1]}" for k, v in value.items()]
        text = "{" + ", ".join(pairs) + "}"
        return text, text
    return str(value), str(value)


def lang_planted(answer: list, functions: list, language: str) -> Iterator[tuple]:
    """``(label, fc_calls, prompt_calls)`` edge cases of a Java or JavaScript entry: its calls
    with each value as text (FC) and as source (Prompt; None: an FC-only case). Styles: as
    written by a careful model (``plain``), numbers without their ``L``/``f``/``n``
    (``bare``), Java's ``ArrayList`` by ``add`` and an empty ``HashMap`` (``add``,
    ``empty``), JavaScript's ``new Array(...)`` and quoted strings (``new``, ``quoted``)."""
    write = _java if language == "java" else _js
    declared = functions[0]["parameters"]["properties"]
    styles = (
        ("plain", "bare", "add", "empty")
        if language == "java"
        else ("plain", "bare", "new", "quoted")
    )
    variants = [(style, _calls(answer), style) for style in styles]
    variants += [
        ("last", _calls(answer, last=True), "plain"),
        ("optional_left_out", _calls(answer, optional=False), "plain"),
        ("case_and_spacing", _mapped(_calls(answer), _case), "plain"),
        ("wrong_value", _mapped(_calls(answer), _wrong), "plain"),
    ]
    written = {}
    for label, calls, style in variants:
        fc, prompt = [], []
        for call in calls:
            for name, args in call.items():
                pairs = {}
                for key, value in args.items():
                    schema = declared.get(key, {"type": "any"})
                    items = schema.get("items", {}).get("type", "")
                    pairs[key] = write(value, schema["type"], items, style)
                fc.append({name: {k: p[0] for k, p in pairs.items()}})
                prompt.append({name: {k: p[1] for k, p in pairs.items()}})
        written[label] = fc
        yield label, fc, prompt
    name, args = next(iter(written["plain"][0].items()))
    yield "json_values", _calls(answer), None  # FC: the values not sent as text (a type error)
    yield "unexpected_param", [{name: {**args, "zz_unexpected": "1"}}], None
    required = functions[0]["parameters"].get("required") or []
    if required and required[0] in args:
        yield (
            "required_left_out",
            [{name: {k: v for k, v in args.items() if k != required[0]}}],
            None,
        )
    yield "wrong_name", [{name + "_zz": args}], None


def as_source(calls: list) -> str:
    """Prompt text of calls whose values are already source."""

    def one(name: str, args: dict[str, Any]) -> str:
        return f"{name}(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")"

    return "[" + ", ".join(one(n, a) for c in calls for n, a in c.items()) + "]"


def cases(data: Path, categories: tuple[str, ...] = CATEGORIES, limit: int | None = None) -> list:
    """Every planted output for the entries of ``categories`` (the first ``limit`` of each)."""
    out = []
    for category in categories:
        for i, (entry, answer) in enumerate(entries(data, category)):
            if limit is not None and i >= limit:
                break
            functions = entry["function"]
            language = language_of(category)
            if language != "python":
                for label, fc_calls, prompt_calls in lang_planted(answer, functions, language):
                    base = {"id": entry["id"], "category": category, "label": label}
                    out.append({**base, "column": "fc", "result": as_fc(fc_calls)})
                    if prompt_calls is not None:
                        out.append({**base, "column": "prompt", "result": as_source(prompt_calls)})
                for j, text in enumerate(TEXTS if i < 5 else TEXTS[:1]):
                    base = {"id": entry["id"], "category": category, "label": f"text{j}"}
                    out.append({**base, "column": "fc", "result": text})
                    out.append({**base, "column": "prompt", "result": text})
                continue
            if category in AST_CATEGORIES:
                planted_calls = list(planted(answer, functions))
            else:
                fn = functions[0] if functions else {"name": "f", "parameters": {}}
                planted_calls = [("a_call", [{fn["name"]: {}}]), ("empty_list", [])]
            for label, calls in planted_calls:
                base = {"id": entry["id"], "category": category, "label": label}
                out.append({**base, "column": "fc", "result": as_fc(calls)})
                out.append({**base, "column": "prompt", "result": as_prompt(calls)})
            for j, text in enumerate(TEXTS if i < 5 else TEXTS[:1]):
                base = {"id": entry["id"], "category": category, "label": f"text{j}"}
                out.append({**base, "column": "fc", "result": text})
                out.append({**base, "column": "prompt", "result": text})
    return out


def recorded(paths: list[Path]) -> list[dict[str, Any]]:
    """The real replies recorded in ``paths`` (labelled ``live``)."""
    out = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out.append({**row, "label": "live"})
    return out


def sieval_verdict(item: dict[str, Any], data_entry: dict[str, Any], answer: Any) -> dict:
    """sieval's verdict on one stored output, read as the task reads a reply."""
    result = item["result"]
    if item["column"] == "fc":
        if isinstance(result, list):
            decoded: Any = [{next(iter(c)): json.loads(next(iter(c.values())))} for c in result]
        else:
            decoded = None if result else []
    else:
        try:
            decoded = prompt_calls(item["category"], result)
        except NotCalls:
            decoded = None
    try:
        verdict = grade(
            item["category"],
            data_entry["function"],
            answer,
            decoded,
            dotted=item["column"] == "fc",
        )
    except Exception as exc:
        return {"valid": None, "error_type": f"raised {type(exc).__name__}"}
    return {"valid": verdict.valid, "error_type": verdict.error_type}


def oracle_verdicts(python: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """bfcl-eval's verdicts on ``items``, in their order."""
    payload = "\n".join(
        json.dumps({k: item[k] for k in ("id", "category", "column", "result")}) for item in items
    )
    done = subprocess.run(
        [python, str(DRIVER)], input=payload, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the oracle driver failed:\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def compare(python: str, data: Path, items: list[dict[str, Any]]) -> tuple[Counter, list]:
    """``(counts, disagreements)``: counts by (category, column, source, verdict)."""
    known: dict[str, tuple[dict[str, Any], Any]] = {}
    for category in {i["category"] for i in items}:
        for entry, answer in entries(data, category):
            known[entry["id"]] = (entry, answer)
    theirs = oracle_verdicts(python, items)
    counts: Counter = Counter()
    differ = []
    for item, oracle in zip(items, theirs, strict=True):
        entry, answer = known[item["id"]]
        ours = sieval_verdict(item, entry, answer)
        source = "live" if item["label"] == "live" else "planted"
        same = ours["valid"] == oracle["valid"] and ours["error_type"] == oracle["error_type"]
        counts[
            (item["category"], item["column"], source, "pass" if oracle["valid"] else "fail")
        ] += 1
        if not same:
            differ.append({**item, "sieval": ours, "bfcl": oracle})
    return counts, differ


def table(counts: Counter) -> str:
    """The markdown table of the counts, per category and column."""
    rows = ["| category | column | live (pass/fail) | planted (pass/fail) |", "|---|---|---|---|"]
    for category in CATEGORIES:
        for column in ("fc", "prompt"):
            cells = []
            for source in ("live", "planted"):
                p = counts[(category, column, source, "pass")]
                f = counts[(category, column, source, "fail")]
                cells.append(f"{p + f} ({p}/{f})")
            if any(
                counts[(category, column, s, v)]
                for s in ("live", "planted")
                for v in ("pass", "fail")
            ):
                rows.append(f"| {category} | {column} | {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


def main(argv: list[str]) -> None:
    from sieval.tasks._bfcl import data_directory

    python = subprocess.run(
        [str(HERE.parents[1] / "scripts" / "bfcl-oracle.sh")], capture_output=True, text=True
    ).stdout.strip()
    data = data_directory(Path())
    items = cases(data) + recorded([Path(p) for p in argv] or sorted(FIXTURES.glob("*.jsonl")))
    counts, differ = compare(python, data, items)
    print(table(counts))
    print(f"\n{len(items)} outputs, {len(differ)} disagreements")
    for d in differ[:20]:
        print(json.dumps(d)[:400])


if __name__ == "__main__":
    main(sys.argv[1:])

__all__ = ["RELEVANCE_CATEGORIES", "cases", "compare", "recorded", "table"]


def wire_items(data: Path, categories: tuple[str, ...] = CATEGORIES, limit: int | None = None):
    """For each entry of ``categories`` (the first ``limit``): a request for BFCL's default
    system prompt and for its FC tools."""
    out = []
    for category in categories:
        for i, (entry, _) in enumerate(entries(data, category)):
            if limit is not None and i >= limit:
                break
            for column in ("system", "tools"):
                out.append(
                    {"id": entry["id"], "category": category, "column": column, "result": ""}
                )
    return out


def compare_wire(python: str, data: Path, items: list[dict[str, Any]]) -> tuple[Counter, list]:
    """``(counts, differences)``: sieval's system prompt (``prompt_system``) and FC tools
    (``fc_tools`` as OpenAI's chat wire sends them) beside bfcl-eval's for the same entries;
    counts by (category, column, ``same``/``differs``)."""
    from sieval.tasks._bfcl import fc_tools, prompt_system

    known = {}
    for category in {i["category"] for i in items}:
        for entry, _ in entries(data, category):
            known[entry["id"]] = entry
    counts: Counter = Counter()
    differ = []
    for item, oracle in zip(items, oracle_verdicts(python, items), strict=True):
        functions = known[item["id"]]["function"]
        if item["column"] == "system":
            ours: Any = prompt_system(functions, item["category"])
        else:
            ours = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in fc_tools(functions, item["category"])
            ]
        same = ours == oracle.get(item["column"])
        counts[(item["category"], item["column"], "same" if same else "differs")] += 1
        if not same:
            differ.append({**item, "sieval": ours, "bfcl": oracle})
    return counts, differ
