"""Leaf flattening: a request seen as dotted paths, derived from the types, never hand-listed.

Rules, applied mechanically to the Struct types of ``ir/request.py``:

* a field whose type is a Struct (a group) is recursed into: ``sampling.seed``;
* a field whose type is a union of tagged Structs names the chosen variant:
  ``input.completion.text``, ``input.chat.messages``;
* a field holding a sequence of Structs is itself a leaf, and inside its elements each optional
  field and each tagged variant is a leaf too: ``input.chat.messages.content.image``,
  ``input.chat.messages.content.image.detail`` (required element fields belong to their element);
* a ``dict[str, Any]`` field is open: ``options.<key>``, one leaf per key, matched by ``options.*``;
* any other field is a leaf.

A leaf is *active* when its value differs from the field's default (a required field always is).
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin

import msgspec

from .request import Request

__all__ = ["OPEN_SUFFIX", "active_leaves", "schema_leaves", "schema_match"]

OPEN_SUFFIX = ".*"
"""Schema leaves ending in this suffix stand for one leaf per key of an open mapping."""


def _struct_variants(tp: Any) -> tuple[type[msgspec.Struct], ...] | None:
    """The Struct classes of a union (or a single Struct), or None when ``tp`` is not one."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return (tp,)
    if get_origin(tp) in (Union, types.UnionType):
        members = [a for a in get_args(tp) if a is not msgspec.UnsetType and a is not type(None)]
        if members and all(isinstance(a, type) and issubclass(a, msgspec.Struct) for a in members):
            return tuple(members)
    return None


def _sequence_item(tp: Any) -> Any:
    """The item type of ``tuple[X, ...]`` (optionally ``| UnsetType``), else None."""
    for candidate in get_args(tp) if get_origin(tp) in (Union, types.UnionType) else (tp,):
        if get_origin(candidate) is tuple:
            args = get_args(candidate)
            if len(args) == 2 and args[1] is Ellipsis:
                return args[0]
    return None


def _is_open_mapping(tp: Any) -> bool:
    return get_origin(tp) is dict


def _tag(cls: type[msgspec.Struct]) -> str:
    tag = cls.__struct_config__.tag
    return tag if isinstance(tag, str) else cls.__name__.lower()


@dataclass(frozen=True)
class _Field:
    """What the walkers need to know of one field, worked out once per Struct class."""

    name: str
    required: bool
    default: Any
    """The default value (a factory's result, only ever compared against), or NODEFAULT."""
    variants: tuple[type[msgspec.Struct], ...] | None
    item: Any
    """The element type of a sequence of Structs, else None."""
    open: bool
    skip_when_default: bool = False
    """This field at its default holds no active leaf (it has a default, and a Struct default
    holds none itself), so the walk of a value passes over it."""


@functools.cache
def _shape(cls: type[msgspec.Struct]) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in msgspec.structs.fields(cls):
        tp = hints[f.name]
        item = _sequence_item(tp)
        default = f.default
        if default is msgspec.NODEFAULT and f.default_factory is not msgspec.NODEFAULT:
            default = f.default_factory()
        variants = _struct_variants(tp)
        out.append(
            _Field(
                name=f.name,
                required=f.required,
                default=default,
                variants=variants,
                item=item if item is not None and _struct_variants(item) is not None else None,
                open=_is_open_mapping(tp),
                skip_when_default=default is not msgspec.NODEFAULT
                and not (isinstance(default, msgspec.Struct) and _active_in(default)),
            )
        )
    return tuple(out)


def _active_in(value: msgspec.Struct) -> bool:
    """Whether a Struct default itself holds an active leaf (a required field, a set default)."""
    out: dict[str, Any] = {}
    _walk_value(value, "", False, out)
    return bool(out)


def _walk_schema(cls: type[msgspec.Struct], prefix: str, in_element: bool) -> list[str]:
    out: list[str] = []
    for field in _shape(cls):
        path = f"{prefix}{field.name}"
        variants, item = field.variants, field.item
        if variants is not None and len(variants) == 1 and not in_element:
            out += _walk_schema(variants[0], path + ".", in_element=False)
        elif variants is not None:
            for variant in variants:
                vpath = f"{path}.{_tag(variant)}"
                if in_element:
                    out.append(vpath)
                out += _walk_schema(variant, vpath + ".", in_element=in_element)
        elif item is not None:
            if not in_element or not field.required:
                out.append(path)
            out += _walk_element(item, path)
        elif in_element and field.required:
            continue
        elif field.open:
            out.append(path + OPEN_SUFFIX)
        else:
            out.append(path)
    return out


def _walk_element(item: Any, path: str) -> list[str]:
    variants = _struct_variants(item) or ()
    if len(variants) == 1 and variants[0].__struct_config__.tag is None:
        return _walk_schema(variants[0], path + ".", in_element=True)
    out: list[str] = []
    for variant in variants:
        vpath = f"{path}.{_tag(variant)}"
        out.append(vpath)
        out += _walk_schema(variant, vpath + ".", in_element=True)
    return out


@functools.cache
def schema_leaves() -> tuple[str, ...]:
    """Every leaf path a ``Request`` can have, in declaration order (open mappings as ``x.*``)."""
    return tuple(_walk_schema(Request, "", in_element=False))


@functools.cache
def _schema_set() -> frozenset[str]:
    return frozenset(schema_leaves())


def schema_match(path: str) -> str | None:
    """The schema leaf an active path belongs to (``options.min_p`` -> ``options.*``)."""
    leaves = _schema_set()
    if path in leaves:
        return path
    head = path.split(".", 1)[0]
    wildcard = head + OPEN_SUFFIX
    return wildcard if wildcard in leaves else None


def _walk_value(obj: msgspec.Struct, prefix: str, in_element: bool, out: dict[str, Any]) -> None:
    for field in _shape(type(obj)):
        value = getattr(obj, field.name)
        default = field.default
        if value is default and field.skip_when_default:
            continue  # most leaves are unset: nothing below a default value is active
        path = f"{prefix}{field.name}"
        variants = field.variants
        if variants is not None and isinstance(value, msgspec.Struct):
            if not in_element and field.skip_when_default and value == default:
                continue
            if len(variants) == 1 and not in_element:
                _walk_value(value, path + ".", False, out)
            else:
                vpath = f"{path}.{_tag(type(value))}"
                if in_element:
                    out[vpath] = True
                _walk_value(value, vpath + ".", in_element, out)
        elif field.item is not None:
            if value is msgspec.UNSET or value == default:
                continue
            if not in_element or not field.required:
                out.setdefault(path, value if not in_element else True)
            for element in value:
                _walk_element_value(element, path, out)
        elif in_element and field.required:
            continue
        elif field.open:
            for key, entry in value.items():
                out[f"{path}.{key}"] = entry
        elif default is msgspec.NODEFAULT or value != default:
            out.setdefault(path, value if not in_element else True)


def _walk_element_value(element: msgspec.Struct, path: str, out: dict[str, Any]) -> None:
    if element.__struct_config__.tag is None:
        _walk_value(element, path + ".", True, out)
        return
    vpath = f"{path}.{_tag(type(element))}"
    out[vpath] = True
    _walk_value(element, vpath + ".", True, out)


def active_leaves(request: Request) -> dict[str, Any]:
    """The active leaves of ``request`` with their values (``True`` for leaves inside elements)."""
    out: dict[str, Any] = {}
    _walk_value(request, "", False, out)
    return out
