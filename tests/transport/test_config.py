"""Timeouts and Limits refuse bad values at creation and say which field."""

from __future__ import annotations

import math

import msgspec
import pytest

from sieval.errors import ConfigError
from sieval.transport import Limits, Timeouts


def test_defaults() -> None:
    assert Timeouts() == Timeouts(total=600, connect=10, read=300)
    assert Limits() == Limits(concurrency=32, retries=4, backoff_base_s=0.5, backoff_max_s=30)
    assert Limits(retries=0).retries == 0


@pytest.mark.parametrize("field", ["total", "connect", "read"])
@pytest.mark.parametrize("value", [0, -1, math.inf, math.nan, True, "10", None])
def test_timeouts_refuse(field: str, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        Timeouts(**{field: value})  # type: ignore[arg-type]
    assert f"Timeouts.{field}=" in str(info.value) and "pass" in str(info.value)
    assert info.value.path == f"Timeouts.{field}"
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("concurrency", 0),
        ("concurrency", 2.5),
        ("concurrency", True),
        ("retries", -1),
        ("retries", "3"),
        ("backoff_base_s", 0),
        ("backoff_max_s", -2),
        ("retry_after_max_s", math.inf),
    ],
)
def test_limits_refuse(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"Limits.{field}=") as info:
        Limits(**{field: value})  # type: ignore[arg-type]
    assert info.value.path == f"Limits.{field}"


def test_cap_below_base() -> None:
    with pytest.raises(ConfigError, match="backoff_max_s") as info:
        Limits(backoff_base_s=5, backoff_max_s=1)
    assert info.value.path == "Limits.backoff_max_s"


def test_replace_validates_and_values_are_frozen() -> None:
    assert msgspec.structs.replace(Timeouts(), read=5).read == 5
    with pytest.raises(ConfigError, match=r"Timeouts\.total"):
        msgspec.structs.replace(Timeouts(), total=0)
    with pytest.raises(AttributeError):
        Timeouts().read = 1  # type: ignore[misc]
    assert hash(Limits()) == hash(Limits())
