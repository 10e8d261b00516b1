"""A PPL task through the real openai_completions dialect against the reference server: the
continuation is located from the offsets the dialect lifts, not from hand-built tokens."""

from __future__ import annotations

from pathlib import Path

from sieval.model import Model
from sieval.reference import ReferenceServer
from sieval.tasks.base import TaskConfig
from sieval.tasks.hellaswag_kshot_ppl import TASK


async def test_hellaswag_scores_through_the_dialect(data_dir: Path) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=1)
    samples = list(TASK.load(data_dir, config))[:2]
    async with (
        ReferenceServer(port=0) as server,
        Model(dialect="openai_completions", base_url=server.url, model_id=server.model_name) as m,
    ):
        for sample in samples:
            requests = TASK.requests(sample, config)
            responses = {name: await m.run(request) for name, request in requests.items()}
            result = TASK.score(sample, responses, config)
            assert set(result.metrics) == {"acc", "acc_norm"}
            for i, channel in enumerate(result.channels["choices"]):
                assert channel["n_chars"] == len(" " + sample.data["choices"][i])
                assert channel["norm_chars"] == len(sample.data["choices"][i])
                assert 1 <= channel["n_tokens"] <= channel["n_chars"]
                assert channel["logprob_sum"] < 0
