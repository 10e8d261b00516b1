"""sieval: LLM evaluation whose every model call is decided before I/O and checked after it.

The public surface, re-exported here; everything else is importable from its module but may move.
"""

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
    ChatInput,
    CompletionInput,
    Message,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
    TextPart,
)
from .ir.response import Choice, Decision, Response, Token, TopEntry, Usage
from .model import Model

__version__ = "0.1.0"

__all__ = [
    "ChatInput",
    "Choice",
    "CompletionInput",
    "ConfigError",
    "ContractViolation",
    "Decision",
    "Message",
    "Model",
    "Refused",
    "Request",
    "Response",
    "Sampling",
    "Scheduling",
    "Scoring",
    "ServerRejected",
    "SievalError",
    "StructuredOutput",
    "TextPart",
    "Token",
    "TopEntry",
    "TransportError",
    "TransportTimeout",
    "Usage",
    "__version__",
]
