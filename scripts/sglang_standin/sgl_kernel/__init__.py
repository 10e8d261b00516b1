"""Import-only stand-in for SGLang's kernel package ``sgl_kernel``.

PyPI has no CPU build of ``sgl_kernel`` and its CUDA build cannot be imported on a machine without
the CUDA driver, yet SGLang's CPU engine imports kernel symbols from it at start-up (and never calls
them on the torch-native path that ``scripts/live-sglang.sh`` uses). This package lets those imports
succeed and nothing more: any attribute it is asked for is a function that, when called, appends
one line ``<symbol>\t<pid>\t<UTC time>`` to the file named by ``SIEVAL_SGL_STANDIN_LOG`` (default
``$SIEVAL_CACHE/run/sgl-standin-calls.log``) and raises :class:`StandinKernelCalled`. A non-empty
log therefore means SGLang tried to run a real kernel, and the reply it was serving is not evidence.

When ``SIEVAL_SGL_STANDIN_IMPORTS_LOG`` names a file, every symbol handed out is also recorded there
(``<symbol>\t<pid>``), which shows what SGLang imports; handing out a symbol is not a call.

Put the directory that holds this package first on ``PYTHONPATH`` so it shadows the installed CUDA
build. Nothing here computes anything.
"""

from __future__ import annotations

import os
import time

__all__: list[str] = []


def _default_log() -> str:
    home_cache = os.path.join(os.path.expanduser("~"), ".cache", "sieval")
    cache = os.environ.get("SIEVAL_CACHE") or home_cache
    return os.path.join(cache, "run", "sgl-standin-calls.log")


def _append(path: str, line: str) -> None:
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except OSError:
        pass  # the RuntimeError is the loud part; an unwritable log must not hide it


class StandinKernelCalled(RuntimeError):
    """SGLang called a kernel that this import-only stand-in does not provide."""


def _kernel(name: str):
    def kernel(*args, **kwargs):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        log = os.environ.get("SIEVAL_SGL_STANDIN_LOG") or _default_log()
        _append(log, f"{name}\t{os.getpid()}\t{stamp}")
        raise StandinKernelCalled(
            f"SGLang called the real kernel sgl_kernel.{name}, which sieval's import-only "
            "stand-in (scripts/sglang_standin) does not provide: this code path needs a real "
            "sgl_kernel build, and the request that reached it was not served by SGLang's "
            "torch-native CPU path."
        )

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__module__ = __name__
    kernel.__doc__ = f"Stand-in for sgl_kernel.{name}: logs and raises StandinKernelCalled."
    return kernel


def __getattr__(name: str):
    # Dunder look-ups (__path__, __version__, __file__ checks by importlib, pickle, inspect …) must
    # fail as they would on a module that lacks them.
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    imports_log = os.environ.get("SIEVAL_SGL_STANDIN_IMPORTS_LOG")
    if imports_log:
        _append(imports_log, f"{name}\t{os.getpid()}")
    fn = _kernel(name)
    globals()[name] = fn
    return fn
