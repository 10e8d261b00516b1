"""Live: a RULER task against the real vLLM 0.32.0 serving Gemma 3 270M (scripts/live-vllm.sh,
--max-model-len 4096): its samples generated through the server's /tokenize, the prompt as the
server counted it, and a length past its context refused before any sample. Kept to one sample
at 512 tokens (~60 prompt tokens/s on a slow CPU); docs/evidence/ruler-live.md has the eleven
tasks at 4k and 8k on a 32k server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sieval.cost.forecast import CostOptions
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.runner import RunOptions, arun_eval
from sieval.store.records import read_records

pytestmark = pytest.mark.live

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


def _config(url: str, lengths: str) -> object:
    return parse_config(
        f"models: [{{name: g, endpoint: {url}, model: gemma-3-270m}}]\n"
        f"tasks: [{{name: niah_single_1, n: 1, options: {{lengths: {lengths}}}}}]\n"
    )


async def test_a_ruler_sample_is_sized_by_the_server_s_tokenizer(
    vllm_url: str, tmp_path: Path
) -> None:
    result = await arun_eval(
        _config(vllm_url, "[512]"),
        # the forecast a RULER run makes unasked (a rate probe: ~20 s on a slow CPU) is tested on
        # the embedded server; docs/evidence/ruler-live.md has it against real runs
        RunOptions(out=tmp_path, data_dir=DATA, preflight=False, cost=CostOptions(forecast=False)),
    )
    assert result.exit_code == 0, result.report
    (entry,) = result.report.results
    assert set(entry.metrics) >= {"len_512", "score"}
    (record,) = read_records(
        result.run_dir / "g" / "niah_single_1" / "records.jsonl"
    ).records.values()
    channel = record.channels["length:512"]
    # RULER's length: the prompt's tokens (the server's /tokenize, special tokens off) + 128
    assert 512 - 128 - 25 < channel["prompt_tokens"] <= 512 - 128
    # the server's count of the prompt it was sent: the same tokens and Gemma's BOS
    assert channel["server_prompt_tokens"] == channel["prompt_tokens"] + 1
    assert channel["template_tokens"] == 1


async def test_a_length_past_the_server_s_context_is_refused(vllm_url: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        await arun_eval(
            _config(vllm_url, "[4096]"), RunOptions(out=tmp_path, data_dir=DATA, preflight=False)
        )
    assert "maximum model length 4096; the longest length it holds is 4095" in (
        refused.value.message
    )
