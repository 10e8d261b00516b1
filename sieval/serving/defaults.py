"""Server defaults: what the server puts in the sampling fields a run's requests leave out.

vLLM fills temperature, top_p, top_k, min_p, repetition_penalty and max_tokens from the
model's ``generation_config.json`` (``--generation-config auto``, its default), SGLang likewise
(``--sampling-defaults model``): a request that leaves one out is not sampled the way the
harness assumes. For each such field and each request of the run that leaves it out, one of:

* ``cannot change``: proven from the request alone: a scoring request reads log-probabilities,
  which no sampling field filters; a greedy request keeps the most likely token, which every
  top-p, top-k and min-p filter keeps;
* ``same``: the probe left it out and set it to the neutral value, and the answers were equal;
  where the wire cannot send the field, a greedy probe whose every token was the most likely
  one shows that no penalty changed it;
* ``differs``: the server applies a default that changes answers (a failure, with the fix);
* ``unverified``: the wire can neither send the field nor repeat a sampled probe (no seed);
* ``length``: a generating request leaves ``max_tokens`` out, so the server decides how long
  answers are (vLLM: 16 tokens, or the generation config's ``max_new_tokens``);
* ``declared``: unverified, and taken as neutral because the model's config says the server
  applies no defaults of its own (``server_defaults: neutral``, which no wire can show), or
  sieval started the server itself (``endpoint: embedded``).

A field that ``differs`` or is ``unverified`` leaves the results of its tasks exposed to a
server default: the finding matters (a warning when the run starts), and the report marks those
tasks' headlines ``exposed`` (``results/marks.py``), however the run was started. Its fix names
every way out: the neutral value, where the run's requests can carry it; else the dialects that
can carry it for those requests (each request lowered with it, no I/O); and the server's own
flag, which covers every field at once (``advice.defaults_fix``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET

from ..dialects.registry import registry
from ..dialects.table import lower
from ..errors import Refused
from ..ir.request import ChatInput, CompletionInput, Request, Sampling
from .determinism import SAMPLED_TOKENS, SEED
from .finding import Finding
from .fixes import Exposure, defaults_fix
from .observation import Observation, Sender, Step
from .probes import SHORT, Probe, lowered, shape

__all__ = ["FIELDS", "check_defaults", "kind_of"]


@dataclass(frozen=True)
class Field:
    leaf: str
    """``sampling.top_p`` or ``options.min_p``."""
    neutral: tuple[Any, ...]
    """The value that means "no filter, no penalty" (candidates, the first the wire takes)."""
    greedy_safe: bool
    """Whether a greedy answer cannot depend on it (a filter always keeps the argmax)."""
    penalty: bool = False


FIELDS = (
    Field("sampling.temperature", (1.0,), greedy_safe=False),
    Field("sampling.top_p", (1.0,), greedy_safe=True),
    Field("sampling.top_k", (-1, 0), greedy_safe=True),
    Field("options.min_p", (0.0,), greedy_safe=True),
    Field("options.repetition_penalty", (1.0,), greedy_safe=False, penalty=True),
    Field("sampling.frequency_penalty", (0.0,), greedy_safe=False, penalty=True),
    Field("sampling.presence_penalty", (0.0,), greedy_safe=False, penalty=True),
)


def kind_of(request: Request) -> str:
    """``scores`` (reads log-probabilities of one position or the prompt), ``greedy``,
    ``sampled``, or ``server`` (a generation that leaves the temperature to the server)."""
    s, scoring = request.sampling, request.scoring
    reads = scoring.sampled_logprobs or bool(scoring.candidate_token_ids)
    if scoring.input_logprobs or (s.max_tokens == 1 and reads):
        return "scores"
    if s.temperature is UNSET:
        return "server"
    return "greedy" if s.temperature == 0 else "sampled"


def _omits(request: Request, leaf: str) -> bool:
    head, _, name = leaf.partition(".")
    if head == "options":
        return name not in request.options
    return getattr(request.sampling, name) is UNSET


def _set(request: Request, leaf: str, value: Any) -> Request:
    head, _, name = leaf.partition(".")
    if head == "options":
        return msgspec.structs.replace(request, options={**request.options, name: value})
    sampling = msgspec.structs.replace(request.sampling, **{name: value})
    return msgspec.structs.replace(request, sampling=sampling)


def _explicit(sender: Sender, request: Request, field: Field) -> Request | None:
    """``request`` with ``field`` at its neutral value, if the wire can send it."""
    for value in field.neutral:
        candidate = _set(request, field.leaf, value)
        try:
            lowered(sender.model, candidate)
        except Refused:
            continue
        return candidate
    return None


def _wires(request: Request, field: Field, model_id: str) -> tuple[tuple[str, Any], ...]:
    """The dialects that can carry ``field`` at a neutral value with ``request``'s input (a
    request of that input, its temperature and max_tokens, and the field, lowered: no I/O):
    where a run whose wire cannot send the field could send it."""
    found = []
    kept = Sampling(
        temperature=request.sampling.temperature, max_tokens=request.sampling.max_tokens
    )
    bare = Request(input=request.input, sampling=kept)
    for dialect_id, row in registry().items():
        if row.dialect is None:
            continue
        for value in field.neutral:
            try:
                lower(row.dialect, _set(bare, field.leaf, value), model_id)
            except Refused:
                continue
            found.append((dialect_id, value))
            break
    return tuple(found)


def _exposure(sender: Sender, request: Request, field: Field) -> Exposure:
    """How ``field`` could be settled for requests like ``request``: its neutral value, if the
    run's wire can carry it, else the dialects that can."""
    explicit = _explicit(sender, request, field)
    if explicit is not None:
        return Exposure(field.leaf, value=_neutral(explicit, field))
    model_id = sender.model.model_id
    wires = _wires(request, field, model_id)
    if wires or not isinstance(request.input, ChatInput):
        return Exposure(field.leaf, wires=wires)
    # no wire sends it with a chat prompt: say which would with a raw-text one
    raw = msgspec.structs.replace(request, input=CompletionInput(text=SHORT))
    return Exposure(field.leaf, raw_wires=_wires(raw, field, model_id))


@dataclass
class _Verdict:
    status: str
    why: str
    tasks: list[str]
    exposure: Exposure | None = None


def penalised(steps: Sequence[Step]) -> tuple[bool | None, str]:
    """Whether a greedy answer shows a penalty: a generated token that was not the most likely
    one by the log-probabilities the server returned (which come before penalties). True with
    the token; False when every token was the most likely (no sign of one, which a longer
    answer may still meet); None when the reply has no top-k to tell."""
    checked = 0
    for j, step in enumerate(steps):
        if step.logprob is None or not step.top:
            continue
        checked += 1
        best_token, best = max(step.top, key=lambda e: e[1])
        if step.logprob < best - 1e-6:
            return True, (
                f"greedy token {j} was {step.token!r} ({step.logprob:.3g}), not the most likely "
                f"{best_token!r} ({best:.3g}): something other than the log-probabilities chose it"
            )
    if not checked:
        return None, ""
    return False, f"each of the greedy probe's {checked} tokens was the most likely one"


def _from_greedy(seen: Observation | None, name: str, tasks: list[str]) -> _Verdict | None:
    """What a greedy answer says of a penalty the wire cannot send (None: nothing)."""
    if seen is None or not seen.ok:
        return None
    shown, why = penalised(seen.steps)
    if shown is None:
        return None
    if shown:
        return _Verdict("differs", why, tasks)
    return _Verdict("unverified", f"the wire cannot send {name}; {why}, so no sign of one", tasks)


async def check_defaults(
    sender: Sender,
    requests: Sequence[tuple[str, Request]],
    greedy: Probe | None,
    greedy_seen: Observation | None,
    engine: str | None = None,
    *,
    declared_neutral: str | None = None,
) -> Finding:
    """The fields ``requests`` (task name, request as sent) leave out, each proven harmless,
    probed, or reported (``declared_neutral``: why an unverified one is taken as neutral,
    ``declared``); ``greedy``/``greedy_seen``: the fingerprint's greedy probe and its first
    answer (every field left out), reused rather than sent again."""
    mark = sender.mark()
    verdicts: dict[str, _Verdict] = {}
    sampled: Observation | None = None
    seeded = Sampling(temperature=1.0, max_tokens=SAMPLED_TOKENS, seed=SEED)
    seeded_probe = shape(sender.model, SHORT, seeded, prompt=False)

    async def seeded_base() -> Observation | None:
        nonlocal sampled
        if sampled is None and seeded_probe is not None:
            first = await sender.one(seeded_probe.request)
            again = await sender.one(seeded_probe.request)
            sampled = first if first.ok and again.ok and first.text == again.text else None
        return sampled

    for field in FIELDS:
        kinds: dict[str, list[str]] = {}
        for task, request in requests:
            if _omits(request, field.leaf):
                kinds.setdefault(kind_of(request), []).append(task)
        if not kinds:
            continue
        tasks = sorted({t for ts in kinds.values() for t in ts})
        risky = {k for k in kinds if k != "scores" and not (k == "greedy" and field.greedy_safe)}
        if field.leaf == "sampling.temperature":
            risky &= {"server"}
        if not risky:
            why = (
                "the requests that leave it out read log-probabilities, which no sampling field "
                "filters" if set(kinds) == {"scores"}
                else "greedy keeps the most likely token, which this filter always keeps"
            )  # fmt: skip
            verdicts[field.leaf] = _Verdict("cannot change", why, tasks)
            continue
        exposed = sorted({t for kind in risky for t in kinds[kind]})  # where it can matter
        verdict = await _probe(
            sender, field, risky, greedy, greedy_seen, seeded_probe, seeded_base, exposed
        )
        if verdict.status == "unverified" and declared_neutral:
            verdict.status = "declared"
            verdict.why += f"; taken as neutral: {declared_neutral}"
        elif verdict.status in ("differs", "unverified"):
            first = next(r for t, r in requests if t in exposed and _omits(r, field.leaf))
            verdict.exposure = _exposure(sender, first, field)
        verdicts[field.leaf] = verdict
    length = sorted(
        {t for t, r in requests if kind_of(r) != "scores" and r.sampling.max_tokens is UNSET}
    )
    if length:
        verdicts["sampling.max_tokens"] = _Verdict(
            "length", "the server decides how long answers are (vLLM: 16 tokens, or the "
            "model's max_new_tokens)", length,
        )  # fmt: skip
    return _finding(verdicts, sender.since(mark), engine)


async def _probe(
    sender: Sender,
    field: Field,
    risky: set[str],
    greedy: Probe | None,
    greedy_seen: Observation | None,
    seeded_probe: Probe | None,
    seeded_base: Any,
    tasks: list[str],
) -> _Verdict:
    by_greedy = None
    if field.penalty or risky <= {"greedy"}:
        by_greedy = await _by_greedy(sender, field, greedy, greedy_seen, tasks)
        # a penalty applies whatever the temperature: a greedy answer it changed settles it for
        # every kind; one it did not change is weaker evidence than a sampled answer's
        if by_greedy is not None and (by_greedy.status == "differs" or risky <= {"greedy"}):
            return by_greedy
    by_seed = await _by_seed(sender, field, greedy_seen, seeded_probe, seeded_base, tasks)
    if by_seed.status == "unverified" and by_greedy is not None:
        return by_greedy
    return by_seed


async def _by_greedy(
    sender: Sender,
    field: Field,
    greedy: Probe | None,
    greedy_seen: Observation | None,
    tasks: list[str],
) -> _Verdict | None:
    """The greedy probe with ``field`` left out (its first answer) and set neutral."""
    name = field.leaf.rpartition(".")[2]
    if greedy is None or greedy_seen is None or not greedy_seen.ok:
        return None
    explicit = _explicit(sender, greedy.request, field)
    if explicit is None:
        verdict = _from_greedy(greedy_seen, name, tasks)
        return verdict or _Verdict("unverified", f"the wire cannot send {name}", tasks)
    seen = await sender.one(explicit)
    if not seen.ok:
        return _Verdict("unverified", f"the probe failed: {seen.error}", tasks)
    if seen.text == greedy_seen.text:
        return _Verdict("same", f"a greedy probe with and without {name}: same text", tasks)
    return _Verdict(
        "differs",
        f"a greedy probe without {name} answered {greedy_seen.text!r}, with {name} "
        f"{_neutral(explicit, field)} {seen.text!r}",
        tasks,
    )


async def _by_seed(
    sender: Sender,
    field: Field,
    greedy_seen: Observation | None,
    seeded_probe: Probe | None,
    seeded_base: Any,
    tasks: list[str],
) -> _Verdict:
    """A seeded sampled probe with ``field`` left out and set neutral (or, for temperature,
    left out and set to 1.0)."""
    name = field.leaf.rpartition(".")[2]
    base = await seeded_base()
    if seeded_probe is None or base is None:
        verdict = _from_greedy(greedy_seen, name, tasks) if field.penalty else None
        why = (
            "the wire carries no seed, so sampled answers cannot be compared"
            if seeded_probe is None
            else "the seeded sampled probe failed or did not repeat"
        )
        return verdict or _Verdict("unverified", why, tasks)
    if field.leaf == "sampling.temperature":
        left_out = msgspec.structs.replace(seeded_probe.request.sampling, temperature=UNSET)
        request = msgspec.structs.replace(seeded_probe.request, sampling=left_out)
        seen_without = await sender.one(request)
        if not seen_without.ok:
            return _Verdict("unverified", f"the probe failed: {seen_without.error}", tasks)
        if seen_without.text == base.text:
            return _Verdict(
                "same", "a seeded probe without temperature answered as with 1.0", tasks
            )
        return _Verdict(
            "differs",
            f"a seeded probe without temperature answered {seen_without.text!r}, with 1.0 "
            f"{base.text!r}",
            tasks,
        )
    explicit = _explicit(sender, seeded_probe.request, field)
    if explicit is None:
        verdict = _from_greedy(greedy_seen, name, tasks) if field.penalty else None
        return verdict or _Verdict("unverified", f"the wire cannot send {name}", tasks)
    seen = await sender.one(explicit)
    if not seen.ok:
        return _Verdict("unverified", f"the probe failed: {seen.error}", tasks)
    if seen.text == base.text:
        return _Verdict("same", f"a seeded sampled probe with and without {name}: same text", tasks)
    return _Verdict(
        "differs",
        f"a seeded sampled probe without {name} answered {base.text!r}, with {name} "
        f"{_neutral(explicit, field)} {seen.text!r}",
        tasks,
    )


def _neutral(request: Request, field: Field) -> Any:
    head, _, name = field.leaf.partition(".")
    return request.options.get(name) if head == "options" else getattr(request.sampling, name)


def _evidence(verdict: _Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {"status": verdict.status, "why": verdict.why, "tasks": verdict.tasks}
    if verdict.exposure is not None and verdict.exposure.value is not None:
        out["send"] = verdict.exposure.value
    elif verdict.exposure is not None:
        out["wires"] = {wire: value for wire, value in verdict.exposure.wires}
    return out


def _finding(verdicts: dict[str, _Verdict], cost: Any, engine: str | None) -> Finding:
    evidence = {leaf: _evidence(v) for leaf, v in verdicts.items()}
    bad = [leaf for leaf, v in verdicts.items() if v.status in ("differs", "length")]
    unverified = [leaf for leaf, v in verdicts.items() if v.status == "unverified"]
    exposures = {leaf: v.exposure for leaf, v in verdicts.items() if v.exposure is not None}
    if not verdicts:
        detail = "every sampling field is sent explicitly"
    else:  # the reason where it is a finding; evidence holds every one
        detail = "; ".join(
            f"{leaf.rpartition('.')[2]}: {v.status}"
            + (f" ({v.why})" if v.status in ("differs", "length", "unverified", "declared") else "")
            for leaf, v in verdicts.items()
        )
    tasks = sorted({t for leaf in bad + unverified for t in verdicts[leaf].tasks})
    if bad:
        differs = [exposures[leaf] for leaf in bad if leaf in exposures]
        unsure = [exposures[leaf] for leaf in unverified]
        return Finding(
            check="server_defaults", outcome="failed", detail=detail,
            meaning=defaults_fix(engine, differs, unsure, length="sampling.max_tokens" in bad),
            matters=True, tasks=tasks, evidence=evidence, cost=cost,
        )  # fmt: skip
    if unverified:
        # not proven either way: the results that meet these fields are exposed to them
        unsure = [exposures[leaf] for leaf in unverified]
        return Finding(
            check="server_defaults", outcome="skipped", detail=detail,
            meaning=defaults_fix(engine, [], unsure), matters=True, tasks=tasks,
            evidence=evidence, cost=cost,
        )  # fmt: skip
    declared = [leaf for leaf, v in verdicts.items() if v.status == "declared"]
    if declared:
        return Finding(
            check="server_defaults", outcome="skipped", detail=detail,
            meaning=f"{', '.join(leaf.rpartition('.')[2] for leaf in declared)}: taken as neutral, "
            f"not verified ({verdicts[declared[0]].why.rpartition('taken as neutral: ')[2]})",
            evidence=evidence, cost=cost,
        )  # fmt: skip
    return Finding(
        check="server_defaults", outcome="passed", detail=detail, evidence=evidence, cost=cost
    )
