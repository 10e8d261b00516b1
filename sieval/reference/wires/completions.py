"""``POST /v1/completions`` as vLLM 0.32.0 serves it (wire reference §1 and §7).

Pure functions from a request body to a reply body (or SSE chunks); the aiohttp handler lives in
``server.py``. Behaviour reproduced from vLLM 0.32.0's ``completion/serving.py`` and
``sampling_params.py``:

* keys of the reply, null-valued ones included (``model_dump()`` without ``exclude_none``);
* echo: ``text`` = prompt + completion (prompt dropped when ``return_token_ids``), ``tokens[0]``
  is the decoded first prompt token (``<bos>``) with null logprob and top-k, ``text_offset`` is
  cumulative over token strings (so shifted by ``len("<bos>")``), echo+logprobs also fills
  ``choice.prompt_logprobs`` (vLLM sets ``prompt_logprobs = logprobs`` under echo);
* top-k dicts keyed by decoded text: the actual token first, then ranks 1..k, distinct ids with
  the same text collapse and the later entry's value wins; −inf clamped to −9999.0;
* ``max_tokens`` default 16, clamped to ``max_model_len − prompt_len``; ``echo`` with
  ``max_tokens: 0`` generates one hidden token (``completion_tokens`` = 1);
* logprobs are raw (before temperature and penalties).
"""

from __future__ import annotations

import math
import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..envelopes import VllmError, plain, request_validation, validation
from ..judge import asked, verdict
from ..lm import Distribution, ReferenceModel
from ..structured import generate_json, schema_from_request
from ..tokenizer import EOS_ID
from . import Context

__all__ = ["Choice", "Rendered", "render"]

_INT64 = 2**63
_MAX_STOP_STRINGS = 4
_SAMPLING_EPS = 1e-5


@dataclass
class _Params:
    n: int
    max_tokens: int
    echo: bool
    logprobs: int | None
    prompt_logprobs: int | None
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    presence: float
    frequency: float
    repetition: float
    seed: int | None
    stop: list[str]
    stop_token_ids: list[int]
    ignore_eos: bool
    min_tokens: int
    include_stop: bool
    return_token_ids: bool
    as_token_ids: bool
    stream: bool
    include_usage: bool
    continuous_usage: bool
    schema: dict[str, Any] | None


@dataclass
class Choice:
    """One generated choice: its token ids, finish reason, matched stop and text."""

    out: list[int]
    finish: str
    stop_reason: int | str | None
    text: str
    hidden: bool = False  # echo + max_tokens 0: the generated token is not shown


@dataclass
class _Prompt:
    ids: list[int]
    text: str


@dataclass
class Rendered:
    """Everything needed to write the reply, non-stream or stream."""

    request_id: str
    created: int
    model: str
    params: _Params
    prompts: list[_Prompt]
    choices: list[tuple[int, Choice]]  # (prompt index, choice)


# -- request parsing ------------------------------------------------------------------------------


def _num(body: dict[str, Any], key: str, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise request_validation(f"{key} must be a number", key, body, loc=f"body.{key}")
    return float(value)


def _int(body: dict[str, Any], key: str, default: int | None) -> int | None:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise request_validation(f"`{key}` must be an integer.", key, body, loc=f"body.{key}")
    return value


def _prompts(body: dict[str, Any], model: ReferenceModel) -> list[_Prompt]:
    prompt = body.get("prompt")
    if prompt is None or prompt == "" or prompt == []:
        raise request_validation(
            "Either prompt or prompt_embeds must be provided and non-empty. (parameter=prompt)",
            "prompt",
            body,
        )
    add_bos = body.get("add_special_tokens", True) is not False
    items: list[Any]
    if isinstance(prompt, str) or (
        isinstance(prompt, list) and all(isinstance(x, int) for x in prompt)
    ):
        items = [prompt]
    elif isinstance(prompt, list):
        items = prompt
    else:
        raise request_validation("prompt must be a string or a list", "prompt", body)
    out = []
    vocab = model.vocab_size
    for item in items:
        if isinstance(item, str):
            out.append(_Prompt(model.tokenize(item, add_bos=add_bos), item))
        elif isinstance(item, list) and item and all(isinstance(x, int) for x in item):
            bad = [x for x in item if not 0 <= x < vocab]
            if bad:
                raise validation(
                    f"Token id {bad[0]} is out of vocabulary", "prompt", None
                )  # vLLM 0.32 rejects out-of-vocab prompt ids with a 400 too
            out.append(_Prompt(list(item), model.decode(item)))
        else:
            raise request_validation("prompt items must be strings or token lists", "prompt", body)
    return out


def _parse(
    body: dict[str, Any], settings: Context, model: ReferenceModel
) -> tuple[_Params, list[_Prompt]]:
    if settings.sampling_defaults:  # the server's own values for what the request left out
        left_out = settings.sampling_defaults.items()
        body = {**body, **{k: v for k, v in left_out if body.get(k) is None}}
    # -- pydantic-level checks (model validators, field types) ------------------------------------
    stream = bool(body.get("stream"))
    logprobs = _int(body, "logprobs", None)
    prompt_logprobs = _int(body, "prompt_logprobs", None)
    if prompt_logprobs is not None:
        if stream and (prompt_logprobs > 0 or prompt_logprobs == -1):
            raise request_validation(
                "`prompt_logprobs` are not available when `stream=True`. "
                "(parameter=prompt_logprobs)",
                "prompt_logprobs",
                body,
            )
        if prompt_logprobs < -1:
            raise request_validation(
                "`prompt_logprobs` must be a positive value or -1. (parameter=prompt_logprobs)",
                "prompt_logprobs",
                body,
            )
    if logprobs is not None and logprobs < -1:
        raise request_validation(
            "`logprobs` must be a positive value or -1. (parameter=logprobs)", "logprobs", body
        )
    stream_options = body.get("stream_options")
    if stream_options and not stream:
        raise request_validation(
            "Stream options can only be defined when `stream=True`. (parameter=stream_options)",
            "stream_options",
            body,
        )
    stop = body.get("stop") or []
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise request_validation("stop must be a string or a list of strings", "stop", body)
    if len(stop) > _MAX_STOP_STRINGS:
        raise VllmError(
            400,
            "1 validation error:\n  {'type': 'too_long', 'loc': 'body.stop.list[str]', "
            f"'msg': 'List should have at most {_MAX_STOP_STRINGS} items after validation, "
            f"not {len(stop)}', 'input': '<list of {len(stop)} items>'}}",
            "Bad Request",
            "body.stop.list[str]",
        )
    seed = _int(body, "seed", None)
    if seed is not None and not -_INT64 <= seed < _INT64:
        raise request_validation("seed must be an int64", "seed", body, loc="body.seed")
    n = _int(body, "n", 1)
    assert n is not None
    max_tokens_req = _int(body, "max_tokens", 16)
    assert max_tokens_req is not None
    echo = bool(body.get("echo"))
    schema = schema_from_request(body)

    # -- model and renderer -----------------------------------------------------------------
    requested_model = body.get("model")
    if requested_model and requested_model != settings.served_model:
        raise plain(
            f"The model `{requested_model}` does not exist. "
            f"Valid aliases: {settings.served_model}.",
            param="model",
            status=404,
            err_type="NotFoundError",
        )
    if body.get("suffix") is not None:
        raise plain(
            "suffix is only supported for models with FIM completion rendering", param="suffix"
        )
    c = settings.max_model_len
    if max_tokens_req > c:
        raise validation(
            f"max_tokens={max_tokens_req} cannot be greater than max_model_len={c}. "
            "Please request fewer output tokens.",
            "max_tokens",
            max_tokens_req,
        )
    prompts = _prompts(body, model)
    for p in prompts:
        if len(p.ids) > c:
            raise validation(
                f"This model's maximum context length is {c} tokens. However, your prompt "
                f"contains {len(p.ids)} input tokens, which exceeds this limit even without "
                "any output tokens. Please reduce the length of the input prompt.",
                "input_tokens",
                len(p.ids),
            )

    # -- sampling params (SamplingParams._verify_args and friends) ----------------------------
    temperature = _num(body, "temperature", 1.0)
    top_p = _num(body, "top_p", 1.0)
    top_k = _int(body, "top_k", 0) or 0
    min_p = _num(body, "min_p", 0.0)
    presence = _num(body, "presence_penalty", 0.0)
    frequency = _num(body, "frequency_penalty", 0.0)
    repetition = _num(body, "repetition_penalty", 1.0)
    min_tokens = _int(body, "min_tokens", 0) or 0
    shortest = min(len(p.ids) for p in prompts)
    max_tokens = min(max_tokens_req, c - shortest)
    if echo and max_tokens_req == 0:
        max_tokens = 1
    if n < 1:
        raise validation(f"n must be at least 1, got {n}.")
    if not -2.0 <= presence <= 2.0:
        raise validation(f"presence_penalty must be in [-2, 2], got {presence}.")
    if not -2.0 <= frequency <= 2.0:
        raise validation(f"frequency_penalty must be in [-2, 2], got {frequency}.")
    if repetition <= 0.0:
        raise validation(f"repetition_penalty must be greater than zero, got {repetition}.")
    if temperature < 0.0:
        raise validation(
            f"temperature must be non-negative, got {temperature}.", "temperature", temperature
        )
    if temperature > 2.0:
        raise validation(
            f"temperature must be in [0, 2], got {temperature}.", "temperature", temperature
        )
    if not 0.0 < top_p <= 1.0:
        raise validation(f"top_p must be in (0, 1], got {top_p}.", "top_p", top_p)
    if top_k < -1:
        raise validation(f"top_k must be 0 (disable), or at least 1, got {top_k}.")
    if not 0.0 <= min_p <= 1.0:
        raise validation(f"min_p must be in [0, 1], got {min_p}.")
    if max_tokens < 1:
        raise validation(
            f"max_tokens must be at least 1, got {max_tokens}.", "max_tokens", max_tokens
        )
    if any(not s for s in stop):
        raise validation("stop cannot contain an empty string.")
    if temperature < _SAMPLING_EPS:
        top_p, top_k, min_p = 1.0, 0, 0.0
        if n > 1:
            raise validation(f"n must be 1 when using greedy sampling, got {n}.")
    elif temperature < 0.01:
        temperature = 0.01
    if echo and prompt_logprobs is None:
        prompt_logprobs = logprobs
    cap = settings.max_logprobs if settings.max_logprobs != -1 else model.vocab_size
    if logprobs:
        asked = model.vocab_size if logprobs == -1 else logprobs
        if asked > cap:
            raise validation(
                f"Requested sample logprobs of {asked}, which is greater than max allowed: {cap}",
                "logprobs",
                asked,
            )
    if prompt_logprobs:
        asked = model.vocab_size if prompt_logprobs == -1 else prompt_logprobs
        if asked > cap:
            raise validation(
                f"Requested prompt logprobs of {asked}, which is greater than max allowed: {cap}",
                "prompt_logprobs",
                asked,
            )
    stop_ids = body.get("stop_token_ids") or []
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in stop_ids):
        raise validation(f"stop_token_ids must contain only integers, got {stop_ids}.")
    so = stream_options if isinstance(stream_options, dict) else {}
    include_usage = bool(so.get("include_usage"))
    params = _Params(
        n=n,
        max_tokens=max_tokens,
        echo=echo,
        logprobs=logprobs,
        prompt_logprobs=prompt_logprobs,
        temperature=temperature,
        top_p=top_p,
        top_k=top_k,
        min_p=min_p,
        presence=presence,
        frequency=frequency,
        repetition=repetition,
        seed=None if seed == -1 else seed,
        stop=stop,
        stop_token_ids=list(stop_ids),
        ignore_eos=bool(body.get("ignore_eos")),
        min_tokens=min_tokens,
        include_stop=bool(body.get("include_stop_str_in_output")),
        return_token_ids=bool(body.get("return_token_ids")),
        as_token_ids=bool(body.get("return_tokens_as_token_ids")),
        stream=stream,
        include_usage=include_usage,
        continuous_usage=include_usage and bool(so.get("continuous_usage_stats")),
        schema=schema,
    )
    return params, prompts


# -- generation -----------------------------------------------------------------------------------


def _processed(
    dist: Distribution, p: _Params, prompt: Sequence[int], out: Sequence[int], allowed: Any
) -> list[float]:
    logits = list(dist.logprobs)
    if p.repetition != 1.0:
        for tid in set(prompt) | set(out):
            x = logits[tid]
            logits[tid] = x * p.repetition if x < 0 else x / p.repetition
    if (p.presence or p.frequency) and out:
        counts: dict[int, int] = {}
        for tid in out:
            counts[tid] = counts.get(tid, 0) + 1
        for tid, cnt in counts.items():
            logits[tid] -= p.frequency * cnt + p.presence
    if allowed is not None:
        keep = set(allowed)
        logits = [x if i in keep else -math.inf for i, x in enumerate(logits)]
    if len(out) < p.min_tokens and not p.ignore_eos and allowed is None:
        logits[EOS_ID] = -math.inf
    return logits


def _pick(logits: list[float], p: _Params, model: ReferenceModel, rng: random.Random) -> int:
    if p.temperature < _SAMPLING_EPS:
        best = max(range(len(logits)), key=lambda i: (logits[i], -i))
        return best
    scaled = [x / p.temperature for x in logits]
    order = sorted(range(len(scaled)), key=lambda i: (-scaled[i], i))
    if p.top_k > 0:
        for i in order[p.top_k :]:
            scaled[i] = -math.inf
    top = scaled[order[0]]
    if p.min_p > 0.0:
        floor = top + math.log(p.min_p)
        scaled = [x if x >= floor else -math.inf for x in scaled]
    if p.top_p < 1.0:
        weights = [math.exp(scaled[i] - top) for i in order]
        total = math.fsum(weights)
        acc = 0.0
        for rank in range(len(order)):
            if acc / total >= p.top_p:
                for j in order[rank:]:
                    scaled[j] = -math.inf
                break
            acc += weights[rank]
    return model.sample_token(scaled, rng)


def _generate(
    model: ReferenceModel,
    prompt: _Prompt,
    p: _Params,
    rng: random.Random,
    hidden: bool,
    script: str | None = None,
) -> Choice:
    """One choice: the model's own tokens, or ``script`` (then ``<eos>``) written token by token
    under the same ``max_tokens``, stop strings and stop ids."""
    tok = model.tokenizer
    ctx = list(prompt.ids)
    scripted = [*model.tokenize(script, add_bos=False), EOS_ID] if script is not None else None
    fast_greedy = (
        p.temperature < _SAMPLING_EPS
        and p.repetition == 1.0
        and not p.presence
        and not p.frequency
        and p.min_tokens == 0
    )
    out: list[int] = []

    def choose(context: list[int], allowed: list[int] | None) -> int:
        at = len(context) - len(prompt.ids)
        if scripted is not None and allowed is None and at < len(scripted):
            return scripted[at]
        dist = model.distribution(context)
        if fast_greedy and allowed is None:
            return dist.argmax()
        return _pick(
            _processed(dist, p, prompt.ids, context[len(prompt.ids) :], allowed), p, model, rng
        )

    if p.schema is not None and not hidden and scripted is None:
        out, finish = generate_json(model, ctx, p.schema, choose, p.max_tokens)
        return Choice(out, finish, None, tok.decode(out))
    finish = "length"
    stop_reason: int | str | None = None
    for _ in range(p.max_tokens):
        tid = choose(ctx, None)
        out.append(tid)
        ctx.append(tid)
        if tid == EOS_ID and not p.ignore_eos:
            finish = "stop"
            break
        if tid in p.stop_token_ids:
            finish, stop_reason = "stop", tid
            break
        if p.stop:
            text = tok.decode(out)
            hits = sorted((text.find(s), s) for s in p.stop if s in text)
            if hits:
                at, matched = hits[0]
                cut = at + len(matched) if p.include_stop else at
                return Choice(out, "stop", matched, text[:cut])
    return Choice(out, finish, stop_reason, tok.decode(out))


def _rng(p: _Params, settings: Context, index: int) -> random.Random:
    if p.seed is None:
        return settings.server_rng
    return random.Random(p.seed * 1_000_003 + index)


def _judged(
    prompt: _Prompt, p: _Params, rng: random.Random, settings: Context, asks: Any
) -> str | None:
    """A judge's verdict when the prompt asks for one (``judge.py``), else None."""
    if asks is None:
        return None
    return verdict(prompt.text, asks, p.schema, p.temperature, rng, settings.judge_fault)


def render(body: dict[str, Any], settings: Context, script: str | None = None) -> Rendered:
    """Validate and run one request; raises :class:`VllmError` on a rejected request.

    ``script``: the text every choice writes instead of the model's own (a chat wire's tool
    calls or answer to tool results); without one, a prompt asking for a verdict in a known
    format is answered by the judge (``judge.py``)."""
    model = settings.model
    params, prompts = _parse(body, settings, model)
    hidden = params.echo and body.get("max_tokens") == 0
    choices: list[tuple[int, Choice]] = []
    for pi, prompt in enumerate(prompts):
        asks = None
        if script is None and not params.echo:
            asks = asked(prompt.text, params.schema is not None)
        for j in range(params.n):
            rng = _rng(params, settings, j)
            text = script if script is not None else _judged(prompt, params, rng, settings, asks)
            choice = _generate(model, prompt, params, rng, hidden, text)
            choice.hidden = bool(hidden)
            choices.append((pi, choice))
    return Rendered(
        request_id=f"cmpl-{uuid.uuid4().hex}",
        created=int(time.time()),
        model=settings.served_model,
        params=params,
        prompts=prompts,
        choices=choices,
    )
