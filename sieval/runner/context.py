"""The call context of one sample in a run: what ``Task.solve``'s ``ctx`` is (``tasks/context.py``).

``ctx.call(name, request)`` does, in order:

1. **a reply already had**: a pre-run check's answer to this very request (the evaluated
   model's, ``checks.Primed``), else a reply an interrupted session journaled for this sample
   and key with the same body (``store/records/journal.py``), lifted again through the same
   checks (``Model.replay``); nothing is sent;
2. **admission** (a task that is not static; a static task's sample was admitted whole,
   ``scheduler._budgeted``): the call's most (its prompt counted, its ``max_tokens``) held
   against ``--budget-tokens`` / ``--budget-cost`` before it is sent, so a budget stops such a
   run between calls, never mid-call (``BudgetStopped``: the sample is left unrecorded, its
   answered calls journaled, for a resume to continue);
3. **concurrency**: a slot of the model's endpoint, then one of the run's global cap, held only
   while the call is on the wire (``Scheduler``'s docstring);
4. **the call**: ``Model.call`` decides every leaf before I/O and checks the reply;
5. **the journal** (a task that is not static): an answered call is written and flushed;
6. **the record**: one ``RequestRecord`` under the sample, in the order the calls were made,
   with its turn and role (and, for a task that is not static, the messages it added and the
   answer it got).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from ..cost.budget import Held
from ..ir.defaults import with_defaults
from ..ir.request import ChatInput, Message, Request
from ..model import Call
from ..store.records import Journaled, RequestRecord, reply_text, request_record, sent_hash
from ..tasks.base import Sample, chat_facts
from ..tasks.context import Context
from ..transport import HttpReply, Timings, redact
from .checks import primed_key

if TYPE_CHECKING:
    from .scheduler import Runtime, Scheduler, Unit

_NO_TIMINGS = Timings(started=0.0, first_byte_s=0.0, total_s=0.0, wall_s=0.0)

__all__ = ["BudgetStopped", "SampleCalls", "SampleContext"]


class BudgetStopped(Exception):
    """A call did not fit the budget and nothing in flight could free it: the run stops, this
    sample is left for a resume (its answered calls are journaled)."""


@dataclass
class SampleCalls:
    """What one sample's calls left, shared by its contexts (one per role)."""

    records: dict[str, RequestRecord | None] = field(default_factory=dict)
    """By key, in the order the calls were made (None while a call is in flight)."""
    done: dict[str | None, int] = field(default_factory=dict)
    """Per role, the latest turn answered."""
    sent: dict[str | None, tuple[Message, ...]] = field(default_factory=dict)
    """Per role, the messages its last call sent."""
    named: dict[str, str] = field(default_factory=dict)
    """By key, the model id the evaluated model's reply named."""
    replayed: int = 0
    """Calls answered from the journal (nothing sent)."""

    def first_error(self) -> dict[str, Any] | None:
        """The error of the first call that failed, in the order they were made."""
        for record in self.records.values():
            if record is not None and record.error is not None:
                return record.error
        return None

    def reported(self) -> str | None:
        """The model id the evaluated model's first reply (in the order made) named."""
        return next((self.named[k] for k in self.records if k in self.named), None)

    def made(self) -> dict[str, RequestRecord]:
        """The records of the calls that were made (in flight ones, cut short, left out)."""
        return {k: r for k, r in self.records.items() if r is not None}


class SampleContext(Context):
    """One sample's context for one model (``role``: None, the evaluated model)."""

    def __init__(
        self,
        scheduler: Scheduler,
        unit: Unit,
        sample: Sample,
        runtime: Runtime,
        *,
        role: str | None = None,
        calls: SampleCalls | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.unit = unit
        self.sample = sample
        self.config = unit.task.config
        self.runtime = runtime
        self.facts = runtime.facts if role is not None else chat_facts(self.config, runtime.facts)
        self.role_name = role
        self.calls = calls if calls is not None else SampleCalls()
        self.static = unit.task.task.static

    def role(self, name: str) -> Context:
        runtime = self.scheduler.roles.get(name)
        if runtime is None or name not in self.unit.task.task.roles:
            declared = ", ".join(self.unit.task.task.roles) or "none"
            raise KeyError(
                f"task {self.unit.task.name!r} called the role {name!r}, which it does not "
                f"declare (its roles: {declared}); add it to the task's roles"
            )
        return SampleContext(
            self.scheduler, self.unit, self.sample, runtime, role=name, calls=self.calls
        )

    async def gather(self, requests: Mapping[str, Request]) -> dict[str, Call]:
        turn = self.calls.done.get(self.role_name, 0) + 1  # sent together: one turn
        made = await asyncio.gather(*(self._call(n, r, turn) for n, r in requests.items()))
        return dict(zip(requests, made, strict=True))

    async def call(self, name: str, request: Request) -> Call:
        return await self._call(name, request, self.calls.done.get(self.role_name, 0) + 1)

    async def _call(self, name: str, request: Request, turn: int) -> Call:
        key = name if self.role_name is None else f"{self.role_name}:{name}"
        if key in self.calls.records:
            raise ValueError(f"sample {self.sample.id!r} already made a call named {key!r}")
        self.calls.records[key] = None  # its place in the record: the order calls were made
        held: Held | None = None
        call = self._had(name, key, request)
        if call is None:
            held = await self._admitted(request)
            try:
                call = await self._sent(key, request)
            except BaseException:
                self._settle(held, None)  # cancelled (a stopped run): it holds nothing more
                raise
        record = request_record(call, self.runtime.secrets, self.scheduler.record_tokens)
        if not self.static:
            record = msgspec.structs.replace(
                record,
                turn=turn,
                role=self.role_name,
                messages=self._added(request),
                output=_output(call),
            )
        elif turn != 1 or self.role_name is not None:  # a one-shot request stays as it was
            record = msgspec.structs.replace(record, turn=turn, role=self.role_name)
        self.calls.records[key] = record
        if self.role_name is None and call.reported_model:
            self.calls.named[key] = call.reported_model
        self._settle(held, record)
        if call.ok:
            self.calls.done[self.role_name] = max(turn, self.calls.done.get(self.role_name, 0))
        return call

    def _had(self, name: str, key: str, request: Request) -> Call | None:
        """A reply this call need not be sent for: the checks' or the journal's."""
        runtime = self.runtime
        if self.role_name is None and runtime.primed:
            primed = primed_key(self.unit.task.name, self.sample.id, name)
            sent, call = runtime.primed.pop(primed, (None, None))
            if call is not None and sent == request:
                self._journal(key, call)  # a resume need not ask it again either
                return call
        journal = self.unit.journal
        kept = journal.kept(self.sample.id, key) if journal is not None else None
        if kept is None:
            return None
        timings = Timings(**kept.timings) if kept.timings else _NO_TIMINGS
        reply = HttpReply(
            status=kept.status,
            headers={},
            body=kept.reply_bytes(),
            attempts=kept.attempts,
            timings=timings,
        )
        replayed = runtime.model.replay(request, reply)
        if sent_hash(replayed.body) != kept.sent:
            return None  # the conversation went another way: send it
        self.calls.replayed += 1
        return replayed

    async def _admitted(self, request: Request) -> Held | None:
        """The call's most held against the budget (a task that is not static); ``BudgetStopped``
        when the run stops instead."""
        budget = self.scheduler.budget
        if budget is None or self.static:
            return None
        runtime = self.runtime
        full = with_defaults(request, runtime.planned.config.request_defaults)
        held = await budget.admit(runtime.planned, [full], runtime.model, what="call")
        if held is None:
            raise BudgetStopped(budget.stopped)
        return held

    def _settle(self, held: Held | None, record: RequestRecord | None) -> None:
        budget, scheduler = self.scheduler.budget, self.scheduler
        if held is None or budget is None:
            return
        reason = budget.settle(held, None if record is None else [record])
        if reason is not None and scheduler.stopped is None:
            scheduler.stopped = reason  # no further call is admitted; those in flight finish

    async def _sent(self, key: str, request: Request) -> Call:
        runtime = self.runtime
        async with runtime.endpoint.slots, self.scheduler.global_cap:
            runtime.calls += 1
            call = await runtime.model.call(request)
        self._journal(key, call)
        return call

    def _journal(self, key: str, call: Call) -> None:
        """An answered call of a task that is not static, written and flushed to the journal."""
        journal = self.unit.journal
        if journal is None or not call.ok or call.raw is None:
            return
        secrets = self.runtime.secrets
        journal.write(
            Journaled(
                sample=self.sample.id,
                key=key,
                sent=sent_hash(call.body),
                status=call.status or 200,
                attempts=call.attempts,
                timings=msgspec.to_builtins(call.timings) if call.timings else {},
                **reply_text(call.raw, lambda text: redact(text, secrets)),
            )
        )

    def _added(self, request: Request) -> list[dict[str, Any]] | None:
        """The messages this call adds to its model's conversation: all of them on its first
        call, then what follows the messages its last call sent."""
        if not isinstance(request.input, ChatInput):
            return None
        messages = request.input.messages
        before = self.calls.sent.get(self.role_name, ())
        self.calls.sent[self.role_name] = messages
        start = len(before) if messages[: len(before)] == before else 0
        return [msgspec.to_builtins(m) for m in messages[start:]]


def _output(call: Call) -> list[dict[str, Any]] | None:
    """Each choice's answer, as a record keeps it for a conversation."""
    if call.response is None:
        return None
    out = []
    for choice in call.response.choices:
        entry: dict[str, Any] = {"text": choice.text}
        if isinstance(choice.tool_calls, tuple) and choice.tool_calls:
            entry["tool_calls"] = [msgspec.to_builtins(c) for c in choice.tool_calls]
        if isinstance(choice.finish_reason, str):
            entry["finish"] = choice.finish_reason
        out.append(entry)
    return out
