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
