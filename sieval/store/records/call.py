"""A request's record, built from the ``Call`` that sent it (never lowered again).

``request_record`` keeps what was sent and decided (the redacted body, the ledger), what came
back (usage, warnings, each choice's finish reason, a refused reply's bytes), the error when
there is one (``error_record``: secrets redacted once more), and with ``--record-tokens`` every
input and sampled token as compact rows ``[text, logprob, token_id, [[alt, logprob], ...]]``
(``token_rows``: what ``sieval parity`` compares).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ...errors import SievalError
from ...ir.request import ChatInput, Request
from ...ir.response import Response
from ...transport.redaction import redact_json
from .bounded import bounded_text
from .schema import RequestRecord

if TYPE_CHECKING:
    from ...model import Call

__all__ = ["error_record", "finish_reasons", "request_record", "token_rows"]


def error_record(exc: BaseException, secrets: tuple[str, ...]) -> dict[str, Any]:
    """The error as record data, secrets redacted once more (a server may echo a header)."""
    if isinstance(exc, SievalError):
        data = exc.to_record()
    else:  # a bug in task code: recorded and counted like any failure, never scored
        data = {"class": "InternalError", "message": f"{type(exc).__name__}: {exc}"}
    redacted: dict[str, Any] = redact_json(data, secrets)
    return redacted


def _prompt(request: Request) -> Any:
    if isinstance(request.input, ChatInput):
        return msgspec.to_builtins(request.input.messages)
    return msgspec.to_builtins(request.input)


def token_rows(tokens: Any) -> list[list[Any]] | None:
    """Tokens as compact rows ``[text, logprob, token_id, [[alt, logprob], ...]]``."""
    if not isinstance(tokens, tuple):
        return None
    rows: list[list[Any]] = []
    for t in tokens:
        top = [[e.token, e.logprob] for e in t.top] if isinstance(t.top, tuple) else None
        logprob = t.logprob if isinstance(t.logprob, float) else None
        token_id = t.token_id if isinstance(t.token_id, int) else None
        rows.append([t.text, logprob, token_id, top])
    return rows


def _evidence(response: Response) -> dict[str, Any]:
    return {
        "input": token_rows(response.input_tokens),
        "choices": [
            {"text": bounded_text(c.text), "tokens": token_rows(c.tokens)} for c in response.choices
        ],
    }


def request_record(call: Call, secrets: tuple[str, ...], record_tokens: bool) -> RequestRecord:
    """One request of a sample as it happened, from its ``Call`` (never lowered again)."""
    response = call.response
    usage: dict[str, int] = {}
    if response is not None:
        usage = {
            k: v
            for k, v in msgspec.to_builtins(response.usage).items()
            if isinstance(v, int) and not isinstance(v, bool)
        }
    timings: dict[str, float] = {}
    if call.timings is not None:
        timings = {"total_s": round(call.timings.wall_s, 6)}
        if (
            call.request.scheduling.stream
        ):  # the time to the first event; a whole reply's is ~ total_s
            timings["first_byte_s"] = round(call.timings.first_byte_s, 6)
    if call.attempts > 1:
        timings["attempts"] = call.attempts
    return RequestRecord(
        prompt=_prompt(call.request) if call.body is None else None,
        body=call.body,
        ledger=[msgspec.to_builtins(d) for d in call.ledger],
        usage=usage,
        timings=timings,
        warnings=list(response.warnings) if response else [],
        error=error_record(call.error, secrets) if call.error is not None else None,
        tokens=_evidence(response) if record_tokens and response else None,
        status=call.status,
        finish=finish_reasons(response) if response else [],
        reply=call.reply,
        replica=call.replica,
    )


def finish_reasons(response: Response) -> list[str]:
    """Each choice's finish reason as the server said it, marked when the answer is empty."""
    out = []
    for c in response.choices:
        reason = c.finish_reason if isinstance(c.finish_reason, str) else ""
        empty = not c.text and not c.tool_calls
        out.append(f"{reason}:empty" if empty else reason)
    return out
