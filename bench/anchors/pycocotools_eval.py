"""Anchor: pycocotools, from process start. Usage: pycocotools_eval.py PREDS GT [bbox|segm]; prints 12 stats."""

import contextlib
import json
import sys

from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

preds, gt_path = sys.argv[1], sys.argv[2]
iou_type = sys.argv[3] if len(sys.argv) > 3 else "bbox"
with contextlib.redirect_stdout(sys.stderr):
    gt = COCO(gt_path)
    dt = gt.loadRes(preds)
    ev = COCOeval(gt, dt, iou_type)
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
print(json.dumps([float(s) for s in ev.stats]))
