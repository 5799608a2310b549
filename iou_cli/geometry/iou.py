"""The IoU engine: pairwise and element-wise IoU of axis-aligned boxes (NumPy only).

Exact float64, no epsilon: the float operations follow pycocotools' ``maskApi.c:bbIou``
(``w = min(x2) - max(x1)``; ``i = w * h``; ``u = (area_a + area_b) - i``; crowd:
``u = area_a``), so a value lands on the same side of an IoU threshold as in pycocotools.
A zero-area union and touching boxes give 0.0; negative coordinates are valid.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .boxes import FloatArray, as_boxes, corners_and_area

Corners = tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]


def overlap(
    a: Corners, b: Corners, crowd: npt.ArrayLike | None = None, *, clip: bool = False
) -> FloatArray:
    """IoU of boxes given as broadcastable ``(x1, y1, x2, y2, area)`` columns.

    ``a`` are detections/predictions, ``b`` ground truths; where ``crowd`` (broadcast like
    ``b``) is true the union is the area of ``a`` (intersection over the prediction's area).
    This is the one kernel every IoU in iou-eval goes through.

    With ``xywh`` input, ``(x + w) - x`` can exceed ``w`` by an ulp, so a near-identical
    pair can score 1 + 2e-16, exactly as in pycocotools. The protocols keep that value (it
    decides ties the way pycocotools does); the public API clips to 1 (``clip=True``).
    """
    ax1, ay1, ax2, ay2, aa = a
    bx1, by1, bx2, by2, ba = b
    w = np.minimum(ax2, bx2) - np.maximum(ax1, bx1)
    h = np.minimum(ay2, by2) - np.maximum(ay1, by1)
    hit = (w > 0) & (h > 0)
    with np.errstate(over="ignore"):  # two far-apart huge boxes: masked out by ``hit``
        inter = w * h
    union = aa + ba - inter
    if crowd is not None:
        crowd_arr = np.asarray(crowd, dtype=bool)
        if crowd_arr.any():
            union = np.where(crowd_arr, aa, union)
    out = np.zeros(np.broadcast(inter, union).shape, dtype=np.float64)
    # union > 0 as well: w * h can underflow to 0 for subnormal sizes (0/0 would be NaN)
    np.divide(inter, union, out=out, where=hit & (union > 0))
    if clip:
        np.minimum(out, 1.0, out=out)
    return out


def iou(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    box_format: str = "xyxy",
    iscrowd: npt.ArrayLike | None = None,
) -> FloatArray:
    """Pairwise IoU: every box of ``a`` (N, 4) against every box of ``b`` (M, 4) -> (N, M).

    ``iscrowd`` (M,) flags boxes of ``b`` as crowd regions: for those the IoU is
    ``|a ∩ b| / |a|`` (COCO: a prediction may match any part of a crowd region).

    >>> iou([[50, 100, 150, 150]], [[105, 120, 185, 160]]).round(8).tolist()
    [[0.19708029]]
    """
    aa = as_boxes(a, name="a")
    bb = as_boxes(b, name="b")
    ca = corners_and_area(aa, box_format, name="a")
    cb = corners_and_area(bb, box_format, name="b")
    crowd = None
    if iscrowd is not None:
        crowd = np.asarray(iscrowd, dtype=bool).reshape(-1)
        if crowd.shape[0] != bb.shape[0]:
            raise ValueError(
                f"iscrowd: expected {bb.shape[0]} flags (one per box of b), got {crowd.shape[0]}"
            )
        crowd = crowd[None, :]
    col = tuple(c[:, None] for c in ca)
    row = tuple(c[None, :] for c in cb)
    return overlap(col, row, crowd, clip=True)  # type: ignore[arg-type]


def paired_iou(a: npt.ArrayLike, b: npt.ArrayLike, *, box_format: str = "xyxy") -> FloatArray:
    """Element-wise IoU of two arrays of shape (..., 4) -> (...).

    Leading dimensions must be equal or broadcastable (batches, grids).
    """
    aa = as_boxes(a, name="a", pairwise=False)
    bb = as_boxes(b, name="b", pairwise=False)
    try:
        np.broadcast_shapes(aa.shape[:-1], bb.shape[:-1])
    except ValueError:
        raise ValueError(
            f"a and b: leading shapes {aa.shape[:-1]} and {bb.shape[:-1]} do not broadcast"
        ) from None
    return overlap(
        corners_and_area(aa, box_format, name="a"),
        corners_and_area(bb, box_format, name="b"),
        clip=True,
    )
