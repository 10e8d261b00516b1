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
    Choice,
    Decision,
    Response,
    StructuredValue,
    Token,
    ToolCall,
    TopEntry,
    Usage,
)
from .model import Call, Model
from .transport import Limits, Timeouts, Timings

__version__ = "0.1.0"

__all__ = [
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
    "Sampling",
    "Scheduling",
    "Scoring",
    "ServerRejected",
    "SievalError",
    "StructuredOutput",
    "StructuredValue",
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
]
