"""The embedded reference server: a small deterministic model behind vLLM 0.32.0's wire.

It is the default endpoint (``endpoint: embedded``), the test bed, the fault injector and a
replay server. Public names: :class:`ReferenceServer`, :func:`start_in_thread`,
:func:`serve_forever`, :func:`main`, :class:`ReferenceModel`, :func:`get_model`.
"""

from sieval.reference.server import (
    DEFAULT_MODEL_NAME,
    ReferenceServer,
    RunningServer,
    main,
    serve_forever,
    start_in_thread,
)

from .lm import ReferenceModel, get_model

__all__ = [
    "DEFAULT_MODEL_NAME",
    "ReferenceModel",
    "ReferenceServer",
    "RunningServer",
    "get_model",
    "main",
    "serve_forever",
    "start_in_thread",
]
