"""The public surface is what ``sieval.__all__`` says, sorted, and every name resolves."""

from __future__ import annotations

import sieval


def test_all_is_sorted_and_resolves() -> None:
    names = [n for n in sieval.__all__ if n != "__version__"]
    assert names == sorted(names)
    for name in sieval.__all__:
        assert getattr(sieval, name) is not None


def test_the_core_names_are_public() -> None:
    assert {"Request", "Response", "Model", "SievalError", "Refused", "ContractViolation"} <= set(
        sieval.__all__
    )
    assert issubclass(sieval.TransportTimeout, sieval.TransportError)
    assert issubclass(sieval.TransportTimeout, TimeoutError)
