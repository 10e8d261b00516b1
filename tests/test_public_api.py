"""The public surface is exactly ``sieval.__all__``: sorted, resolvable, and complete."""

from __future__ import annotations

import inspect

import sieval
from sieval.ir import request, response


def test_all_is_sorted_and_resolves() -> None:
    names = [n for n in sieval.__all__ if n != "__version__"]
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))  # constants first (ruff)
    for name in sieval.__all__:
        assert getattr(sieval, name) is not None


def test_all_equals_the_public_names() -> None:
    public = {
        name
        for name in dir(sieval)
        if not name.startswith("_") and not inspect.ismodule(getattr(sieval, name))
    }
    assert public == set(sieval.__all__) - {"__version__"}


def test_every_ir_type_a_user_needs_is_exported() -> None:
    wanted = (set(request.__all__) | set(response.__all__)) - {"Part"}
    assert wanted <= set(sieval.__all__)


def test_the_core_names_are_public() -> None:
    assert {"Request", "Response", "Model", "Call", "SievalError", "Limits", "Timeouts"} <= set(
        sieval.__all__
    )
    assert issubclass(sieval.TransportTimeout, sieval.TransportError)
    assert issubclass(sieval.TransportTimeout, TimeoutError)
