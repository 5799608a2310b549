"""Keep freed memory for reuse instead of handing it back to the OS at once (glibc only).

A per-image loop (the panoptic verb: two PNGs of about 1 MB each, decoded and counted per
image) allocates and frees the same few buffers of 0.3 to 1.2 MB thousands of times.
glibc serves such sizes with fresh ``mmap`` regions or trims them off the heap when freed,
so every image pays a page fault per 4 KiB touched (about 900 per PNG; on a virtual machine
that was more than the decode itself). Raising the mmap and trim thresholds lets the heap
keep those pages: the same peak memory, a hundredth of the page faults. Called by the CLI
for the verbs that loop over images; a library caller may call it too.
"""

from __future__ import annotations

import sys

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # blocks above this still get their own mapping
TRIM_THRESHOLD = 64 << 20  # free memory kept at the top of the heap
_DONE: bool | None = None


def reuse_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds once per process; False where not glibc."""
    global _DONE
    if _DONE is None:
        _DONE = False
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
            except (OSError, AttributeError):  # musl and others have no mallopt
                return False
            mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
            mallopt.restype = ctypes.c_int
            _DONE = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
                mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
            )
    return _DONE


__all__ = ["reuse_freed_memory"]
