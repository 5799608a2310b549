"""Format detection and the one entry point that turns two paths into a Dataset."""

from __future__ import annotations

import os

from ..data import Dataset, Side, align
from ..errors import InputError
from . import LoadOptions


def detect_format(path: str) -> str:
    """``coco`` for a JSON file; folders and other formats: see the VOC/YOLO loaders."""
    if not os.path.exists(path):
        raise InputError(path, None, "no such file or folder")
    if os.path.isdir(path):
        raise InputError(path, None, "folders (VOC XML, YOLO txt) are not supported yet")
    return "coco"


def load_side(path: str, *, role: str, fmt: str | None, opts: LoadOptions) -> Side:
    fmt = fmt or detect_format(path)
    if fmt == "coco":
        from .coco import load_coco

        return load_coco(path, role=role, iou_type=opts.iou_type)
    raise InputError(path, None, f"format {fmt!r} is not supported yet")


def load_dataset(pred_path: str, gt_path: str, opts: LoadOptions) -> Dataset:
    """Read both sides and join predictions onto the ground truth's images and categories."""
    gt = load_side(gt_path, role="gt", fmt=opts.gt_format, opts=opts)
    pred = load_side(pred_path, role="pred", fmt=opts.pred_format, opts=opts)
    return align(pred, gt, unknown=opts.unknown)
