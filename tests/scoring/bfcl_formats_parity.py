"""BFCL's format-sensitivity category, sieval beside bfcl-eval on the same entries: each variant's
system prompt, text for text, and the verdict on answers planted in each variant's return format.

    python -m tests.scoring.bfcl_formats_parity [EVERY_NTH]    print the counts

The answers: each entry's first possible values written in the variant's return format (with
the ``<TOOLCALL>`` tag when it asks for one), the same with a wrong last value, with XML
booleans capitalised, without the tag asked for, the default Python form where another format
is asked, prose, and an empty answer. sieval's side: ``_bfcl_formats.system_prompt`` and the
``bfcl_prompt`` task's reading (``scoring/bfcl_decode_formats.format_calls``, the checker as
the original entry's category); bfcl-eval's: ``bfcl_oracle_driver.py`` in its venv. Equal
means the same text, or the same pass/fail and ``error_type``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from sieval.scoring.bfcl_checker import grade
from sieval.scoring.bfcl_decode import NotCalls
from sieval.scoring.bfcl_decode_formats import format_calls
from sieval.tasks._bfcl import entries, hinted
from sieval.tasks._bfcl_formats import format_entries, parse_config, system_prompt

from .bfcl_parity import FIXTURES, _calls, _mapped, _wrong, as_prompt, oracle_verdicts, recorded

_XML_TYPES = {str: "string", bool: "boolean", int: "integer", float: "float", list: "array"}


def _xml_value(value: Any, capitals: bool = False) -> tuple[str, str]:
    kind = _XML_TYPES.get(type(value), "dict")
    if type(value) is bool:
        return (str(value) if capitals else str(value).lower()), kind
    if type(value) in (list, dict):
        return repr(value), kind
    return str(value), kind


def written(calls: list, returned: str, capitals: bool = False) -> str:
    """``calls`` as an answer in the return format ``returned`` (XML booleans ``True``/``False``
    with ``capitals``)."""
    pairs = [(n, a) for c in calls for n, a in c.items()]
    if returned == "python":
        return as_prompt(calls)
    if returned == "json":
        listed = [{"function": n, "parameters": a} for n, a in pairs]
        return "```json\n" + json.dumps(listed) + "\n```"
    functions = []
    for name, args in pairs:
        params = []
        for key, value in args.items():
            text, kind = _xml_value(value, capitals)
            if returned == "verbose_xml":
                params.append(
                    f"<param name={quoteattr(key)} value={quoteattr(text)} type={quoteattr(kind)}/>"
                )
            else:
                params.append(
                    f"<param name={quoteattr(key)} type={quoteattr(kind)}>{escape(text)}</param>"
                )
        inner = "".join(params)
        if returned == "verbose_xml":
            inner = f"<params>{inner}</params>"
        functions.append(f"<function name={quoteattr(name)}>{inner}</function>")
    return "<functions>" + "".join(functions) + "</functions>"


def cases(data: Path, every: int = 1) -> list[dict[str, Any]]:
    """The system-prompt and planted-answer items for every ``every``-th format entry."""
    out = []
    for n, (entry, answer, variant, _) in enumerate(format_entries(data, entries)):
        if n % every:
            continue
        settings = parse_config(variant)
        returned, tag = settings["ret_fmt"], settings["tool_call_tag"]
        base = {"id": entry["id"], "category": "format_sensitivity"}
        out.append({**base, "column": "system", "label": "system", "result": ""})
        first = _calls(answer)
        answers = {
            "first": written(first, returned),
            "wrong_value": written(_mapped(first, _wrong), returned),
            "capitals": written(first, returned, capitals=True),
            "python_form": as_prompt(first),
            "prose": "I cannot answer that with these functions.",
            "empty": "",
        }
        for label, text in answers.items():
            if tag and label in ("first", "wrong_value", "capitals"):
                text = f"<TOOLCALL>{text}</TOOLCALL>"
            out.append({**base, "column": "prompt", "label": label, "result": text})
        if tag:
            untagged = written(first, returned)
            out.append({**base, "column": "prompt", "label": "tag_missing", "result": untagged})
    return out


def sieval_side(item: dict[str, Any], entry: dict[str, Any], answer: Any, variant: str) -> dict:
    if item["column"] == "system":
        return {"system": system_prompt(variant, hinted(entry["function"]))}
    settings = parse_config(variant)
    try:
        decoded = format_calls(item["result"], settings["ret_fmt"], settings["tool_call_tag"])
    except NotCalls:
        decoded = None
    original = item["id"].rsplit(":", 1)[-1]
    verdict = grade(original, entry["function"], answer, decoded)
    return {"valid": verdict.valid, "error_type": verdict.error_type}


def compare(python: str, data: Path, items: list[dict[str, Any]]) -> tuple[Counter, list]:
    """``(counts, disagreements)``: counts by (variant, column, verdict, source: ``live`` for a
    recorded reply, else ``planted``)."""
    known = {e["id"]: (e, a, v) for e, a, v, _ in format_entries(data, entries)}
    theirs = oracle_verdicts(python, items)
    counts: Counter = Counter()
    differ = []
    for item, oracle in zip(items, theirs, strict=True):
        entry, answer, variant = known[item["id"]]
        ours = sieval_side(item, entry, answer, variant)
        if item["column"] == "system":
            same, verdict = (
                ours["system"] == oracle.get("system"),
                "same" if ours["system"] == oracle.get("system") else "differs",
            )
        else:
            same = ours["valid"] == oracle["valid"] and ours["error_type"] == oracle["error_type"]
            verdict = "pass" if oracle["valid"] else "fail"
        source = "live" if item.get("label") == "live" else "planted"
        counts[(variant, item["column"], verdict, source)] += 1
        if not same:
            differ.append({**item, "sieval": ours, "bfcl": oracle})
    return counts, differ


def main(argv: list[str]) -> None:
    from sieval.tasks._bfcl import data_directory

    here = Path(__file__).parent
    python = subprocess.run(
        [str(here.parents[1] / "scripts" / "bfcl-oracle.sh")], capture_output=True, text=True
    ).stdout.strip()
    data = data_directory(Path())
    items = cases(data, int(argv[0]) if argv else 1)
    items += recorded(sorted((FIXTURES / "formats").glob("*.jsonl")))
    counts, differ = compare(python, data, items)
    print("| variant | system prompts (same) | planted (pass/fail) | live (pass/fail) |")
    print("|---|---|---|---|")
    for variant in sorted({k[0] for k in counts}):
        total = sum(n for k, n in counts.items() if k[:2] == (variant, "system"))
        same = counts[(variant, "system", "same", "planted")]
        cells = []
        for source in ("planted", "live"):
            p = counts[(variant, "prompt", "pass", source)]
            f = counts[(variant, "prompt", "fail", source)]
            cells.append(f"{p + f} ({p}/{f})")
        print(f"| `{variant}` | {total} ({same}) | {cells[0]} | {cells[1]} |")
    print(f"\n{len(items)} items, {len(differ)} disagreements")
    for d in differ[:10]:
        print(json.dumps(d)[:600])


if __name__ == "__main__":
    main(sys.argv[1:])
