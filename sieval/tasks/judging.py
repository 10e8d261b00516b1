"""What a judged task shares: the judge's identity in every judged record, and its calls.

A judged task declares ``roles = ("judge",)`` and asks through ``ctx.role("judge")``; a run
whose config sets no judge is refused before any I/O (``plan._plan_roles``), and a judge that is
one of the evaluated models is refused unless the task's option ``judge_self`` is true (then the
report's ``judged`` mark says so). Each judged record keeps, in its ``judge`` channel, who judged
and how (``identity``): the model id the judge's server reported, its ``system_fingerprint``
(None when the server sends none: the run's serving fingerprint of the judge is in ``run.json``),
the sha256 of the judge prompt (system and template, as the task sent them) and the sampling.
A reply that breaks the verdict format is a ``judge_parse_error``: counted, shown, never a score.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from ..ir.request import Sampling
from .base import TaskConfig

if TYPE_CHECKING:  # the model (and aiohttp under it) is not imported to list or load tasks
    from ..model import Call

__all__ = ["JUDGE_SELF", "identity", "judge_self", "prompt_hash", "reply_text"]

JUDGE_SELF = "judge_self"
"""The task option that allows the judge to be the evaluated model (off by default)."""


def judge_self(task: str, config: TaskConfig) -> bool:
    """The task's ``judge_self`` option (a bool)."""
    from ..errors import ConfigError

    value = config.options.get(JUDGE_SELF, False)
    if not isinstance(value, bool):
        raise ConfigError(
            f"task {task}: option {JUDGE_SELF} must be true or false, got {value!r}",
            path=f"tasks.{task}.options.{JUDGE_SELF}",
            received=value,
        )
    return value


def prompt_hash(*parts: str) -> str:
    """The sha256 of a judge prompt's parts (its system text and template), as hex."""
    return hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()


def reply_text(call: Call) -> str:
    """The judge's reply text (its first choice); the call's error when it failed."""
    response = call.result()
    return response.choices[0].text if response.choices else ""


def identity(
    calls: Sequence[Call], prompts: Mapping[str, str], sampling: Sampling
) -> dict[str, Any]:
    """Who judged and how: the reported model ids and fingerprints of ``calls`` (each distinct
    one once), the prompts' hashes by name, the sampling sent."""
    models: list[str | None] = []
    fingerprints: list[str | None] = []
    for call in calls:
        response = call.response
        model = response.model if response is not None else UNSET
        print_ = response.system_fingerprint if response is not None else UNSET
        reported = model if isinstance(model, str) else call.reported_model
        if reported not in models:
            models.append(reported)
        fingerprint = print_ if isinstance(print_, str) else None
        if fingerprint not in fingerprints:
            fingerprints.append(fingerprint)
    sent = {"temperature": sampling.temperature, "max_tokens": sampling.max_tokens}
    return {
        "model": models[0] if len(models) == 1 else models,
        "fingerprint": fingerprints[0] if len(fingerprints) == 1 else fingerprints,
        "prompts": dict(prompts),
        "sampling": {k: v for k, v in sent.items() if v is not UNSET},
    }
