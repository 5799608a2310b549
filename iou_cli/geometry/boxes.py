"""Box formats, conversions and validation of box arrays.

Formats (the last axis holds 4 numbers):

* ``xyxy``   corners ``x1, y1, x2, y2`` (Pascal VOC)
* ``xywh``   top-left corner and size ``x, y, w, h`` (COCO)
* ``cxcywh`` centre and size ``cx, cy, w, h`` (YOLO)

Conversions are plain float64 arithmetic, done once at the loader edge.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

BOX_FORMATS: tuple[str, ...] = ("xyxy", "xywh", "cxcywh")

FloatArray = npt.NDArray[np.float64]


def check_format(box_format: str) -> None:
    if box_format not in BOX_FORMATS:
        raise ValueError(
            f"unknown box format {box_format!r}: expected one of {', '.join(BOX_FORMATS)}"
        )


def as_boxes(boxes: npt.ArrayLike, *, name: str = "boxes", pairwise: bool = True) -> FloatArray:
    """Return ``boxes`` as a float64 array whose last axis has length 4.

    Accepts lists, tuples and arrays of any real dtype. With ``pairwise`` the result is
    2-D (N, 4): a single box (4,) becomes (1, 4) and an empty input becomes (0, 4).
    Raises ValueError naming the first non-finite row.
    """
    arr = np.asarray(boxes)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        if arr.size == 0:
            arr = arr.astype(np.float64)
        else:
            raise ValueError(f"{name}: expected real numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name}: expected real numbers, got complex values")
    arr = arr.astype(np.float64, copy=False)
    if pairwise:
        if arr.size == 0:
            return np.zeros((0, 4), dtype=np.float64)
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        if arr.ndim != 2 or arr.shape[1] != 4:
            raise ValueError(f"{name}: expected shape (N, 4), got {tuple(np.shape(boxes))}")
    elif arr.shape[-1:] != (4,):
        raise ValueError(f"{name}: expected shape (..., 4), got {arr.shape}")
    finite = np.isfinite(arr).all(axis=-1)
    if not finite.all():
        bad = np.argwhere(~finite)[0]
        raise ValueError(f"{name}: row {_row(bad)} has a non-finite value: {arr[tuple(bad)]}")
    return arr


def _row(index: npt.NDArray[np.intp]) -> str:
    return str(int(index[0])) if len(index) == 1 else str(tuple(int(i) for i in index))


def corners_and_area(
    boxes: FloatArray, box_format: str, *, name: str = "boxes"
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Split validated boxes into ``x1, y1, x2, y2, area`` in the order pycocotools uses.

    For ``xywh`` the right edge is ``x + w`` and the area ``w * h`` exactly as
    ``maskApi.c:bbIou`` computes them, so IoUs agree with pycocotools to the last bit.
    Raises ValueError naming the first row with a negative width or height.
    """
    x1, y1, x2, y2, w, h = _extent(boxes, box_format)
    bad = (w < 0) | (h < 0)
    if bad.any():
        idx = np.argwhere(bad)[0]
        raise ValueError(
            f"{name}: row {_row(idx)} is inverted ({inverted_what(box_format)}): "
            f"{boxes[tuple(idx)].tolist()}"
        )
    return x1, y1, x2, y2, w * h


def _extent(boxes: FloatArray, box_format: str) -> tuple[FloatArray, ...]:
    """``x1, y1, x2, y2, w, h`` of boxes (..., 4) given in ``box_format``."""
    check_format(box_format)
    a0, a1, a2, a3 = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
    if box_format == "xyxy":
        return a0, a1, a2, a3, a2 - a0, a3 - a1
    if box_format == "xywh":
        return a0, a1, a0 + a2, a1 + a3, a2, a3
    # cxcywh
    return a0 - a2 / 2, a1 - a3 / 2, a0 + a2 / 2, a1 + a3 / 2, a2, a3


def inverted(boxes: FloatArray, box_format: str) -> npt.NDArray[np.bool_]:
    """Which boxes (..., 4) have a negative width or height in ``box_format``."""
    _, _, _, _, w, h = _extent(boxes, box_format)
    return np.asarray((w < 0) | (h < 0), dtype=bool)


def inverted_what(box_format: str) -> str:
    """What an inverted box is in ``box_format``, for messages."""
    return "x2 < x1 or y2 < y1" if box_format == "xyxy" else "negative width or height"


def convert(boxes: npt.ArrayLike, src: str, dst: str) -> FloatArray:
    """Convert boxes (..., 4) between ``xyxy``, ``xywh`` and ``cxcywh``.

    >>> convert([[10, 20, 30, 40]], "xywh", "xyxy").tolist()
    [[10.0, 20.0, 40.0, 60.0]]
    """
    check_format(src)
    check_format(dst)
    arr = as_boxes(boxes, pairwise=False) if np.size(boxes) else np.zeros((0, 4))
    if src == dst:
        return arr.copy()
    x1, y1, x2, y2, _ = corners_and_area(arr, src)
    if dst == "xyxy":
        out = (x1, y1, x2, y2)
    elif dst == "xywh":
        out = (x1, y1, x2 - x1, y2 - y1)
    else:
        out = ((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1)
    return np.stack(out, axis=-1)


def xywh_to_xyxy(boxes: npt.ArrayLike) -> FloatArray:
    return convert(boxes, "xywh", "xyxy")


def xyxy_to_xywh(boxes: npt.ArrayLike) -> FloatArray:
    return convert(boxes, "xyxy", "xywh")


def cxcywh_to_xyxy(boxes: npt.ArrayLike) -> FloatArray:
    return convert(boxes, "cxcywh", "xyxy")


def xyxy_to_cxcywh(boxes: npt.ArrayLike) -> FloatArray:
    return convert(boxes, "xyxy", "cxcywh")


def xywh_to_cxcywh(boxes: npt.ArrayLike) -> FloatArray:
    return convert(boxes, "xywh", "cxcywh")


def cxcywh_to_xywh(boxes: npt.ArrayLike) -> FloatArray:
    return convert(boxes, "cxcywh", "xywh")
