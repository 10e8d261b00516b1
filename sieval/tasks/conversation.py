"""A conversation a task holds with its model, turn by turn: ``ask`` sends the next user message
through the call context and keeps the answer as the assistant's turn, so the next question is
asked after the model's own answer::

    chat = Conversation(sampling=Sampling(temperature=0.0, max_tokens=512))
    first = await chat.ask(ctx, "turn1", "Write a haiku about rain.")
    second = await chat.ask(ctx, "turn2", "Now make it rhyme.")

Each ``ask`` is one ``ctx.call`` (recorded with its name and turn); a call that failed raises
its error (the sample fails, unscored).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..errors import ContractViolation
from ..ir.request import ChatInput, Message, Request, Sampling, TextPart
from ..ir.response import Choice
from .context import Context

__all__ = ["Conversation", "message"]


def message(role: Literal["system", "user", "assistant"], text: str) -> Message:
    """A message of one text part."""
    return Message(role=role, content=(TextPart(text=text),))


@dataclass
class Conversation:
    """The messages so far, and how each turn is sampled."""

    sampling: Sampling = field(default_factory=Sampling)
    system: str | None = None
    """A system message opening the conversation; None: none."""
    messages: list[Message] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.system is not None and not self.messages:
            self.messages.append(message("system", self.system))

    def request(self, question: str | None = None) -> Request:
        """The request of the next turn: the messages so far (and ``question`` as the next user
        message, without keeping it)."""
        messages = [*self.messages, *([message("user", question)] if question else [])]
        return Request(input=ChatInput(messages=tuple(messages)), sampling=self.sampling)

    async def ask(self, ctx: Context, name: str, question: str) -> Choice:
        """Ask ``question`` as the next user turn; the answer's first choice, kept as the
        assistant's turn (its text)."""
        call = await ctx.call(name, self.request(question))
        response = call.result()
        if not response.choices:
            raise ContractViolation(f"the reply to {name} has no choices", path="choices")
        choice = response.choices[0]
        self.messages.append(message("user", question))
        self.messages.append(message("assistant", choice.text))
        return choice
