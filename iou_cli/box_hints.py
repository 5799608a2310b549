"""Near-zero AP while the predictions would overlap under another box format: say which.

A results file whose boxes are ``x1 y1 x2 y2`` read as COCO's ``x y w h``, centre-based
boxes read as corners, or normalised coordinates read as pixels give an AP near 0 without
any error. When the primary AP is below 0.01, the predictions' boxes are re-read under each
other common convention (class-agnostic, on at most 2,000 images that have both sides), and
a convention under which at least half of them (and three times as many as read) meet a
ground truth of their image by IoU >= 0.5 is named.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from .data import Dataset

FloatArray = npt.NDArray[np.float64]
_KEYS = ("AP", "mAP", "metrics/mAP50-95(B)")


def _readings(ds: Dataset) -> dict[str, Callable[[FloatArray], FloatArray]]:
    """Other readings of the predictions' numbers, from the corners as read (x1 y1 x2 y2;
    ``w = x2 - x1``): what the boxes would be if the file meant something else."""

    def corners_as_xywh(b: FloatArray) -> FloatArray:  # read as x y w h, file had corners
        x, y, w, h = b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
        return np.stack([x, y, w, h], axis=1)

    def xywh_as_corners(b: FloatArray) -> FloatArray:  # read as corners, file had x y w h
        return np.stack([b[:, 0], b[:, 1], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]], axis=1)

    def centre(b: FloatArray) -> FloatArray:  # the (x, y) read were box centres
        w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
        return np.stack([b[:, 0] - w / 2, b[:, 1] - h / 2, b[:, 0] + w / 2, b[:, 1] + h / 2], 1)

    out: dict[str, Callable[[FloatArray], FloatArray]] = {
        "x1 y1 x2 y2 (corners), not x y w h": corners_as_xywh,
        "x y w h, not corners": xywh_as_corners,
        "cx cy w h (centres), not x y w h": centre,
    }
    w, h = ds.images.width, ds.images.height
    sized = ds.pixel_units and bool(np.isfinite(w).all() and np.isfinite(h).all())
    if sized and len(ds.pred) and float(np.abs(ds.pred.xyxy).max()) <= 1.5:
        img = ds.pred.image

        def scaled(b: FloatArray) -> FloatArray:
            s = np.stack([w[img], h[img], w[img], h[img]], axis=1)
            return b * s

        out["normalised to [0, 1] (multiply by the image size)"] = scaled
    return out


def _iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """Pairwise IoU, an inverted or empty box overlapping nothing (no validation: these are
    guesses, not inputs)."""
    w = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    h = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.clip(w, 0, None) * np.clip(h, 0, None)
    area_a = np.clip(a[:, 2] - a[:, 0], 0, None) * np.clip(a[:, 3] - a[:, 1], 0, None)
    area_b = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
    union = area_a[:, None] + area_b[None, :] - inter
    out: FloatArray = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
    return out


def _hits(ds: Dataset, boxes: FloatArray, images: npt.NDArray[np.int64]) -> int:
    pred, gt = ds.pred, ds.gt
    p_order = np.argsort(pred.image, kind="stable")
    g_order = np.argsort(gt.image, kind="stable")
    n = 0
    p_img, g_img = pred.image[p_order], gt.image[g_order]
    for i in images:
        a, b = np.searchsorted(p_img, i, "left"), np.searchsorted(p_img, i, "right")
        c, d = np.searchsorted(g_img, i, "left"), np.searchsorted(g_img, i, "right")
        if a == b or c == d:
            continue
        m = _iou(boxes[p_order[a:b]], gt.xyxy[g_order[c:d]])
        n += int(np.count_nonzero(m.max(axis=1) >= 0.5))
    return n


def box_format_hint(ds: Dataset, summary: dict[str, object]) -> str | None:
    """The warning (module docstring), or None."""
    key = next((k for k in _KEYS if k in summary), None)
    value = summary.get(key) if key else None
    if not isinstance(value, float) or value >= 0.01 or not len(ds.pred) or not len(ds.gt):
        return None
    images = np.intersect1d(ds.pred.image, ds.gt.image)[:2000]
    if not images.size:
        return None
    sel = np.isin(ds.pred.image, images)
    n_pred = int(np.count_nonzero(sel))
    as_read = _hits(ds, ds.pred.xyxy, images)
    best, best_hits = None, 0
    with np.errstate(all="ignore"):
        for name, fn in _readings(ds).items():
            hits = _hits(ds, fn(ds.pred.xyxy), images)
            if hits > best_hits:
                best, best_hits = name, hits
    if best is None or best_hits < 0.5 * n_pred or best_hits < 3 * max(as_read, 1):
        return None
    return (
        f"{key} is {value:.4g}, but if the predicted boxes were {best}, {best_hits} of {n_pred} "
        f"predictions would overlap a ground truth of their image by IoU >= 0.5 (as read: "
        f"{as_read}): check the predictions' box format"
    )
