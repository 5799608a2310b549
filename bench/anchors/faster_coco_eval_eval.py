"""Anchor: faster-coco-eval (C++), from process start. Usage: PREDS GT [bbox|segm]; prints 12 stats."""

import contextlib
import json
import sys

from faster_coco_eval import COCO, COCOeval_faster

preds, gt_path = sys.argv[1], sys.argv[2]
iou_type = sys.argv[3] if len(sys.argv) > 3 else "bbox"
with contextlib.redirect_stdout(sys.stderr):
    gt = COCO(gt_path)
    dt = gt.loadRes(preds)
    ev = COCOeval_faster(gt, dt, iou_type)
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
print(json.dumps([float(s) for s in ev.stats[:12]]))
