"""Two reply checks every wire shares (issue 19, items 1 and 2), proved on real replies mutated as
a malicious proxy would mutate them.

* A log-probability is at most 0 (``checks.LOGPROB_TOLERANCE`` of rounding allowed): a positive
  one anywhere (prompt, sampled, a top-k alternative, streamed or not) is a ContractViolation
  naming the JSON path of the value.
* A top-k list agrees with the sampled token's own logprob: listed, the same value; absent from
  the list, not above its lowest entry.

Each refusal must come out the same on the whole-channel path and on the position-by-position
walk (``test_lift_paths.walked``); each unmutated reply still lifts to the wire's values.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from conftest import load_fixture, reply_bytes

from dialects import recorded_cases
from dialects import test_google_genai as google_cases
from dialects import test_openai_chat as chat_cases
from dialects import test_openai_responses as responses_cases
from dialects import test_sglang_native as sglang_cases
from dialects import test_vllm_native as vllm_cases
from dialects.test_lift_paths import outcome
from sieval.dialects.registry import get_dialect
from sieval.dialects.reply_checks import LOGPROB_TOLERANCE, walked
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation
from sieval.ir.request import Request, Scoring

MODEL = "gemma-3-270m"
Change = Callable[[Any], None]

REQUESTS = {
    "openai_completions": recorded_cases.CASES,
    "vllm_native": vllm_cases.CASES,
    "openai_chat": chat_cases.CASES,
    "openai_responses": responses_cases.CASES,
    "sglang_native": sglang_cases.CASES,
}
VERSIONS = {"sglang_native": "0.5.23"}


def _lift(dialect: str, request: Request, body: bytes) -> Any:
    d = get_dialect(dialect)
    return lift(d, lower(d, request, MODEL), 200, {}, body)


def _body(dialect: str, name: str, change: Change | None) -> bytes:
    fixture = copy.deepcopy(load_fixture(dialect, name, VERSIONS.get(dialect, "0.32.0")))
    if change is None:
        return reply_bytes(fixture)
    if "reply_sse" in fixture:
        fixture["reply_sse"] = change(fixture["reply_sse"])
    else:
        change(fixture["reply"])
    return reply_bytes(fixture)


def _refused_alike(run: Callable[[], Any]) -> ContractViolation:
    """The violation ``run`` raises, which the walk must raise word for word."""
    with pytest.raises(ContractViolation) as caught:
        run()
    with walked():
        assert outcome(run) == ("ContractViolation", str(caught.value))
    return caught.value


def _replace(old: float, new: float, nth: int | None = None) -> Callable[[str], str]:
    """A stream edit: the number ``old`` becomes ``new`` everywhere, or at its ``nth`` place."""

    def edit(text: str) -> str:
        spelled = re.escape(json.dumps(old))
        hits = list(re.finditer(rf"(?<![\d.]){spelled}(?![\d])", text))
        assert hits, f"{old} is not in the stream"
        chosen = hits if nth is None else [hits[nth]]
        for hit in reversed(chosen):
            text = text[: hit.start()] + json.dumps(new) + text[hit.end() :]
        return text

    return edit


# -- the mutations, on each wire's recorded replies ------------------------------------------------


def _completions_lp(r: Any) -> Any:
    return r["choices"][0]["logprobs"]


def _chat_content(r: Any) -> Any:
    return r["choices"][0]["logprobs"]["content"]


def _responses_lps(r: Any) -> Any:
    return next(i for i in r["output"] if i["type"] == "message")["content"][0]["logprobs"]


def _responses_where(r: Any) -> str:
    at = next(n for n, i in enumerate(r["output"]) if i["type"] == "message")
    return f"output[{at}].content[0].logprobs"


def _flip_echo(r: Any) -> None:
    _completions_lp(r)["token_logprobs"][3] = 0.5


def _flip_echo_top(r: Any) -> None:
    top = _completions_lp(r)["top_logprobs"][4]
    other = next(t for t in top if t != _completions_lp(r)["tokens"][4])
    top[other] = 0.25


def _raise_outside_top3(r: Any) -> None:
    """Position 3 scores ' What' outside its top-3 (4 entries): raised above the 3rd best."""
    lp = _completions_lp(r)
    lp["token_logprobs"][3] = -1.0
    lp["top_logprobs"][3][" What"] = -1.0


def _flip_vllm_prompt(r: Any) -> None:
    row = r["choices"][0]["prompt_logprobs"][2]
    row[next(iter(row))]["logprob"] = 0.5


def _raise_vllm_outside(r: Any) -> None:
    """Position 3 scores id 2900 at rank 5 outside its top-3: raised above the 3rd best."""
    r["choices"][0]["prompt_logprobs"][3]["2900"]["logprob"] = -1.0


def _flip_chat(r: Any) -> None:
    entry = _chat_content(r)[1]
    entry["logprob"] = entry["top_logprobs"][0]["logprob"] = 0.5


def _flip_chat_top(r: Any) -> None:
    _chat_content(r)[1]["top_logprobs"][2]["logprob"] = 0.5


def _contradict_chat(r: Any) -> None:
    """The sampled token's own entry in its top-k lowered, the lift's top-1 now another token."""
    _chat_content(r)[0]["top_logprobs"][0]["logprob"] = -5.0


def _unlist_chat(r: Any) -> None:
    """The sampled token's entry renamed: absent, its own logprob above the list's lowest."""
    top = _chat_content(r)[0]["top_logprobs"][0]
    top["token"], top["logprob"] = "zzz", -4.0


def _flip_responses(r: Any) -> None:
    entry = _responses_lps(r)[1]
    entry["logprob"] = entry["top_logprobs"][0]["logprob"] = 0.5


def _flip_responses_top(r: Any) -> None:
    _responses_lps(r)[1]["top_logprobs"][2]["logprob"] = 0.5


def _contradict_responses(r: Any) -> None:
    _responses_lps(r)[1]["top_logprobs"][0]["logprob"] = -9.0


def _unlist_responses(r: Any) -> None:
    top = _responses_lps(r)[1]["top_logprobs"][0]
    top["token"], top["logprob"] = "zzz", -9.0


def _sglang_meta(r: Any) -> Any:
    return r["meta_info"]


def _flip_sglang_input(r: Any) -> None:
    _sglang_meta(r)["input_token_logprobs"][2][0] = 0.5
    _sglang_meta(r)["input_top_logprobs"][2][0][0] = 0.5


def _flip_sglang_sampled(r: Any) -> None:
    _sglang_meta(r)["output_token_logprobs"][1][0] = 0.5
    _sglang_meta(r)["output_top_logprobs"][1][0][0] = 0.5


def _flip_sglang_top(r: Any) -> None:
    _sglang_meta(r)["output_top_logprobs"][1][1][0] = 0.5


def _contradict_sglang(r: Any) -> None:
    _sglang_meta(r)["output_top_logprobs"][1][0][0] = -2.6


def _unlist_sglang(r: Any) -> None:
    """The sampled id replaced in its row by another: absent, above the row's lowest."""
    _sglang_meta(r)["output_top_logprobs"][1][0][1] = 999


CASES: list[tuple[str, str, Change, str, str]] = [
    # (dialect, fixture, mutation, JSON path of the refusal, words of it)
    (
        "openai_completions",
        "echo_score",
        _flip_echo,
        "choices[0].logprobs.token_logprobs[3]",
        "is 0.5: a log-probability is at most 0",
    ),
    (
        "openai_completions",
        "echo_top3",
        _flip_echo_top,
        'choices[0].logprobs.top_logprobs[4]["',
        "is 0.25: a log-probability is at most 0",
    ),
    (
        "openai_completions",
        "gen_top5",
        lambda r: _completions_lp(r)["token_logprobs"].__setitem__(0, 0.5),
        "choices[0].logprobs.token_logprobs[0]",
        "at most 0",
    ),
    (
        "openai_completions",
        "stream",
        _replace(-1.6280280351638794, 0.5),
        "choices[0].logprobs.token_logprobs[0]",
        "at most 0",
    ),
    (
        "openai_completions",
        "echo_top3",
        _raise_outside_top3,
        "choices[0].logprobs.top_logprobs[3]",
        "does not rank the sampled token ' What' among its top-3",
    ),
    (
        "vllm_native",
        "prompt_logprobs_top3_ids",
        _flip_vllm_prompt,
        'prompt_logprobs[2]["236787"].logprob',
        "at most 0",
    ),
    (
        "vllm_native",
        "prompt_logprobs_top3_ids",
        _raise_vllm_outside,
        "prompt_logprobs[3]",
        "does not rank the sampled token 2900 among its top-3",
    ),
    (
        "vllm_native",
        "n2_token_ids",
        lambda r: r["choices"][1]["logprobs"]["token_logprobs"].__setitem__(0, 1e-3),
        "choices[1].logprobs.token_logprobs[0]",
        "is 0.001: a log-probability is at most 0",
    ),
    (
        "openai_chat",
        "logprobs_greedy",
        _flip_chat,
        "choices[0].logprobs.content[1].logprob",
        "at most 0",
    ),
    (
        "openai_chat",
        "logprobs_greedy",
        _flip_chat_top,
        "choices[0].logprobs.content[1].top_logprobs[2].logprob",
        "at most 0",
    ),
    (
        "openai_chat",
        "stream_logprobs",
        _replace(-1.3543455600738525, 0.5),
        "choices[0].logprobs.content[0].logprob",
        "at most 0",
    ),
    (
        "openai_chat",
        "logprobs_greedy",
        _contradict_chat,
        "choices[0].logprobs.content[0].top_logprobs",
        "lists the sampled token 'What' with the logprob -5.0 but its own logprob is -1.35",
    ),
    (
        "openai_chat",
        "stream_logprobs",
        _replace(-1.3543455600738525, -5.0, nth=1),
        "choices[0].logprobs.content[0].top_logprobs",
        "lists the sampled token 'What' with the logprob -5.0",
    ),
    (
        "openai_chat",
        "logprobs_greedy",
        _unlist_chat,
        "choices[0].logprobs.content[0].top_logprobs",
        "does not rank the sampled token 'What' among its top-3",
    ),
    ("openai_responses", "logprobs_top3", _flip_responses, ".logprobs[1].logprob", "at most 0"),
    (
        "openai_responses",
        "logprobs_top3",
        _flip_responses_top,
        ".logprobs[1].top_logprobs[2].logprob",
        "at most 0",
    ),
    (
        "openai_responses",
        "logprobs_top3",
        _contradict_responses,
        ".logprobs[1].top_logprobs",
        "lists the sampled token '\\n' with the logprob -9.0",
    ),
    (
        "openai_responses",
        "logprobs_top3",
        _unlist_responses,
        ".logprobs[1].top_logprobs",
        "does not rank the sampled token '\\n' among its top-4",
    ),
    (
        "sglang_native",
        "score_top3",
        _flip_sglang_input,
        "meta_info.input_token_logprobs[2][0]",
        "at most 0",
    ),
    (
        "sglang_native",
        "gen_top2",
        _flip_sglang_sampled,
        "[0].meta_info.output_token_logprobs[1][0]",
        "at most 0",
    ),
    (
        "sglang_native",
        "gen_top2",
        _flip_sglang_top,
        "[0].meta_info.output_token_logprobs[1] top-k[1][0]",
        "at most 0",
    ),
    (
        "sglang_native",
        "gen_top2",
        _contradict_sglang,
        "[0].meta_info.output_token_logprobs[1] top-k",
        "lists the sampled token 5279 with the logprob -2.6",
    ),
    (
        "sglang_native",
        "gen_top2",
        _unlist_sglang,
        "[0].meta_info.output_token_logprobs[1] top-k",
        "does not rank the sampled token 5279 among its top-2",
    ),
    (
        "sglang_native",
        "stream_logprobs",
        _replace(-1.6502114534378052, 0.5),
        "[0].meta_info.output_token_logprobs[0][0]",
        "at most 0",
    ),
]


@pytest.mark.parametrize(
    ("dialect", "name", "change", "path", "words"),
    CASES,
    ids=[f"{c[0]}-{c[1]}-{getattr(c[2], '__name__', 'edit')}" for c in CASES],
)
def test_a_proxys_edit_is_refused_naming_the_path(
    dialect: str, name: str, change: Change, path: str, words: str
) -> None:
    request = REQUESTS[dialect][name]
    body = _body(dialect, name, change)
    error = _refused_alike(lambda: _lift(dialect, request, body))
    assert error.dialect == dialect
    assert path in error.path, error.path
    assert words in str(error)


@pytest.mark.parametrize(
    ("dialect", "name"), sorted({(c[0], c[1]) for c in CASES}), ids=lambda v: str(v)
)
def test_the_unmutated_reply_still_lifts_to_the_wires_values(dialect: str, name: str) -> None:
    response = _lift(dialect, REQUESTS[dialect][name], _body(dialect, name, None))
    values = [t.logprob for t in response.input_tokens or ()]
    values += [t.logprob for c in response.choices for t in (c.tokens or ())]
    values += [e.logprob for c in response.choices for t in (c.tokens or ()) for e in t.top or ()]
    assert values and all(v is None or v <= 0 for v in values)
    wire = _body(dialect, name, None).decode()
    assert all(json.dumps(v) in wire for v in values if v is not None)


def test_a_rounding_above_zero_within_the_tolerance_is_believed() -> None:
    """A server rounding a certain token's logprob to +1e-7 is not refused; +2e-6 is."""

    def top_at(value: float) -> Change:
        def change(r: Any) -> None:
            entry = _chat_content(r)[1]
            entry["logprob"] = entry["top_logprobs"][0]["logprob"] = value

        return change

    request = chat_cases.CASES["logprobs_greedy"]
    ok = _lift("openai_chat", request, _body("openai_chat", "logprobs_greedy", top_at(1e-7)))
    assert ok.choices[0].tokens[1].logprob == 1e-7 < LOGPROB_TOLERANCE
    with pytest.raises(ContractViolation, match="is 2e-06: a log-probability is at most 0"):
        _lift("openai_chat", request, _body("openai_chat", "logprobs_greedy", top_at(2e-6)))


def test_a_k0_prompt_scored_whole_is_refused_like_a_walked_one() -> None:
    """vllm_native's k=0 prompt, read whole (``_scored_alone``): a positive value is refused."""
    fixture = copy.deepcopy(load_fixture("vllm_native", "prompt_logprobs_cjk"))
    reply = fixture["reply"]
    choice = reply["choices"][0]
    ids = choice["prompt_token_ids"]
    choice["prompt_logprobs"] = [None] + [
        {str(i): row[str(i)]} for i, row in zip(ids[1:], choice["prompt_logprobs"][1:], strict=True)
    ]
    base = vllm_cases.CASES["prompt_logprobs_cjk"]
    request = Request(
        input=base.input, sampling=base.sampling, scoring=Scoring(input_logprobs=True)
    )
    assert _lift("vllm_native", request, json.dumps(reply).encode()).input_tokens
    choice["prompt_logprobs"][2][str(ids[2])]["logprob"] = 0.5
    error = _refused_alike(lambda: _lift("vllm_native", request, json.dumps(reply).encode()))
    assert error.path == f'choices[0].prompt_logprobs[2]["{ids[2]}"].logprob'


# -- google_genai: the full wire from the reference server's Google route ------------------------


def _google_events(change: Change) -> bytes:
    streamed = lower(
        google_cases.D,
        Request(
            input=google_cases.user(google_cases.CAPITAL_ONE_WORD),
            sampling=google_cases.greedy(6),
            scoring=google_cases.TOP3,
            scheduling=google_cases.STREAM,
        ),
        MODEL,
    )
    events = google_cases.reference(streamed).events
    assert events is not None
    data = [copy.deepcopy(d) for _, d in events]
    change(data)
    return "".join(f"data: {json.dumps(d)}\n\n" for d in data).encode()


def _google_result(reply: Any) -> Any:
    return reply["candidates"][0]["logprobsResult"]


def _google_flip_chosen(reply: Any) -> None:
    result = _google_result(reply)
    result.pop("logProbabilitySum")
    result["chosenCandidates"][1]["logProbability"] = 0.5


def _google_flip_top(reply: Any) -> None:
    _google_result(reply)["topCandidates"][1]["candidates"][2]["logProbability"] = 0.5


def _google_contradict(reply: Any) -> None:
    chosen = _google_result(reply)["chosenCandidates"][1]
    for c in _google_result(reply)["topCandidates"][1]["candidates"]:
        if c["tokenId"] == chosen["tokenId"]:
            c["logProbability"] -= 3.0


def _google_unlist(reply: Any) -> None:
    chosen = _google_result(reply)["chosenCandidates"][1]
    for c in _google_result(reply)["topCandidates"][1]["candidates"]:
        if c["tokenId"] == chosen["tokenId"]:
            c["tokenId"], c["token"], c["logProbability"] = 9, "zzz", c["logProbability"] - 3.0


def _each_chunk(change: Change) -> Change:
    """The edit on the second chunk that carries logprobs (the first when there is one)."""

    def edit(chunks: Any) -> None:
        steps = [c for c in chunks if "logprobsResult" in (c.get("candidates") or [{}])[0]]
        change(steps[1] if len(steps) > 1 else steps[0])

    return edit


GOOGLE: list[tuple[Change, str, str]] = [
    (
        _google_flip_chosen,
        "candidates[0].logprobsResult.chosenCandidates[1].logProbability",
        "at most 0",
    ),
    (
        _google_flip_top,
        "candidates[0].logprobsResult.topCandidates[1].candidates[2].logProbability",
        "at most 0",
    ),
    (
        _google_contradict,
        "candidates[0].logprobsResult.topCandidates[1].candidates",
        "lists the sampled token",
    ),
    (
        _google_unlist,
        "candidates[0].logprobsResult.topCandidates[1].candidates",
        "does not rank the sampled token",
    ),
]


@pytest.mark.parametrize(("change", "path", "words"), GOOGLE, ids=lambda v: str(v)[:24])
def test_google_refuses_the_same_edits(change: Change, path: str, words: str) -> None:
    reply = copy.deepcopy(google_cases.LOGPROBS_REPLY)
    change(reply)
    body = json.dumps(reply).encode()
    error = _refused_alike(lambda: lift(google_cases.D, google_cases.LOGPROBS, 200, {}, body))
    assert error.path == path and words in str(error)


def test_google_streamed_refuses_a_positive_logprob() -> None:
    """The stream carries no logProbabilitySum to give a flipped value away: the check does."""

    def flip(chunk: Any) -> None:
        _google_result(chunk)["chosenCandidates"][0]["logProbability"] = 0.5

    streamed = lower(
        google_cases.D,
        Request(
            input=google_cases.user(google_cases.CAPITAL_ONE_WORD),
            sampling=google_cases.greedy(6),
            scoring=google_cases.TOP3,
            scheduling=google_cases.STREAM,
        ),
        MODEL,
    )
    assert lift(google_cases.D, streamed, 200, {}, _google_events(lambda c: None)).choices
    body = _google_events(_each_chunk(flip))
    error = _refused_alike(lambda: lift(google_cases.D, streamed, 200, {}, body))
    assert error.path.endswith(".logProbability") and "is 0.5: a log-probability" in str(error)
