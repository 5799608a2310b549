"""Normalised YOLO sides in pixels: boxes, rotated corners, YOLO-seg polygons and YOLO-pose
keypoints scaled by each image's width and height."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data import Side
from .yolo_pose import scale_keypoints


def _scale_masks(masks: list[Any] | None, wi: np.ndarray, hi: np.ndarray) -> list[Any] | None:
    """Normalised YOLO-seg polygons in pixels (x by the image width, y by its height)."""
    if masks is None:
        return None
    out = []
    for m, w, h in zip(masks, wi.tolist(), hi.tolist(), strict=True):
        out.append([[v * (w if i % 2 == 0 else h) for i, v in enumerate(p)] for p in m])
    return out


def to_pixels(side: Side, width: np.ndarray, height: np.ndarray) -> Side:
    """Scale a normalised side to pixels with per-image ``width``/``height`` (aligned with
    ``side.images``). Corners are ``(cx -/+ w/2) * W``; the IoU area is the pixel ``w * h``.
    Images without boxes may have unknown (NaN) sizes."""
    from dataclasses import replace

    from ..geometry.obb import polygon_area

    b = side.boxes
    if not b.normalized:
        return side
    wi = width[b.image]
    hi = height[b.image]
    scale = np.stack([wi, hi, wi, hi], axis=1)
    obb = None
    with np.errstate(over="ignore", invalid="ignore"):  # join.check_geometry locates it
        xyxy = b.xyxy * scale
        area = (xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1])
        if b.obb is not None:  # rotated corners: each x by W, each y by H
            obb = b.obb * np.tile(scale[:, :2], 4)
            area = polygon_area(obb)
    cols: dict[str, Any] = {
        "xyxy": xyxy,
        "obb": obb,
        "box_area": area,
        # a mask's area is the mask's (computed from it), not its box's
        "area": area.copy() if b.masks is None else np.full(len(area), np.nan),
        "masks": _scale_masks(b.masks, wi, hi),
        "normalized": False,
    }
    boxes = replace(b, **{**cols, **scale_keypoints(b, xyxy, wi, hi)})
    images = replace(
        side.images,
        width=np.asarray(width, dtype=np.float64),
        height=np.asarray(height, dtype=np.float64),
    )
    return replace(side, boxes=boxes, images=images)
