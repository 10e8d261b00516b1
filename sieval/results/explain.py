"""One recorded sample in readable form: the choices with their scores and which was picked why,
the generation and the answer extracted from it, the prompt as sent.

It reads only the record (``Record.sample`` is the task's ``describe``, ``Record.channels`` the
scored channels), so it explains runs whose data files are gone. The choice scores follow the
scoring rules of ``scoring/choice.py``: ``acc`` the log-likelihood sum, ``acc_norm`` that sum per
character of the choice text, ``acc_uncond`` the sum minus the same continuation's sum after a
bare ``Answer:``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..store.records import Record, RequestRecord

__all__ = ["ChoiceView", "Explanation", "answer_label", "explain", "prompt_text", "written"]

_SCORES = {
    "acc": "the highest log-likelihood",
    "acc_norm": "the highest log-likelihood per character of the choice",
    "acc_uncond": "the highest log-likelihood gain over the bare 'Answer:' context",
}


class ChoiceView(msgspec.Struct, kw_only=True):
    label: str
    text: str | None
    logprob: float | None
    n_chars: int | None = None
    norm_chars: int | None = None
    n_tokens: int | None = None
    score: float | None
    """The choice's score under the headline metric (what the pick compares)."""
    picked: bool
    gold: bool


class Explanation(msgspec.Struct, kw_only=True):
    query: str | None
    choices: list[ChoiceView]
    why: str | None
    generation: str | None
    extracted: str | None


def explain(record: Record, headline: str) -> Explanation:
    sample = record.sample or {}
    channels = record.channels
    query = sample.get("query") if isinstance(sample.get("query"), str) else None
    if isinstance(channels.get("choices"), list):
        choices = _scored_choices(record, headline)
        return Explanation(
            query=query, choices=choices, why=_why(choices, headline), generation=None,
            extracted=None,
        )  # fmt: skip
    if isinstance(channels.get("letter_logprobs"), dict):
        choices = _letter_choices(record)
        why = _why(choices, "acc") if choices else None
        return Explanation(query=query, choices=choices, why=why, generation=None, extracted=None)
    text = channels.get("text")
    extracted = channels.get("flexible" if headline.startswith("flexible") else "strict")
    if extracted is None and "strict" not in channels:
        extracted = channels.get("flexible")
    if extracted is None and record.prediction is not None:
        extracted = record.prediction
    rule = channels.get("rule")
    if extracted is not None and isinstance(rule, str):  # a checked task names its rule
        extracted = f"{extracted}  (rule {rule})"
    return Explanation(
        query=query, choices=[], why=None,
        generation=text if isinstance(text, str) else None,
        extracted=None if extracted is None else str(extracted),
    )  # fmt: skip


def answer_label(sample: Mapping[str, Any] | None, value: Any) -> str | None:
    """A prediction or gold answer as a reader names it: a choice index as its label (``2`` ->
    ``C``, or the sample's own labels), anything else as text; None stays None."""
    if value is None:
        return None
    texts = (sample or {}).get("choices") or (sample or {}).get("endings")
    if isinstance(value, int) and not isinstance(value, bool) and isinstance(texts, list):
        labels = _labels(sample or {}, len(texts))
        if 0 <= value < len(labels):
            return labels[value]
    return written(value)


def written(value: Any) -> str:
    """An answer as a reader writes it: text as is, a list as its items, a mapping as JSON
    (never a Python repr: ``['a', 'b']``, ``{'test': ...}``)."""
    if isinstance(value, list | tuple):
        return " | ".join(written(v) for v in value) if value else "-"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "-" if value is None else str(value)


def _labels(sample: Mapping[str, Any], count: int) -> list[str]:
    labels = sample.get("labels")
    if isinstance(labels, list) and len(labels) == count:
        return [str(x) for x in labels]
    return [chr(ord("A") + i) for i in range(count)]


def _scored_choices(record: Record, headline: str) -> list[ChoiceView]:
    sample = record.sample or {}
    cond: Sequence[Mapping[str, Any]] = record.channels["choices"]
    uncond: Sequence[Mapping[str, Any]] = record.channels.get("unconditional") or []
    texts = sample.get("choices") or sample.get("endings") or []
    labels = _labels(sample, len(cond))
    views = []
    for i, channel in enumerate(cond):
        logprob = channel.get("logprob_sum")
        norm = channel.get("norm_chars")
        score: float | None = logprob
        if headline == "acc_norm" and logprob is not None and norm:
            score = logprob / norm
        elif headline == "acc_uncond" and logprob is not None and i < len(uncond):
            base = uncond[i].get("logprob_sum")
            score = None if base is None else logprob - base
        views.append(
            ChoiceView(
                label=labels[i],
                text=str(texts[i]) if i < len(texts) else None,
                logprob=logprob,
                n_chars=channel.get("n_chars"),
                norm_chars=norm,
                n_tokens=channel.get("n_tokens"),
                score=score,
                picked=record.prediction == i,
                gold=record.gold == i,
            )
        )
    return views


def _letter_choices(record: Record) -> list[ChoiceView]:
    logprobs: Mapping[str, float] = record.channels["letter_logprobs"]
    return [
        ChoiceView(
            label=letter,
            text=None,
            logprob=lp,
            score=lp,
            picked=record.prediction == letter,
            gold=record.gold == letter,
        )
        for letter, lp in logprobs.items()
    ]


def _why(choices: Sequence[ChoiceView], headline: str) -> str | None:
    picked = next((c for c in choices if c.picked), None)
    if picked is None:
        return None
    rule = _SCORES.get(headline, f"the highest {headline} score")
    score = "" if picked.score is None else f" ({picked.score:.4f})"
    return f"picked {picked.label}: {rule}{score}"


def prompt_text(request: RequestRecord) -> str | None:
    """The input a request sent, as text: a completion prompt as it is, a conversation as
    ``role: text`` lines (any wire: OpenAI, Anthropic, Gemini, Responses, SGLang)."""
    body = request.body
    if body is None:
        return _flatten(request.prompt) if request.prompt is not None else None
    for key in ("prompt", "text"):
        if isinstance(body.get(key), str):
            return str(body[key])
    lines = []
    if isinstance(body.get("system"), str | list):
        lines.append(f"system: {_flatten(body['system'])}")
    for key in ("messages", "contents", "input"):
        turns = body.get(key)
        if isinstance(turns, str):
            lines.append(f"user: {turns}")
        elif isinstance(turns, list):
            for turn in turns:
                if isinstance(turn, dict):
                    content = turn.get("content", turn.get("parts"))
                    lines.append(f"{turn.get('role', '?')}: {_flatten(content)}")
    return "\n".join(lines) if lines else None


def _flatten(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_flatten(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "content", "parts"):
            if key in content:
                return _flatten(content[key])
        return ""
    return "" if content is None else str(content)
