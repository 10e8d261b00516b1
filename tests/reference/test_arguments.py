"""A tool call's arguments: schema-valid whatever the schema, and taken from the request's words.

Validity is checked by a small JSON-Schema checker written here (types, required, enum, const,
bounds, lengths, nesting), independent of the generator; hypothesis draws the schemas.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sieval.reference.arguments import arguments, content_words

_TYPES = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


def problems(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Where ``value`` breaks ``schema`` (the keywords the generator promises to keep)."""
    if "anyOf" in schema:
        return problems(value, schema["anyOf"][0], path)
    if "const" in schema:
        return [] if value == schema["const"] else [f"{path}: not the const"]
    if "enum" in schema:
        return [] if value in schema["enum"] else [f"{path}: {value!r} not in the enum"]
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind is None:
        return []
    python = _TYPES[kind]
    if not isinstance(value, python) or (kind in ("integer", "number") and value is True):
        return [f"{path}: {value!r} is not {kind}"]
    if kind == "integer" and isinstance(value, bool):
        return [f"{path}: a bool is not an integer"]
    out = []
    if kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: below the minimum")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: above the maximum")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            out.append(f"{path}: not above the exclusive minimum")
    if kind == "string":
        if len(value) > schema.get("maxLength", len(value)):
            out.append(f"{path}: too long")
        if len(value) < schema.get("minLength", 0):
            out.append(f"{path}: too short")
    if kind == "array":
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", 99):
            out.append(f"{path}: {len(value)} items")
        for i, item in enumerate(value):
            out += problems(item, schema.get("items", {}), f"{path}[{i}]")
    if kind == "object":
        for name in schema.get("required", []):
            if name not in value:
                out.append(f"{path}: missing {name}")
        for name, item in value.items():
            sub = schema.get("properties", {}).get(name)
            if sub is None:
                out.append(f"{path}: {name} is not a property")
            else:
                out += problems(item, sub, f"{path}.{name}")
    return out


def test_the_checker_catches_what_it_must() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert problems({}, schema) == ["$: missing n"]
    assert problems({"n": "1"}, schema) == ["$.n: '1' is not integer"]
    assert problems({"n": 1}, schema) == []


WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city"],
}


def test_a_proper_noun_of_the_text_fills_a_string() -> None:
    assert arguments(WEATHER, "", "What is the weather in Paris?") == {"city": "Paris"}


def test_an_explicit_value_wins_and_is_coerced() -> None:
    got = arguments(WEATHER, "", 'Weather with city="New York", unit=fahrenheit, days=3 please')
    assert got == {"city": "New York", "unit": "fahrenheit", "days": 3}
    assert arguments(WEATHER, "", '{"city": "Lyon"}') == {"city": "Lyon"}


def test_optional_properties_come_only_when_named() -> None:
    assert set(arguments(WEATHER, "", "weather in Paris in celsius for the days ahead")) == {
        "city",
        "unit",
        "days",
    }
    assert arguments(WEATHER, "", "weather in Rome") == {"city": "Rome"}


def test_numbers_are_read_in_order_and_clamped() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "number"},
            "c": {"type": "integer", "maximum": 10},
        },
    }
    assert arguments(schema, "", "add 12 and 2.5 then 40") == {"a": 12, "b": 2.5, "c": 10}
    assert arguments(schema, "", "nothing numeric") == {"a": 1, "b": 1, "c": 1}


def test_nested_objects_and_arrays_hold_their_shape() -> None:
    schema = {
        "type": "object",
        "properties": {
            "trip": {
                "type": "object",
                "properties": {
                    "stops": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                    "nights": {"type": "integer", "exclusiveMinimum": 0},
                },
                "required": ["stops", "nights"],
            }
        },
        "required": ["trip"],
    }
    got = arguments(schema, "", "Plan a trip through Oslo and Bergen")
    assert got == {"trip": {"stops": ["Oslo", "Bergen"], "nights": 1}}
    assert problems(got, schema) == []


def test_the_segment_after_a_mention_comes_first() -> None:
    assert arguments(WEATHER, " for London", "get_weather for Paris, get_weather for London") == {
        "city": "London"
    }


def test_content_words_drop_stop_words_and_plurals() -> None:
    assert content_words("What are the cats doing in the glass houses?") == [
        "cat",
        "doing",
        "glass",
        "house",
    ]


# -- any schema: a valid value ---------------------------------------------------------------------

_LEAF = st.one_of(
    st.just({"type": "string"}),
    st.builds(lambda n: {"type": "string", "maxLength": n}, st.integers(0, 5)),
    st.builds(lambda n: {"type": "string", "minLength": n}, st.integers(1, 5)),
    st.builds(lambda lo: {"type": "integer", "minimum": lo}, st.integers(-5, 5)),
    st.builds(
        lambda lo, w: {"type": "number", "minimum": lo, "maximum": lo + w},
        st.integers(-5, 5),
        st.integers(0, 5),
    ),
    st.just({"type": "boolean"}),
    st.just({"type": ["null", "integer"]}),
    st.builds(lambda xs: {"enum": xs}, st.lists(st.text(max_size=4), min_size=1, max_size=3)),
    st.builds(lambda v: {"const": v}, st.integers()),
    st.just({"format": "date", "type": "string"}),
)


def _node(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    names = st.text("abcdefgh_", min_size=1, max_size=6)
    obj = st.dictionaries(names, children, max_size=4).flatmap(
        lambda props: st.builds(
            lambda req: {"type": "object", "properties": props, "required": req},
            st.lists(st.sampled_from(sorted(props)), unique=True) if props else st.just([]),
        )
    )
    arr = st.builds(
        lambda items, n: {"type": "array", "items": items, "minItems": n, "maxItems": n + 2},
        children,
        st.integers(0, 3),
    )
    return st.one_of(obj, arr, st.builds(lambda c: {"anyOf": [c, {"type": "null"}]}, children))


SCHEMAS = st.recursive(_LEAF, _node, max_leaves=12).map(
    lambda s: s if s.get("type") == "object" else {"type": "object", "properties": {"x": s}}
)


@settings(max_examples=120, deadline=None)
@given(schema=SCHEMAS, text=st.text(max_size=60))
def test_every_schema_gets_a_valid_value(schema: dict[str, Any], text: str) -> None:
    value = arguments(schema, "", text)
    assert problems(value, schema) == []
    assert arguments(schema, "", text) == value  # deterministic
