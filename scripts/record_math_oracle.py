"""Record lm-evaluation-harness 0.4.13's MATH answer functions on a set of texts, as a fixture.

    ~/.cache/sieval/bench/lm-eval-0.4.13/bin/python scripts/record_math_oracle.py \\
        [--data-dir ../shared/data] [--out tests/fixtures/math/lm-eval-0.4.13/oracle.json]

Runs in lm-eval's own venv (``pip install 'lm_eval[math]==0.4.13'`` outside the repo; it never
imports sieval), so the tests compare without installing lm-eval. For every text it records what
``lm_eval.tasks.minerva_math.utils`` and ``lm_eval.tasks.hendrycks_math.utils`` return:
``last_boxed_only_string``, ``remove_boxed`` (or the exception it raises), minerva's
``normalize_final_answer`` and ``get_unnormalized_answer``, hendrycks' ``strip_string``, both
``is_equiv`` on (answer, gold), and the ``math_verify`` metric minerva_math reports
(``verify(parse(gold solution), parse(text))``). The texts are the synthetic cases below (stored
in full) and the gold solutions of MATH-500 and AIME 2024 (stored by id only: the data stays in
the data directory; the test reads it from there).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

# (name, text, gold answer)
SYNTHETIC = [
    ("plain", "So the answer is $\\boxed{5}$.", "5"),
    ("nested_braces", "We get $\\boxed{\\frac{1}{2}}$.", "0.5"),
    ("two_boxes_last_wins", "First \\boxed{3}, then corrected: \\boxed{4}.", "4"),
    ("fbox", "The answer is \\fbox{7}.", "7"),
    ("boxed_then_fbox", "We had \\boxed{1} but finally \\fbox{2}.", "2"),
    ("boxed_space", "Thus $\\boxed 9$.", "9"),
    ("boxed_space_then_braced", "\\boxed 3 is wrong; the answer is \\boxed{4}", "4"),
    ("boxed_space_newline", "\\boxed 12\nSo we are done.", "12"),
    ("unclosed", "Hence the answer is \\boxed{\\frac{1}{2", "\\frac{1}{2}"),
    ("unclosed_after_closed", "Maybe \\boxed{2}. No: \\boxed{\\sqrt{", "2"),
    ("no_box", "The answer is 5.", "5"),
    (
        "minerva_sentence",
        "So $n=24$.\nFinal Answer: The final answer is $24$. I hope it is correct.",
        "24",
    ),
    (
        "minerva_sentence_no_dollars",
        "Final Answer: The final answer is 3. I hope it is correct.",
        "3",
    ),
    (
        "box_beats_sentence",
        "\\boxed{3}\nFinal Answer: The final answer is $4$. I hope it is correct.",
        "3",
    ),
    ("text_letter", "The answer is $\\boxed{\\text{(C)}}$.", "C"),
    ("dfrac", "$\\boxed{\\dfrac{3}{4}}$", "\\frac34"),
    ("equation", "$\\boxed{x=3}$", "3"),
    ("percent", "$\\boxed{50\\%}$", "50"),
    ("degrees", "$\\boxed{10^\\circ}$", "10"),
    ("tuple_left_right", "$\\boxed{(3, \\frac{\\pi}{2})}$", "\\left( 3, \\frac{\\pi}{2} \\right)"),
    ("set_order", "$\\boxed{\\{1,2\\}}$", "\\{2,1\\}"),
    ("interval", "$\\boxed{[2,5)}$", "[2,5)"),
    ("surd", "$\\boxed{2\\sqrt{2}}$", "\\sqrt{8}"),
    ("thousands", "$\\boxed{1,000}$", "1000"),
    ("leading_zero", "$\\boxed{070}$", "70"),
    ("unit_text", "$\\boxed{5 \\text{ cm}}$", "5"),
    ("decimal_vs_fraction", "$\\boxed{0.333333}$", "\\frac{1}{3}"),
    ("wrong", "$\\boxed{2}$", "3"),
    ("commuted", "$\\boxed{x^2+1}$", "1+x^2"),
    ("sqrt_shorthand", "$\\boxed{\\frac{\\sqrt{3}}{2}}$", "\\frac{\\sqrt3}{2}"),
    ("negative_fraction", "$\\boxed{-\\frac{2}{3}}$", "-\\frac23"),
    ("pi_vs_decimal", "$\\boxed{\\pi}$", "3.14159"),
    ("empty_box", "$\\boxed{}$", "1"),
    ("textbf", "$\\boxed{\\textbf{7}}$", "7"),
    ("last_of_two_inline", "$\\boxed{a}$ and $\\boxed{b}$", "b"),
    ("slash_fraction", "$\\boxed{14/3}$", "\\frac{14}{3}"),
    ("trailing_zero", "$\\boxed{4.50}$", "4.5"),
    ("dollar_sign", "$\\boxed{\\$4.50}$", "4.50"),
    ("and_list", "$\\boxed{3 \\text{ and } 4}$", "3,4"),
    ("infinity_interval", "$\\boxed{(-\\infty, 2]}$", "(-\\infty,2]"),
    ("line", "$\\boxed{y = 2x + 1}$", "y=2x+1"),
    (
        "matrix",
        "$\\boxed{\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}}$",
        "\\begin{pmatrix}1\\\\2\\end{pmatrix}",
    ),
    ("cut_reasoning", "<think>Let me compute. 2+2 is \\boxed{", "4"),
    ("aime_integer", "Therefore $m+n=\\boxed{204}$.", "204"),
    ("escaped_braces", "$\\boxed{\\{1, 2\\}}$", "\\{1,2\\}"),
]


def call(function: Any, *args: Any) -> Any:
    """``function(*args)``, or ``{"raises": ExceptionName}``."""
    try:
        return function(*args)
    except Exception as error:
        return {"raises": type(error).__name__}


def record(text: str, gold: str, gold_solution: str) -> dict[str, Any]:
    from lm_eval.tasks.hendrycks_math import utils as hendrycks
    from lm_eval.tasks.minerva_math import utils as minerva
    from math_verify import parse, verify

    boxed = minerva.last_boxed_only_string(text)
    answer = call(minerva.remove_boxed, boxed) if boxed is not None else None
    plain = answer if isinstance(answer, str) else None
    gold_norm = minerva.normalize_final_answer(gold)
    return {
        "last_boxed_only_string": boxed,
        "hendrycks_last_boxed_only_string": hendrycks.last_boxed_only_string(text),
        "remove_boxed": answer,
        "get_unnormalized_answer": minerva.get_unnormalized_answer(text),
        "normalize_final_answer": None if plain is None else minerva.normalize_final_answer(plain),
        "gold_normalize_final_answer": gold_norm,
        "strip_string": None if plain is None else call(hendrycks.strip_string, plain),
        "gold_strip_string": call(hendrycks.strip_string, gold),
        "hendrycks_is_equiv": None if plain is None else hendrycks.is_equiv(plain, gold),
        "minerva_is_equiv": None
        if plain is None
        else minerva.is_equiv(minerva.normalize_final_answer(plain), gold_norm),
        "math_verify_metric": bool(verify(gold=parse(gold_solution), target=parse(text))),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get("SIEVAL_DATA_DIR", "../shared/data"))
    parser.add_argument("--out", default="tests/fixtures/math/lm-eval-0.4.13/oracle.json")
    args = parser.parse_args()
    from importlib.metadata import version

    data = Path(args.data_dir)
    cases: list[dict[str, Any]] = []
    for name, text, gold in SYNTHETIC:
        cases.append({"source": "synthetic", "name": name, "text": text, "gold": gold,
                      **record(text, gold, f"$\\boxed{{{gold}}}$")})  # fmt: skip
    for line in (data / "math500" / "test.jsonl").read_text().splitlines():
        row = json.loads(line)
        cases.append({"source": "math500", "id": row["unique_id"],
                      **record(row["solution"], row["answer"], row["solution"])})  # fmt: skip
    for line in (data / "aime2024" / "test.jsonl").read_text().splitlines():
        row = json.loads(line)
        gold = str(row["answer"])
        cases.append({"source": "aime2024", "id": row["id"],
                      **record(row["solution"], gold, f"$\\boxed{{{gold}}}$")})  # fmt: skip
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "lm_eval": version("lm_eval"), "math_verify": version("math-verify"),
        "sympy": version("sympy"), "antlr4-python3-runtime": version("antlr4-python3-runtime"),
        "command": "scripts/record_math_oracle.py (in lm-eval's venv)",
    }  # fmt: skip
    out.write_text(json.dumps({"meta": meta, "cases": cases}, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(cases)} texts -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
