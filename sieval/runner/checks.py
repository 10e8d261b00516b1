"""Pre-run checks: what would make every sample fail, or silently lower every score, is asked of
the server once before the first sample, and a failure stops the run (exit 2) with the fix.

Per model, after the pre-flight reached the endpoint:

* ``endpoint``   the base URL does not end in ``/v1`` (the dialects add their own paths);
* ``model``      the requested model id is one the server lists (when it lists any);
* ``top_k``      the largest top-k a task asks for is accepted: its first such request is sent;
* ``context``    the longest prompt of each task fits: counted by the server's ``/tokenize`` where
                 the wire has one (no model request), else sent with ``max_tokens: 1``;
* ``bos``        the first scored token of a text prompt is the model's BOS when its tokenizer
                 adds one (read through ``/tokenize``): a missing BOS silently costs a Gemma
                 model 0.15-0.20 accuracy on ARC, HellaSwag and MMLU.

Each result is recorded in ``report.json``; ``--no-preflight`` skips them all, explicitly.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from ..dialects.envelopes import message_kind
from ..dialects.vocabulary import model_length, tokenized
from ..errors import ConfigError, ServerRejected, SievalError
from ..ir.request import CompletionInput, Request, Sampling, Scoring
from ..model import Call, Model
from ..plan.plan import PlannedModel, PlannedTask
from ..setting_names import setting, task_setting
from ..tasks.base import ModelFacts
from ..transport import redact, redact_url
from .preflight import Provenance

__all__ = [
    "CheckResult",
    "Primed",
    "check_endpoint",
    "check_model",
    "failure",
    "primed_key",
    "resolve_documents",
    "resolve_token_ids",
    "run_checks",
]


class CheckResult(msgspec.Struct, frozen=True):
    check: str
    outcome: Literal["passed", "skipped", "failed"]
    detail: str
    task: str | None = None


def failure(pm: PlannedModel, result: CheckResult) -> ConfigError:
    """The error that stops the run for a failed check."""
    return ConfigError(
        f"pre-run check {result.check!r} failed for model {pm.label!r}: {result.detail} (skip "
        "the pre-run checks with --no-preflight)",
        path=result.check,
    )


def _requests(task: PlannedTask, facts: ModelFacts) -> Iterable[tuple[str, Request]]:
    """The first sample's requests known exactly before I/O (a conversation's: its first
    turn), as ``sample/name``."""
    for sample in task.samples[:1]:
        named = task.requests(sample, facts)
        yield from ((f"{sample.id}/{n}", r) for n, r in named.items())


def _longest(task: PlannedTask, facts: ModelFacts) -> tuple[str, Request] | None:
    """The request with the longest prompt text among the task's samples (one per sample)."""
    best: tuple[int, str, Request] | None = None
    for sample in task.samples:
        for name, request in task.requests(sample, facts).items():
            size = len(msgspec.json.encode(request.input))
            if best is None or size > best[0]:
                best = (size, f"{sample.id}/{name}", request)
    return (best[1], best[2]) if best else None


Primed = dict[str, tuple[Request, Call]]
"""Answered calls of the checks, by ``primed_key``: each with the request the run would send."""


def primed_key(task: str, sample: str, request: str) -> str:
    return f"{task}/{sample}/{request}"


def _keep(
    primed: Primed | None, task: PlannedTask, name: str, request: Request, call: Call
) -> None:
    """Keep an answered call of a sample's own request (``name`` is ``sample/request``)."""
    if primed is not None and call.ok:
        sample, _, request_name = name.rpartition("/")
        primed.setdefault(primed_key(task.name, sample, request_name), (request, call))


async def _answer(
    model: Model, primed: Primed | None, task: PlannedTask, name: str, sent: Request, own: bool
) -> Call:
    """``sent`` answered; when it is the sample's own request as the run sends it (``own``), an
    answer an earlier check kept is used, and a new one kept, so that two checks reading the
    same sample (top-k, then BOS) send it once."""
    if own and primed is not None:
        sample, _, request_name = name.rpartition("/")
        kept = primed.get(primed_key(task.name, sample, request_name))
        if kept is not None and kept[0] == sent:
            return kept[1]
    call = await model.call(sent)
    if own:
        _keep(primed, task, name, sent, call)
    return call


def _top_k(request: Request) -> int:
    s = request.scoring
    return max(
        s.input_top_k if s.input_logprobs else 0, s.sampled_top_k if s.sampled_logprobs else 0
    )


async def run_checks(
    model: Model,
    pm: PlannedModel,
    tasks: list[PlannedTask],
    provenance: Provenance,
    facts: ModelFacts,
    primed: Primed | None = None,
) -> list[CheckResult]:
    """Every check for one model, in order; ``ConfigError`` at the first failure. Details are
    redacted: a server may echo a header in its error message. A check that sends a sample's
    request exactly as the run would keeps its answered call in ``primed``, for the run to use
    instead of sending the request again (so the checks cost the server no extra work)."""
    out: list[CheckResult] = []

    def keep(result: CheckResult) -> None:
        result = msgspec.structs.replace(result, detail=redact(result.detail, model.secrets))
        out.append(result)
        if result.outcome == "failed":
            raise failure(pm, result)

    keep(check_endpoint(pm))
    keep(check_model(pm, provenance))
    length = provenance.max_model_len.get(pm.config.model, facts.max_length)
    for task in tasks:
        checks = (
            functools.partial(_check_top_k, primed=primed),
            functools.partial(_check_context, length=length, several=len(tasks) > 1),
            functools.partial(_check_bos, primed=primed),
        )
        for check in checks:
            result = await check(model, task, facts)
            if result is not None:
                keep(result)
    return out


def check_endpoint(pm: PlannedModel) -> CheckResult:
    """The URL check, which needs no I/O (the engine runs it before reaching the server too)."""
    url = redact_url(pm.config.base_url)
    if url.endswith("/v1"):
        return CheckResult(
            "endpoint",
            "failed",
            f"endpoint {url!r} ends in /v1, but the dialect adds its own paths "
            f"({pm.dialect.endpoint.path}); set endpoint: {url[: -len('/v1')]}",
        )
    return CheckResult("endpoint", "passed", "the base URL has no API path in it")


def check_model(pm: PlannedModel, provenance: Provenance) -> CheckResult:
    """The model id check (no I/O: the pre-flight's listing); the engine runs it for the embedded
    server even with ``--no-preflight``, which serves one id only."""
    served = provenance.served_models
    wanted = pm.config.model
    how = f"; checked with {provenance.checked_by}" if provenance.checked_by else ""
    if not served and provenance.model_answered:
        return CheckResult("model", "passed", f"{wanted!r} answered{how}")
    if not served:
        return CheckResult("model", "skipped", f"the server lists no model ids{how}")
    if wanted not in served:
        return CheckResult(
            "model",
            "failed",
            f"the server does not serve model {wanted!r}; it serves {', '.join(served)}: set "
            f"{setting('model', 'ID')} to one of them",
        )
    return CheckResult("model", "passed", f"{wanted!r} is served{how}")


async def _check_top_k(
    model: Model, task: PlannedTask, facts: ModelFacts, primed: Primed | None = None
) -> CheckResult | None:
    asked = [(name, r, _top_k(r)) for name, r in _requests(task, facts)]
    asked = [a for a in asked if a[2] > 0]
    if not asked:
        return None
    name, request, k = max(asked, key=lambda a: a[2])
    call = await _answer(model, primed, task, name, request, own=True)
    error = call.error
    if isinstance(error, ServerRejected) and error.path == "top_k_cap":
        return CheckResult(
            "top_k",
            "failed",
            f"task {task.name!r} asks for top-k {k} and the server refuses it "
            f"({error.server_message}); start the server with a higher limit (vLLM: "
            f"--max-logprobs) or lower the task's top-k with {setting('options.top_k')}",
            task.name,
        )
    if error is not None and not isinstance(error, SievalError):  # pragma: no cover
        raise error
    detail = f"top-k {k} accepted ({name})" if call.ok else f"top-k {k}: {error}"
    return CheckResult("top_k", "passed" if call.ok else "skipped", detail, task.name)


async def _check_context(
    model: Model,
    task: PlannedTask,
    facts: ModelFacts,
    length: int | None = None,
    several: bool = False,
) -> CheckResult | None:
    longest = _longest(task, facts)
    if longest is None:
        return None
    name, request = longest
    counted = await _count_prompt(model, request, length)
    if counted is not None:  # counted without a model request
        count, length, how = counted
        if count + 1 > length:
            return CheckResult(
                "context",
                "failed",
                f"task {task.name}'s longest prompt ({name}) does not fit the server's context "
                f"({count} prompt tokens, counted {how}, and the server's maximum model length "
                f"is {length}); {fewer_shots(task, name, several, count, length)}",
                task.name,
            )
        return CheckResult(
            "context",
            "passed",
            f"the longest prompt ({name}) fits: {count} of {length} tokens, counted {how}",
            task.name,
        )
    probe = msgspec.structs.replace(
        request,
        sampling=msgspec.structs.replace(request.sampling, max_tokens=1, n=1, stop=UNSET),
        scoring=Scoring(),
    )
    call = await model.call(probe)
    error = call.error
    if (
        isinstance(error, ServerRejected)
        and message_kind(error.server_message) == "context_overflow"
    ):
        return CheckResult(
            "context",
            "failed",
            f"task {task.name}'s longest prompt ({name}) does not fit the server's context "
            f"({error.server_message}); {fewer_shots(task, name, several)}",
            task.name,
        )
    detail = f"the longest prompt ({name}) fits" if call.ok else f"not checked: {error}"
    return CheckResult("context", "passed" if call.ok else "skipped", detail, task.name)


def fewer_shots(
    task: PlannedTask,
    longest: str,
    several: bool,
    count: int | None = None,
    length: int | None = None,
) -> str:
    """The fix for a prompt too long for the context, as the run was started: the task's own
    shots (``--task T:num_fewshot=N`` when the run has other tasks, else ``--num-fewshot N``),
    with how many would fit when the prompt was counted (the shots' share of its characters
    taken as their share of its tokens: an estimate, said as one); a longer context."""
    default = task.task.defaults.get("num_fewshot", 0)
    k = task.config.num_fewshot if task.config.num_fewshot is not None else default
    if not k:
        return "serve a longer context (the task takes no shots to lower)"
    fit = "N"
    at = task.samples.position(longest.rsplit("/", 1)[0])
    data = task.samples[at].data if at is not None else {}
    shots, query = data.get("fewshot"), data.get("query")
    if count and length and isinstance(shots, str) and isinstance(query, str) and shots:
        per_char = count / (len(shots) + len(query))
        room = (length - 1) / per_char - len(query)
        fit = str(max(0, min(k - 1, int(k * room / len(shots)))))
    form = task_setting(task.name, "num_fewshot", fit) if several else setting("num_fewshot", fit)
    about = " (about that many fit, by the shots' share of the prompt)" if fit != "N" else ""
    return f"lower the shots with {form}{about}, or serve a longer context"


async def _count_prompt(
    model: Model, request: Request, length: int | None
) -> tuple[int, int, str] | None:
    """A prompt's token count, the server's maximum model length and how the count was made:
    token ids are counted as they are (given ``length``, from the model listing); a text
    prompt through the tokenize route (special tokens added, as the server adds them to a text
    prompt; the length from the listing, else the tokenize reply). None when neither can be
    done (then the check sends the prompt itself)."""
    ids = request.input.token_ids if isinstance(request.input, CompletionInput) else UNSET
    if isinstance(ids, tuple) and isinstance(length, int):
        return len(ids), length, "from its token ids"
    text = request.input.text if isinstance(request.input, CompletionInput) else UNSET
    if not isinstance(text, str) or model.dialect.endpoint.tokenize is None:
        return None
    try:
        data = await _tokenize(model, text, True)
    except SievalError:
        return None
    tokens = tokenized(data, text)
    if tokens is None:
        return None
    length = length or model_length(data.get("max_model_len"))
    if not isinstance(length, int) or isinstance(length, bool):
        return None
    return len(tokens), length, "by /tokenize"


async def _tokenize(model: Model, text: str, special: bool) -> Any:
    endpoint = model.dialect.endpoint
    body = endpoint.tokenize_body(model.model_id, text, special)
    status, data = await model.fetch(str(endpoint.tokenize), body)
    return data if status == 200 and isinstance(data, dict) else None


async def _check_bos(
    model: Model, task: PlannedTask, facts: ModelFacts, primed: Primed | None = None
) -> CheckResult | None:
    scored = [
        (name, r)
        for name, r in _requests(task, facts)
        if r.scoring.input_logprobs
        and isinstance(r.input, CompletionInput)
        and r.input.text is not UNSET
    ]
    if not scored:
        return None
    if model.dialect.endpoint.tokenize is None:
        return CheckResult("bos", "skipped", "the wire has no tokenize route", task.name)
    try:
        with_bos = await _tokenize(model, "x", True)
        without = await _tokenize(model, "x", False)
    except SievalError as exc:
        return CheckResult("bos", "skipped", f"tokenize failed: {exc.message}", task.name)
    if not with_bos or not without:
        return CheckResult("bos", "skipped", "the server has no /tokenize", task.name)
    ids, plain = tokenized(with_bos, "x"), tokenized(without, "x")
    if ids is None or plain is None:
        return CheckResult(
            "bos", "skipped", "the server's /tokenize gave no token ids for 'x'", task.name
        )
    if len(ids) != len(plain) + 1 or ids[1:] != plain:
        return CheckResult("bos", "passed", "the tokenizer adds no BOS", task.name)
    bos_id = ids[0]
    bos_text = (with_bos.get("token_strs") or [None])[0]
    name, request = scored[0]
    sent = msgspec.structs.replace(request, sampling=Sampling(temperature=0.0, max_tokens=1))
    call = await _answer(model, primed, task, name, sent, own=sent == request)
    if call.response is None or not isinstance(call.response.input_tokens, tuple):
        return CheckResult("bos", "skipped", f"not checked: {call.error}", task.name)
    first = call.response.input_tokens[0]
    same = first.token_id == bos_id if isinstance(first.token_id, int) else first.text == bos_text
    if not same:
        shown = first.token_id if isinstance(first.token_id, int) else first.text
        return CheckResult(
            "bos",
            "failed",
            f"the first scored token of {name} is {shown!r}, not the BOS the model's tokenizer "
            f"adds ({bos_text!r}, id {bos_id}): the server did not prepend it, which silently "
            "lowers every score; make the server add special tokens to text prompts",
            task.name,
        )
    return CheckResult(
        "bos", "passed", f"the first scored token is the BOS {bos_text!r}", task.name
    )


async def resolve_token_ids(model: Model, texts: Iterable[str]) -> dict[str, int]:
    """The texts that are exactly one token of the server's tokenizer, with their ids (through
    the dialect's tokenize route, special tokens off); the others are left out."""
    if model.dialect.endpoint.tokenize is None:
        return {}
    out: dict[str, int] = {}
    for text in dict.fromkeys(texts):
        try:
            data = await _tokenize(model, text, False)
        except SievalError:
            return {}
        tokens = tokenized(data, text)
        if tokens is not None and len(tokens) == 1:
            out[text] = tokens[0]
    return out


async def resolve_documents(
    model: Model, texts: Iterable[str], max_length: int | None
) -> dict[str, Any]:
    """What a rolling log-likelihood task needs of the server's tokenizer, as ``ModelFacts``
    fields: each text's token ids (special tokens off), the BOS the tokenizer adds (the first
    window's prefix), and the maximum model length (``max_length``, else the tokenize reply's);
    a ``ConfigError`` when the wire has no tokenize route or the tokenizer does not answer."""
    if model.dialect.endpoint.tokenize is None:
        raise ConfigError(
            f"{model.dialect.id} has no tokenize route, which rolling log-likelihood needs to cut "
            "documents into windows; use openai_completions or vllm_native on vLLM, or "
            "sglang_native",
            path="tokenize",
        )
    documents: dict[str, tuple[int, ...]] = {}
    reported = None
    for text in dict.fromkeys(texts):
        data = await _tokenize(model, text, False)
        tokens = tokenized(data, text)
        if tokens is None:
            raise ConfigError(
                f"the server's {model.dialect.endpoint.tokenize} did not tokenise a document "
                f"(reply {str(data)[:200]!r}); rolling log-likelihood needs its token ids",
                path="tokenize",
            )
        documents[text] = tuple(tokens)
        reported = model_length(data.get("max_model_len")) or reported
    with_bos = await _tokenize(model, "x", True)
    without = await _tokenize(model, "x", False)
    ids, plain = tokenized(with_bos, "x") or [], tokenized(without, "x") or []
    prefix = ids[0] if len(ids) == len(plain) + 1 and ids[1:] == plain else None
    return {
        "documents": documents,
        "prefix_token_id": prefix,
        "max_length": max_length if max_length is not None else reported,
    }
