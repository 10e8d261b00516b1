"""Error replies in vLLM 0.32.0's shapes (wire reference §0.4).

vLLM builds every error as ``{"error": {"message", "type", "param", "code"}}`` with the integer
status as ``code``. Three flavours matter for byte-level fidelity:

* a ``VLLMValidationError`` raised while building sampling/tokenizer parameters: type
  ``BadRequestError``, ``param`` set, and ``str(exc)`` appends `` (parameter=P, value=V)`` to the
  message (:func:`validation`);
* a plain error response built by the serving layer: type ``BadRequestError`` /
  ``NotFoundError``, message as written (:func:`plain`);
* a pydantic request-validation failure (model validators, list lengths): type ``Bad Request``
  and a ``"1 validation error:\\n  {...}"`` message (:func:`request_validation`); the dict
  rendering is an approximation of pydantic's.
"""

from __future__ import annotations

from typing import Any

from .wires import WireError

__all__ = ["VllmError", "plain", "request_validation", "validation", "vllm_envelope"]


def vllm_envelope(status: int, message: str, err_type: str, param: str | None = None) -> Any:
    """The JSON body vLLM sends for an error."""
    return {"error": {"message": message, "type": err_type, "param": param, "code": status}}


class VllmError(WireError):
    """An error reply to send: HTTP status plus vLLM's envelope."""

    def __init__(self, status: int, message: str, err_type: str, param: str | None) -> None:
        super().__init__(status, vllm_envelope(status, message, err_type, param))
        self.message = message
        self.err_type = err_type
        self.param = param


def validation(message: str, param: str | None = None, value: Any = None) -> VllmError:
    """A ``VLLMValidationError`` as vLLM renders it (400, suffix with parameter and value)."""
    extras = []
    if param is not None:
        extras.append(f"parameter={param}")
    if value is not None:
        extras.append(f"value={value}")
    text = f"{message} ({', '.join(extras)})" if extras else message
    return VllmError(400, text, "BadRequestError", param)


def plain(
    message: str, param: str | None = None, status: int = 400, err_type: str = "BadRequestError"
) -> VllmError:
    """An error response the serving layer builds directly (message kept as written)."""
    return VllmError(status, message, err_type, param)


def request_validation(
    message: str, param: str | None, body: dict[str, Any], loc: str = "body"
) -> VllmError:
    """A pydantic validation failure as vLLM's handler renders it (type ``Bad Request``)."""
    detail = {
        "type": "value_error",
        "loc": loc,
        "msg": f"Value error, {message}",
        "input": f"<dict of {len(body)} items>",
    }
    return VllmError(400, f"1 validation error:\n  {detail}", "Bad Request", param)
