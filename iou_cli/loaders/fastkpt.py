"""The typed reader of COCO keypoint *results* (``keypoints`` ``[x, y, score] * K`` per row)
straight to NumPy columns, for :mod:`.fastcoco` (one process, or a byte range of the file
in a forked worker).

The records are decoded by msgspec against a schema that keeps each row's ``keypoints`` as
raw JSON; the rows' raw lists are then decoded a slice of rows at a time as one list of
lists of floats (one typed decode instead of one per row) and copied into one float64
array. msgspec's float parsing is correctly rounded: every value is ``float()``'s of its
text (``tests/unit/test_fastkpt.py``). Anything the schema does not describe (a row that
is not a flat list of numbers, rows of different K, ``bbox`` on some rows only, a
non-finite number) returns ``None``: the validating loader then says what is wrong and where.

(An array parser of the numbers' bytes, as :mod:`.bytetable` does for DOTA's text, was
measured here: ~160 ns a number against msgspec's ~40 ns including the copy.)
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Alloc = Callable[[int], FloatArray]  # the flat keypoint array for n numbers


@cache
def _decoder() -> Any:
    import msgspec

    # keypoints stay raw JSON here: they are parsed below, all rows at once
    kpt_result = msgspec.defstruct(
        "KptResult",
        [
            ("image_id", int),
            ("category_id", int),
            ("keypoints", msgspec.Raw),
            ("score", float),
            ("bbox", tuple[float, float, float, float] | None, None),
        ],
        gc=False,
    )
    return msgspec.json.Decoder(list[kpt_result])  # type: ignore[valid-type]


def id_score_columns(
    recs: list[Any],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], FloatArray] | None:
    """``image_id``, ``category_id`` (int64) and ``score`` (float64) of decoded records;
    ``None`` for ids beyond 64 bits (the validating loader judges them)."""
    n = len(recs)
    try:
        image_id = np.fromiter(map(attrgetter("image_id"), recs), np.int64, n)
        category_id = np.fromiter(map(attrgetter("category_id"), recs), np.int64, n)
    except OverflowError:
        return None
    return image_id, category_id, np.fromiter(map(attrgetter("score"), recs), np.float64, n)


def kpt_columns(
    data: bytes | memoryview, alloc: Alloc | None = None
) -> dict[str, npt.NDArray[np.generic]] | None:
    """Columns of a keypoint results list without a BOM (also a slice of a bigger one):
    ``image_id``, ``category_id``, ``bbox`` (n, 4; NaN where the rows give none),
    ``score`` and ``keypoints`` (n, K, 3), or ``None``. ``alloc(size)``: where the flat
    keypoint numbers go (a forked worker's shared memory); a fresh array by default."""
    import msgspec

    try:
        recs = _decoder().decode(data)
    except msgspec.DecodeError:
        return None
    n = len(recs)
    if n == 0:
        return None
    kp_flat = keypoint_numbers(list(map(attrgetter("keypoints"), recs)), alloc)
    if kp_flat is None:
        return None
    m = kp_flat.shape[0] // n
    cols = id_score_columns(recs)
    if cols is None:
        return None
    image_id, category_id, score = cols
    kp = kp_flat.reshape(n, m // 3, 3)
    boxes = list(map(attrgetter("bbox"), recs))
    has = [b is not None for b in boxes]
    if any(has) and not all(has):
        return None
    if all(has):
        bbox = np.fromiter(chain.from_iterable(boxes), np.float64, 4 * n).reshape(n, 4)
        if not np.isfinite(bbox).all() or (bbox[:, 2:] < 0).any():
            return None
    else:
        bbox = np.full((n, 4), np.nan)
    if not (np.isfinite(kp).all() and np.isfinite(score).all()):
        return None
    return {
        "image_id": image_id,
        "category_id": category_id,
        "bbox": bbox,
        "score": score,
        "keypoints": kp,
    }


ROWS = 256  # rows decoded at once: their floats stay in the allocator's warm arenas


def keypoint_numbers(raws: list[Any], alloc: Alloc | None = None) -> FloatArray | None:
    """The numbers of every row's raw ``[x, y, v, ...]`` list, flat, or ``None`` unless every
    row is a flat list of the same count (a multiple of 3) of numbers.

    Rows are decoded a slice at a time (one typed decode of the slice's lists joined into
    one list of lists), each slice's floats copied into the array and freed before the next:
    the peak is one slice's Python floats, not all of them (~50 numbers a row). (Measured
    alternatives that did not pay: one flat list per slice, ``np.array`` of the lists,
    bigger slices.)"""
    import msgspec

    n = len(raws)
    out: FloatArray | None = None
    m = 0
    dec = msgspec.json.Decoder(list[list[float]])
    for a in range(0, n, ROWS):
        try:  # a Raw is a buffer: joined without a copy of each row
            rows = dec.decode(b"[" + b",".join(raws[a : a + ROWS]) + b"]")
        except msgspec.DecodeError:
            return None
        if out is None:
            m = len(rows[0])
            if m == 0 or m % 3:
                return None
            out = alloc(n * m) if alloc is not None else np.empty(n * m, dtype=np.float64)
        if set(map(len, rows)) != {m}:
            return None
        out[a * m : (a + len(rows)) * m] = np.fromiter(
            chain.from_iterable(rows), np.float64, m * len(rows)
        )
    return out


def same_kind(parts: list[dict[str, Any]]) -> bool:
    """Keypoint slices agree: one K in all, and a ``bbox`` on every row or on none (a slice
    without one has NaN boxes); otherwise the validating loader reads the file and says
    which row differs."""
    k = {p["keypoints"].shape[1] for p in parts}
    boxed = {bool(np.isnan(p["bbox"][:1]).all()) for p in parts}
    return len(k) == 1 and len(boxed) == 1
