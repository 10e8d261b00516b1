"""How answers ended is recorded per request and counted in the report, never scored."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from runs import options

from sieval.ir.response import Choice, Response, ToolCall
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.results.tally import finish_counts
from sieval.runner import arun_eval
from sieval.store.records import finish_reasons


def test_each_choice_keeps_the_servers_word_and_an_empty_answer_is_marked() -> None:
    call = ToolCall(call_id="c", name="f", arguments={})
    response = Response(
        choices=(
            Choice(index=0, text="", finish_reason="stop"),
            Choice(index=1, text="x", finish_reason="length"),
            Choice(index=2, text="", finish_reason="tool_calls", tool_calls=(call,)),
            Choice(index=3, text=""),
        )
    )
    ended = finish_reasons(response)
    assert ended == ["stop:empty", "length", "tool_calls", ":empty"]
    counts = finish_counts(Counter([*ended, "SAFETY:empty"]))
    assert counts == ({"SAFETY": 1, "length": 1, "stop": 1, "tool_calls": 1, "unreported": 1}, 3)


async def test_the_report_counts_how_answers_ended(tmp_path: Path) -> None:
    async with ReferenceServer(port=0) as server:
        config = parse_config(
            f"""
models:
  - {{name: chat, endpoint: "{server.url}", model: {server.model_name}, kind: chat}}
tasks:
  - {{name: gsm8k_0shot_gen, n: 3}}
  - {{name: mmlu_kshot_clp, n: 4, num_fewshot: 0, options: {{top_k: 19}}}}
"""
        )
        result = await arun_eval(config, options(out=tmp_path))
    by_task = {r.task: r for r in result.report.results}
    # one token asked for (max_tokens 1): every letter request must end by length
    assert by_task["mmlu_kshot_clp"].finish_reasons == {"length": 4}
    gsm8k = by_task["gsm8k_0shot_gen"]
    assert sum(gsm8k.finish_reasons.values()) == 3
    assert set(gsm8k.finish_reasons) <= {"stop", "length"}
    assert gsm8k.empty_answers == 0
    records = (result.run_dir / "chat" / "gsm8k_0shot_gen" / "records.jsonl").read_text()
    finishes = [json.loads(line)["requests"]["gen"]["finish"] for line in records.splitlines()]
    assert Counter(f for each in finishes for f in each) == Counter(gsm8k.finish_reasons)
