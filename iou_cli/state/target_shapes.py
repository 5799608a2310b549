"""Per-object shapes of targets given per batch beyond boxes and masks: poses and rotated
boxes, as the COCO fields a file would hold (:mod:`.targets` builds the records).

* ``keypoints``: ``(N, K, 3)`` ``x, y, v`` (ground truth: ``v`` 0 not labelled, 1 labelled
  hidden, 2 visible; predictions: the third value is kept, never used, as pycocotools) or
  ``(N, K, 2)`` ``x, y`` (ground truth: every keypoint labelled and visible, ``v = 2``;
  predictions: ``v = 1``). The COCO field is the flat ``[x, y, v] * K`` list. A ground
  truth without ``boxes`` gets the extent of its labelled keypoints (:func:`labelled_extent`)
  and, without ``area``, that box's ``w * h`` (what the loader uses for a record without
  ``area``); a prediction without ``boxes`` the extent of all its keypoints, as
  pycocotools' ``loadRes``.
* rotated boxes: ``(N, 5)`` ``cx, cy, w, h, angle`` (hotcoco's COCO ``obb`` field; the
  angle in radians, or degrees with ``angle_unit="deg"``). Corners ``(N, 8)`` are refused:
  no COCO field holds them (give DOTA files to ``evaluate``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError


def keypoint_rows(
    value: npt.NDArray[Any], *, gt: bool, update: int, where: str, k: int | None
) -> list[list[float]]:
    """``(N, K, 2|3)`` keypoints as COCO's flat ``[x, y, v] * K`` lists (``k``: the K of
    earlier updates, which every update must keep)."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[0] == 0:
        arr = arr.reshape(0, k or 0, 3)
    if arr.ndim != 3 or arr.shape[2] not in (2, 3):
        raise InputError(
            f"update {update}",
            f"{where}.keypoints",
            f"expected keypoints of shape (N, K, 3) or (N, K, 2), got {arr.shape}",
        )
    if arr.shape[0] and k is not None and arr.shape[1] != k:
        raise InputError(
            f"update {update}",
            f"{where}.keypoints",
            f"{arr.shape[1]} keypoints per object, but earlier updates had K = {k}",
        )
    if not np.isfinite(arr).all():
        raise InputError(f"update {update}", f"{where}.keypoints", "a value is not finite")
    if arr.shape[2] == 2:
        flag = np.full(arr.shape[:2] + (1,), 2.0 if gt else 1.0)
        arr = np.concatenate([arr, flag], axis=2)
    out: list[list[float]] = arr.reshape(arr.shape[0], arr.shape[1] * 3).tolist()
    if gt:  # integral flags, as a file holds them
        for row in out:
            row[2::3] = [int(v) if float(v).is_integer() else v for v in row[2::3]]
    return out


def labelled_extent(rows: list[list[float]]) -> list[list[float]]:
    """Ground-truth poses without boxes: each one's box as COCO ``x, y, w, h``, the extent
    of its labelled keypoints (``v > 0``; ``[0, 0, 0, 0]`` when none is labelled: such a
    ground truth has ``num_keypoints`` 0 and is ignored, as pycocotools ignores it)."""
    out: list[list[float]] = []
    for r in rows:
        a = np.asarray(r, dtype=np.float64).reshape(-1, 3)
        a = a[a[:, 2] > 0]
        if a.shape[0] == 0:
            out.append([0.0, 0.0, 0.0, 0.0])
            continue
        x0, y0 = float(a[:, 0].min()), float(a[:, 1].min())
        out.append([x0, y0, float(a[:, 0].max()) - x0, float(a[:, 1].max()) - y0])
    return out


def obb_rows(value: npt.NDArray[Any], *, update: int, where: str) -> list[list[float]]:
    """``(N, 5)`` rotated boxes as COCO ``obb`` fields (``[cx, cy, w, h, angle]``)."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 8:
        raise InputError(
            f"update {update}",
            f"{where}.boxes",
            "corners (N, 8) are not taken here: give rotated boxes as (N, 5) cx, cy, w, h, "
            "angle (or evaluate DOTA files)",
        )
    if arr.size == 0:
        arr = arr.reshape(0, 5)
    if arr.ndim != 2 or arr.shape[1] != 5:
        raise InputError(
            f"update {update}",
            f"{where}.boxes",
            f"expected rotated boxes of shape (N, 5) cx, cy, w, h, angle, got {arr.shape}",
        )
    rows: list[list[float]] = arr.tolist()
    return rows


def target_keys(kind: str) -> tuple[str, ...]:
    """The keys a target dict needs (besides ``labels``) for ``kind``."""
    return {"segm": (), "keypoints": ("keypoints",)}.get(kind, ("boxes",))


def per_image(d: Any) -> bool:
    """Whether a dict is an image's arrays (``boxes``, ``masks``, or ``keypoints`` with
    ``labels``), not a COCO record (whose ``keypoints`` is a flat list beside
    ``category_id``)."""
    return "boxes" in d or "masks" in d or ("keypoints" in d and "labels" in d)
