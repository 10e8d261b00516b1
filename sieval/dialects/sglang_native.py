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
from operator import attrgetter
from typing import Any

from msgspec import UNSET

from ..ir.channels import Guarantee
from ..ir.request import CompletionInput, Scoring, StructuredOutput
from ..ir.response import Token, Usage
from .channels import TopK, candidate_rows, count, pinned_stop, place, top_k, with_candidates
from .reply import Checks, Clamp, InputRead, Read, Reply, Structured
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

# -- the reply ----------------------------------------------------------------------------------

TOP_K = TopK(presorted=True, ids=True, texts=False, field="[0]")
"""``top_logprobs_num``: exactly k per position, most likely first, each id once."""


def _items(r: Read) -> list[wire.Item]:
    """The generations in choice order: a single request is one object, ``n > 1`` a list of n
    (SGLang's order: the samples of the prompt in turn; a stream numbers them by ``index``); a
    generation that never finished, or was aborted (whatever the HTTP status), is refused."""
    check, reply, n = r.check, r.reply, r.request.sampling.n
    if isinstance(reply, wire.Item):
        if n != 1:
            raise check.violation(
                "", f"the reply is one object but n={n} asks for a list of {n}", expected=n
            )
        got = [reply]
    else:
        if n == 1 and not r.lowered.stream:
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
        finish, where = item.meta_info.finish_reason, f"[{i}].meta_info.finish_reason"
        if finish is None:
            raise check.violation(
                where, f"{where} is null: the generation never finished (a cut stream?)"
            )
        if finish.type == "abort":
            raise wire.abort_error(check.dialect, where, finish)
    return got


def _usage(r: Read) -> Usage:
    """The prompt counts once (every sample reports the same), output tokens add up (unset when
    one is), cached tokens are the first sample's."""
    metas = [item.meta_info for item in r.choices]
    prompts = {meta.prompt_tokens for meta in metas}
    if len(prompts) > 1:
        raise r.check.violation(
            "meta_info.prompt_tokens",
            f"the samples report different prompt sizes {sorted(map(str, prompts))}",
        )
    outputs = [meta.completion_tokens for meta in metas]
    reasoning = [meta.reasoning_tokens for meta in metas]
    return Usage(
        input_tokens=count(metas[0].prompt_tokens),
        output_tokens=UNSET if None in outputs else sum(v or 0 for v in outputs),
        cached_tokens=count(metas[0].cached_tokens),
        reasoning_tokens=UNSET if None in reasoning else sum(v or 0 for v in reasoning),
    )


def _input(r: Read) -> InputRead:
    """``input_token_logprobs`` (asked from position 0) as the scored prompt: one entry per prompt
    token (``prompt_tokens`` counts the BOS), null at position 0 only, exact top-k, and texts that
    rebuild the prompt (the BOS covers no text; byte pieces cover their characters)."""
    check, meta, inp = r.check, r.choices[0].meta_info, r.request.input
    prompt = inp.text if isinstance(inp, CompletionInput) and isinstance(inp.text, str) else None
    sent = inp.token_ids if isinstance(inp, CompletionInput) else UNSET
    where = "meta_info.input_token_logprobs"
    why = "although input logprobs were asked for"
    triples = check.present(meta.input_token_logprobs, where, why)
    counts: dict[str, Any] = {
        "input_token_logprobs": len(triples),
        "prompt_tokens": meta.prompt_tokens,
    }
    if isinstance(sent, tuple):
        counts["input_ids sent"] = len(sent)
    check.agree(where, counts, "the prompt (a radix-cache hit can shorten input logprobs)")
    logprobs = [t.logprob for t in triples]
    check.first_unscored(where, logprobs, len(logprobs))
    check.logprobs(where, logprobs, "[0]")
    if isinstance(sent, tuple) and [t.token_id for t in triples] != list(sent):
        raise check.violation(where, f"{where} scores other token ids than the input_ids sent")
    texts = _texts(r, where, triples)
    offsets: list[Any] = [UNSET] * len(texts)
    if prompt is not None:
        placed = place(texts, prompt, "first", pieces=True)
        if placed.stopped != len(texts) or placed.end != len(prompt):
            bad, end = min(placed.stopped, len(texts) - 1), placed.end
            raise check.violation(
                f"{where}[{bad}]",
                f"the prompt's token texts do not rebuild the prompt: token {bad} {texts[bad]!r} "
                f"does not continue it at character {end} (found {prompt[end : end + 12]!r})",
            )
        offsets = placed.offsets
    k = r.request.scoring.input_top_k
    rows = _rows(r, "meta_info.input_top_logprobs", meta.input_top_logprobs, len(triples), k)
    if rows and rows[0] is not None:
        raise check.violation(f"{where}[0]", "the unscored position 0 carries top-k alternatives")
    first = _token(texts[0], triples[0], offsets[0], UNSET, UNSET)
    rest = _tokens(r, where, triples[1:], texts[1:], offsets[1:], rows and rows[1:], k, 1)
    return InputRead((first, *rest))


def _sampled(r: Read, item: wire.Item, i: int) -> tuple[Token, ...]:
    """``output_token_logprobs`` as the sampled tokens: counted three ways (``output_ids``,
    ``completion_tokens``, ``output_token_logprobs_length``), ids matching, exact top-k,
    candidates in the order asked, texts placed in the choice's text (SGLang trims a matched stop
    from the text but keeps its tokens, notes item 5: they sit at the text's end)."""
    check, meta, ids = r.check, item.meta_info, item.output_ids
    where = f"[{i}].meta_info.output_token_logprobs"
    why = "although sampled logprobs were asked for"
    triples = check.present(meta.output_token_logprobs, where, why)
    counts: dict[str, Any] = {
        "output_token_logprobs": len(triples),
        "completion_tokens": meta.completion_tokens,
    }
    if ids is not None:
        counts["output_ids"] = len(ids)
    if meta.output_token_logprobs_length is not None:
        counts["output_token_logprobs_length"] = meta.output_token_logprobs_length
    check.agree(where, counts, f"generation {i}'s tokens")
    if ids is not None and [t.token_id for t in triples] != ids:
        raise check.violation(where, f"{where} scores other token ids than output_ids")
    logprobs = [t.logprob for t in triples]
    check.all_scored(where, logprobs)
    check.logprobs(where, logprobs, "[0]")
    texts = _texts(r, where, triples)
    placed = place(texts, item.text, "anywhere", pieces=True)
    offsets = placed.offsets
    if placed.stopped != len(texts) or placed.end != len(item.text):
        finish = meta.finish_reason
        stop = finish.matched if finish is not None and finish.type == "stop" else None
        pinned = pinned_stop(texts, item.text, placed, stop, ids[-1] if ids else None)
        if pinned is None:
            bad, end = min(placed.stopped, len(texts) - 1), placed.end
            raise check.violation(
                f"{where}[{bad}]",
                "the sampled token texts do not spell the choice's text: token "
                f"{bad} {texts[bad] if texts else ''!r} does not continue it at character {end} "
                f"(found {item.text[end : end + 12]!r}, finish {finish})",
            )
        offsets = pinned
    k, asked = r.request.scoring.sampled_top_k, r.request.scoring.candidate_token_ids
    rows = _rows(r, f"[{i}].meta_info.output_top_logprobs", meta.output_top_logprobs, len(texts), k)
    at = f"[{i}].meta_info.output_token_ids_logprobs"
    cand = (
        candidate_rows(check, at, meta.output_token_ids_logprobs, len(texts), asked)
        if asked
        else None
    )
    tokens = _tokens(r, where, triples, texts, offsets, rows, k)
    return tuple(with_candidates(check, at, tokens, cand) if cand is not None else tokens)


def _texts(r: Read, where: str, triples: list[wire.Triple]) -> list[str]:
    texts = [t.token for t in triples]
    if None in texts:
        missing = texts.index(None)
        raise r.check.violation(
            f"{where}[{missing}]",
            f"{where}[{missing}] has no token text although return_text_in_logprobs was sent",
        )
    return texts  # type: ignore[return-value]


def _rows(r: Read, where: str, rows: Any, n: int, k: int) -> list[Any] | None:
    """The top-k rows, one per position (``max_new_tokens: 0`` adds one row for the position
    after the prompt although no token is sampled, notes item 4: it is dropped)."""
    if not k:
        return None
    found = r.check.present(rows, where, f"for top-k={k}")
    if n == 0 and len(found) <= 1:
        return []
    if len(found) != n:
        raise r.check.violation(
            where,
            f"{where} has {len(found)} rows for {n} positions",
            expected=n,
            received=len(found),
        )
    return list(found)


def _tokens(
    r: Read,
    where: str,
    triples: list[wire.Triple],
    texts: list[str],
    offsets: list[Any],
    rows: list[Any] | None,
    k: int,
    first: int = 0,
) -> list[Token]:
    tops: list[Any] = [UNSET] * len(triples)
    ranks: list[Any] = [UNSET] * len(triples)
    if rows:
        tops, ranks = top_k(r.check, where + "[{i}] top-k", triples, rows, k, TOP_K, first)
    return list(map(_token, texts, triples, offsets, tops, ranks))


def _token(text: str, t: wire.Triple, offset: Any, top: Any, rank: Any) -> Token:
    tid = t.token_id
    return Token(
        text=text, logprob=t.logprob, token_id=tid, offset=offset, top=top, scored_rank=rank
    )


def _output_ids(r: Read, item: wire.Item, i: int) -> tuple[int, ...] | Any:
    """SGLang always returns ``output_ids``: kept whether asked or not, required when asked."""
    if item.output_ids is None:
        if r.request.scoring.token_ids:
            raise r.check.violation(f"[{i}].output_ids", f"generation {i} has no output_ids")
        return UNSET
    return tuple(item.output_ids)


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
    choices=_items,
    text=attrgetter("text"),
    finish=_finish,
    stop=_stop_reason,
    sampled=_sampled,
    token_ids=_output_ids,
    structured=Structured("[{i}].text", cut="length"),
    input=_input,
    usage=_usage,
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
    ),
    rows=ROWS,
    channels=CHANNELS,
    reply=REPLY,
    stream=Stream(DATA_DONE, wire.fold),
    error=wire.sglang_error,
    summary="SGLang's own POST /generate; verified on SGLang 0.5.23 (CPU, kernel stand-in)",
)
