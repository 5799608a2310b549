"""A keypoint results file that forked decoders read a part each of (``--jobs``,
:mod:`.fastcoco`; each part is decoded straight from the file a piece at a time,
:func:`.fastkpt.kpt_file_columns`): where the parts lie. The parent process never holds
the workers' parts. And the big buffers of the readers, asked for huge pages."""

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

    def wrap(self, data: bytes, a: int, b: int) -> memoryview:
        n = b - a + 2
        if len(self.buf) < n:
            self.buf = big_buffer(n)
        buf = self.buf
        buf[0] = 0x5B  # [
        buf[1 : n - 1] = memoryview(data)[a:b]
        buf[n - 1] = 0x5D  # ]
        return memoryview(buf)[:n]


def names_flag(field: str) -> list[bool] | None:
    """Where a keypoint slice's decoder says whether a row has a ``file_name``
    (Ultralytics' rows: a file read in parts is then read whole for their names); None
    for other fields (their files are read whole anyway)."""
    return [False] if field == "keypoints" else None
