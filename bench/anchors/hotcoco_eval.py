"""Anchor: hotcoco (Rust) used as a library, from process start. Usage: PREDS GT [bbox|segm]; prints 12 stats."""

import contextlib
import json
import sys

from hotcoco import COCO, COCOeval

preds, gt_path = sys.argv[1], sys.argv[2]
iou_type = sys.argv[3] if len(sys.argv) > 3 else "bbox"
with contextlib.redirect_stdout(sys.stderr):
    gt = COCO(gt_path)
    dt = gt.load_res(preds)
    ev = COCOeval(gt, dt, iou_type)
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
print(json.dumps([float(s) for s in list(ev.stats)[:12]]))
