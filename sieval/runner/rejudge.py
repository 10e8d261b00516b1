"""``sieval rejudge RUN --judge LABEL``: the same answers judged again, by another judge (or the
same one again), written as a new run that points at its source; nothing is generated again.

How: the source run's config (``run.json``) with its ``roles: {judge: ...}`` replaced and each
judged task limited to the samples the source scored is planned as a new run (its identity holds
the new judge, so it is a run of its own); the evaluated model's answered calls are copied from
the source's call journals (``calls.jsonl``, every answered call of a task that is not static)
into the new run's, and the new run is then completed as a resume: each answer is *replayed*
through the same checks (``runner/context.py``), only the judge's calls are sent. The pre-run
and serving checks are off (they would ask the evaluated model again). ``rejudge.json`` in the
new run names its source (directory and identity) and the judge.

A source whose journals lack an answer (a run made before journals, or one compacted) would have
that call sent: the rejudge refuses such a run before planning anything.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..plan.config import EvalConfig, ModelConfig, check_config, load_config
from ..plan.run_config import load_run_config
from ..store.paths import results_dirname
from ..store.records import journal_path, read_records
from ..store.rundir import read_run_json, run_directory
from ..tasks.judging import JUDGE_SELF
from ..tasks.registry import TASKS
from .engine import RunOptions, RunResult, arun_eval

__all__ = ["REJUDGE_FILE", "arejudge"]

REJUDGE_FILE = "rejudge.json"


def _judge_entry(label: str, source: EvalConfig, judges: Path | None) -> ModelConfig:
    """The model entry called ``label``: the ``--config`` file's, else the source run's."""
    places: list[tuple[str, Sequence[ModelConfig]]] = []
    if judges is not None:
        given = load_config(judges)
        places.append((str(judges), [*given.models, *given.role_models().values()]))
    places.append(("the source run", [*source.models, *source.role_models().values()]))
    for _, entries in places:
        for entry in entries:
            if entry.label == label:
                return entry
    where = " or ".join(name for name, _ in places)
    raise ConfigError(
        f"no model labelled {label!r} in {where}; give a config file whose models: or roles: "
        "holds it (sieval rejudge RUN --judge LABEL --config FILE)",
        path="judge",
    )


def _scored(records: Path) -> list[str]:
    """The ids of the samples a unit's records hold as scored, in their order."""
    if not records.is_file():
        return []
    return [i for i, r in read_records(records).records.items() if r.status == "ok"]


def _answers(source: Path, records: Path, judged: str) -> list[bytes]:
    """The source unit's journal lines of the evaluated model's calls (no role's)."""
    journal = journal_path(records)
    if not journal.is_file():
        raise ConfigError(
            f"{source}: {judged} has no call journal ({journal.name}), so its answers cannot be "
            "replayed; judge it again with sieval eval --resume instead",
            path="rejudge",
        )
    kept = []
    for line in journal.read_bytes().splitlines():
        if not line.strip():
            continue
        key = json.loads(line).get("key", "")
        if ":" not in key:  # a role's call is kept as ROLE:NAME
            kept.append(line)
    return kept


async def arejudge(
    source: Path,
    judge: str,
    options: RunOptions,
    *,
    judges: Path | None = None,
    judge_self: bool = False,
) -> RunResult:
    """Judge ``source``'s answers again with the model labelled ``judge``; the new run."""
    source = run_directory(source)
    config = load_run_config(
        source,
        endpoints=load_config(judges) if judges is not None else None,
        again="sieval rejudge {run_dir} --judge LABEL --config CONFIG (the run's own config, "
        "with the judge's entry added)",
    )
    entry = _judge_entry(judge, config, judges)
    tasks = []
    copies: dict[Path, list[bytes]] = {}
    for tc in config.tasks:
        task = TASKS.get(tc.name)
        if task is None or "judge" not in task.roles:
            continue
        ids: list[str] = []
        for model in config.models:
            unit = Path(results_dirname(model.label)) / tc.name
            records = source / unit / "records.jsonl"
            ids += [i for i in _scored(records) if i not in ids]
            copies[unit / "calls.jsonl"] = _answers(source, records, f"{model.label}/{tc.name}")
        if not ids:
            raise ConfigError(f"{source}: {tc.name} has no scored sample to judge again")
        task_options = dict(tc.options)
        if judge_self:
            task_options[JUDGE_SELF] = True
        tasks.append(msgspec.structs.replace(tc, n=None, samples=ids, options=task_options))
    if not tasks:
        raise ConfigError(f"{source}: none of its tasks is judged; nothing to judge again")
    again = check_config(
        msgspec.structs.replace(config, tasks=tasks, roles={"judge": entry}), "sieval rejudge"
    )
    quiet = dataclasses.replace(options, preflight=False, serving_checks="off", resume=None)
    planned = await arun_eval(again, dataclasses.replace(quiet, plan_only=True))
    run_dir = planned.run_dir
    for path, lines in copies.items():
        target = run_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"".join(line + b"\n" for line in lines))
    meta: dict[str, Any] = {
        "source": str(source.resolve()),
        "source_identity": read_run_json(source)["identity"],
        "judge": entry.label,
        "judge_identity": entry.identity(),
    }
    (run_dir / REJUDGE_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    return await arun_eval(again, dataclasses.replace(quiet, resume=run_dir))
