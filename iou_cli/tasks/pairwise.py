"""The ``iou`` verb's library call: two box arguments (a box or a CSV file each) -> IoU matrix."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import UsageError
from ..geometry.boxes import BOX_FORMATS

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
    if box_format not in BOX_FORMATS:
        raise UsageError(
            f"--box-format: expected one of {', '.join(BOX_FORMATS)}, got {box_format!r}"
        )
    from ..geometry.iou import iou
    from ..loaders.boxcsv import read_box_arg

    a = read_box_arg(box_a, "BOX_A", box_format=box_format)
    b = read_box_arg(box_b, "BOX_B", box_format=box_format)
    # both sides are validated (finite, not inverted): iou() cannot raise on them
    values = iou(a.boxes, b.boxes, box_format=box_format, iscrowd=[crowd] * len(b))
    return IouMatrix(values, box_format, crowd, single=a.path is None and b.path is None)


__all__ = ["IouMatrix", "box_iou_matrix"]
