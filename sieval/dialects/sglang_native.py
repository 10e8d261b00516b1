"""sglang_native: SGLang's own ``POST /generate`` (raw text or token ids in, raw text out).

Verified against a real SGLang 0.5.23 (CPU, Gemma 3 270M; its kernel package replaced by an
import-only stand-in that was called 0 times; fixtures in ``tests/fixtures/sglang_native/0.5.23/``,
evidence in ``docs/evidence/sglang_native.md``), with SGLang's own request contract
(``sglang/api/v1/api_types.py``) as the test oracle. Wire truth:
``shared/reference/wire-reference.md`` section 6 and ``docs/evidence/sglang-server-notes.md``.

* the route takes no model: the requested id is checked against ``/v1/models`` (the
  ``served_model_name``) by the pre-run model check, and nothing in a reply names it;
* input scoring is ``logprob_start_len: 0``: SGLang's window always starts with a null entry,
  which at position 0 is the unscored first token, so the whole prompt is scored; the reply must
  hold exactly ``prompt_tokens`` entries (a radix-cache hit can shorten it) or it is refused;
* one ``top_logprobs_num`` serves input and sampled positions (two different top-k conflict);
* every logprob entry is ``[logprob, token_id, text]``: ids are always there, and
  ``return_text_in_logprobs`` is always sent so texts can be placed in the prompt and the text;
* ``scoring.candidate_token_ids`` is ``token_ids_logprob``, read in the order asked;
* a ``finish_reason`` of type ``abort`` is an error, in a plain reply and in a stream; a stream
  is cumulative (the last chunk per index is the reply); ``sampling_params`` keys are an allow
  list, because SGLang answers 400 to an unknown one while it ignores unknown top-level keys.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from msgspec import UNSET

from ..ir.channels import Guarantee
from .channels import TopK
from .readers import sglang as readers
from .reply import Checks, Clamp, Read, Reply, Structured
from .rows import sglang as rows
from .vocabulary import (
    CLIENT_SIDE,
    Dialect,
    Encode,
    Endpoint,
    Field,
    Group,
    Refuse,
    Retry,
    Row,
    Stream,
    at_most,
)
from .wire import sglang as wire
from .wire.openai import in_band_status
from .wire.sse import DATA_DONE

ID = "sglang_native"

# -- the decision table -------------------------------------------------------------------------

ROWS: dict[str, Row] = {
    "input.completion.text": Field("text"),
    "input.completion.token_ids": Field("input_ids"),
    "input.completion.suffix": Refuse("SGLang's /generate has no fill-in-the-middle suffix"),
    "input.chat.*": Refuse(
        "/generate takes raw text; render the chat template into the prompt, or use openai_chat "
        "against SGLang's /v1/chat/completions"
    ),
    "sampling.temperature": Field(f"{rows.SP}.temperature"),
    "sampling.top_p": Field(f"{rows.SP}.top_p"),
    "sampling.top_k": Encode(
        rows.top_k, (rows.SP,), "sampling_params.top_k; 0 and -1 are sent as -1"
    ),
    "sampling.max_tokens": Field(f"{rows.SP}.max_new_tokens"),
    "sampling.stop": at_most(
        f"{rows.SP}.stop",
        rows.MAX_STOP,
        f"SGLang takes at most {rows.MAX_STOP} stop strings; pass {rows.MAX_STOP} or fewer",
        f"sampling_params.stop, at most {rows.MAX_STOP} strings",
        items=True,
    ),
    "sampling.seed": Refuse(
        "SGLang 0.5.23 ignores sampling_seed unless the server runs with "
        "--enable-deterministic-inference (same seed, different texts: fixtures seed_11 and "
        "seed_11_again); drop the seed, or on such a server pass options.sampling_seed"
    ),
    "sampling.n": Field(f"{rows.SP}.n"),
    "sampling.frequency_penalty": Field(f"{rows.SP}.frequency_penalty"),
    "sampling.presence_penalty": Field(f"{rows.SP}.presence_penalty"),
    "scoring.*": Group(
        rows.scoring,
        (
            "return_logprob",
            "return_text_in_logprobs",
            "logprob_start_len",
            "top_logprobs_num",
            "token_ids_logprob",
        ),
        "return_logprob (+ texts), logprob_start_len 0 for input, one top_logprobs_num",
    ),
    "structured_output.*": Group(
        rows.structured, (rows.SP,), "sampling_params.json_schema as a JSON string"
    ),
    "reasoning.*": Refuse(
        "/generate has no reasoning controls or output (raw text in, raw text out); use a chat "
        "dialect against SGLang's OpenAI routes with a reasoning parser"
    ),
    "tools.*": Refuse("/generate has no tools; use openai_chat against SGLang"),
    "scheduling.stream": Field("stream"),
    "scheduling.timeout_s": CLIENT_SIDE,
    "options.*": rows.OPTIONS,
}

CHANNELS = {
    "input_logprobs": Guarantee.PRESENT_OR_ERROR,
    "input_top_k": Guarantee.PRESENT_OR_ERROR,
    "sampled_logprobs": Guarantee.PRESENT_OR_ERROR,
    "sampled_top_k": Guarantee.PRESENT_OR_ERROR,
    "token_ids": Guarantee.PRESENT_OR_ERROR,
    "candidates": Guarantee.PRESENT_OR_ERROR,
    "structured_output": Guarantee.PRESENT_OR_ERROR,
    "usage": Guarantee.BEST_EFFORT,
}

# -- the reply ----------------------------------------------------------------------------------


def _temperature(r: Read, choices: Any) -> None:
    """Sampled logprobs are of the distribution scaled by temperature (wire reference 0.6,
    measured: T=0.5 gives " the" -0.609 where greedy gives -1.650)."""
    t = r.request.sampling.temperature
    if r.request.scoring.sampled_logprobs and isinstance(t, float | int) and t not in (0, 1):
        r.warnings.append(
            f"{ID}: sampled logprobs (and their top-k and candidates) are of the distribution "
            f"scaled by temperature {t}, not the model's raw one (vLLM reports raw logprobs)"
        )


def _finish(item: wire.Item) -> Any:
    finish = item.meta_info.finish_reason
    return finish.type if finish is not None else None


def _stop_reason(item: wire.Item) -> Any:
    finish = item.meta_info.finish_reason
    return finish.matched if finish is not None and finish.type == "stop" else UNSET


REPLY = Reply(
    type=wire.Item | list[wire.Item],
    choices=readers.items,
    text=attrgetter("text"),
    finish=_finish,
    stop=_stop_reason,
    sampled=readers.sampled,
    top_k=TopK(presorted=True, ids=True, texts=False, field="[0]"),  # k, best first, ids once
    token_ids=readers.output_ids,
    structured=Structured("[{i}].text", cut="length"),
    input=readers.input_tokens,
    usage=readers.usage,
    # the scheduler's silent cut of max_new_tokens near the context limit (notes item 2)
    clamp=Clamp(
        made=attrgetter("meta_info.completion_tokens"), server="SGLang", field="max_new_tokens"
    ),
    checks=Checks(after=_temperature),
)


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint(
        "/generate",
        model_field=None,
        models="/v1/models",
        health="/health",
        version=None,
        tokenize="/tokenize",
        tokenize_body=rows.tokenize_body,
    ),
    rows=ROWS,
    channels=CHANNELS,
    reply=REPLY,
    stream=Stream(DATA_DONE, wire.fold),
    retry=Retry(in_band=in_band_status),
    error=wire.sglang_error,
    summary="SGLang's own POST /generate; verified on SGLang 0.5.23 (CPU, kernel stand-in)",
)
