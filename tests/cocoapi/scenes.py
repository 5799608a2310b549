"""Random scenes for the drop-in tests: tests/oracle/cocogen's box scenes, and the same
scenes as masks (polygons, uncompressed RLE for some crowd regions, compressed RLE results
without a bbox, as detectors write them)."""

from __future__ import annotations

import contextlib
import copy
import io
from typing import Any

import numpy as np

from tests.oracle.cocogen import random_scene


def _polygon(box: list[float], cut: int) -> list[list[float]]:
    """A box with one corner cut off (``cut`` pixels), or the box when it is too small."""
    x, y, w, h = box
    if w < 4 or h < 4:
        return [[x, y, x + max(w, 1), y, x + max(w, 1), y + max(h, 1), x, y + max(h, 1)]]
    c = min(cut, w // 2, h // 2)
    return [[x + c, y, x + w, y, x + w, y + h, x, y + h, x, y + c]]


def segm_scene(seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from pycocotools import mask as mask_utils

    gt, dets = random_scene(seed)
    rng = np.random.default_rng(seed + 1000)
    sizes = {im["id"]: (im["height"], im["width"]) for im in gt["images"]}
    for ann in gt["annotations"]:
        h, w = sizes[ann["image_id"]]
        poly = _polygon(ann["bbox"], int(rng.integers(0, 9)))
        if ann["iscrowd"]:
            rle = mask_utils.merge(mask_utils.frPyObjects(poly, h, w))
            dense = mask_utils.decode(rle)
            # uncompressed RLE (column-major run lengths), as crowd regions are stored
            flat = dense.flatten(order="F")
            change = np.flatnonzero(np.diff(flat)) + 1
            runs = np.diff(np.r_[0, change, flat.size]).tolist()
            if flat[0] == 1:
                runs = [0, *runs]
            ann["segmentation"] = {"size": [h, w], "counts": runs}
        else:
            ann["segmentation"] = poly
    out = []
    for det in dets:
        h, w = sizes[det["image_id"]]
        rle = mask_utils.merge(mask_utils.frPyObjects(_polygon(det["bbox"], 3), h, w))
        rle["counts"] = rle["counts"].decode("ascii")
        out.append(
            {
                "image_id": det["image_id"],
                "category_id": det["category_id"],
                "segmentation": rle,
                "score": det["score"],
            }
        )
    return gt, out


def scene(seed: int, iou_type: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return segm_scene(seed) if iou_type == "segm" else random_scene(seed)


def pycoco_objects(gt: dict[str, Any], dets: list[dict[str, Any]]) -> tuple[Any, Any]:
    """pycocotools' own COCO objects for a scene (quietly)."""
    from pycocotools.coco import COCO

    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = copy.deepcopy(gt)
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(copy.deepcopy(dets))
    return coco_gt, coco_dt
