"""The serving fingerprint: which engine, model and numerics produced a run's scores.

Read before the run, from what the server says about itself and from one fixed probe:

* the engine and its version: vLLM's ``GET /version``, SGLang's ``GET /get_server_info``
  (``version``), sieval's reference server (its ``/version`` says so);
* the model as the server reports it: the listing's ``id``, ``root``, ``parent`` and
  ``max_model_len``; on SGLang also ``model_path``, ``revision``, ``dtype``, ``quantization``,
  ``kv_cache_dtype`` and the flags that change numbers (attention and sampling backends,
  deterministic inference, the radix cache, where sampling defaults come from);
* the numeric fingerprint: every log-probability of the ``SHORT`` probe (its prompt's, where the
  wire scores prompts, and each of its 8 greedy tokens' with their top-5), sent twice, alone:
  ``noise`` is how far the two sends differ (0 on a deterministic server).

Two fingerprints' numerics differ when the probe's values moved by more than either's own
noise, or the generated text changed (``compare``). Volatile facts (start times, the server's
random seed, memory figures) are never part of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import msgspec

from ..errors import SievalError
from ..model import Model
from ..store.identity import canonical_json
from .observation import Observation, differ

__all__ = [
    "Fingerprint",
    "compare",
    "facts_from",
    "numerics_differ",
    "plainly",
    "server_facts",
    "with_numerics",
]

SGLANG_KEYS = (
    "model_path",
    "revision",
    "dtype",
    "quantization",
    "kv_cache_dtype",
    "context_length",
    "device",
    "tp_size",
    "attention_backend",
    "sampling_backend",
    "enable_deterministic_inference",
    "disable_radix_cache",
    "sampling_defaults",
    "preferred_sampling_params",
)
"""The ``/get_server_info`` keys that say which model and numerics an SGLang server serves."""

LISTING_KEYS = ("id", "root", "parent", "max_model_len")


class Fingerprint(msgspec.Struct, kw_only=True):
    engine: str | None = None
    """``vllm``, ``sglang``, ``sieval-reference``; None when the server does not say."""
    version: str | None = None
    model: dict[str, Any] = msgspec.field(default_factory=dict)
    """The model as the server describes it (listing entry, SGLang's server facts)."""
    dtype: str | None = None
    """Where the server exposes it (SGLang); vLLM does not."""
    dialect: str = ""
    probe: str = ""
    """sha256 of the probe request's wire body: two fingerprints compare their numbers only when
    the probe was the same request."""
    values: dict[str, float] = msgspec.field(default_factory=dict)
    text: str = ""
    digest: str = ""
    """sha256 over ``values`` and ``text``: equal digests, equal numerics."""
    noise: float = 0.0
    """The largest difference between two sends of the probe, alone (the server's own repeat
    noise); ``-1.0`` when the second send's text differed."""

    def headline(self) -> str:
        engine = f"{self.engine or 'unknown engine'} {self.version or ''}".strip()
        name = self.model.get("root") or self.model.get("model_path") or self.model.get("id")
        dtype = f", {self.dtype}" if self.dtype else ""
        short = self.digest.removeprefix("sha256:")[:12]
        return f"{engine}, model {name or '?'}{dtype}, numerics {short or 'not measured'}"


def digest(values: Mapping[str, float], text: str) -> str:
    data = canonical_json({"values": dict(values), "text": text}).encode("ascii")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def probe_id(body: Any) -> str:
    """What identifies a probe request: its wire body without the model id."""
    if not isinstance(body, dict):
        return ""
    kept = {k: v for k, v in body.items() if k != "model"}
    return "sha256:" + hashlib.sha256(canonical_json(kept).encode("ascii")).hexdigest()


async def _get(model: Model, path: str | None) -> Any:
    if not path:
        return None
    try:
        status, data = await model.fetch(path)
    except SievalError:
        return None
    return data if status == 200 else None


async def server_facts(model: Model) -> Fingerprint:
    """The engine, version and model identity, from the routes the server has (no model
    request); every route that fails is simply absent."""
    routes = model.dialect.endpoint
    version = await _get(model, routes.version)
    listing = await _get(model, routes.models)
    info = None
    if _engine(version, _entry(listing, model.model_id), model.dialect.id) == "sglang":
        info = await _get(model, "/get_server_info")
    return facts_from(model.dialect.id, model.model_id, version, listing, info)


def _engine(version: Any, entry: Mapping[str, Any] | None, dialect: str) -> str | None:
    said = version.get("version") if isinstance(version, dict) else None
    owner = entry.get("owned_by") if entry else None
    if isinstance(said, str) and said.startswith("sieval-reference"):
        return "sieval-reference"
    if owner == "sglang" or dialect == "sglang_native":
        return "sglang"
    if owner == "vllm" or (isinstance(said, str) and said[:1].isdigit()):
        return "vllm"
    return None


def facts_from(
    dialect: str, model_id: str, version: Any, listing: Any, info: Any = None
) -> Fingerprint:
    """The fingerprint's facts from the replies of ``GET /version``, the models listing and
    SGLang's ``GET /get_server_info`` (each None when absent): pure, for recorded replies too."""
    entry = _entry(listing, model_id)
    engine = _engine(version, entry, dialect)
    said = version.get("version") if isinstance(version, dict) else None
    described: dict[str, Any] = {k: entry[k] for k in LISTING_KEYS if entry and k in entry}
    dtype = None
    if isinstance(info, dict):
        said = info.get("version", said)
        described.update({k: info[k] for k in SGLANG_KEYS if k in info})
        dtype = info.get("dtype") if isinstance(info.get("dtype"), str) else None
    return Fingerprint(
        engine=engine,
        version=said if isinstance(said, str) else None,
        model=described,
        dtype=dtype,
        dialect=dialect,
    )


def _entry(listing: Any, model_id: str) -> dict[str, Any] | None:
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    found = [m for m in data if isinstance(m, dict) and m.get("id") == model_id]
    return found[0] if found else None


def with_numerics(
    facts: Fingerprint, body: Any, first: Observation, second: Observation
) -> Fingerprint:
    """``facts`` with the probe's numbers: its first send, and the noise between two sends."""
    diff = differ(first, second)
    return msgspec.structs.replace(
        facts,
        probe=probe_id(body),
        values=dict(first.values),
        text=first.text,
        digest=digest(first.values, first.text),
        noise=diff.max_abs if diff.same_text else -1.0,
    )


def numerics_differ(old: Fingerprint, new: Fingerprint) -> str | None:
    """How the probe's numbers differ beyond both servers' own noise, or None."""
    if not old.digest or not new.digest or old.probe != new.probe or old.digest == new.digest:
        return None
    diff = differ(Observation(old.values, old.text), Observation(new.values, new.text))
    noise = max(old.noise, new.noise)
    if noise < 0:  # a server whose greedy text does not repeat: its numbers say nothing
        return None
    if diff.same_text and diff.max_abs <= noise:
        return None
    said = []
    if diff.moved:
        said.append(
            f"{diff.moved} of {diff.compared} of the probe's log-probabilities moved, up to "
            f"{diff.max_abs:.3g} nats"
            + (f" (more than the servers' own repeat noise, {noise:.3g})" if noise else "")
        )
    if not diff.same_text:
        said.append(f"its greedy text changed ({old.text!r} -> {new.text!r})")
    return "; ".join(said)


def compare(old: Fingerprint, new: Fingerprint) -> list[str]:
    """What differs between two fingerprints, one line each (empty: the same serving)."""
    lines = []
    if (old.engine, old.version) != (new.engine, new.version):
        lines.append(
            f"engine: {old.engine or '?'} {old.version or '?'} -> "
            f"{new.engine or '?'} {new.version or '?'}"
        )
    if old.dtype != new.dtype:
        lines.append(f"dtype: {old.dtype or '?'} -> {new.dtype or '?'}")
    for key in sorted(set(old.model) | set(new.model)):
        if key == "dtype":
            continue
        a, b = old.model.get(key), new.model.get(key)
        if canonical_json(a) != canonical_json(b):
            lines.append(f"model.{key}: {canonical_json(a)} -> {canonical_json(b)}")
    if old.digest and new.digest and old.probe != new.probe:
        lines.append(
            f"numerics: not comparable (another probe request: dialect {old.dialect} -> "
            f"{new.dialect})"
        )
    moved = numerics_differ(old, new)
    if moved is not None:
        lines.append(f"numerics: {moved}")
    return lines


def plainly(changes: list[str]) -> str:
    """Why two runs' numerics differ, in a user's words."""
    if any(line.startswith("engine:") for line in changes):
        return "a different engine or engine version"
    if any(line.startswith("dtype:") for line in changes):
        return "a different dtype"
    if any(line.startswith("model.") for line in changes):
        return "a different model or server setting"
    return (
        "the same engine, model and settings as reported, so another machine, build or "
        "unreported server flag"
    )
