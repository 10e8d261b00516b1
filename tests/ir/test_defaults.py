"""A model's request defaults fill only what the request left unset."""

from __future__ import annotations

import pytest

from sieval.errors import ConfigError
from sieval.ir.defaults import with_defaults
from sieval.ir.request import Request, Sampling


def test_defaults_fill_unset_leaves_and_options() -> None:
    request = Request.completion("x", sampling=Sampling(temperature=0.0), options={"min_p": 0.2})
    filled = with_defaults(
        request,
        {
            "sampling.temperature": 0.7,
            "sampling.stop": ["\n"],
            "options.min_p": 0.1,
            "options.repetition_penalty": 1.1,
        },
    )
    assert filled.sampling.temperature == 0.0  # set by the request: kept
    assert filled.sampling.stop == ("\n",)  # unset: filled (a YAML list becomes the IR tuple)
    assert filled.options == {"min_p": 0.2, "repetition_penalty": 1.1}


def test_no_defaults_returns_the_same_request() -> None:
    request = Request.completion("x")
    assert with_defaults(request, {}) is request
    assert with_defaults(request, {"sampling.seed": None}) == request  # equal to the default


@pytest.mark.parametrize("path", ["sampling.temprature", "input.completion.text", "sampling"])
def test_a_default_that_is_not_a_leaf_is_refused(path: str) -> None:
    with pytest.raises(ConfigError, match="is not a request leaf") as info:
        with_defaults(Request.completion("x"), {path: 1})
    assert info.value.path == path
