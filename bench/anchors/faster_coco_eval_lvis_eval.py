"""Anchor: faster-coco-eval's LVIS mode (lvis_style=True, maxDets [300]), from process start.
Usage: PREDS GT; prints AP ... APf, AR@300, ARs, ARm, ARl (13 values).

Note: faster-coco-eval keeps 300 detections per image *and category* (COCO's maxDets), not
lvis-api's top 300 per image, so its values differ where an image has more than 300."""

import contextlib
import json
import sys

from faster_coco_eval import COCO, COCOeval_faster

preds, gt_path = sys.argv[1], sys.argv[2]
with contextlib.redirect_stdout(sys.stderr):
    gt = COCO(gt_path)
    dt = gt.loadRes(preds)
    ev = COCOeval_faster(gt, dt, "bbox", lvis_style=True, print_function=lambda *a: None)
    ev.params.maxDets = [300]
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
s = ev.stats_as_dict
keys = ["AP_all", "AP_50", "AP_75", "AP_small", "AP_medium", "AP_large", "APr", "APc", "APf"]
keys += ["AR_all", "AR_small", "AR_medium", "AR_large"]
print(json.dumps([float(s[k]) for k in keys]))
