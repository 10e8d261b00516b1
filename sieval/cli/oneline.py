"""The one-line form of ``sieval eval``: flags that stand for the config a YAML file would hold.

    sieval eval --endpoint http://127.0.0.1:8000 --model m --task mmlu_kshot_clp:top_k=19 \\
        --num-fewshot 5 --gen-kwargs temperature=0,max_tokens=64 --retries 2

``OneLine.mapping`` is the config as data: exactly what ``--write-config`` saves, and what
``OneLine.config`` hands to ``parse_config``, so both forms are checked by one code path and a
saved config runs with the same identity. A task entry is ``NAME[:KEY=VALUE[:KEY=VALUE]]``
(``n``, ``num_fewshot`` and ``seed`` set the entry's fields, any other key a task option);
after a comma, ``KEY=VALUE`` adds to the task before it (``--task mmlu_kshot_clp:top_k=19,
num_fewshot=2``). ``--num-fewshot``, ``--seed`` and ``--task-option`` apply to every task that
does not set its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import yaml

from ..errors import ConfigError
from ..ir.request import Sampling
from ..plan.config import ONE_LINE, EvalConfig, parse_config
from ..tasks.base import Task

__all__ = ["GEN_KWARGS_ALIASES", "OneLine", "config_yaml", "names", "pairs", "parse_limit"]

TASK_FIELDS = ("n", "num_fewshot", "seed")
"""Keys of a task entry that are its own fields, not options."""

GEN_KWARGS_ALIASES = {"max_gen_toks": "sampling.max_tokens", "until": "sampling.stop"}
"""lm-evaluation-harness's ``--gen_kwargs`` names that differ from the IR's."""


def names(values: Sequence[str]) -> tuple[str, ...]:
    """Repeated and comma-separated values: ``--model a,b --model c`` -> ``(a, b, c)``."""
    return tuple(name.strip() for value in values for name in value.split(",") if name.strip())


def _scalar(text: str) -> Any:
    """A value as YAML reads a scalar (``19`` an int, ``0.5`` a float, ``true`` a bool); anything
    else is the text itself (``until=Question:`` stops at ``Question:``)."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, bool | int | float | str) else text


def parse_limit(text: str | None) -> int | float | None:
    """``--limit``: a whole number of samples a task (``50``), or a fraction of each task's rows
    below 1 (``0.1``, as lm-eval's)."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if value.is_integer() and value >= 1 and "." not in text:
        return int(value)
    if 0 < value < 1:
        return value
    raise ConfigError(
        f"--limit {text!r}: give a whole number of samples a task (--limit 50) or a fraction of "
        "each task below 1 (--limit 0.1)",
        path="limit",
    )


def pairs(values: Sequence[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE[,KEY=VALUE]`` items of a repeatable flag, in order."""
    out: dict[str, Any] = {}
    for item in names(values):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} {item!r}: expected KEY=VALUE (e.g. {flag} top_k=19)")
        out[key.strip()] = _scalar(value)
    return out


def _gen_leaf(name: str) -> str:
    if "." in name:
        return name
    if name in GEN_KWARGS_ALIASES:
        return GEN_KWARGS_ALIASES[name]
    known = [f.name for f in msgspec.structs.fields(Sampling)]
    if name not in known:
        raise ConfigError(
            f"--gen-kwargs {name!r} is not a sampling field; use one of {', '.join(known)}, "
            f"{', '.join(GEN_KWARGS_ALIASES)}, or a request leaf such as options.min_p"
        )
    return f"sampling.{name}"


@dataclass
class OneLine:
    """What the one-line form's flags say (None or empty: not given)."""

    endpoint: str | list[str]
    """One base URL, or several: replicas of one model."""
    model: str
    tasks: Sequence[str]
    name: str | None = None
    kind: str | None = None
    dialect: str | None = None
    api_key_env: str | None = None
    api_key_file: str | None = None
    auth: str | None = None
    num_fewshot: int | None = None
    seed: int | None = None
    task_options: Sequence[str] = field(default_factory=tuple)
    gen_kwargs: Sequence[str] = field(default_factory=tuple)
    system_instruction: str | None = None
    fewshot_as_multiturn: bool = False
    """Every task's shots as chat turns (``TaskConfig.fewshot_as_multiturn``)."""
    apply_chat_template: bool = False
    """Every task's chat prompt through the server's chat template on a completion wire
    (``TaskConfig.apply_chat_template``)."""
    retries: int | None = None
    timeout: float | None = None
    max_reply_mib: float | None = None
    concurrency: int | None = None
    limit: int | float | None = None
    """A count, or a fraction of each task's rows (``0.1``)."""
    samples: Sequence[str] = field(default_factory=tuple)
    """Only these sample ids, in every task."""
    data_dir: Path | None = None
    out: Path | None = None
    price: str | None = None
    """``IN,OUT[,CURRENCY]``: per million input and output tokens."""
    server_defaults: str | None = None
    allow_mixed_replicas: bool = False

    def model_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"endpoint": self.endpoint}
        if self.model:
            entry["model"] = self.model
        keys = ("name", "kind", "dialect", "api_key_env", "api_key_file", "auth", "retries",
                "server_defaults", "system_instruction")  # fmt: skip
        for key in keys:
            if getattr(self, key) is not None:
                entry[key] = getattr(self, key)
        if self.timeout is not None:
            entry["timeout_s"] = self.timeout
        if self.max_reply_mib is not None:
            entry["max_reply_mib"] = self.max_reply_mib
        if self.concurrency is not None:
            entry["concurrency_limit"] = self.concurrency
        defaults = {_gen_leaf(k): v for k, v in pairs(self.gen_kwargs, "--gen-kwargs").items()}
        if "sampling.stop" in defaults and isinstance(defaults["sampling.stop"], str):
            defaults["sampling.stop"] = [defaults["sampling.stop"]]
        if defaults:  # lm-eval's --gen_kwargs: over what a task sets, said by the run
            entry["request_overrides"] = defaults
        if self.price is not None:
            entry["price"] = _price(self.price)
        if self.allow_mixed_replicas:
            entry["allow_mixed_replicas"] = True
        return entry

    def task_entries(self, registry: Mapping[str, Task]) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        for item in names(self.tasks):
            head, colon, rest = item.partition(":")
            if "=" in head:  # KEY=VALUE after a comma: the task before it
                if not entries:
                    raise ConfigError(
                        f"--task {item!r}: name the task first (--task mmlu_kshot_clp:{item})"
                    )
                _put(entries[-1], item)
                continue
            entry: dict[str, Any] = {"name": head.strip()}
            entries.append(entry)
            for pair in rest.split(":") if colon else ():
                if pair.strip():
                    _put(entry, pair)
        if not entries:
            raise ConfigError("the one-line form needs --task NAME[,NAME...] (see 'sieval tasks')")
        shared = pairs(self.task_options, "--task-option")
        for key in shared:
            takers = [e for e in entries if key in _defaults(registry, e["name"])]
            if not takers:
                having = [n for n, t in registry.items() if key in getattr(t, "defaults", {})]
                raise ConfigError(
                    f"--task-option {key}: none of the tasks takes it"
                    + (f" (it is an option of {', '.join(having)})" if having else "")
                    + "; 'sieval tasks' lists each task's options"
                )
            for entry in takers:
                entry.setdefault("options", {}).setdefault(key, shared[key])
        if self.num_fewshot is not None:
            entries = _suite_members(entries, registry, self.num_fewshot)
        for entry in entries:
            if self.num_fewshot is not None:
                entry.setdefault("num_fewshot", self.num_fewshot)
            if self.seed is not None:
                entry.setdefault("seed", self.seed)
            if self.fewshot_as_multiturn:
                entry["fewshot_as_multiturn"] = True
            if self.apply_chat_template:
                entry["apply_chat_template"] = True
            if self.limit is not None:
                own = entry.get("n")
                same = isinstance(own, int) and isinstance(self.limit, int)
                entry["n"] = min(own, self.limit) if same and own is not None else self.limit
            if self.samples:
                entry.setdefault("samples", list(names(self.samples)))
        return entries

    def mapping(self, registry: Mapping[str, Task]) -> dict[str, Any]:
        """The config file these flags stand for."""
        out: dict[str, Any] = {}
        if self.data_dir is not None:
            out["data_dir"] = str(self.data_dir.resolve())
        if self.out is not None:
            out["out"] = str(self.out)
        if self.concurrency is not None and self.concurrency > _DEFAULT_CONCURRENCY:
            out["concurrency"] = self.concurrency
        out["models"] = [self.model_entry()]
        out["tasks"] = self.task_entries(registry)
        return out

    def config(self, registry: Mapping[str, Task]) -> EvalConfig:
        return parse_config(config_yaml(self.mapping(registry)), source=ONE_LINE)


_DEFAULT_CONCURRENCY = next(
    f.default for f in msgspec.structs.fields(EvalConfig) if f.name == "concurrency"
)
"""A config's overall cap; ``--concurrency`` above it raises the cap too (one model)."""


def _put(entry: dict[str, Any], item: str) -> None:
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(
            f"--task {entry['name']}:{item!r}: expected KEY=VALUE (e.g. "
            f"--task {entry['name']}:num_fewshot=5)"
        )
    if key in TASK_FIELDS:
        entry[key] = _scalar(value)
    else:
        entry.setdefault("options", {})[key] = _scalar(value)


def _price(text: str) -> dict[str, Any]:
    """``--price IN,OUT[,CURRENCY]`` as the config's ``price:`` entry (checked there)."""
    parts = [part.strip() for part in text.split(",")]
    numbers: list[float] = []
    for part in parts[:2]:
        try:
            numbers.append(float(part))
        except ValueError:
            break
    if len(parts) not in (2, 3) or len(numbers) != 2:
        raise ConfigError(
            f"--price {text!r}: give the price per million input and output tokens, and "
            "optionally the currency: --price 0.15,0.60,USD",
            path="price",
        )
    price: dict[str, Any] = {"input": numbers[0], "output": numbers[1]}
    if len(parts) == 3 and parts[2]:
        price["currency"] = parts[2]
    return price


def _suite_members(
    entries: list[dict[str, Any]], registry: Mapping[str, Task], shots: int
) -> list[dict[str, Any]]:
    """``--num-fewshot`` beside a suite: the suite's entry becomes its members', each taking the
    shots; a member that takes none is refused by name, with the one line that runs it 0-shot
    beside the others."""
    from ..tasks.registry import SUITES

    out: list[dict[str, Any]] = []
    for entry in entries:
        suite = SUITES.get(entry["name"])
        if suite is None or "num_fewshot" in entry or entry.get("options"):
            out.append(entry)
            continue
        shared: dict[str, Any] = {k: entry[k] for k in ("n", "seed", "samples") if k in entry}
        members: list[dict[str, Any]] = []
        for m in suite.tasks:
            member: dict[str, Any] = {"name": m.name, **shared}
            if m.num_fewshot is not None:
                member["num_fewshot"] = m.num_fewshot
            if m.options:
                member["options"] = dict(m.options)
            members.append(member)
        shotless = [m["name"] for m in members if _takes_no_shots(registry, m["name"])]
        if shotless and shots:
            listed = ",".join(
                m["name"] if m["name"] in shotless else f"{m['name']}:num_fewshot={shots}"
                for m in members
            )
            raise ConfigError(
                f"--num-fewshot {shots} applies to {suite.name}'s tasks, but "
                f"{', '.join(shotless)} take no shots (their data has no split to draw them "
                f"from); to run them 0-shot beside the others, drop --num-fewshot and give "
                f"--task {listed}",
                path="num_fewshot",
            )
        out += members
    return out


def _takes_no_shots(registry: Mapping[str, Task], name: str) -> bool:
    spec = getattr(registry.get(name), "spec", None)
    return spec is not None and spec.data.shots is None


def _defaults(registry: Mapping[str, Task], name: str) -> Mapping[str, Any]:
    task = registry.get(name)
    return getattr(task, "defaults", {}) if task is not None else {}


def config_yaml(mapping: Mapping[str, Any]) -> str:
    """``mapping`` as a config file: one flow-style line per model and task, as the examples."""
    lines = [f"{key}: {_flow(value)}" for key, value in mapping.items() if key not in _LISTS]
    for key in _LISTS:
        lines.append(f"{key}:")
        lines += [f"  - {_flow(item)}" for item in mapping.get(key, [])]
    return "\n".join(lines) + "\n"


_LISTS = ("models", "tasks")


def _flow(value: Any) -> str:
    text: str = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10**6)
    return text.strip().removesuffix("...").strip()
