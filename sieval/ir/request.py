"""The provider-neutral request: one input and a few groups of leaves.

Every optional field defaults to ``UNSET`` ("not set: the dialect sends nothing for it"), so a
leaf is *active* exactly when it differs from its default (see ``ir/leaves.py``). Nothing here
does I/O; invariants a single type cannot express live in ``validate()``.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "UNSET",
    "ChatInput",
    "CompletionInput",
    "FunctionTool",
    "ImagePart",
    "Message",
    "Part",
    "Reasoning",
    "Request",
    "Sampling",
    "Scheduling",
    "Scoring",
    "StructuredOutput",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
    "Tools",
    "UnsetType",
]


class IRStruct(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Policy base of every IR type: immutable, keyword-only, and a typo is an error."""


# -- input -------------------------------------------------------------------------------------


class CompletionInput(IRStruct, frozen=True, tag="completion"):
    """A raw prompt for a completion wire: text, or token ids, never both."""

    text: str | UnsetType = UNSET
    """The prompt text exactly as it should reach the model (the server may add a BOS)."""
    token_ids: tuple[int, ...] | UnsetType = UNSET
    """A pre-tokenised prompt; servers add no BOS to it."""
    suffix: str | UnsetType = UNSET
    """Fill-in-the-middle text after the insertion point; unset means no FIM."""


class TextPart(IRStruct, frozen=True, tag="text"):
    text: str


class ImagePart(IRStruct, frozen=True, tag="image"):
    url: str | UnsetType = UNSET
    """An http(s) URL; exactly one of ``url`` and ``data`` is set."""
    data: str | UnsetType = UNSET
    """Base64 image bytes."""
    media_type: str | UnsetType = UNSET
    """MIME type such as ``image/png``; required with ``data``."""
    detail: Literal["low", "high", "auto"] | UnsetType = UNSET


class ToolCallPart(IRStruct, frozen=True, tag="tool_call"):
    call_id: str
    name: str
    arguments: dict[str, Any]


class ToolResultPart(IRStruct, frozen=True, tag="tool_result"):
    call_id: str
    result: Any
    is_error: bool | UnsetType = UNSET


Part = TextPart | ImagePart | ToolCallPart | ToolResultPart


class Message(IRStruct, frozen=True):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: tuple[Part, ...]
    name: str | UnsetType = UNSET


class ChatInput(IRStruct, frozen=True, tag="chat"):
    """A conversation for a chat wire."""

    messages: tuple[Message, ...]


# -- groups ------------------------------------------------------------------------------------


class Sampling(IRStruct, frozen=True):
    temperature: float | UnsetType = UNSET
    """Softmax temperature; 0 means greedy. Unset: the server's default (vLLM: the model's)."""
    top_p: float | UnsetType = UNSET
    """Nucleus mass in (0, 1]."""
    top_k: int | UnsetType = UNSET
    """Sample among the k most likely tokens; 0 or -1 disables where the wire allows it."""
    max_tokens: int | UnsetType = UNSET
    """Upper bound on generated tokens per choice. Unset: the server's default (16 on vLLM)."""
    stop: tuple[str, ...] | UnsetType = UNSET
    """Strings that end generation; not part of the returned text."""
    seed: int | UnsetType = UNSET
    """Per-request sampling seed."""
    n: int = 1
    """Number of choices; each keeps its own channels."""
    frequency_penalty: float | UnsetType = UNSET
    presence_penalty: float | UnsetType = UNSET


class Scoring(IRStruct, frozen=True):
    input_logprobs: bool = False
    """Return the log-probability of every input token (the first one is unscored)."""
    input_top_k: int = 0
    """Alternatives per input position; needs ``input_logprobs``."""
    sampled_logprobs: bool = False
    """Return the log-probability of every sampled token."""
    sampled_top_k: int = 0
    """Alternatives per sampled position; needs ``sampled_logprobs``."""
    token_ids: bool = False
    """Fill token ids on input and sampled tokens and on top-k entries."""
    candidate_token_ids: tuple[int, ...] = ()
    """Token ids whose log-probabilities are returned at every sampled position, whatever their
    rank (choice scoring that needs no top-k: the four letters of a multiple-choice answer)."""


class StructuredOutput(IRStruct, frozen=True):
    format: Literal["text", "json_object", "json_schema"] = "text"
    schema: dict[str, Any] | UnsetType = UNSET
    """The JSON schema; required with ``json_schema``."""
    name: str | UnsetType = UNSET
    strict: bool | UnsetType = UNSET
    """Ask the server to enforce the schema exactly; unset leaves it to the server."""


class Reasoning(IRStruct, frozen=True):
    effort: Literal["none", "minimal", "low", "medium", "high"] | UnsetType = UNSET
    budget_tokens: int | UnsetType = UNSET
    summary: Literal["auto", "concise", "detailed"] | UnsetType = UNSET


class FunctionTool(IRStruct, frozen=True):
    name: str
    parameters: dict[str, Any]
    description: str | UnsetType = UNSET


class Tools(IRStruct, frozen=True):
    functions: tuple[FunctionTool, ...] = ()
    choice: Literal["auto", "none", "required"] | UnsetType = UNSET
    parallel: bool | UnsetType = UNSET


class Scheduling(IRStruct, frozen=True):
    stream: bool = False
    """Receive the reply as a stream; the Response is the same either way."""
    timeout_s: float | UnsetType = UNSET
    """Client-side budget for this call in seconds, applied by the transport."""


class Request(IRStruct, frozen=True):
    """One model call. ``options`` holds engine-specific extras a dialect explicitly allows."""

    input: CompletionInput | ChatInput
    sampling: Sampling = msgspec.field(default_factory=Sampling)
    scoring: Scoring = msgspec.field(default_factory=Scoring)
    structured_output: StructuredOutput = msgspec.field(default_factory=StructuredOutput)
    reasoning: Reasoning = msgspec.field(default_factory=Reasoning)
    tools: Tools = msgspec.field(default_factory=Tools)
    scheduling: Scheduling = msgspec.field(default_factory=Scheduling)
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    """Named engine extras such as vLLM's ``min_p``; each dialect allows its own, refuses others."""

    @classmethod
    def completion(cls, text: str, **groups: Any) -> Request:
        """Shorthand for a raw-prompt request: ``Request.completion("2+2=", sampling=...)``."""
        return cls(input=CompletionInput(text=text), **groups)
