"""The seccomp filter every sandboxed program runs under: a classic BPF program, built here.

bubblewrap loads it (``--seccomp FD``: the raw ``struct sock_filter`` array) just before it
starts the program, so it binds the program and every process it starts; a filter cannot be
removed, only added to. Why by hand: libseccomp's Python binding is Debian's ``python3-seccomp``
for the system interpreter only (not pip-installable), and the filter is small: check the
architecture, then one comparison per refused system call. Each refused call fails with
``EPERM`` (the program sees ``PermissionError``), never a kill, so a program that tries reads
as a failed program with its reason.

Refused, by what they would give a program:

- a channel to the next program: the kernel keyring (``add_key``, ``request_key``, ``keyctl``:
  keys outlive the process, per uid);
- namespaces of its own (full capabilities there, new mounts, netfilter): ``unshare``,
  ``setns``, and ``clone`` with any ``CLONE_NEW*`` flag (``clone3`` answers ``ENOSYS``: its flags
  sit in memory a filter cannot read, and the C library then falls back to ``clone``);
- mounts: ``mount``, ``umount2``, ``pivot_root``, ``chroot`` and the new mount API
  (``open_tree``, ``move_mount``, ``fsopen``, ``fsconfig``, ``fsmount``, ``fspick``,
  ``mount_setattr``);
- other processes' memory and descriptors: ``ptrace``, ``process_vm_readv``,
  ``process_vm_writev``, ``pidfd_getfd``, ``kcmp``;
- the kernel's wider surface: ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring_*``,
  ``kexec_load``, ``kexec_file_load``, ``init_module``, ``finit_module``, ``delete_module``,
  ``open_by_handle_at``, ``name_to_handle_at``, ``fanotify_init``, ``lookup_dcookie``,
  ``quotactl``, ``swapon``, ``swapoff``, ``reboot``, ``syslog``, ``acct``, ``vhangup``,
  ``nfsservctl``, ``personality``.

Any other architecture than the one the table is for (a 32-bit ``int 0x80`` call on x86-64,
whose numbers differ) kills the process, and so does an x32 call (numbers from
``0x40000000``). Tables: x86-64 (``asm/unistd_64.h``) and aarch64 (``asm-generic/unistd.h``);
``tests/scoring/test_seccomp.py`` checks them against the headers where installed.
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["CLONE_NAMESPACES", "REFUSED", "UnsupportedArchitecture", "seccomp_filter"]


class UnsupportedArchitecture(RuntimeError):
    """No syscall table for this machine: the sandbox cannot build its filter."""


REFUSED = (
    "add_key", "request_key", "keyctl",
    "unshare", "setns",
    "mount", "umount2", "pivot_root", "chroot",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "open_by_handle_at", "name_to_handle_at", "fanotify_init", "lookup_dcookie", "quotactl",
    "swapon", "swapoff", "reboot", "syslog", "acct", "vhangup", "nfsservctl", "personality",
)  # fmt: skip
"""The system calls every sandboxed program is refused (``EPERM``)."""

CLONE_NAMESPACES = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
"""``clone`` flags that make a namespace: a ``clone`` with any of them is refused."""

# fmt: off
_X86_64 = {
    "clone": 56, "clone3": 435,
    "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "setns": 308,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
    "kcmp": 312, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "open_by_handle_at": 304, "name_to_handle_at": 303,
    "fanotify_init": 300, "lookup_dcookie": 212, "quotactl": 179, "swapon": 167,
    "swapoff": 168, "reboot": 169, "syslog": 103, "acct": 163, "vhangup": 153,
    "nfsservctl": 180, "personality": 135,
}
_AARCH64 = {
    "clone": 220, "clone3": 435,
    "add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97, "setns": 268,
    "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442,
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438,
    "kcmp": 272, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
    "delete_module": 106, "open_by_handle_at": 265, "name_to_handle_at": 264,
    "fanotify_init": 262, "lookup_dcookie": 18, "quotactl": 60, "swapon": 224,
    "swapoff": 225, "reboot": 142, "syslog": 116, "acct": 89, "vhangup": 58,
    "nfsservctl": 42, "personality": 92,
}
# fmt: on

TABLES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, _X86_64),  # AUDIT_ARCH_X86_64
    "aarch64": (0xC00000B7, _AARCH64),  # AUDIT_ARCH_AARCH64
}
"""Per machine: its ``AUDIT_ARCH_*`` value and its system call numbers."""

# classic BPF opcodes (linux/filter.h) and seccomp's return values (linux/seccomp.h)
_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000
# offsets in struct seccomp_data: nr, arch, instruction_pointer, args[6] (little-endian words)
_NR, _ARCH, _ARG0_LOW = 0, 4, 16
_X32_BIT = 0x40000000


def seccomp_filter(machine: str | None = None) -> bytes:
    """The filter for ``machine`` (``platform.machine()`` by default), as bubblewrap reads it."""
    name = machine or platform.machine()
    if name not in TABLES:
        raise UnsupportedArchitecture(
            f"no seccomp table for {name!r} (sieval has {', '.join(sorted(TABLES))}); "
            "run code tasks on one of those or with --allow-unsafe-code"
        )
    arch, numbers = TABLES[name]
    refused = sorted({numbers[call] for call in REFUSED})
    program: list[tuple[int, int, int, int]] = [
        (_LD_ABS_W, 0, 0, _ARCH),
        (_JEQ, 1, 0, arch),
        (_RET, 0, 0, _KILL_PROCESS),
        (_LD_ABS_W, 0, 0, _NR),
    ]
    if name == "x86_64":
        program += [(_JGE, 0, 1, _X32_BIT), (_RET, 0, 0, _KILL_PROCESS)]
    # after the comparisons: allow, then the clone check, then the two refusals
    compares = [*refused, numbers["clone"], numbers["clone3"]]
    start = len(program)
    tail = start + len(compares)  # index of the "allow" after the comparisons
    clone_check, eperm, enosys = tail + 1, tail + 4, tail + 5
    for i, number in enumerate(compares):
        here = start + i
        if number == numbers["clone"]:
            target = clone_check
        elif number == numbers["clone3"]:
            target = enosys
        else:
            target = eperm
        program.append((_JEQ, _offset(here, target), 0, number))
    program += [
        (_RET, 0, 0, _ALLOW),  # tail
        (_LD_ABS_W, 0, 0, _ARG0_LOW),  # clone_check: the flags (their low word)
        (_JSET, _offset(tail + 2, eperm), 0, CLONE_NAMESPACES),
        (_RET, 0, 0, _ALLOW),
        (_RET, 0, 0, _ERRNO | errno.EPERM),  # eperm
        (_RET, 0, 0, _ERRNO | errno.ENOSYS),  # enosys
    ]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


def _offset(here: int, target: int) -> int:
    """A conditional jump's offset: instructions skipped after ``here`` to land on ``target``."""
    offset = target - here - 1
    if not 0 <= offset <= 255:  # pragma: no cover - the tables are far below it
        raise ValueError(f"seccomp jump from {here} to {target} does not fit in 8 bits")
    return offset
