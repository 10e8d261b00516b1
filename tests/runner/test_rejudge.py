"""``sieval rejudge``: a run's answers judged again by another judge as a new run that points at
its source, nothing generated again; ``sieval compare`` of the two reports how far the judges
agree (``analysis/agreement.py``), checked against the figures computed here from the records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from runs import options

from sieval.analysis.agreement import cohen_kappa, krippendorff_alpha, spearman
from sieval.analysis.compare import compare_runs
from sieval.cli.compare import render_comparison
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.runner import arun_eval, read_records
from sieval.runner.rejudge import REJUDGE_FILE, arejudge

SAMPLES = ["81", "91", "101", "111", "121", "131"]


def config(task: str = "mt_bench", samples: list[str] = SAMPLES, extra: str = "") -> Any:
    return parse_config(
        "models: [{name: m, endpoint: embedded, kind: chat}]\n"
        f"tasks: [{{name: {task}, samples: {json.dumps(samples)}, "
        "options: {judge_self: true, max_tokens: 48, judge_max_tokens: 256}}]\n"
        "roles:\n  judge: {name: j, endpoint: embedded, kind: chat}\n" + extra
    )


JUDGES = """models:
  - {name: hot, endpoint: embedded, kind: chat, request_overrides: {sampling.temperature: 1.0}}
tasks: [{name: mt_bench}]
"""


def test_cohen_kappa_and_spearman_on_known_values() -> None:
    # two raters, 10 items: 7 agree; marginals 5/5 and 6/4: p_e = (5*6 + 5*4) / 100 = 0.5
    xs = ["y"] * 5 + ["n"] * 5
    ys = ["y"] * 4 + ["n"] + ["y"] * 2 + ["n"] * 3
    assert cohen_kappa(xs, ys) == pytest.approx((0.7 - 0.5) / 0.5)
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # chance agreement is 1
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # average ranks [1, 2.5, 2.5, 4] and [1, 3, 2, 4]: 4.5 / sqrt(4.5 * 5)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / (4.5 * 5) ** 0.5)
    assert spearman([1, 1], [1, 2]) is None
    # Krippendorff's reliability data (2011, "Computing Krippendorff's Alpha-Reliability"):
    # four coders, twelve units, missing values; alpha 0.743 nominal, 0.849 interval
    n = None
    coders = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
        [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],
    ]
    units = list(zip(*coders, strict=True))
    assert round(krippendorff_alpha(units) or 0, 3) == 0.743
    assert round(krippendorff_alpha(units, "interval") or 0, 3) == 0.849
    assert krippendorff_alpha([(1, 1), (2, None)]) is None  # no disagreement to expect


async def test_a_rejudge_replays_the_answers_and_compare_reports_agreement(
    tmp_path: Path,
) -> None:
    first = await arun_eval(config(), options(out=tmp_path, wire_log=True))
    assert first.exit_code == 0
    answered = (first.run_dir / "m" / "wire.jsonl").read_text().splitlines()
    judges = tmp_path / "judges.yaml"
    judges.write_text(JUDGES)
    again = await arejudge(
        first.run_dir, "hot", options(out=tmp_path, wire_log=True), judges=judges
    )
    assert again.exit_code == 0 and again.run_dir != first.run_dir
    # nothing asked of the evaluated model: its wire log in the new run is empty
    wire = again.run_dir / "m" / "wire.jsonl"
    assert not wire.exists() or wire.read_text() == ""
    assert len(answered) == 2 * len(SAMPLES)
    assert len((again.run_dir / "hot" / "wire.jsonl").read_text().splitlines()) == 2 * len(SAMPLES)
    pointer = json.loads((again.run_dir / REJUDGE_FILE).read_text())
    assert pointer["source"] == str(first.run_dir.resolve()) and pointer["judge"] == "hot"
    assert again.report.run.identity != first.report.run.identity
    assert again.report.run.inputs["roles"]["judge"]["request_overrides"] == {
        "sampling.temperature": 1.0
    }
    before = read_records(first.run_dir / "m" / "mt_bench" / "records.jsonl").records
    after = read_records(again.run_dir / "m" / "mt_bench" / "records.jsonl").records
    pairs: list[tuple[float, float]] = []
    for sample in SAMPLES:
        assert after[sample].channels["answers"] == before[sample].channels["answers"]
        for x, y in zip(
            before[sample].channels["ratings"], after[sample].channels["ratings"], strict=True
        ):
            pairs.append((x, y))
    assert any(x != y for x, y in pairs)  # the hot judge disagrees somewhere
    compared = compare_runs(first.run_dir, again.run_dir)
    judges_ = compared["tasks"][0]["judges"]
    assert judges_["ratings"]["n"] == len(pairs)
    assert judges_["ratings"]["same"] == sum(x == y for x, y in pairs) / len(pairs)
    assert judges_["ratings"]["spearman"] == spearman([x for x, _ in pairs], [y for _, y in pairs])
    assert judges_["ratings"]["alpha_interval"] == krippendorff_alpha(pairs, "interval")
    shown = [str(line) for line in render_comparison(compared) if isinstance(line, str)]
    assert any(line.startswith(f"  judges' agreement over {len(pairs)} ratings") for line in shown)
    # the report names the new judge
    marks = again.report.results[0].marks or []
    assert any(m.mark == "judged" and "'hot'" in m.why for m in marks)


async def test_arena_verdicts_agree_by_cohen_s_kappa(tmp_path: Path) -> None:
    from tests.tasks.test_arena_hard_v2 import _rows

    samples, _ = _rows()
    cfg = config("arena_hard_v2", samples)
    first = await arun_eval(cfg, options(out=tmp_path))
    judges = tmp_path / "judges.yaml"
    judges.write_text(JUDGES)
    again = await arejudge(first.run_dir, "hot", options(out=tmp_path), judges=judges)
    compared = compare_runs(first.run_dir, again.run_dir)
    verdicts = compared["tasks"][0]["judges"]["verdicts"]
    before = read_records(first.run_dir / "m" / "arena_hard_v2" / "records.jsonl").records
    after = read_records(again.run_dir / "m" / "arena_hard_v2" / "records.jsonl").records
    fold = {"B<A": "A>B", "A<B": "B>A", "B=A": "A=B", "A<<B": "B>>A", "B<<A": "A>>B"}
    xs = [
        fold.get(v, v) for s in samples for _, v in sorted(before[s].channels["verdicts"].items())
    ]
    ys = [fold.get(v, v) for s in samples for _, v in sorted(after[s].channels["verdicts"].items())]
    assert verdicts["n"] == len(xs) == 2 * len(samples)
    assert verdicts["cohen_kappa"] == cohen_kappa(xs, ys)
    assert verdicts["alpha_nominal"] == krippendorff_alpha(list(zip(xs, ys, strict=True)))


async def test_a_run_with_no_judged_task_is_refused(tmp_path: Path) -> None:
    cfg = parse_config(
        "models: [{name: m, endpoint: embedded, kind: chat}]\n"
        "tasks: [{name: mt_bench_answers, samples: ['81'], options: {max_tokens: 8}}]\n"
    )
    first = await arun_eval(cfg, options(out=tmp_path))
    with pytest.raises(ConfigError, match="none of its tasks is judged"):
        await arejudge(first.run_dir, "m", options(out=tmp_path))
