"""The columns forked decoders hand back (:mod:`.fastcoco`'s ``--jobs`` decode): one shared
anonymous mapping made before the fork, written by the workers, read by the parent without
a pickle; keypoint numbers as raw bytes through the worker's pipe (:func:`send_raw`,
:func:`recv_raw`), read into their place in one array (:class:`KeypointRoom`)."""

from __future__ import annotations

import contextlib
import os
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from .filesource import big_floats


class SharedColumns:
    """Every slice's box columns in one shared anonymous mapping made before the fork, each
    slice at its own place (room for ``len // min_record + 1`` rows: only the pages written
    take memory): a worker writes its rows there and sends their count, and the parent reads
    them without a pickle. A slice with more rows than its room is pickled instead.

    Keypoints: the worker decodes a slice's flat numbers into its own memory and sends them
    as raw bytes after its message (:func:`send_raw`); the parent reads them straight into
    an array (:meth:`view`). Shared memory gets no huge pages here, so writing ~30 MB of
    numbers into it cost ~7,500 page faults (~0.05-0.1 s of system time) in the worker and
    as many again where the parent read them; the pipe costs two copies (~20 ms)."""

    def __init__(self, slices: list[tuple[int, int]], field: str, min_record: int) -> None:
        import mmap

        width = 5 if field == "obb" else 4
        room = [(b - a) // min_record + 1 for a, b in slices]
        self.starts = np.cumsum([0, *room]).tolist()
        total = int(self.starts[-1])
        self.keypoints = field == "keypoints"
        extra = 4 if field == "keypoints" else 0  # each row's kpt_box
        mm = mmap.mmap(-1, 8 * total * (3 + width + extra))
        geom = "bbox" if field == "keypoints" else field
        self.cols: dict[str, Any] = {
            "image_id": np.frombuffer(mm, np.int64, total, 0),
            "category_id": np.frombuffer(mm, np.int64, total, 8 * total),
            geom: np.frombuffer(mm, np.float64, total * width, 16 * total).reshape(-1, width),
            "score": np.frombuffer(mm, np.float64, total, 8 * total * (2 + width)),
        }
        if extra:
            at = 8 * total * (3 + width)
            self.cols["kpt_box"] = np.frombuffer(mm, np.float64, total * 4, at).reshape(-1, 4)

    def put(self, k: int, cols: dict[str, Any]) -> dict[str, Any] | int | tuple[int, int]:
        """Slice ``k``'s columns written to the mapping: their row count (keypoints: and K;
        the caller then sends ``cols["keypoints"]`` with :func:`send_raw`), else ``cols``."""
        a, n = self.starts[k], int(cols["score"].shape[0])
        kp = cols.get("keypoints")
        if set(cols) - {"keypoints"} != set(self.cols) or a + n > self.starts[k + 1]:
            return cols
        if self.keypoints and kp is None:
            return cols
        for key, col in self.cols.items():
            col[a : a + n] = cols[key]
        return n if kp is None else (n, int(kp.shape[1]))

    def view(
        self,
        k: int,
        got: int | tuple[int, int],
        fd: int = -1,
        into: npt.NDArray[np.float64] | None = None,
        filled: bool = False,
    ) -> dict[str, Any] | None:
        """Slice ``k``'s columns (``got``: what :meth:`put` returned); keypoints read from
        the pipe ``fd`` (into ``into`` when given; None when the worker's bytes end early:
        it died), or already in ``into`` (``filled``: :func:`vm_read`)."""
        n, kk = got if isinstance(got, tuple) else (got, 0)
        a = self.starts[k]
        out = {key: col[a : a + n] for key, col in self.cols.items()}
        if self.keypoints:
            kp = into if filled else recv_raw(fd, n * kk * 3, into)
            if kp is None:
                return None
            out["keypoints"] = kp.reshape(n, kk, 3)
        return out

    def holds(self, cols: dict[str, Any]) -> bool:
        """Whether ``cols`` is a view of this mapping (a slice not pickled); never for
        keypoints (their numbers are not in it: :class:`KeypointRoom`)."""
        return not self.keypoints and cols["score"].base is self.cols["score"]

    def compact(self, counts: list[int]) -> dict[str, Any]:
        """Every slice's rows (``counts``, in slice order) moved to the front of their
        column in place (no fresh memory: its page faults cost more than the copy), as views;
        ``score``, which a dataset keeps, is copied (the mapping is unmapped once the other
        views are read into the dataset's own columns)."""
        total = sum(counts)
        for col in self.cols.values():
            pos = 0
            for a, n in zip(self.starts, counts, strict=False):
                move_left(col, a, pos, n)
                pos += n
        out = {key: col[:total] for key, col in self.cols.items()}
        out["score"] = out["score"].copy()
        return out


class KeypointRoom:
    """One array for every slice's keypoint numbers, in file order, so that nothing is
    concatenated (a fresh copy of all of them: ~40 MB of page faults at COCO val's size,
    0.05-0.09 s of system time on the critical path).

    Virtual room for the bound of each part (a number and its separator take two bytes or
    more): the workers' parts first, then this process's. This process decodes its slices
    at the start of its part while the workers decode theirs; once the workers say how many
    numbers they have, their parts are read (from their memory, else their pipes) to end
    right where this process's begin. Only the pages written take memory."""

    def __init__(self, room: np.ndarray, workers_bound: int) -> None:
        self.room = room
        self.mid = workers_bound  # where this process's numbers begin
        self.end = workers_bound  # where they end so far
        self.at = workers_bound  # where the next worker slice's numbers go (place_workers)
        self.start = workers_bound

    @classmethod
    def make(
        cls, slices: list[tuple[int, int]], assign: list[list[int]], own: list[int]
    ) -> KeypointRoom | None:
        def bound(ks: list[int]) -> int:  # (kpt_columns' bound of a wrapped slice)
            return sum((slices[k][1] - slices[k][0] + 2) // 2 + 1 for k in ks)

        workers = bound([k for ks in assign for k in ks])
        try:
            room = big_floats(workers + bound(own))
        except (MemoryError, ValueError, OverflowError):  # no such address space: concatenated
            return None
        return cls(room, workers)

    def own_alloc(self, size: int) -> np.ndarray:
        return self.room[self.end : self.end + size]

    def own_done(self, kp: np.ndarray) -> None:
        assert kp.base is not None  # (a view of the room)
        self.end += kp.size

    def place_workers(self, shares: list[list[Any]]) -> bool:
        """Where the workers' numbers go: ending at this process's first number (False
        when they would not fit)."""
        count = sum(_numbers(got) or 0 for share in shares for got in share)
        self.start = self.at = self.mid - count
        return self.start >= 0

    def worker_places(self, share: list[Any]) -> list[np.ndarray | None]:
        """Where each part of a worker's ``share`` goes, in order (None: a part with no
        keypoint numbers, or declined)."""
        out: list[np.ndarray | None] = []
        for got in share:
            size = _numbers(got)
            out.append(None if size is None else self.room[self.at : self.at + size])
            self.at += size or 0
        return out

    @staticmethod
    def copy_in(cols: dict[str, Any], out: np.ndarray) -> None:
        """A pickled part's keypoint numbers copied to their place ``out``."""
        kp = cols["keypoints"]
        out[:] = kp.reshape(-1)
        cols["keypoints"] = out.reshape(kp.shape)

    def joined(self) -> np.ndarray | None:
        """Every slice's numbers in order (None when a worker's part is missing)."""
        return self.room[self.start : self.end] if self.at == self.mid else None


def _numbers(got: Any) -> int | None:
    """How many keypoint numbers a worker's part has: the numbers it holds (``(rows, K)``)
    or sent pickled (``cols``); None for any other part (declined)."""
    if isinstance(got, tuple):
        return int(got[0] * got[1] * 3)
    if isinstance(got, dict):
        return int(got["keypoints"].size)
    return None


def move_left(col: np.ndarray, src: int, dst: int, n: int) -> None:
    """``col[dst:dst + n] = col[src:src + n]`` for ``dst <= src`` in pieces that do not
    overlap (NumPy would copy an overlapping source to fresh memory first)."""
    step = src - dst
    if step == 0 or n == 0:
        return
    if step < n // 64:  # a tiny shift: the temporary copy is cheaper than many pieces
        col[dst : dst + n] = col[src : src + n].copy()
        return
    for i in range(0, n, step):
        m = min(step, n - i)
        col[dst + i : dst + i + m] = col[src + i : src + i + m]


PIPE_SIZE = 1 << 20  # asked of the kernel for a worker's pipe (Linux allows 1 MiB by default)


def widen_pipe(fd: int) -> None:
    """Ask for a bigger pipe buffer (fewer switches between writer and reader); the
    default (64 KiB) where that is refused or unknown."""
    import fcntl

    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)  # (Linux, Python 3.10+)
    if setsize is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, setsize, PIPE_SIZE)


def send_raw(fd: int, arr: npt.NDArray[np.float64]) -> None:
    """Write ``arr``'s bytes to the pipe ``fd`` (after the message that says their size)."""
    view = np.ascontiguousarray(arr).data.cast("B")
    at = 0
    while at < len(view):
        at += os.write(fd, view[at:])


def recv_raw(
    fd: int, count: int, into: npt.NDArray[np.float64] | None = None
) -> npt.NDArray[np.float64] | None:
    """``count`` float64 read from the pipe ``fd`` into ``into`` (contiguous, of that size)
    or a fresh array; None when the pipe ends first (the writer died)."""
    out = np.empty(count, dtype=np.float64) if into is None else into
    assert out.size == count and out.flags.c_contiguous
    view = out.data.cast("B")
    at = 0
    while at < len(view):
        got = os.readv(fd, [view[at:]])
        if got == 0:
            return None
        at += got
    return out


# --- a worker's keypoint numbers read from its memory --------------------------------------
# The pipe costs two copies of every number (the worker's write, the parent's read: ~20-30
# ms for COCO val's ~25 MB on the critical path, the parent waiting on the worker's pace);
# process_vm_readv(2) copies them once, from the worker's pages straight into their place
# (~5 ms). The worker holds its numbers until the parent says it has them (one byte on a
# pipe of its own): b"d" done, b"p" send them through the pipe after all (the read failed:
# no such call, a security module or a seccomp filter refused it). It holds them only when
# it dies with the parent (workers.die_with_parent): a parent that was killed never leaves
# it waiting.


@cache
def _libc() -> Any:
    """libc with ``process_vm_readv`` typed (Linux), else None."""
    import ctypes

    from ..workers import libc

    lib = libc()
    read = getattr(lib, "process_vm_readv", None)
    if read is None:
        return None
    read.restype = ctypes.c_ssize_t
    read.argtypes = [
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_ulong,
        ctypes.c_void_p,
        ctypes.c_ulong,
        ctypes.c_ulong,
    ]
    return lib


def vm_capable() -> bool:
    """Whether a parent may try to read its workers' memory: Linux, and not forbidden by
    Yama (``ptrace_scope`` 2 and 3 refuse even a parent)."""
    if _libc() is None:
        return False
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope", "rb") as fh:
            return int(fh.read().strip() or b"0") < 2
    except (OSError, ValueError):
        return True  # (no Yama: the plain same-user rule)


def vm_read(pid: int, where: list[tuple[int, int]], outs: list[npt.NDArray[np.float64]]) -> bool:
    """Copy each ``(address, bytes)`` of process ``pid``'s memory into the matching array
    of ``outs`` (contiguous, of that size); False on any failure (nothing is then known
    about what was copied)."""
    import ctypes

    libc = _libc()
    if libc is None or len(where) != len(outs):
        return False
    iov = (ctypes.c_void_p * 2)()
    riov = (ctypes.c_void_p * 2)()
    for (addr, nbytes), out in zip(where, outs, strict=True):
        if out.nbytes != nbytes or not out.flags.c_contiguous or not out.flags.writeable:
            return False
        done = 0
        while done < nbytes:
            iov[0], iov[1] = out.ctypes.data + done, nbytes - done
            riov[0], riov[1] = addr + done, nbytes - done
            got = libc.process_vm_readv(pid, iov, 1, riov, 1, 0)
            if got <= 0:
                return False
            done += got
    return True


def hold_pipes(n: int) -> list[tuple[int, int]] | None:
    """A pipe per worker for the word that its keypoint numbers were read from its memory
    (:func:`vm_read`); None where they cannot be (the pipe carries them)."""
    if not vm_capable():
        return None
    pipes: list[tuple[int, int]] = []
    try:
        for _ in range(n):
            pipes.append(os.pipe())
    except OSError:  # (no descriptors left)
        for r, w in pipes:
            os.close(r)
            os.close(w)
        return None
    return pipes
