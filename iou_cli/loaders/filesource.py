"""A results file that forked decoders read a part each of (``--jobs`` on keypoint
results, :mod:`.fastcoco`): where the parts lie, and a read of a part straight into a
decoder's buffer. The parent process never holds the workers' parts."""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from typing import Any

Plan = tuple[list[tuple[int, int]], list[list[int]], list[int]]  # slices, workers', own


@dataclass(frozen=True)
class FileSource:
    path: str
    size: int
    plan: Plan  # byte ranges of whole records; each worker's ranges; this process's

    def __len__(self) -> int:
        return self.size

    def read_into(self, out: memoryview, at: int) -> bool:
        """``len(out)`` bytes of the file from ``at`` into ``out``; False when the file
        no longer has them (it changed since the parts were planned) or cannot be read."""
        try:
            with open(self.path, "rb", buffering=0) as fh:
                fh.seek(at)
                done = 0
                while done < len(out):
                    got = fh.readinto(out[done:])
                    if not got:
                        return False
                    done += got
        except OSError:
            return False
        return True


_HUGE = 1 << 22  # bytes from which a buffer is asked for 2 MiB pages


def big_buffer(n: int) -> bytearray | mmap.mmap:
    """A writable buffer of ``n`` bytes; from 4 MiB on, private anonymous memory asked for
    huge pages (``MADV_HUGEPAGE``): 40 MiB of text cost ~10,000 page faults in 4 KiB pages
    (~20 ms of system time), ~400 in 2 MiB ones. A ``bytearray`` where that cannot be had."""
    if n >= _HUGE:
        flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
        try:
            mm = mmap.mmap(-1, n, flags=flags) if flags else mmap.mmap(-1, n)
            advice = getattr(mmap, "MADV_HUGEPAGE", None)
            if advice is not None:
                mm.madvise(advice)
            return mm
        except (OSError, ValueError):
            pass
    return bytearray(n)


def big_floats(n: int) -> Any:
    """A float64 array of ``n`` values in :func:`big_buffer` memory (huge pages from 4 MiB:
    a results file's keypoint numbers, ~40 MB at COCO val's size, cost ~10,000 page faults
    in 4 KiB pages). Only the pages written take memory."""
    import numpy as np

    return np.frombuffer(big_buffer(8 * n), dtype=np.float64)


class SliceBuffer:
    """One buffer for every slice, ``[`` + slice + ``]``: a fresh 64 MiB copy per slice
    costs its page faults again each time (~0.5 s of system time at 400 MiB)."""

    def __init__(self) -> None:
        self.buf: bytearray | mmap.mmap = bytearray()
        self.n = 0

    def wrap(self, data: bytes | FileSource, a: int, b: int) -> memoryview:
        n = b - a + 2
        if len(self.buf) < n:
            self.buf = big_buffer(n)
        buf = self.buf
        self.n = n
        buf[0] = 0x5B  # [
        if isinstance(data, FileSource):  # read straight into place (no copy)
            if not data.read_into(memoryview(buf)[1 : n - 1], a):
                return memoryview(b"")  # the file changed: declined (not valid JSON)
        else:
            buf[1 : n - 1] = memoryview(data)[a:b]
        buf[n - 1] = 0x5D  # ]
        return memoryview(buf)[:n]

    def names_files(self, named: list[bool] | None = None) -> bool:
        """Whether the last slice wrapped has a ``"file_name"`` (Ultralytics' rows): as
        its decoder saw the rows (``named``: :func:`names_flag`), else searched for in
        its bytes."""
        if named is not None:
            return named[0]
        return self.buf.find(b'"file_name"', 0, self.n) >= 0


def names_flag(field: str) -> list[bool] | None:
    """Where a slice's decoder says whether a row has a ``file_name`` (keypoints: the
    decoder sees the key), else None (the slice's bytes are searched for it)."""
    return [False] if field == "keypoints" else None
