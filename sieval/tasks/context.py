"""The call context a task's ``solve`` asks its models through.

``ctx.call(name, request)`` is one model call: in a run (``runner/context.py``) it is admitted
against the run's budget and concurrency, decided before its I/O, checked after, and recorded as
one request record under the sample (its name, turn and role); a reply a pre-run check already
got, or that an interrupted session journaled, is used instead of a resend. It returns the
``Call`` whatever happened (``call.result()`` raises the call's error); a call that failed fails
the sample whatever ``solve`` returns. ``ctx.gather(requests)`` sends independent calls at
once. ``ctx.role("judge")`` is the same sample's context for another planned model.

Names are the sample's record keys: unique within a sample (a role's calls are kept under
``role:name``). A call's turn is 1 plus the number of the same model's calls in this sample that
had been answered when it was made: a conversation's turns count up, calls sent together share
one.

``DirectContext`` runs ``solve`` straight against a ``Model``, with no run around it (a library
user's loop, a task's own test).
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..ir.request import Request
from .base import COMPLETION_MODEL, ModelFacts, Sample, TaskConfig, chat_facts

if TYPE_CHECKING:  # the model (and aiohttp under it) is not imported to list or load tasks
    from ..model import Call, Model

__all__ = ["Context", "DirectContext"]


class Context(abc.ABC):
    """What ``solve`` may ask: its sample's config, the model's facts, calls, other roles."""

    sample: Sample
    config: TaskConfig
    facts: ModelFacts
    """What the task may know of the model this context calls (input kind, capabilities)."""
    role_name: str | None = None
    """The role this context calls (``role``); None: the evaluated model."""

    @abc.abstractmethod
    async def call(self, name: str, request: Request) -> Call:
        """One model call, recorded as ``name``; the ``Call`` whatever happened."""

    async def gather(self, requests: Mapping[str, Request]) -> dict[str, Call]:
        """Independent calls sent at once; their calls by name, in the order given."""
        calls = await asyncio.gather(*(self.call(n, r) for n, r in requests.items()))
        return dict(zip(requests, calls, strict=True))

    @abc.abstractmethod
    def role(self, name: str) -> Context:
        """The context of the model playing ``name`` for this sample (declared in the task's
        ``roles``, set in the config's ``roles:``)."""


class DirectContext(Context):
    """``solve`` against models held by the caller: no budget, no records, no journal; the
    calls made are kept in ``calls`` (by record key, in the order made)."""

    def __init__(
        self,
        model: Model,
        sample: Sample,
        config: TaskConfig,
        facts: ModelFacts = COMPLETION_MODEL,
        *,
        roles: Mapping[str, Model] | None = None,
        role_name: str | None = None,
        calls: dict[str, Call] | None = None,
    ) -> None:
        self.model = model
        self.sample = sample
        self.config = config
        self.facts = facts if role_name is not None else chat_facts(config, facts)
        """``facts``, or a chat model's where the config applies the chat template (the
        ``model`` then renders it: ``Model(chat_template=True)``)."""
        self.roles = dict(roles or {})
        self.role_name = role_name
        self.calls: dict[str, Call] = {} if calls is None else calls

    async def call(self, name: str, request: Request) -> Call:
        key = name if self.role_name is None else f"{self.role_name}:{name}"
        if key in self.calls:
            raise ValueError(f"sample {self.sample.id!r} already made a call named {key!r}")
        self.calls[key] = call = await self.model.call(request)
        return call

    def role(self, name: str) -> Context:
        if name not in self.roles:
            raise KeyError(f"no model plays the role {name!r}; roles given: {sorted(self.roles)}")
        return DirectContext(
            self.roles[name],
            self.sample,
            self.config,
            role_name=name,
            roles=self.roles,
            calls=self.calls,
        )
