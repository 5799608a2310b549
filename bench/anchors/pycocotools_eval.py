"""Anchor: pycocotools, from process start. Usage: pycocotools_eval.py PREDS GT; prints 12 stats."""

import contextlib
import json
import sys

from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

preds, gt_path = sys.argv[1], sys.argv[2]
with contextlib.redirect_stdout(sys.stderr):
    gt = COCO(gt_path)
    dt = gt.loadRes(preds)
    ev = COCOeval(gt, dt, "bbox")
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
print(json.dumps([float(s) for s in ev.stats]))
