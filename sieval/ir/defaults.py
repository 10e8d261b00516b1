"""Request defaults from a model's config, applied to leaves the caller left at their default."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

import msgspec

from ..errors import ConfigError
from ..setting_names import named
from .leaves import schema_match
from .ranges import out_of_range
from .request import Request

__all__ = ["check_default_leaf", "check_default_value", "with_defaults"]


def check_default_leaf(path: str, where: str = "") -> None:
    """Raise ``ConfigError`` unless ``path`` is a leaf a model's request defaults may set."""
    head, _, name = path.partition(".")
    if schema_match(path) is None or not name or head == "input":
        raise ConfigError(
            f"{where}{named('request_defaults.' + path)} is not a request leaf such as "
            "sampling.temperature or options.min_p",
            path=path,
        )


def check_default_value(path: str, value: Any, where: str = "") -> None:
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
            f"{where}{named('request_defaults.' + path)}={value!r} is not a valid value ({exc}); "
            f"it takes {shown}",
            path=path,
            received=value,
        ) from exc
    why = out_of_range(path, value)
    if why is not None:
        raise ConfigError(
            f"{where}{named('request_defaults.' + path)}={value!r} is out of range: it {why}",
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
