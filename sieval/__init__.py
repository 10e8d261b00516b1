"""sieval: LLM evaluation whose every model call is decided before I/O and checked after it.

The public surface, re-exported here; everything else is importable from its module but may move.
"""

import typing as _typing

from .errors import (
    ConfigError,
    ContractViolation,
    Refused,
    ServerRejected,
    SievalError,
    TransportError,
    TransportTimeout,
)
from .ir.request import (
    UNSET,
    ChatInput,
    CompletionInput,
    FunctionTool,
    ImagePart,
    Message,
    Part,
    Reasoning,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Tools,
    UnsetType,
)
from .ir.response import (
    LENGTH_FINISHES,
    Choice,
    Decision,
    Response,
    StructuredValue,
    Token,
    ToolCall,
    TopEntry,
    Usage,
    ended_for_length,
)
from .transport.config import Limits, Timeouts
from .transport.types import Timings

if _typing.TYPE_CHECKING:
    from .evaluation import Results, TaskResult, evaluate
    from .model import Call, Model

__version__ = "0.1.0"


_LAZY = ("Call", "Model")
_EVALUATION = ("Results", "TaskResult", "evaluate")


def __getattr__(name: str) -> _typing.Any:
    """``Model`` and ``Call`` on first use: they bring the HTTP client (aiohttp), which a program
    that only builds requests, reads records or prints help never needs; ``evaluate`` and its
    results bring the runner."""
    if name in _LAZY:
        from . import model

        return getattr(model, name)
    if name in _EVALUATION:
        from . import evaluation

        return getattr(evaluation, name)
    raise AttributeError(f"module 'sieval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_EVALUATION})


__all__ = [
    "LENGTH_FINISHES",
    "UNSET",
    "Call",
    "ChatInput",
    "Choice",
    "CompletionInput",
    "ConfigError",
    "ContractViolation",
    "Decision",
    "FunctionTool",
    "ImagePart",
    "Limits",
    "Message",
    "Model",
    "Part",
    "Reasoning",
    "Refused",
    "Request",
    "Response",
    "Results",
    "Sampling",
    "Scheduling",
    "Scoring",
    "ServerRejected",
    "SievalError",
    "StructuredOutput",
    "StructuredValue",
    "TaskResult",
    "TextPart",
    "Timeouts",
    "Timings",
    "Token",
    "ToolCall",
    "ToolCallPart",
    "ToolResultPart",
    "Tools",
    "TopEntry",
    "TransportError",
    "TransportTimeout",
    "UnsetType",
    "Usage",
    "__version__",
    "ended_for_length",
    "evaluate",
]
