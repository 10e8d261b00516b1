"""Entry point of the ``sieval`` console script: imports each command module, then runs the app."""

from __future__ import annotations

from . import compare as _compare  # noqa: F401  (registers compare)
from . import dialects as _dialects  # noqa: F401  (registers its commands)
from . import eval as _eval  # noqa: F401  (registers eval)
from . import finalize as _finalize  # noqa: F401  (registers finalize)
from . import parity as _parity  # noqa: F401  (registers parity)
from . import plan as _plan  # noqa: F401  (registers plan)
from . import probe as _probe  # noqa: F401  (registers probe)
from . import report as _report  # noqa: F401  (registers report)
from . import samples as _samples  # noqa: F401  (registers samples)
from . import serve as _serve  # noqa: F401  (registers serve)
from . import slurm as _slurm  # noqa: F401  (registers slurm)
from . import tasks as _tasks  # noqa: F401  (registers tasks)
from .app import app

__all__ = ["main"]


def main() -> None:
    app()
