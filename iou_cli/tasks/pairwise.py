"""The ``iou`` verb's library call: two box arguments (a box or a CSV file each) -> IoU matrix."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import InputError, UsageError
from ..geometry.boxes import BOX_FORMATS

# rotated boxes: ``cx,cy,w,h,angle`` (radians) or four corners ``x1,y1,...,x4,y4``
OBB_FORMATS = {"xywhr": 5, "corners": 8}

FloatArray = npt.NDArray[np.float64]


@dataclass
class IouMatrix:
    """``values[i, j]`` is the IoU of box ``i`` of A with box ``j`` of B (N, M).

    ``single`` when both arguments were one box each (not files): the CLI then prints the
    bare number. ``box_format`` and ``crowd`` echo the settings.
    """

    values: FloatArray
    box_format: str
    crowd: bool
    single: bool


def box_iou_matrix(
    box_a: str, box_b: str, *, box_format: str = "xyxy", crowd: bool = False
) -> IouMatrix:
    """IoU of every box of ``box_a`` with every box of ``box_b``: each is a box
    ``x1,y1,x2,y2`` (in ``box_format``) or the path of a CSV file of boxes
    (:mod:`iou_cli.loaders.boxcsv`). With ``crowd`` the boxes of B are crowd regions
    (``|A ∩ B| / |A|``)."""
    if box_format in OBB_FORMATS:
        return _obb_matrix(box_a, box_b, box_format=box_format, crowd=crowd)
    if box_format not in BOX_FORMATS:
        choices = ", ".join([*BOX_FORMATS, *OBB_FORMATS])
        raise UsageError(f"--box-format: expected one of {choices}, got {box_format!r}")
    from ..geometry.iou import iou
    from ..loaders.boxcsv import read_box_arg

    a = read_box_arg(box_a, "BOX_A", box_format=box_format)
    b = read_box_arg(box_b, "BOX_B", box_format=box_format)
    # both sides are validated (finite, not inverted): iou() cannot raise on them
    values = iou(a.boxes, b.boxes, box_format=box_format, iscrowd=[crowd] * len(b))
    return IouMatrix(values, box_format, crowd, single=a.path is None and b.path is None)


def _obb_matrix(box_a: str, box_b: str, *, box_format: str, crowd: bool) -> IouMatrix:
    """Rotated boxes: exact polygon IoU (:func:`iou_cli.geometry.obb.obb_iou`)."""
    import os
    import warnings

    from ..geometry.obb import obb_iou

    n = OBB_FORMATS[box_format]
    a = _obb_arg(box_a, "BOX_A", n)
    b = _obb_arg(box_b, "BOX_B", n)
    with warnings.catch_warnings():  # the library never prints; a hull is the documented rule
        warnings.simplefilter("ignore")
        values = obb_iou(a, b, crowd=[crowd] * len(b))
    single = not os.path.isfile(box_a) and not os.path.isfile(box_b)
    return IouMatrix(values, box_format, crowd, single=single)


def _obb_arg(text: str, what: str, n: int) -> FloatArray:
    """One rotated box (``n`` comma-separated numbers) or a CSV file of them (a header line
    of names is skipped)."""
    import math
    import os

    layout = "cx,cy,w,h,angle" if n == 5 else "x1,y1,x2,y2,x3,y3,x4,y4"
    if not os.path.isfile(text):
        try:
            nums = [float(v) for v in text.split(",")]
        except ValueError:
            raise UsageError(f"{what}: expected {n} numbers ({layout}), got {text!r}") from None
        if len(nums) != n or not all(math.isfinite(v) for v in nums):
            raise UsageError(f"{what}: expected {n} finite numbers ({layout}), got {text!r}")
        return np.asarray([nums], dtype=np.float64)
    from ..loaders.files import read_text

    rows: list[list[float]] = []
    for ln, line in enumerate(read_text(text).split("\n"), 1):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        try:
            nums = [float(c) for c in cells]
        except ValueError:
            if ln == 1 and not rows:
                continue  # a header
            raise InputError(
                text, ln, f"expected {n} numbers ({layout}), got {line[:40]!r}"
            ) from None
        if len(nums) != n or not all(math.isfinite(v) for v in nums):
            raise InputError(text, ln, f"expected {n} finite numbers ({layout}), got {len(nums)}")
        rows.append(nums)
    return np.asarray(rows, dtype=np.float64).reshape(-1, n)


__all__ = ["OBB_FORMATS", "IouMatrix", "box_iou_matrix"]
