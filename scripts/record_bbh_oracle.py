"""Record lm-evaluation-harness 0.4.13's ``bbh_cot_fewshot`` filters on texts, as a fixture.

    ~/.cache/sieval/bench/lm-eval-0.4.13/bin/python scripts/record_bbh_oracle.py \\
        [--data-dir ../shared/data] [--out tests/fixtures/bbh/lm-eval-0.4.13/oracle.json]

Runs in lm-eval's own venv (it never imports sieval). The filter is built from lm-eval's own task
config (``tasks/bbh/cot_fewshot/_cot_fewshot_template_yaml``: its regex filter and
``take_first``, by lm-eval's filter registry) and the score from its ``exact_match`` metric, on:
the synthetic texts below (stored in full) and the chain-of-thought answers of the 81 few-shot
exemplars in ``bbh/cot-prompts/*.txt`` (stored as file + index; the test reads them from the data
directory), each scored against the subtask's targets it could be mistaken for.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

# (name, text, target)
SYNTHETIC = [
    ("plain", "Let's think. So the answer is True.", "True"),
    ("letter", "Thus (B) fits. So the answer is (B).", "(B)"),
    ("no_period_at_end", "So the answer is True", "True"),
    ("first_of_two", "So the answer is (A).\nWait, the answer is (C).", "(C)"),
    ("same_line_twice", "the answer is (A). No, the answer is (C).", "(C)"),
    ("capital_the", "The answer is valid.", "valid"),
    ("no_space", "the answer is(A).", "(A)"),
    ("two_spaces", "the answer is  (A).", "(A)"),
    ("trailing_space", "So the answer is No. ", "No"),
    ("trailing_newline", "So the answer is Yes.\n", "Yes"),
    ("multi_word", "So the answer is 12/25/1937.", "12/25/1937"),
    ("dyck", "So the answer is ) ].", ") ]"),
    ("word_sorting", "So the answer is apple banana cherry.", "apple banana cherry"),
    ("quoted", 'So the answer is "True".', "True"),
    ("lowercase_target", "So the answer is true.", "True"),
    ("number", "So the answer is 42.", "42"),
    ("number_comma", "So the answer is 1,024.", "1,024"),
    ("no_answer", "I am not sure.", "True"),
    ("empty", "", "True"),
    ("answer_is_only", "the answer is ", "True"),
    ("one_char", "the answer is A", "A"),
    ("two_chars", "the answer is AB", "A"),
    ("unicode", "So the answer is café.", "café"),
    ("inside_word", "whatever the answer is, the answer is (D).", "(D)"),
    ("bold", "So the answer is **(E)**.", "(E)"),
    ("parenthetical", "So the answer is (A) (since it fits).", "(A)"),
    ("next_question", "So the answer is False.\n\nQ: another question", "False"),
    ("newline_after_is", "So the answer is\n(A).", "(A)"),
    ("tab", "So the answer is\t(A).", "(A)"),
    ("invalid_literal", "the answer is [invalid].", "[invalid]"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get("SIEVAL_DATA_DIR", "../shared/data"))
    parser.add_argument("--out", default="tests/fixtures/bbh/lm-eval-0.4.13/oracle.json")
    args = parser.parse_args()
    from importlib.metadata import version

    import lm_eval.tasks
    import yaml
    from lm_eval.api.metrics import exact_match_hf_evaluate
    from lm_eval.api.registry import get_filter

    config_path = Path(lm_eval.tasks.__file__).parent / "bbh/cot_fewshot/_cot_fewshot_template_yaml"
    config = yaml.safe_load(config_path.read_text())
    (filter_list,) = config["filter_list"]
    steps = []
    for step in filter_list["filter"]:
        kwargs = {k: v for k, v in step.items() if k != "function"}
        steps.append(get_filter(step["function"])(**kwargs))

    def extract(text: str) -> str:
        resps: Any = [[text]]
        for step in steps:
            resps = list(step.apply(resps, [{}]))
        return str(resps[0])

    def score(prediction: str, target: str) -> float:
        return float(
            exact_match_hf_evaluate(predictions=[prediction], references=[target])["exact_match"]
        )

    cases = []
    for name, text, target in SYNTHETIC:
        filtered = extract(text)
        cases.append({"source": "synthetic", "name": name, "text": text, "target": target,
                      "filtered": filtered, "exact_match": score(filtered, target)})  # fmt: skip
    for path in sorted((Path(args.data_dir) / "bbh" / "cot-prompts").glob("*.txt")):
        exemplars = path.read_text().split("\n\nQ: ")[1:]
        for index, exemplar in enumerate(exemplars):
            answer = exemplar.split("\nA: ", 1)[1]
            filtered = extract(answer)
            cases.append({"source": "cot-prompts", "file": path.name, "index": index,
                          "filtered": filtered})  # fmt: skip
    meta = {"lm_eval": version("lm_eval"), "filter_list": filter_list,
            "command": "scripts/record_bbh_oracle.py (in lm-eval's venv)"}  # fmt: skip
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "cases": cases}, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(cases)} texts -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
