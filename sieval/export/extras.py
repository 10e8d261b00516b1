"""The optional libraries some exports write through (``sieval[export]``), checked before any
file is written: a missing one is a ``ConfigError`` naming the package and how to install it."""

from __future__ import annotations

import importlib.util

from ..errors import ConfigError

__all__ = ["EXTRA", "need"]

EXTRA = "export"
"""The extra that installs every export library: ``pip install 'sieval[export]'``."""

PACKAGES = {
    "inspect_ai": "inspect-ai",
    "wandb": "wandb",
    "mlflow": "mlflow-skinny",
}
"""Import name -> the PyPI package that provides it."""


def need(module: str, what: str) -> None:
    """Raise ``ConfigError`` unless ``module`` can be imported."""
    if importlib.util.find_spec(module) is None:
        package = PACKAGES.get(module, module)
        raise ConfigError(
            f"{what} are written through the {package} package, which is not installed; "
            f"install it with: pip install '{package}' (or pip install 'sieval[{EXTRA}]')",
            path="export",
        )
