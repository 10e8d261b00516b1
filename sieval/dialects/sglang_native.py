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

import json
from collections.abc import Sequence
from typing import Any

from msgspec import UNSET

from ..ir.channels import Guarantee
from ..ir.request import CompletionInput, Scoring, StructuredOutput
from ..ir.response import Choice, Response, Token, Usage
from .checks import Checker
from .spec import (
    CLIENT_SIDE,
    Dialect,
    Encode,
    Endpoint,
    Evidence,
    Field,
    Group,
    GroupInput,
    Leaf,
    Lowered,
    NoOp,
    Options,
    OptionValue,
    Outcome,
    Refuse,
    Row,
    Stream,
    Write,
)
from .wire import sglang as wire
from .wire.sse import DATA_DONE

ID = "sglang_native"

MAX_STOP = 32
"""``MAX_STOP_COUNT`` in SGLang 0.5.23's ``sampling_params.py``."""

_SP = "sampling_params"

# -- the decision table -------------------------------------------------------------------------


def _top_k(leaf: Leaf) -> Outcome:
    """The IR's 0 and -1 both mean "all tokens"; SGLang spells that -1 and answers 400 to 0
    (``top_k must be -1 (disable) or at least 1``, fixture error_top_k_0)."""
    k = leaf.value
    if k < -1:
        return Refuse(f"top_k={k} is not a count; ask for k >= 1, or -1 (or 0) for all tokens")
    return Write(f"{_SP}.top_k", -1 if k in (0, -1) else k)


def _stop(leaf: Leaf) -> Outcome:
    if len(leaf.value) > MAX_STOP:
        return Refuse(f"SGLang takes at most {MAX_STOP} stop strings; pass {MAX_STOP} or fewer")
    return Write(f"{_SP}.stop", list(leaf.value))


def _scoring(group: GroupInput) -> dict[str, Outcome]:
    """``return_logprob`` (with ``return_text_in_logprobs``) for both; ``logprob_start_len: 0``
    for the whole prompt; one ``top_logprobs_num`` for input and sampled positions."""
    s: Scoring = group.value
    texts = {"return_logprob": True, "return_text_in_logprobs": True}
    out: dict[str, Outcome] = {}
    if s.input_logprobs:
        out["scoring.input_logprobs"] = Write("logprob_start_len", 0, also=texts)
    if s.input_top_k:
        out["scoring.input_top_k"] = Write("top_logprobs_num", s.input_top_k)
    if s.sampled_logprobs:
        out["scoring.sampled_logprobs"] = Write("return_logprob", True, also=texts)
    if s.sampled_top_k:
        out["scoring.sampled_top_k"] = Write("top_logprobs_num", s.sampled_top_k)
    if s.token_ids:
        out["scoring.token_ids"] = NoOp(
            "SGLang always returns output_ids, and every logprob entry carries its token id"
        )
    if s.candidate_token_ids:
        ids = list(s.candidate_token_ids)
        out["scoring.candidate_token_ids"] = (
            Refuse("candidate token ids must be >= 0 (SGLang indexes the vocabulary with them)")
            if min(ids) < 0
            else Write("token_ids_logprob", ids)
        )
    return out


_OBJECT_SCHEMA = '{"type": "object"}'
"""What SGLang's own OpenAI routes send for ``response_format: json_object`` (its
``serving_completions.py``)."""


def _structured(group: GroupInput) -> dict[str, Outcome]:
    """``sampling_params.json_schema``, a JSON string (an object fails SGLang's contract)."""
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    path = f"{_SP}.json_schema"
    if o.format == "json_object":
        out["structured_output.format"] = Write(path, _OBJECT_SCHEMA)
    elif o.format == "json_schema":
        out["structured_output.format"] = Evidence(path)
        out["structured_output.schema"] = Write(path, json.dumps(o.schema))
    if o.name is not UNSET:
        out["structured_output.name"] = NoOp("sampling_params.json_schema takes no name")
    if o.strict is not UNSET:
        out["structured_output.strict"] = (
            NoOp("SGLang's grammar backend always enforces the schema")
            if o.strict
            else Refuse("SGLang's constrained decoding is always strict; drop strict=false")
        )
    return out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _pattern(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _ids(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(_integer(x) for x in value)


OPTIONS = Options(
    {
        "min_p": OptionValue(_number, "a number"),
        "repetition_penalty": OptionValue(_number, "a number"),
        "min_new_tokens": OptionValue(_integer, "an integer"),
        "sampling_seed": OptionValue(_integer, "an integer"),
        "regex": OptionValue(_pattern, "a non-empty string"),
        "stop_token_ids": OptionValue(_ids, "a list of token ids"),
    },
    "only {allowed} are forwarded: SGLang answers 400 to an unknown sampling_params key, and its "
    "other keys change what the reply means (no_stop_trim, skip_special_tokens) or were not "
    "verified here",
    "sampling_params.<name> for min_p, min_new_tokens, regex, repetition_penalty, "
    "sampling_seed, stop_token_ids",
    at=f"{_SP}.",
    # the sampling_params keys the rows write
    reserved=frozenset(
        {"max_new_tokens", "temperature", "top_p", "top_k", "stop", "n", "json_schema"}
        | {"frequency_penalty", "presence_penalty"}
    ),
)
"""``options.*``: ``sampling_params.<name>`` from the allow-list, each value of its type."""

ROWS: dict[str, Row] = {
    "input.completion.text": Field("text"),
    "input.completion.token_ids": Field("input_ids"),
    "input.completion.suffix": Refuse("SGLang's /generate has no fill-in-the-middle suffix"),
    "input.chat.*": Refuse(
        "/generate takes raw text; render the chat template into the prompt, or use openai_chat "
        "against SGLang's /v1/chat/completions"
    ),
    "sampling.temperature": Field(f"{_SP}.temperature"),
    "sampling.top_p": Field(f"{_SP}.top_p"),
    "sampling.top_k": Encode(_top_k, (_SP,), "sampling_params.top_k; 0 and -1 are sent as -1"),
    "sampling.max_tokens": Field(f"{_SP}.max_new_tokens"),
    "sampling.stop": Encode(_stop, (_SP,), f"sampling_params.stop, at most {MAX_STOP} strings"),
    "sampling.seed": Refuse(
        "SGLang 0.5.23 ignores sampling_seed unless the server runs with "
        "--enable-deterministic-inference (same seed, different texts: fixtures seed_11 and "
        "seed_11_again); drop the seed, or on such a server pass options.sampling_seed"
    ),
    "sampling.n": Field(f"{_SP}.n"),
    "sampling.frequency_penalty": Field(f"{_SP}.frequency_penalty"),
    "sampling.presence_penalty": Field(f"{_SP}.presence_penalty"),
    "scoring.*": Group(
        _scoring,
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
        _structured, (_SP,), "sampling_params.json_schema as a JSON string"
    ),
    "reasoning.*": Refuse(
        "/generate has no reasoning controls or output (raw text in, raw text out); use a chat "
        "dialect against SGLang's OpenAI routes with a reasoning parser"
    ),
    "tools.*": Refuse("/generate has no tools; use openai_chat against SGLang"),
    "scheduling.stream": Field("stream"),
    "scheduling.timeout_s": CLIENT_SIDE,
    "options.*": OPTIONS,
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

# -- the reader ---------------------------------------------------------------------------------


def read(lowered: Lowered, reply: wire.Item | list[wire.Item], check: Checker) -> Response:
    request = lowered.request
    s = request.scoring
    got = _items(check, reply, request.sampling.n, lowered.stream)
    usage = _usage(check, got)
    inp = request.input
    input_tokens: Any = UNSET
    if s.input_logprobs and isinstance(inp, CompletionInput):
        prompt = inp.text if isinstance(inp.text, str) else None
        sent = inp.token_ids if isinstance(inp.token_ids, tuple) else None
        input_tokens = wire.input_tokens(check, got[0], prompt, sent, s.input_top_k)
    sampled: list[tuple[Token, ...]] = []
    if s.sampled_logprobs:
        sampled = [
            wire.sampled_tokens(check, i, item, s.sampled_top_k, s.candidate_token_ids)
            for i, item in enumerate(got)
        ]
    structured = request.structured_output.format != "text"
    choices = []
    for i, item in enumerate(got):
        finish = item.meta_info.finish_reason
        assert finish is not None  # _items refuses a generation that never finished
        ids = item.output_ids
        if s.token_ids and ids is None:
            raise check.violation(f"[{i}].output_ids", f"generation {i} has no output_ids")
        choices.append(
            Choice(
                index=i,
                text=item.text,
                finish_reason=finish.type,
                stop_reason=finish.matched if finish.type == "stop" else UNSET,
                tokens=sampled[i] if sampled else UNSET,
                token_ids=tuple(ids) if ids is not None else UNSET,
                structured_output=(
                    check.json_value(f"[{i}].text", item.text, finish.type == "length")
                    if structured
                    else UNSET
                ),
            )
        )
    return Response(
        choices=tuple(choices),
        input_tokens=input_tokens,
        usage=usage,
        dialect=ID,
        warnings=_warnings(lowered, got),
    )


def _items(
    check: Checker, reply: wire.Item | list[wire.Item], n: int, stream: bool
) -> list[wire.Item]:
    """The generations in choice order: a single request is one object, ``n > 1`` a list of n
    (SGLang's order: the samples of the prompt in turn; a stream numbers them by ``index``)."""
    if isinstance(reply, wire.Item):
        if n != 1:
            raise check.violation(
                "", f"the reply is one object but n={n} asks for a list of {n}", expected=n
            )
        got = [reply]
    else:
        if n == 1 and not stream:
            raise check.violation("", "the reply is a list but a single request was sent")
        got = reply
    if len(got) != n:
        indices = list(range(len(got)))
        raise check.violation(
            "",
            f"the reply holds generations {indices}; expected exactly 0..{n - 1} for n={n}",
            expected=list(range(n)),
            received=indices,
        )
    for i, item in enumerate(got):
        finish = item.meta_info.finish_reason
        where = f"[{i}].meta_info.finish_reason"
        if finish is None:
            raise check.violation(
                where, f"{where} is null: the generation never finished (a cut stream?)"
            )
        if finish.type == "abort":
            raise wire.abort_error(check.dialect, where, finish)
    return got


def _usage(check: Checker, got: Sequence[wire.Item]) -> Usage:
    """Usage where a count the server left out stays UNSET; the prompt counts once (every sample
    reports the same prompt), output tokens add up, cached tokens are the first sample's."""
    prompts = {item.meta_info.prompt_tokens for item in got}
    if len(prompts) > 1:
        raise check.violation(
            "meta_info.prompt_tokens",
            f"the samples report different prompt sizes {sorted(map(str, prompts))}",
        )
    first = got[0].meta_info
    outputs = [item.meta_info.completion_tokens for item in got]
    return Usage(
        input_tokens=_count(first.prompt_tokens),
        output_tokens=_total(outputs),
        cached_tokens=_count(first.cached_tokens),
        reasoning_tokens=_total([item.meta_info.reasoning_tokens for item in got]),
    )


def _count(value: int | None) -> Any:
    return UNSET if value is None else value


def _total(values: list[int | None]) -> Any:
    return UNSET if None in values else sum(v for v in values if v is not None)


def _warnings(lowered: Lowered, got: list[wire.Item]) -> tuple[str, ...]:
    """Facts a reader of this reply must know: the scheduler's silent cut of max_new_tokens near
    the context limit (notes item 2), and temperature-scaled sampled logprobs (wire reference
    0.6, measured: T=0.5 gives " the" -0.609 where greedy gives -1.650)."""
    sampling = lowered.request.sampling
    out: list[str] = []
    asked = sampling.max_tokens
    for i, item in enumerate(got):
        finish = item.meta_info.finish_reason
        made = item.meta_info.completion_tokens
        cut = finish is not None and finish.type == "length"
        if cut and isinstance(asked, int) and isinstance(made, int) and made < asked:
            out.append(
                f"{ID}: choice {i} ended for length after {made} of max_tokens={asked} "
                "tokens: SGLang shortened max_new_tokens to fit its context window (prompt "
                f"{item.meta_info.prompt_tokens} tokens), so this generation is cut by the "
                "context"
            )
    t = sampling.temperature
    if lowered.request.scoring.sampled_logprobs and isinstance(t, float | int) and t not in (0, 1):
        out.append(
            f"{ID}: sampled logprobs (and their top-k and candidates) are of the distribution "
            f"scaled by temperature {t}, not the model's raw one (vLLM reports raw logprobs)"
        )
    return tuple(out)


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint(
        "/generate",
        model_field=None,
        models="/v1/models",
        health="/health",
        version=None,
        tokenize="/tokenize",
    ),
    rows=ROWS,
    channels=CHANNELS,
    reply=wire.Item | list[wire.Item],
    read=read,
    stream=Stream(DATA_DONE, wire.fold),
    error=wire.sglang_error,
    summary="SGLang's own POST /generate; verified on SGLang 0.5.23 (CPU, kernel stand-in)",
)
