"""Constrained JSON decoding for ``structured_outputs`` / ``response_format``.

Good enough for simple schemas: objects with string / integer / number / boolean / null / enum /
const properties, nested objects, and arrays of those. Structure (braces, keys, separators) is
forced token by token; free parts are chosen by the model among the tokens the grammar allows:

* string: up to 6 tokens of plain ASCII text without ``"`` or ``\\``, ended when the model
  picks the closing quote;
* integer / number: up to 4 digits (no leading zero), ended when the model picks ``<eos>``
  (used as a sentinel, never emitted);
* enum / boolean / const: the option is chosen token by token among the options' tokens;
* array: 1 to 3 items, the model choosing between ``,`` and ``]``.

Every property of an object is emitted, in schema order. The output is valid JSON followed by
``<eos>`` unless cut by ``max_tokens`` (then ``finish_reason`` is ``length``). The log-probabilities
reported for these tokens are the raw model's, as vLLM reports raw logprobs under a grammar.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from .envelopes import plain
from .lm import ReferenceModel
from .tokenizer import EOS_ID

__all__ = ["Chooser", "generate_json", "schema_from_request"]

#: ``choose(context_ids, allowed_ids) -> id``: the request's sampling restricted to ``allowed``.
Chooser = Callable[[list[int], list[int]], int]

_GENERIC_OBJECT = {"type": "object", "properties": {"answer": {"type": "string"}}}
_MAX_STRING_TOKENS = 6
_MAX_DIGITS = 4
_MAX_ITEMS = 3


class _Full(Exception):
    """Raised when ``max_tokens`` is reached mid-structure."""


def schema_from_request(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request constrains to, or ``None``; raises 400 on a bad constraint."""
    rf = body.get("response_format")
    if isinstance(rf, dict):
        if rf.get("type") == "json_object":
            return _GENERIC_OBJECT
        if rf.get("type") == "json_schema":
            js = rf.get("json_schema")
            if not isinstance(js, dict):
                raise plain(
                    "When response_format type is 'json_schema', the 'json_schema' field "
                    "must be provided.",
                    param="response_format",
                )
            return _as_schema(js.get("schema", js.get("json_schema", {})))
    so = body.get("structured_outputs")
    if not isinstance(so, dict):
        return None
    kinds = [k for k in ("json", "regex", "choice") if so.get(k) is not None]
    if len(kinds) > 1:
        raise plain(
            "You can only use one kind of constraints for structured outputs "
            "('json', 'regex' or 'choice').",
            param="structured_outputs",
        )
    if so.get("json") is not None:
        return _as_schema(so["json"])
    if so.get("json_object"):
        return _GENERIC_OBJECT
    if so.get("choice") is not None:
        return {"enum": list(so["choice"]), "x-raw": True}
    if kinds or so.get("grammar") is not None or so.get("structural_tag") is not None:
        raise plain(
            "sieval reference server: only the json, json_object and choice structured "
            "outputs are implemented",
            param="structured_outputs",
        )
    return None


def _as_schema(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise plain(f"Invalid JSON schema: {exc}", param="structured_outputs") from exc
    if not isinstance(value, dict):
        raise plain("The JSON schema must be an object.", param="structured_outputs")
    return value


class _Emitter:
    def __init__(
        self, model: ReferenceModel, context: Sequence[int], choose: Chooser, max_tokens: int
    ) -> None:
        self.model = model
        self.tok = model.tokenizer
        self.ctx = list(context)
        self.out: list[int] = []
        self.choose = choose
        self.max_tokens = max_tokens
        pieces = self.tok.pieces
        self.quote = self.tok.tokenize('"')[0]
        self.digits = [self.tok.tokenize(str(d))[0] for d in range(10)]
        self.text_ids = [
            i
            for i, p in enumerate(pieces)
            if i >= 260
            and i not in self.tok.alias_ids
            and p.isascii()
            and p.isprintable()
            and '"' not in p
            and "\\" not in p
        ]

    def push(self, tid: int) -> None:
        if len(self.out) >= self.max_tokens:
            raise _Full
        self.out.append(tid)
        self.ctx.append(tid)

    def force(self, text: str) -> None:
        for tid in self.tok.tokenize(text):
            self.push(tid)

    def value(self, schema: dict[str, Any]) -> None:
        if "const" in schema:
            self.force(json.dumps(schema["const"]))
            return
        if "enum" in schema:
            raw = bool(schema.get("x-raw"))
            self.options([str(v) if raw else json.dumps(v) for v in schema["enum"]])
            return
        kind = schema.get("type", "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object":
            self.obj(schema)
        elif kind == "array":
            self.array(schema.get("items", {"type": "string"}))
        elif kind in ("integer", "number"):
            self.number()
        elif kind == "boolean":
            self.options(["true", "false"])
        elif kind == "null":
            self.force("null")
        else:
            self.string()

    def obj(self, schema: dict[str, Any]) -> None:
        props: dict[str, Any] = schema.get("properties") or {}
        self.force("{")
        for i, (name, sub) in enumerate(props.items()):
            self.force((", " if i else "") + json.dumps(name) + ": ")
            self.value(sub if isinstance(sub, dict) else {})
        self.force("}")

    def array(self, items: dict[str, Any]) -> None:
        self.force("[")
        comma, close = self.tok.tokenize(",")[0], self.tok.tokenize("]")[0]
        for n in range(_MAX_ITEMS):
            self.value(items)
            if n == _MAX_ITEMS - 1 or self.choose(self.ctx, [comma, close]) == close:
                break
            self.force(", ")
        self.force("]")

    def string(self) -> None:
        self.push(self.quote)
        for n in range(_MAX_STRING_TOKENS):
            allowed = self.text_ids if n == 0 else [*self.text_ids, self.quote]
            tid = self.choose(self.ctx, allowed)
            if tid == self.quote:
                break
            self.push(tid)
        self.push(self.quote)

    def number(self) -> None:
        self.push(self.choose(self.ctx, self.digits[1:]))
        for _ in range(_MAX_DIGITS - 1):
            tid = self.choose(self.ctx, [*self.digits, EOS_ID])
            if tid == EOS_ID:
                break
            self.push(tid)

    def options(self, texts: list[str]) -> None:
        encoded = [list(self.tok.tokenize(t)) for t in texts]
        pos = 0
        while len(encoded) > 1 and any(len(e) > pos for e in encoded):
            firsts = sorted({e[pos] for e in encoded if len(e) > pos})
            tid = firsts[0] if len(firsts) == 1 else self.choose(self.ctx, firsts)
            encoded = [e for e in encoded if len(e) > pos and e[pos] == tid]
            self.push(tid)
            pos += 1
        for tid in encoded[0][pos:]:
            self.push(tid)


def generate_json(
    model: ReferenceModel,
    context: Sequence[int],
    schema: dict[str, Any],
    choose: Chooser,
    max_tokens: int,
) -> tuple[list[int], str]:
    """Generate ids for one JSON value; returns ``(ids, finish_reason)``."""
    emitter = _Emitter(model, context, choose, max_tokens)
    try:
        emitter.value(schema)
        emitter.push(EOS_ID)
    except _Full:
        return emitter.out, "length"
    return emitter.out, "stop"
