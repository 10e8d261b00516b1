"""An answer its token budget cut is censored (and truncated) on every chat wire: each wire says
"cut" in its own word (``length``, ``max_output_tokens``, ``max_tokens``, ``MAX_TOKENS``), and
the checked and generation families read it through ``ended_for_length``, against the embedded
reference server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sieval.model import Model
from sieval.plan.plan import model_facts
from sieval.runner.preflight import embedded_server
from sieval.tasks.base import TaskConfig
from sieval.tasks.context import DirectContext
from sieval.tasks.registry import TASKS


@pytest.fixture(scope="module")
async def url() -> AsyncIterator[str]:
    async with embedded_server() as found:
        yield found


@pytest.mark.parametrize(
    "dialect", ["openai_chat", "openai_responses", "anthropic_messages", "google_genai"]
)
@pytest.mark.parametrize("task", ["math500", "gsm8k_0shot_gen"])
async def test_an_answer_cut_before_it_gave_one_is_censored_on_every_wire(
    url: str, data_dir: Path, dialect: str, task: str
) -> None:
    config = TaskConfig(name=task, options={"max_tokens": 3})
    sample = next(iter(TASKS[task].load(data_dir, config)))
    async with Model(dialect=dialect, base_url=url, model_id="sieval-reference") as model:
        ctx = DirectContext(model, sample, config, model_facts(model.dialect))
        result = await TASKS[task].solve(sample, ctx)
    (call,) = ctx.calls.values()
    assert call.result().usage.output_tokens == 3
    assert result.metrics["censored"] == 1.0
    assert result.metrics.get("truncated", 1.0) == 1.0
