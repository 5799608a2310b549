"""Anchor: faster-coco-eval (C++), from process start. Usage: PREDS GT; prints 12 stats."""

import contextlib
import json
import sys

from faster_coco_eval import COCO, COCOeval_faster

preds, gt_path = sys.argv[1], sys.argv[2]
with contextlib.redirect_stdout(sys.stderr):
    gt = COCO(gt_path)
    dt = gt.loadRes(preds)
    ev = COCOeval_faster(gt, dt, "bbox")
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
print(json.dumps([float(s) for s in ev.stats[:12]]))
