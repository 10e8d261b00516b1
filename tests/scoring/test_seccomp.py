"""The seccomp filter, read by a small classic-BPF interpreter (what the kernel runs), and its
system call tables against the kernel headers where they are installed. That the kernel
enforces it is shown in ``test_sandbox.py`` (programs that try each refused call)."""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from sieval.scoring.sandbox.seccomp import (
    CLONE_NAMESPACES,
    REFUSED,
    TABLES,
    UnsupportedArchitecture,
    seccomp_filter,
)

ALLOW, KILL = 0x7FFF0000, 0x80000000
EPERM, ENOSYS = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
SIGCHLD = 17


def run_filter(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Classic BPF as seccomp runs it: the accumulator, absolute word loads of
    ``struct seccomp_data``, conditional jumps, returns."""
    padded = (*args, 0, 0, 0, 0, 0, 0)[:6]
    data = struct.pack("=iIQ6Q", nr, arch, 0, *padded)
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x06:  # ret k
            return k
        elif code in (0x15, 0x35, 0x45):  # jeq, jge, jset
            hit = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += jt if hit else jf
        else:  # pragma: no cover - the builder emits nothing else
            raise AssertionError(f"unexpected BPF opcode {code:#x}")
        pc += 1


@pytest.mark.parametrize("machine", sorted(TABLES))
def test_every_refused_call_is_eperm_and_the_rest_allowed(machine: str) -> None:
    arch, numbers = TABLES[machine]
    program = seccomp_filter(machine)
    for name in REFUSED:
        assert run_filter(program, numbers[name], arch) == EPERM, name
    refused = {numbers[name] for name in (*REFUSED, "clone", "clone3")}
    allowed = [n for n in range(0, 460) if n not in refused]
    assert all(run_filter(program, n, arch) == ALLOW for n in allowed)


@pytest.mark.parametrize("machine", sorted(TABLES))
def test_clone_is_refused_only_with_a_namespace_flag(machine: str) -> None:
    arch, numbers = TABLES[machine]
    program = seccomp_filter(machine)
    clone = numbers["clone"]
    fork = SIGCHLD | 0x01000000 | 0x00200000  # CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID
    thread = 0x00010000 | 0x00000100 | 0x00000200 | 0x00000400 | 0x00000800 | 0x00080000
    assert run_filter(program, clone, arch, (fork,)) == ALLOW
    assert run_filter(program, clone, arch, (thread,)) == ALLOW
    for bit in range(32):
        flag = 1 << bit
        if flag & CLONE_NAMESPACES:
            assert run_filter(program, clone, arch, (fork | flag,)) == EPERM, hex(flag)
    # the high word of the flags is not a namespace flag
    assert run_filter(program, clone, arch, (fork | (1 << 40),)) == ALLOW
    assert run_filter(program, numbers["clone3"], arch) == ENOSYS


def test_another_architecture_and_x32_calls_kill() -> None:
    arch, numbers = TABLES["x86_64"]
    program = seccomp_filter("x86_64")
    assert run_filter(program, numbers["keyctl"], 0x40000003) == KILL  # AUDIT_ARCH_I386
    assert run_filter(program, 0x40000000 | 1, arch) == KILL  # an x32 write
    assert run_filter(program, 1, arch) == ALLOW  # write


def test_an_unknown_machine_is_refused_with_the_fix() -> None:
    with pytest.raises(UnsupportedArchitecture, match="--allow-unsafe-code"):
        seccomp_filter("riscv64")


HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}


@pytest.mark.parametrize("machine", sorted(TABLES))
def test_the_numbers_are_the_kernel_headers(machine: str) -> None:
    header = HEADERS[machine]
    if not header.exists():
        pytest.skip(f"{header} is not installed (linux-libc-dev)")
    defined = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"#define __NR_(\w+)\s+(\d+)", header.read_text())
    }
    _, numbers = TABLES[machine]
    assert {name: defined[name] for name in numbers} == numbers
