"""``plan.json``: a run frozen for its shards, and each shard's share of the budgets.

``sieval plan --shards N`` writes it once (``shards.freeze``); every shard and ``finalize`` read it
(``read_plan``). It holds the run identity, the data directory, every task's sample ids in plan
order with the shard of each, the budgets split across the shards, and what the pre-run checks
found.

The budgets: ``concurrency_limit`` (per model entry) and ``concurrency`` (global) are for the whole
run. Shard k gets ``total // N`` plus one of the remainder (``share``); a budget smaller than N is
refused at plan time rather than multiplied. This is the one place the budgets are split: a shard
runs with its entries' shares (``FrozenPlan.restrict``), so an endpoint two entries share gets, in
each shard, the share of the larger limit (``endpoints.py``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import msgspec

from ..errors import ConfigError
from ..plan.plan import Plan
from ..runner.setup import Found
from ..store.rundir import run_directory

__all__ = [
    "PLAN_FILE",
    "PLAN_VERSION",
    "FrozenPlan",
    "FrozenTask",
    "plan_path",
    "read_plan",
    "share",
    "split_budget",
]

PLAN_FILE = "plan.json"
PLAN_VERSION = 1


class FrozenTask(msgspec.Struct, kw_only=True):
    samples: list[str]
    """The task's sample ids, in plan order."""
    shard: list[int]
    """The shard of each sample (same order)."""
    clustered: bool = False
    """Whether groups were kept whole (``cluster_by = "group"``)."""


class FrozenPlan(msgspec.Struct, kw_only=True):
    """``plan.json``: what every shard and ``finalize`` read."""

    plan_version: int
    identity: str
    shards: int
    data_dir: str
    tasks: dict[str, FrozenTask]
    concurrency: list[int]
    """The global cap of each shard (sums to the config's ``concurrency``)."""
    concurrency_limit: dict[str, list[int]]
    """Per model label, each shard's share of its ``concurrency_limit``."""
    setup: Found = msgspec.field(default_factory=Found)
    """``provenance``, ``facts``, ``checks`` (and the ``forecast``) as the plan's pre-run checks
    found them."""
    notes: list[str] = []
    created: float = 0.0

    def rerun(self, run_dir: Path, shard: int) -> str:
        return f"sieval eval --run {run_dir} --shard {shard}/{self.shards}"

    def restrict(self, plan: Plan, shard: int) -> Plan:
        """``plan`` cut to shard ``shard``: its samples and its share of every budget."""
        tasks = []
        for pt in plan.tasks:
            frozen = self.tasks.get(pt.name)
            if frozen is None or list(pt.samples.ids()) != frozen.samples:
                raise ConfigError(
                    f"task {pt.name!r} no longer gives the samples {PLAN_FILE} froze; plan the "
                    "run again",
                    path="plan",
                )
            mine = pt.samples.select(i for i, k in enumerate(frozen.shard) if k == shard)
            tasks.append(replace(pt, samples=mine))
        models = [
            replace(
                pm,
                config=msgspec.structs.replace(
                    pm.config,
                    concurrency_limit=self.concurrency_limit[pm.label][shard],
                    # shard k starts from replica k: the shards spread over a model's replicas
                    replicas=_rotated(pm.config.replicas, shard),
                ),
            )
            for pm in plan.models
        ]
        return replace(plan, tasks=tasks, models=models)


def _rotated(replicas: list[str], shard: int) -> list[str]:
    """``replicas`` starting from replica ``shard`` (mod their count)."""
    if not replicas:
        return replicas
    k = shard % len(replicas)
    return replicas[k:] + replicas[:k]


def share(total: int, shard: int, count: int) -> int:
    """Shard ``shard``'s part of a budget ``total`` split over ``count`` shards (they sum to it)."""
    return total // count + (1 if shard < total % count else 0)


def plan_path(run_dir: Path) -> Path:
    return run_dir / PLAN_FILE


def read_plan(run_dir: Path) -> FrozenPlan:
    path = plan_path(run_directory(run_dir, what="planned run directory"))
    if not path.is_file():
        raise ConfigError(
            f"{str(run_dir)!r} holds no {PLAN_FILE}; make one with: sieval plan CONFIG --out "
            f"{run_dir} --shards N",
            path="run",
        )
    try:
        frozen = msgspec.json.decode(path.read_bytes(), type=FrozenPlan)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ConfigError(f"{path}: unreadable plan ({exc})", path="run") from exc
    if not _IDENTITY.fullmatch(frozen.identity):  # it names the jobs of the generated scripts
        raise ConfigError(
            f"{path}: the identity {frozen.identity[:80]!r} is not a sieval run identity; the "
            "plan was edited: plan the run again",
            path="run",
        )
    return frozen


_IDENTITY = re.compile(r"sha256:[0-9a-f]{64}")


def split_budget(total: int, count: int, what: str) -> list[int]:
    """``total`` split over ``count`` shards (``ConfigError`` naming ``what`` when too small)."""
    if total < count:
        raise ConfigError(
            f"{what} is {total}, fewer than the {count} shards: it is the budget of the whole "
            f"run, split across shards; raise it to at least {count} or plan fewer shards",
            path="shards",
        )
    return [share(total, k, count) for k in range(count)]
