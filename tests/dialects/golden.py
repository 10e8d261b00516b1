"""What every recorded reply lifts to, kept in a golden file so a change to the readers cannot
change a Response or an error without the file saying so.

Each dialect test module names the IR request behind each recorded fixture (its ``CASES``). For
every such pair the golden file holds the outcome of ``lift`` on the recorded reply: the
``Response`` (msgspec-encoded), or the error's type and message. It also holds the outcome of
mutated replies, so the reply checks' refusals are pinned word for word:

* the mutations the dialect tests make by hand (``test_reply_logprobs``, Anthropic's and SGLang's
  lists), by their position in those lists;
* deterministic mutations of every recorded reply: a seeded choice of paths into the reply (or
  into the JSON of a stream's events), each set to a few bad values, cut, or reordered. A
  believed mutation is kept as a digest of its Response, a refused one as its message.

``python tests/dialects/golden.py`` rewrites the file (do that only for a change meant to alter
what a reply lifts to, and say why in the commit); ``test_golden.py`` compares.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:  # run as a script: the test helpers are imported as in pytest
    sys.path.insert(0, str(TESTS))

from conftest import FIXTURES, load_fixture, reply_bytes  # noqa: E402
from mutation import paths  # noqa: E402

from sieval.dialects.registry import get_dialect  # noqa: E402
from sieval.dialects.table import lift, lower  # noqa: E402
from sieval.errors import SievalError  # noqa: E402
from sieval.ir.request import Request  # noqa: E402

GOLDEN = FIXTURES / "golden" / "lifts.json"
REFERENCE_GOOGLE = FIXTURES / "golden" / "google_genai_reference_logprobs.json"
MODEL = "gemma-3-270m"
VERSIONS = {
    "anthropic_messages": "0.32.0",
    "google_genai": "litellm-1.108.7",
    "openai_chat": "0.32.0",
    "openai_completions": "0.32.0",
    "openai_responses": "0.32.0",
    "sglang_native": "0.5.23",
    "vllm_native": "0.32.0",
}
BAD_VALUES: tuple[Any, ...] = (None, 0.5, -1e9, 7, "x", "", [], {"a": 1}, True)
PATHS_PER_REPLY = 14
VALUES_PER_PATH = 2


def _cases() -> dict[str, tuple[dict[str, Request], dict[str, str]]]:
    """dialect -> (fixture name -> request, fixture name -> the model id it was lowered for)."""
    from dialects import recorded_cases
    from dialects import test_anthropic_messages as anthropic
    from dialects import test_google_genai as google
    from dialects import test_openai_chat as chat
    from dialects import test_openai_responses as responses
    from dialects import test_sglang_native as sglang
    from dialects import test_vllm_native as vllm

    return {
        "openai_completions": (recorded_cases.CASES, {}),
        "vllm_native": (vllm.CASES, {}),
        "openai_chat": (chat.CASES, chat.MODEL_OF),
        "openai_responses": (responses.CASES, responses.MODEL_OF),
        "anthropic_messages": (anthropic.CASES, {}),
        "google_genai": (google.CASES, google.OTHER_MODEL),
        "sglang_native": (sglang.CASES, {}),
    }


def outcome(dialect: str, request: Request, model: str, status: int, body: bytes) -> Any:
    """The Response as JSON data, or ``[error type, message]`` (lowering's refusal included)."""
    d = get_dialect(dialect)
    try:
        lowered = lower(d, request, model)
    except SievalError as exc:
        return ["lower", type(exc).__name__, str(exc)]
    try:
        response = lift(d, lowered, status, {}, body)
    except SievalError as exc:
        return [type(exc).__name__, str(exc)]
    return msgspec.to_builtins(response)


def digest(value: Any) -> Any:
    """A believed mutation's Response as a digest (errors stay readable)."""
    if isinstance(value, dict):
        encoded = json.dumps(value, sort_keys=True).encode()
        return "response sha256:" + hashlib.sha256(encoded).hexdigest()[:24]
    return value


# -- mutations ----------------------------------------------------------------------------------


def _apply(node: Any, path: tuple[Any, ...], op: str) -> None:
    for key in path[:-1]:
        node = node[key]
    last = path[-1]
    if op == "pop":
        target = node[last]
        if isinstance(target, list) and target:
            target.pop()
        elif isinstance(target, dict) and target:
            target.pop(next(reversed(target)))
        else:
            del node[last]
    elif op == "reverse":
        target = node[last]
        if isinstance(target, list):
            target.reverse()
    elif op == "drop":
        del node[last]
    else:
        node[last] = json.loads(op)


def _ops(rng: random.Random, value: Any) -> list[str]:
    ops = [json.dumps(v) for v in rng.sample(BAD_VALUES, VALUES_PER_PATH)]
    if isinstance(value, list) and len(value) > 1:
        ops += ["pop", "reverse"]
    elif isinstance(value, dict) and value:
        ops.append("pop")
    ops.append("drop")
    return ops


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        node = node[key]
    return node


def _sse_blocks(text: str) -> list[str]:
    return text.split("\n\n")


def _data_of(block: str) -> tuple[int, Any] | None:
    lines = block.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("data: "):
            try:
                return i, json.loads(line[len("data: ") :])
            except json.JSONDecodeError:
                return None
    return None


def mutations(key: str, fixture: dict[str, Any]) -> Iterator[tuple[str, bytes]]:
    """Deterministic mutations of one recorded reply: ``(label, body)``."""
    rng = random.Random(key)
    if "reply_sse" in fixture:
        text = str(fixture["reply_sse"])
        blocks = _sse_blocks(text)
        with_data = [i for i, b in enumerate(blocks) if _data_of(b) is not None]
        for cut in sorted(rng.sample(range(len(text)), min(6, len(text)))):
            yield f"cut@{cut}", text[:cut].encode()
        for i in rng.sample(with_data, min(4, len(with_data))):
            found = _data_of(blocks[i])
            assert found is not None
            line, data = found
            inner = paths(data)[1:]
            for path in rng.sample(inner, min(4, len(inner))):
                for op in _ops(rng, _at(data, path)):
                    changed = copy.deepcopy(data)
                    _apply(changed, path, op)
                    lines = blocks[i].split("\n")
                    lines[line] = "data: " + json.dumps(changed)
                    edited = [*blocks[:i], "\n".join(lines), *blocks[i + 1 :]]
                    yield f"event{i}{list(path)}={op}", "\n\n".join(edited).encode()
        return
    reply = fixture["reply"]
    inner = paths(reply)[1:]
    for path in rng.sample(inner, min(PATHS_PER_REPLY, len(inner))):
        for op in _ops(rng, _at(reply, path)):
            changed = copy.deepcopy(reply)
            _apply(changed, path, op)
            yield f"{list(path)}={op}", json.dumps(changed).encode()


# -- the hand-made mutations of the dialect tests -----------------------------------------------


def _by_hand() -> Iterator[tuple[str, str, Request, str, bytes]]:
    """``(label, dialect, request, model, body)`` for each mutation a dialect test makes."""
    from dialects import test_anthropic_messages as anthropic
    from dialects import test_google_genai as google
    from dialects import test_reply_logprobs as logprobs
    from dialects import test_sglang_native as sglang

    for i, (dialect, name, change, _, _) in enumerate(logprobs.CASES):
        request = logprobs.REQUESTS[dialect][name]
        body = logprobs._body(dialect, name, change)
        yield f"reply_logprobs[{i}]", dialect, request, MODEL, body
    reference = json.loads(REFERENCE_GOOGLE.read_text())
    for i, (change, _, _) in enumerate(logprobs.GOOGLE):
        reply = copy.deepcopy(reference["reply"])
        change(reply)
        yield f"google[{i}]", "google_genai", google.LOGPROBS.request, MODEL, _json(reply)
    for i, (name, change, _) in enumerate(anthropic.MUTATIONS):
        reply = copy.deepcopy(load_fixture("anthropic_messages", name)["reply"])
        change(reply)
        yield f"anthropic[{i}]", "anthropic_messages", anthropic.CASES[name], MODEL, _json(reply)
    for i, (name, change, _) in enumerate(anthropic.STREAM_BREAKS):
        text = anthropic.SSE if name == "stream" else anthropic.TOOL_SSE
        body = anthropic.sse_of(change(anthropic.events_of(text)))
        yield f"anthropic_stream[{i}]", "anthropic_messages", anthropic.CASES[name], MODEL, body
    lists = {
        "score_top3": sglang.INPUT_MUTATIONS,
        "gen_top2": sglang.SAMPLED_MUTATIONS,
        "candidates_letters": sglang.CANDIDATE_MUTATIONS,
    }
    for name, changes in lists.items():
        for i, (change, _) in enumerate(changes):
            reply = sglang._mutated(name, change)
            yield f"sglang_{name}[{i}]", "sglang_native", sglang.CASES[name], MODEL, _json(reply)


def _json(reply: Any) -> bytes:
    return json.dumps(reply).encode()


# -- the whole file -----------------------------------------------------------------------------


def compute(only: str | None = None) -> dict[str, Any]:
    """Every outcome, keyed ``dialect/fixture`` (``…@mutation`` for a mutated reply); ``only``
    one dialect's (the by-hand mutations of it included), to check one reader quickly."""
    out: dict[str, Any] = {}
    for dialect, (cases, models) in _cases().items():
        if only not in (None, dialect):
            continue
        for name, request in sorted(cases.items()):
            path = FIXTURES / dialect / VERSIONS[dialect] / f"{name}.json"
            if not path.exists():
                continue
            fixture = load_fixture(dialect, name, VERSIONS[dialect])
            model = models.get(name, MODEL)
            key = f"{dialect}/{name}"
            status = int(fixture["status"])
            out[key] = outcome(dialect, request, model, status, reply_bytes(fixture))
            if not 200 <= status < 300:
                continue
            for label, body in mutations(key, fixture):
                out[f"{key}@{label}"] = digest(outcome(dialect, request, model, 200, body))
    if only in (None, "google_genai"):
        reference = json.loads(REFERENCE_GOOGLE.read_text())
        from dialects import test_google_genai as google

        request = google.LOGPROBS.request
        key = "google_genai/reference_logprobs"
        out[key] = outcome("google_genai", request, MODEL, 200, _json(reference["reply"]))
        for label, body in mutations(key, reference):
            out[f"{key}@{label}"] = digest(outcome("google_genai", request, MODEL, 200, body))
    for label, dialect, request, model, body in _by_hand():
        if only in (None, dialect):
            out[f"by_hand/{label}"] = outcome(dialect, request, model, 200, body)
    return out


def check(only: str | None = None) -> list[str]:
    """The changed outcomes (of one dialect with ``only``), as ``differences`` lines."""
    expected = json.loads(GOLDEN.read_text())
    actual = json.loads(json.dumps(compute(only)))
    if only is not None:
        mine = set(actual)
        expected = {k: v for k, v in expected.items() if k in mine or k.startswith(only)}
    return differences(expected, actual)


def write() -> None:
    """Freeze the reference server's Google logprobs reply, then write every outcome."""
    REFERENCE_GOOGLE.parent.mkdir(parents=True, exist_ok=True)
    if not REFERENCE_GOOGLE.exists():
        from dialects import test_google_genai as google

        frozen = {"source": "sieval's reference server, Google route", "reply": None}
        frozen["reply"] = google.LOGPROBS_REPLY
        REFERENCE_GOOGLE.write_text(json.dumps(frozen, indent=1) + "\n")
    data = compute()
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"{len(data)} outcomes written to {GOLDEN}")


def differences(
    expected: dict[str, Any], actual: dict[str, Any], show: Callable[[Any], str] = str
) -> list[str]:
    """One line per key whose outcome changed, appeared or went missing."""
    lines = []
    for key in sorted(set(expected) | set(actual)):
        if expected.get(key) != actual.get(key):
            lines.append(f"{key}: {show(expected.get(key))[:300]} -> {show(actual.get(key))[:300]}")
    return lines


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        changed = check(sys.argv[2] if len(sys.argv) > 2 else None)
        print("\n".join(changed[:40]) or "no outcome changed")
        print(f"{len(changed)} changed")
    else:
        write()
