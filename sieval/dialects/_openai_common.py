"""Pieces shared by the OpenAI-shaped wires: error envelopes, SSE framing, top-k, usage."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
from msgspec import UNSET

from ..errors import ContractViolation, ServerRejected, SievalError, TransportError
from ..ir.response import TopEntry, Usage

__all__ = [
    "WireUsage",
    "bearer",
    "check_finite",
    "classify_server_message",
    "decode_json",
    "lift_usage",
    "parse_sse",
    "reply_error",
    "server_message",
    "top_entries",
]


def bearer(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"}


class _Details(msgspec.Struct):
    cached_tokens: int | None = None


class WireUsage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    prompt_tokens_details: _Details | None = None


def lift_usage(usage: WireUsage | None) -> Usage:
    """Usage where "not reported" stays UNSET; the server total is kept only on disagreement."""
    if usage is None:
        return Usage()
    inp = usage.prompt_tokens if usage.prompt_tokens is not None else UNSET
    out = usage.completion_tokens if usage.completion_tokens is not None else UNSET
    cached = usage.prompt_tokens_details.cached_tokens if usage.prompt_tokens_details else None
    lifted = Usage(
        input_tokens=inp, output_tokens=out, cached_tokens=UNSET if cached is None else cached
    )
    if usage.total_tokens is not None and usage.total_tokens != lifted.total_tokens:
        return msgspec.structs.replace(lifted, reported_total_tokens=usage.total_tokens)
    return lifted


def server_message(body: bytes) -> str:
    """The server's own message from any vLLM, SGLang or OpenAI error envelope, else the text."""
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        text = body.decode("utf-8", "replace").strip()
        return text[:500] if text else "(empty body)"
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])
        if isinstance(err, str):
            return err
        for key in ("message", "detail"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return msgspec.json.encode(data).decode()[:500]


_CLASSES = (
    ("context_overflow", ("maximum context length", "max_model_len", "context length")),
    ("top_k_cap", ("greater than max allowed",)),
    ("unknown_model", ("does not exist",)),
)


def classify_server_message(message: str) -> str | None:
    """A coarse class for a server message (``context_overflow``, ``top_k_cap``, ...), or None.

    vLLM's wording changed across versions (wire reference 7.6), so the match is loose.
    """
    low = message.lower()
    for name, needles in _CLASSES:
        if any(needle in low for needle in needles):
            return name
    return None


def reply_error(dialect: str, status: int, body: bytes, server: str | None = None) -> SievalError:
    """The typed error for a non-2xx reply (429 and 5xx reach here only when retries are off)."""
    message = server_message(body)
    kind = classify_server_message(message)
    hint = f" [{kind}]" if kind else ""
    if 400 <= status < 500 and status != 429:
        return ServerRejected(
            f"{dialect}: the server rejected the request (HTTP {status}){hint}: {message}",
            status=status,
            server_message=message,
            dialect=dialect,
            server=server,
            path=kind,
        )
    return TransportError(
        f"{dialect}: the server failed (HTTP {status}): {message}",
        status=status,
        dialect=dialect,
        server=server,
    )


def decode_json(dialect: str, body: bytes, type_: Any) -> Any:
    """Decode a reply body into its wire Struct; malformed JSON is a contract violation."""
    try:
        return msgspec.json.decode(body, type=type_)
    except msgspec.ValidationError as exc:
        raise ContractViolation(
            f"{dialect}: the reply does not have the expected shape: {exc}", dialect=dialect
        ) from exc
    except msgspec.DecodeError as exc:
        nonfinite = any(word in body for word in (b"NaN", b"Infinity"))
        why = "contains a non-finite number (NaN/Infinity)" if nonfinite else "is not valid JSON"
        head = body[:120].decode("utf-8", "replace")
        raise ContractViolation(
            f"{dialect}: the reply body {why} ({len(body)} bytes, starting {head!r})",
            dialect=dialect,
        ) from exc


def parse_sse(dialect: str, body: bytes) -> list[bytes]:
    """The ``data:`` payloads of an SSE body up to ``[DONE]``; no terminator is a violation."""
    events: list[bytes] = []
    done = False
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
        if not data:
            continue
        payload = b"\n".join(data)
        if payload == b"[DONE]":
            done = True
            break
        events.append(payload)
    if not done:
        raise ContractViolation(
            f"{dialect}: the stream ended without 'data: [DONE]' after {len(events)} events: "
            "the reply is truncated",
            dialect=dialect,
        )
    return events


def check_finite(dialect: str, where: str, values: Sequence[float | None]) -> None:
    for i, value in enumerate(values):
        if value is not None and not math.isfinite(value):
            raise ContractViolation(
                f"{dialect}: {where}[{i}] is {value}: logprobs must be finite",
                dialect=dialect,
                path=f"{where}[{i}]",
                received=value,
            )


def top_entries(
    dialect: str,
    where: str,
    entries: Mapping[str, float],
    scored_text: str,
    scored_logprob: float,
    k: int,
) -> tuple[tuple[TopEntry, ...], int]:
    """A text-keyed top-k map checked and sorted: exactly k entries, or k + 1 with the scored token.

    Returns the k alternatives (most likely first) and the scored token's index among them, or -1
    when it is not among them. A map short of k, or one holding another value for the scored
    token, means distinct tokens collapsed onto one text key (wire reference 7.8): refused. A
    collision that still leaves k entries cannot be detected from the map alone.
    """
    check_finite(dialect, where, list(entries.values()))
    count = len(entries)
    scored_in = scored_text in entries
    if (
        count not in (k, k + 1)
        or (count == k + 1 and not scored_in)
        or (count == k and not scored_in)
    ):
        raise ContractViolation(
            f"{dialect}: {where} lists {count} alternatives for top-k={k} "
            f"(scored token {scored_text!r} {'present' if scored_in else 'absent'}); expected k, "
            "or k+1 with the scored token: tokens that decode alike collapsed, so this position "
            "cannot be trusted",
            dialect=dialect,
            path=where,
            expected=k,
            received=count,
        )
    if abs(entries[scored_text] - scored_logprob) > 1e-6:
        raise ContractViolation(
            f"{dialect}: {where} gives {scored_text!r} the logprob {entries[scored_text]} but the "
            f"token's own logprob is {scored_logprob}: another token with the same text "
            "overwrote it",
            dialect=dialect,
            path=where,
        )
    items = sorted(entries.items(), key=lambda kv: -kv[1])
    if count == k + 1:
        items = [kv for kv in items if kv[0] != scored_text]
        rank = -1
    else:
        rank = next(i for i, kv in enumerate(items) if kv[0] == scored_text)
    return tuple(TopEntry(token=t, logprob=lp) for t, lp in items), rank
