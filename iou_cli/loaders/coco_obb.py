"""COCO ``obb`` fields (hotcoco's rotated boxes): ``[cx, cy, w, h, angle]`` on annotations
and results, the angle in radians (``angle_unit="deg"`` where a tool writes degrees)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError, kind_of
from ..geometry.obb import aabb, xywhr_to_corners


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _locate(recs: list[Any], path: str, prefix: str) -> None:
    for i, rec in enumerate(recs):
        where = f"{prefix}[{i}]"
        if not isinstance(rec, dict):
            raise InputError(path, where, f"expected an object, got {kind_of(rec)}")
        if "obb" not in rec:
            hint = (
                " (an axis-aligned 'bbox' only: rotated and axis-aligned records cannot be mixed)"
                if "bbox" in rec
                else ""
            )
            raise InputError(path, where, f"missing key 'obb' ([cx, cy, w, h, angle]){hint}")
        v = rec["obb"]
        if not isinstance(v, list) or len(v) != 5:
            got = f"{len(v)} numbers" if isinstance(v, list) else kind_of(v)
            raise InputError(
                path, f"{where}.obb", f"expected 5 numbers [cx, cy, w, h, angle], got {got}"
            )
        for j, x in enumerate(v):
            if not _is_num(x) or not math.isfinite(x):
                raise InputError(
                    path,
                    f"{where}.obb[{j}]",
                    f"expected a finite number, got {kind_of(x) if not _is_num(x) else x}",
                )
        if v[2] < 0 or v[3] < 0:
            raise InputError(path, f"{where}.obb", f"negative width or height: {v}")


def obb_columns(
    recs: list[Any], path: str, prefix: str, *, angle_unit: str = "rad"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(corners (N, 8), axis-aligned xywh (N, 4), w*h (N,))`` of the records' ``obb``."""
    n = len(recs)
    try:
        arr = np.array([r["obb"] for r in recs]) if n else np.zeros((0, 5))
        ok = arr.dtype.kind in "iuf" and arr.shape == (n, 5)
        arr = arr.astype(np.float64)
        ok = ok and bool(np.isfinite(arr).all()) and not (arr[:, 2:4] < 0).any()
    except (KeyError, TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        _locate(recs, path, prefix)
        raise InputError(path, prefix, "malformed obb fields")  # pragma: no cover
    return obb_arrays(arr, angle_unit=angle_unit)


def obb_arrays(
    obb: np.ndarray, *, angle_unit: str = "rad"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(corners (N, 8), axis-aligned xywh (N, 4), w*h (N,))`` of ``(N, 5)`` obb rows."""
    arr = np.array(obb, dtype=np.float64, copy=True).reshape(-1, 5)
    if angle_unit == "deg":
        arr[:, 4] = np.deg2rad(arr[:, 4])
    corners = xywhr_to_corners(arr)
    box = aabb(corners.reshape(-1, 4, 2))
    xywh = np.concatenate([box[:, :2], box[:, 2:] - box[:, :2]], axis=1)
    return corners, xywh, arr[:, 2] * arr[:, 3]
