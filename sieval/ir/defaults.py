"""Request defaults from a model's config, applied to leaves the caller left at their default."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

import msgspec

from ..errors import ConfigError
from ..setting_names import named, setting
from .leaves import schema_match
from .ranges import out_of_range
from .request import ChatInput, Message, Request, TextPart

__all__ = [
    "check_default_leaf",
    "check_default_value",
    "overridden",
    "with_defaults",
    "with_overrides",
    "with_system",
]

SYSTEM = "input.system"
"""The override leaf of a system instruction (``--system-instruction``): a system message put
first in a chat request."""


def check_default_leaf(path: str, where: str = "", key: str = "request_defaults") -> None:
    """Raise ``ConfigError`` unless ``path`` is a leaf a model's request defaults may set."""
    head, _, name = path.partition(".")
    if schema_match(path) is None or not name or head == "input":
        raise ConfigError(
            f"{where}{named(key + '.' + path)} is not a request leaf such as "
            "sampling.temperature or options.min_p",
            path=path,
        )


def check_default_value(
    path: str, value: Any, where: str = "", key: str = "request_defaults"
) -> None:
    """Raise ``ConfigError`` unless ``value`` has the type of the leaf ``path`` and lies in its
    range (``ranges.py``), checked before a run, so neither ``sampling.top_p: "high"`` nor
    ``sampling.temperature: .nan`` reaches a request. ``options.*`` take any value: each dialect
    decides its own options."""
    head, _, name = path.partition(".")
    if head == "options" or value is None:
        return
    group = next(f for f in msgspec.structs.fields(Request) if f.name == head)
    hints = typing.get_type_hints(group.default_factory().__class__)
    expected = hints[name]
    try:
        msgspec.convert(value, type=expected, strict=True)
    except msgspec.ValidationError as exc:
        kinds = typing.get_args(expected) or (expected,)
        shown = " or ".join(
            getattr(t, "__name__", str(t)) for t in kinds if t is not msgspec.UnsetType
        )
        raise ConfigError(
            f"{where}{named(key + '.' + path)}={value!r} is not a valid value ({exc}); "
            f"it takes {shown}",
            path=path,
            received=value,
        ) from exc
    why = out_of_range(path, value)
    if why is not None:
        raise ConfigError(
            f"{where}{named(key + '.' + path)}={value!r} is out of range: it {why}",
            path=path,
            received=value,
        )


def with_defaults(request: Request, defaults: Mapping[str, Any]) -> Request:
    """Fill ``group.field`` and ``options.key`` leaves that ``request`` leaves unset.

    A default never overrides a value the request set itself (a task that asks for greedy
    decoding stays greedy whatever the model config says).
    """
    if not defaults:
        return request
    groups: dict[str, dict[str, Any]] = {}
    options = dict(request.options)
    for path, value in defaults.items():
        check_default_leaf(path)
        if value is None:  # a YAML null: nothing to fill
            continue
        head, _, name = path.partition(".")
        if head == "options":
            options.setdefault(name, value)
            continue
        group = getattr(request, head)
        field = next(f for f in msgspec.structs.fields(group) if f.name == name)
        default = field.default if field.default is not msgspec.NODEFAULT else None
        if getattr(group, name) == default:
            groups.setdefault(head, {})[name] = tuple(value) if isinstance(value, list) else value
    changes: dict[str, Any] = {
        head: msgspec.structs.replace(getattr(request, head), **fields)
        for head, fields in groups.items()
    }
    if options != request.options:
        changes["options"] = options
    return msgspec.structs.replace(request, **changes) if changes else request


def with_overrides(request: Request, overrides: Mapping[str, Any]) -> Request:
    """Set ``group.field`` and ``options.key`` leaves whatever ``request`` set (a model's
    ``request_overrides``, the one-line form's ``--gen-kwargs``: lm-eval's ``--gen_kwargs`` and
    Inspect's ``--temperature`` override what a task sets)."""
    if not overrides:
        return request
    groups: dict[str, dict[str, Any]] = {}
    if overrides.get(SYSTEM):
        request = with_system(request, str(overrides[SYSTEM]))
    options = dict(request.options)
    for path, value in overrides.items():
        if path == SYSTEM:
            continue
        check_default_leaf(path, key="request_overrides")
        if value is None:
            continue
        head, _, name = path.partition(".")
        if head == "options":
            options[name] = value
        else:
            groups.setdefault(head, {})[name] = tuple(value) if isinstance(value, list) else value
    changes: dict[str, Any] = {
        head: msgspec.structs.replace(getattr(request, head), **fields)
        for head, fields in groups.items()
    }
    if options != request.options:
        changes["options"] = options
    return msgspec.structs.replace(request, **changes) if changes else request


def overridden(request: Request, overrides: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """The leaves ``request`` set itself (not left at their default) that ``overrides`` changes:
    ``(path, the request's value, the override)``."""
    found: list[tuple[str, Any, Any]] = []
    for path, value in overrides.items():
        if value is None or path == SYSTEM:
            continue
        head, _, name = path.partition(".")
        if head == "options":
            if name in request.options and request.options[name] != value:
                found.append((path, request.options[name], value))
            continue
        group = getattr(request, head)
        field = next(f for f in msgspec.structs.fields(group) if f.name == name)
        default = field.default if field.default is not msgspec.NODEFAULT else None
        had = getattr(group, name)
        new = tuple(value) if isinstance(value, list) else value
        if had != default and had != new:
            found.append((path, had, new))
    return found


def with_system(request: Request, text: str) -> Request:
    """``request`` with ``text`` as its system instruction: a system message put first, or
    prepended (a blank line between) to the system message the task wrote. Chat input only: a
    raw-text prompt has no place for one (``ConfigError`` naming the chat wire)."""
    if not isinstance(request.input, ChatInput):
        raise ConfigError(
            f"{named('system_instruction')} needs a chat wire (a raw-text prompt has no system "
            f"message); run it with {setting('kind', 'chat')}, or with "
            f"{named('apply_chat_template')} (the server's chat template renders the prompt), "
            "or drop it",
            path="system_instruction",
        )
    messages = request.input.messages
    if messages and messages[0].role == "system":
        first = msgspec.structs.replace(
            messages[0], content=(TextPart(text=text + "\n\n"), *messages[0].content)
        )
        rest = messages[1:]
    else:
        first, rest = Message(role="system", content=(TextPart(text=text),)), messages
    return msgspec.structs.replace(request, input=ChatInput(messages=(first, *rest)))
