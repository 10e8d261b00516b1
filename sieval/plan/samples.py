"""A task's samples as the plan holds them: compact, and flat in memory however many there are.

A ``Sample`` as Python objects costs about 0.9 KB (a 0-shot ARC question: its dict, strings and
lists); 100,000 of them held for a whole run were most of the client's memory. ``Samples`` keeps
each one msgpack-encoded in one buffer and decodes it when it is read (a few microseconds, against
the milliseconds its requests take). Past ``SPILL_BYTES`` the buffer moves to an unlinked temporary
file read with ``pread``: the kernel's page cache holds it, not the process, so the run's resident
memory no longer grows with the number of samples. What a run looks up by sample, the id and the
group, is kept apart in small arrays (about 45 bytes a sample), with an index from id to position.

Values every sample shares (``SHARED_FIELDS``: the drawn shots) are stored once and put back as
the same object, as the task built them.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any, overload

import msgspec

from ..tasks.base import SHARED_FIELDS, Sample

__all__ = ["SPILL_BYTES", "DuplicateSampleId", "Samples"]

SPILL_BYTES = 8 << 20
"""Encoded samples beyond this many bytes are kept in a temporary file, not in memory."""

_BLOCK = 1 << 20
"""Bytes read at a time when samples are iterated from the file."""

_SHARED_EXT = 1


class DuplicateSampleId(ValueError):
    """Two samples have the same id (ids are the resume key)."""

    def __init__(self, sample_id: str) -> None:
        super().__init__(sample_id)
        self.sample_id = sample_id


class Samples(Sequence[Sample]):
    """The samples of ``samples`` (any iterable: a task's ``load`` may yield them one by one), in
    order; each read gives an equal ``Sample``. Raises ``DuplicateSampleId`` on a repeated id."""

    def __init__(self, samples: Iterable[Sample] = (), *, spill_bytes: int = SPILL_BYTES) -> None:
        self._spill_bytes = spill_bytes
        self._shared: list[Any] = []
        self._ends = array("Q")
        self._ids = bytearray()
        self._id_ends = array("Q")
        self._group_names: list[str | None] = []
        self._groups = array("I")
        self._file: IO[bytes] | None = None
        self._buffer = bytearray()
        self._size = 0
        shared: dict[bytes, int] = {}
        group_codes: dict[str | None, int] = {}
        encode = msgspec.msgpack.Encoder().encode
        hashes = array("q")
        for sample in samples:
            data = sample.data
            if any(name in data for name in SHARED_FIELDS):
                data = {k: self._share(k, v, shared, encode) for k, v in data.items()}
            self._append(encode(msgspec.structs.replace(sample, data=data)))
            self._ids += sample.id.encode()
            self._id_ends.append(len(self._ids))
            hashes.append(hash(sample.id))
            code = group_codes.setdefault(sample.group, len(group_codes))
            if code == len(self._group_names):
                self._group_names.append(sample.group)
            self._groups.append(code)
        if self._file is not None:
            self._spill()
            self._file.flush()
        self._decode = msgspec.msgpack.Decoder(Sample, ext_hook=self._ext).decode
        self._hashes = hashes
        self._index()

    def _share(
        self, name: str, value: Any, shared: dict[bytes, int], encode: Any
    ) -> msgspec.msgpack.Ext | Any:
        if name not in SHARED_FIELDS:
            return value
        key = encode(value)
        at = shared.setdefault(key, len(shared))
        if at == len(self._shared):
            self._shared.append(value)
        return msgspec.msgpack.Ext(_SHARED_EXT, at.to_bytes(4, "little"))

    def _ext(self, code: int, data: memoryview) -> Any:
        assert code == _SHARED_EXT
        return self._shared[int.from_bytes(data, "little")]

    def _append(self, encoded: bytes) -> None:
        self._buffer += encoded
        self._size += len(encoded)
        self._ends.append(self._size)
        if len(self._buffer) > self._spill_bytes:
            self._spill()

    def _spill(self) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="sieval-samples-")  # noqa: SIM115
        self._file.write(self._buffer)
        self._buffer = bytearray()

    def _index(self) -> None:
        """The id index: an open-addressing table of positions (+ 1; 0 is a free slot) at most
        half full, probed linearly from an id's hash. No dict: 8 bytes a sample, built without
        any transient list, and a repeated id is found as it is inserted."""
        size = 1 << max(1, (2 * len(self)).bit_length())
        self._mask = size - 1
        self._table = array("I", [0]) * size
        for at, h in enumerate(self._hashes):
            slot = h & self._mask
            while self._table[slot]:
                other = self._table[slot] - 1
                if self._hashes[other] == h and self.id_at(other) == self.id_at(at):
                    raise DuplicateSampleId(self.id_at(at))
                slot = (slot + 1) & self._mask
            self._table[slot] = at + 1

    def _read(self, start: int, end: int) -> bytes | memoryview:
        if self._file is None:
            return memoryview(self._buffer)[start:end]
        return os.pread(self._file.fileno(), end - start, start)

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> list[Sample]: ...

    def __getitem__(self, index: int | slice) -> Sample | list[Sample]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"sample {index} of {len(self)}")
        start = self._ends[index - 1] if index else 0
        sample: Sample = self._decode(self._read(start, self._ends[index]))
        return sample

    def __iter__(self) -> Iterator[Sample]:
        i, start = 0, 0
        while i < len(self):
            stop = max(bisect_right(self._ends, start + _BLOCK, lo=i), i + 1)
            block = memoryview(self._read(start, self._ends[stop - 1]))
            at = start
            for k in range(i, stop):
                end = self._ends[k]
                yield self._decode(block[at - start : end - start])
                at = end
            i, start = stop, self._ends[stop - 1]

    def __repr__(self) -> str:
        where = "a temporary file" if self._file is not None else "memory"
        return f"Samples({len(self)} samples, {self._size} bytes in {where})"

    def id_at(self, index: int) -> str:
        start = self._id_ends[index - 1] if index else 0
        return self._ids[start : self._id_ends[index]].decode()

    def group_at(self, index: int) -> str | None:
        return self._group_names[self._groups[index]]

    def ids(self) -> Iterator[str]:
        return (self.id_at(i) for i in range(len(self)))

    def position(self, sample_id: str) -> int | None:
        """Where the sample with this id is, or None when no sample has it."""
        h = hash(sample_id)
        slot = h & self._mask
        while self._table[slot]:
            at = self._table[slot] - 1
            if self._hashes[at] == h and self.id_at(at) == sample_id:
                return at
            slot = (slot + 1) & self._mask
        return None

    def select(self, positions: Iterable[int]) -> Samples:
        """The samples at ``positions``, in that order."""
        return Samples((self[i] for i in positions), spill_bytes=self._spill_bytes)


def as_samples(samples: Sequence[Sample] | Samples) -> Samples:
    """``samples`` as ``Samples`` (a list a caller built is encoded; ``Samples`` pass through)."""
    return samples if isinstance(samples, Samples) else Samples(samples)
