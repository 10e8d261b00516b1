"""The walker of reply declarations: the one code that turns a wire's reply into a ``Response``.

``read`` takes a ``Reply`` (``reply.py``) and a decoded (or folded) reply, and reads it in one
order for every wire, calling the wire's readers and checks at named points:

1. ``prepare``, then ``checks.before``;
2. the choices (``Choices``: ordered by index, 0..n-1 each once), then the usage (checked:
   ``channels.lift_usage``, ``channels.checked_usage``);
3. the input channel, when input scoring was asked for;
4. per choice: its tool calls (arguments parsed), ``checks.choice``, text, finish, stop,
   reasoning, the sampled tokens (when asked for), the token ids (its reader says whether the
   wire gives them unasked), the structured output (when asked for);
5. the clamp warning, then ``checks.after``.

What a reader needs of another's result is in the ``Read`` it is handed.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from ..ir.response import Choice, Response, ToolCall
from .channels import (
    UsageAt,
    checked_usage,
    clamp_warning,
    echoed_clamp_warning,
    lift_usage,
    tool_arguments,
)
from .reply import Choices, Clamp, Read, Reply, ToolCalls
from .reply_checks import Checker
from .vocabulary import Lowered

__all__ = ["read"]


def read(spec: Reply, lowered: Lowered, raw: Any, check: Checker) -> Response:
    """The ``Response`` a reply declares, every check made, or the error of the first that fails."""
    request = lowered.request
    scoring = request.scoring
    reply = spec.prepare(check, raw) if spec.prepare is not None else raw
    r = Read(check, lowered, reply, top_k=spec.top_k)
    spec.checks.before(r)
    r.choices = (
        check.ordered(spec.choices.of(reply), request.sampling.n, spec.choices.path)
        if isinstance(spec.choices, Choices)
        else spec.choices(r)
    )
    r.usage = (
        lift_usage(check, spec.usage_of(reply), spec.usage)
        if isinstance(spec.usage, UsageAt)
        else checked_usage(check, spec.usage(r))  # a wire's own reader is held to it too
    )
    if scoring.input_logprobs and spec.input is not None:
        r.inputs = spec.input(r)
    inputs = r.inputs
    structured = spec.structured if request.structured_output.format != "text" else None
    lifted: list[Choice] = []
    made: list[int | None] = []
    for i, c in enumerate(r.choices):
        calls = _calls(spec.calls, check, c, i) if spec.calls is not None else ()
        spec.checks.choice(r, c, i, calls)
        text = inputs.texts[i] if inputs is not None and inputs.texts is not None else spec.text(c)
        finish = spec.finish(c)
        tokens: Any = UNSET
        if inputs is not None and inputs.sampled is not None:
            sampled: Any = inputs.sampled[i]
        elif scoring.sampled_logprobs and spec.sampled is not None:
            sampled = spec.sampled(r, c, i)
        else:
            sampled = None
        if scoring.sampled_logprobs and sampled is not None:
            tokens = sampled
        ids = spec.token_ids(r, c, i) if spec.token_ids is not None else UNSET
        value: Any = UNSET
        if structured is not None:
            refusal = structured.refusal(c)
            if refusal is not None and not text:
                raise check.violation(
                    structured.path.format(i=i),
                    f"choice {i} is a refusal ({refusal[:80]!r}), not the structured output "
                    "that was asked for",
                )
            value = check.json_value(structured.path.format(i=i), text, finish == structured.cut)
        reasoning = spec.reasoning(c)
        lifted.append(
            Choice(
                index=i,
                text=text,
                finish_reason=finish if finish is not None else UNSET,
                stop_reason=spec.stop(c),
                tokens=tokens,
                token_ids=ids,
                structured_output=value,
                reasoning=reasoning if reasoning is not None else UNSET,
                tool_calls=calls or UNSET,
            )
        )
        made.append(len(sampled) if isinstance(sampled, tuple) else None)
    if spec.clamp is not None:
        r.warnings += _clamped(spec.clamp, r, lifted, made)
    spec.checks.after(r, lifted)
    model, fingerprint = spec.model(reply), spec.fingerprint(reply)
    return Response(
        choices=tuple(lifted),
        input_tokens=inputs.tokens if inputs is not None else UNSET,
        usage=r.usage,
        model=model if model is not None else UNSET,
        system_fingerprint=fingerprint if fingerprint is not None else UNSET,
        dialect=check.dialect,
        warnings=tuple(r.warnings),
    )


def _calls(spec: ToolCalls, check: Checker, choice: Any, i: int) -> tuple[ToolCall, ...]:
    out: list[ToolCall] = []
    for j, item in enumerate(spec.of(choice) or ()):
        call = spec.call(item)
        if call is None:
            continue
        name = spec.name(call)
        arguments = spec.arguments(call)
        if isinstance(arguments, str):
            arguments = tool_arguments(check, spec.path.format(i=i, j=j), name, arguments)
        out.append(ToolCall(call_id=spec.id(call, len(out)), name=name, arguments=arguments))
    return tuple(out)


def _clamped(clamp: Clamp, r: Read, lifted: list[Choice], made: list[int | None]) -> list[str]:
    asked = r.request.sampling.max_tokens
    prompt = r.usage.input_tokens if clamp.prompt else None
    if clamp.echo is not None:
        applied = clamp.echo(r.reply)
        if not isinstance(asked, int) or applied is None or applied >= asked:
            return []
        return [echoed_clamp_warning(r.dialect, clamp.field, asked, applied, prompt)]
    if not isinstance(asked, int):
        return []
    out = []
    one = len(lifted) == 1
    for c, raw, count in zip(lifted, r.choices, made, strict=True):
        made_here = clamp.made(raw)
        if made_here is None:
            made_here = count
        if made_here is None and one and isinstance(r.usage.output_tokens, int):
            made_here = r.usage.output_tokens
        if c.finish_reason == clamp.finish and made_here is not None and made_here < asked:
            out.append(
                clamp_warning(
                    r.dialect,
                    clamp.who.format(i=c.index),
                    clamp.finish,
                    made_here,
                    asked,
                    clamp.server,
                    clamp.field,
                    prompt,
                )
            )
    return out
