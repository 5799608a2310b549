"""Anchor and reference: lvis-api (PyPI lvis 0.5.3), from process start. Usage: PREDS GT;
prints its 13 summary values (AP ... APf, AR@300, ARs@300, ARm@300, ARl@300).

lvis 0.5.3 calls np.float, removed in NumPy 1.24: the alias is put back (it is the builtin
float) before it is imported."""

import contextlib
import json
import sys

import numpy as np

np.float = float  # type: ignore[attr-defined]

from lvis import LVIS, LVISEval, LVISResults  # noqa: E402

KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf"]
KEYS += ["AR@300", "ARs@300", "ARm@300", "ARl@300"]

preds, gt_path = sys.argv[1], sys.argv[2]
with contextlib.redirect_stdout(sys.stderr):
    gt = LVIS(gt_path)
    ev = LVISEval(gt, LVISResults(gt, preds), "bbox")
    ev.run()
print(json.dumps([float(ev.results[k]) for k in KEYS]))
