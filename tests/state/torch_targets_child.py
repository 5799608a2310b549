"""Run in a child with a CPU torch on ``PYTHONPATH`` (tests/state/test_targets_refusals.py):
an Evaluator fed torch tensors (float32 boxes, int64 labels, scores that require grad, a
0-d image_id tensor), the way a training loop's ``model(images)`` and its targets come.
Prints the summary as JSON; iou-eval itself never imports torch."""

from __future__ import annotations

import json
import sys

import numpy as np
import torch

from iou_cli import Evaluator

scene = json.load(sys.stdin)
gt, dets = scene["gt"], scene["dets"]
ev = Evaluator(protocol=scene["protocol"], categories=gt["categories"])
ids = [im["id"] for im in gt["images"]]
for lo in range(0, len(ids), 3):
    preds, targets = [], []
    for k in ids[lo : lo + 3]:
        anns = [a for a in gt["annotations"] if a["image_id"] == k]
        ds = [d for d in dets if d["image_id"] == k]
        xyxy = [[x, y, x + w, y + h] for x, y, w, h in (a["bbox"] for a in anns)]
        targets.append(
            {
                "image_id": torch.tensor(k),
                "boxes": torch.tensor(xyxy, dtype=torch.float32).reshape(-1, 4),
                "labels": torch.tensor([a["category_id"] for a in anns], dtype=torch.int64),
                "iscrowd": torch.tensor([a["iscrowd"] for a in anns], dtype=torch.uint8),
                "area": torch.tensor([a["area"] for a in anns], dtype=torch.float64),
            }
        )
        pxyxy = [[x, y, x + w, y + h] for x, y, w, h in (d["bbox"] for d in ds)]
        scores = torch.tensor([d["score"] for d in ds], dtype=torch.float64, requires_grad=True)
        preds.append(
            {
                "boxes": torch.tensor(pxyxy, dtype=torch.float32).reshape(-1, 4),
                "scores": scores * 1.0,  # part of a graph: detached by iou-eval
                "labels": torch.tensor([d["category_id"] for d in ds], dtype=torch.int64),
            }
        )
    ev.update(preds, targets)
res = ev.compute()
assert "torch" in sys.modules
print(json.dumps(res.summary, default=str))
print(json.dumps(np.asarray(res.evaluation.precision).ravel().tolist()))
