"""pycocotools as an oracle: run COCOeval on in-memory dicts, quietly."""

from __future__ import annotations

import contextlib
import copy
import io
from typing import Any

import numpy as np

STAT_KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"]


def pycoco_eval(gt: dict[str, Any], dets: list[dict[str, Any]], iou_type: str = "bbox") -> Any:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = copy.deepcopy(gt)
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(copy.deepcopy(dets))
        ev = COCOeval(coco_gt, coco_dt, iou_type)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def stats_of(ev: Any) -> list[float | None]:
    return [None if s == -1 else float(s) for s in ev.stats]


def per_class_ap(ev: Any) -> list[float | None]:
    prec = ev.eval["precision"]  # (T, R, K, A, M)
    out: list[float | None] = []
    for k in range(prec.shape[2]):
        s = prec[:, :, k, 0, -1]
        out.append(float(np.mean(s[s > -1])) if (s > -1).any() else None)
    return out
