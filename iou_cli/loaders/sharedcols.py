"""The columns forked decoders hand back (:mod:`.fastcoco`'s ``--jobs`` decode): one shared
anonymous mapping made before the fork, written by the workers, read by the parent without
a pickle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt


class SharedColumns:
    """Every slice's box columns in one shared anonymous mapping made before the fork, each
    slice at its own place (room for ``len // min_record + 1`` rows: only the pages written
    take memory): a worker writes its rows there and sends their count, and the parent reads
    them without a pickle. A slice with more rows than its room is pickled instead.
    Keypoints: the flat numbers too (room for ``len // 2 + 1``: a number and its comma take
    two bytes or more), decoded straight into it (:meth:`kp_alloc`)."""

    def __init__(self, slices: list[tuple[int, int]], field: str, min_record: int) -> None:
        import mmap

        width = 5 if field == "obb" else 4
        room = [(b - a) // min_record + 1 for a, b in slices]
        self.starts = np.cumsum([0, *room]).tolist()
        total = int(self.starts[-1])
        kp_room = [(b - a) // 2 + 1 if field == "keypoints" else 0 for a, b in slices]
        self.kp_starts = np.cumsum([0, *kp_room]).tolist()
        at = 8 * total * (3 + width)
        mm = mmap.mmap(-1, at + 8 * int(self.kp_starts[-1]))
        geom = "bbox" if field == "keypoints" else field
        self.cols: dict[str, Any] = {
            "image_id": np.frombuffer(mm, np.int64, total, 0),
            "category_id": np.frombuffer(mm, np.int64, total, 8 * total),
            geom: np.frombuffer(mm, np.float64, total * width, 16 * total).reshape(-1, width),
            "score": np.frombuffer(mm, np.float64, total, 8 * total * (2 + width)),
        }
        self.kp = (
            np.frombuffer(mm, np.float64, int(self.kp_starts[-1]), at)
            if field == "keypoints"
            else None
        )

    def kp_alloc(self, k: int) -> Callable[[int], npt.NDArray[np.float64]] | None:
        """Where slice ``k``'s flat keypoint numbers are decoded to: its room, when they fit."""
        kp = self.kp
        if kp is None:
            return None
        a, b = self.kp_starts[k], self.kp_starts[k + 1]
        return lambda size: kp[a : a + size] if size <= b - a else np.empty(size)

    def put(self, k: int, cols: dict[str, Any]) -> dict[str, Any] | int | tuple[int, int]:
        """Slice ``k``'s columns written to the mapping: their row count (keypoints: and K),
        else ``cols``."""
        a, n = self.starts[k], int(cols["score"].shape[0])
        kp = cols.get("keypoints")
        if set(cols) - {"keypoints"} != set(self.cols) or a + n > self.starts[k + 1]:
            return cols
        if self.kp is not None:
            flat = kp.reshape(-1) if kp is not None else None
            s0, s1 = self.kp_starts[k], self.kp_starts[k + 1]
            if flat is None or s0 + flat.shape[0] > s1:
                return cols
            if not np.shares_memory(flat, self.kp):  # (decoded elsewhere: copied)
                self.kp[s0 : s0 + flat.shape[0]] = flat
        for key, col in self.cols.items():
            col[a : a + n] = cols[key]
        return n if kp is None else (n, int(kp.shape[1]))

    def view(self, k: int, got: int | tuple[int, int]) -> dict[str, Any]:
        n, kk = got if isinstance(got, tuple) else (got, 0)
        a = self.starts[k]
        out = {key: col[a : a + n] for key, col in self.cols.items()}
        if self.kp is not None:
            s0 = self.kp_starts[k]
            out["keypoints"] = self.kp[s0 : s0 + n * kk * 3].reshape(n, kk, 3)
        return out

    def holds(self, cols: dict[str, Any]) -> bool:
        """Whether ``cols`` is a view of this mapping (a slice not pickled); keypoints are
        always copied out (:func:`_concat`)."""
        return self.kp is None and cols["score"].base is self.cols["score"]

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
