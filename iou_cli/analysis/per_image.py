"""Per-image view at the operating point, and label-error candidates.

One row per image: ``n_gt`` (counted ground truths), ``n_pred`` (scored predictions: score >=
the operating point's threshold, not ignored), ``tp``, ``fp``, ``fn`` (the rows sum to the
summary's tp/fp/fn), and the image's false positives by TIDE error type (``cls``, ``loc``,
``both``, ``dupe``, ``bkg``, at the operating point's IoU threshold). Worst first: most
``fp + fn``, then most ``fn``, then image order.

Label-error candidates (false positives at the operating point, most confident first):
``wrong_label`` -- a ``cls`` error: IoU >= the IoU threshold with a ground truth of another
class (the annotation's class may be wrong); ``missing_annotation`` -- a ``bkg`` error with
score >= ``max(score_thr, 0.5)``: a confident box that overlaps no ground truth by more than
the background threshold (an object may be unannotated).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..result import clean
from .tide import BKG, CLS, ERROR_NAMES, TideErrors

ERROR_KEYS = ERROR_NAMES[1:]


def per_image(ds: Any, table: Any, err: TideErrors, *, score_thr: float) -> list[dict[str, Any]]:
    n_img = len(ds.images)
    det_img = np.asarray(table.det_image, dtype=np.int64)
    scored = np.asarray(table.det_score) >= score_thr
    tp = err.tp & scored
    fp = err.fp & scored
    counted = np.asarray(table.gt_counts, dtype=bool)
    n_gt = np.bincount(ds.gt.image[counted], minlength=n_img)
    n_tp = np.bincount(det_img[tp], minlength=n_img)
    n_fp = np.bincount(det_img[fp], minlength=n_img)
    by_err = {
        name: np.bincount(det_img[fp & (err.code == code)], minlength=n_img)
        for code, name in enumerate(ERROR_NAMES)
        if code
    }
    fn = n_gt - n_tp
    order = np.lexsort((np.arange(n_img), -fn, -(n_fp + fn)))
    rows = []
    keys = ds.images.keys
    for i in order.tolist():
        row: dict[str, Any] = {
            "image": clean(keys[i]),
            "n_gt": int(n_gt[i]),
            "n_pred": int(n_tp[i] + n_fp[i]),
            "tp": int(n_tp[i]),
            "fp": int(n_fp[i]),
            "fn": int(fn[i]),
        }
        for name in ERROR_KEYS:
            row[name] = int(by_err[name][i])
        rows.append(row)
    return rows


def label_errors(ds: Any, table: Any, err: TideErrors, *, score_thr: float) -> list[dict[str, Any]]:
    score = np.asarray(table.det_score)
    fp = err.fp & (score >= score_thr)
    wrong = fp & (err.code == CLS)
    missing = fp & (err.code == BKG) & (score >= max(score_thr, 0.5))
    pos = np.flatnonzero(wrong | missing)
    pos = pos[np.lexsort((pos, -score[pos]))]
    pred, gt = ds.pred, ds.gt
    keys = ds.images.keys
    out = []
    for p in pos.tolist():
        r = int(table.det[p])
        x1, y1, x2, y2 = (float(v) for v in pred.xyxy[r])
        item: dict[str, Any] = {
            "kind": "wrong_label" if wrong[p] else "missing_annotation",
            "image": clean(keys[int(pred.image[r])]),
            "pred_id": int(pred.ids[r]),
            "category": ds.categories.label(int(pred.category[r])),
            "score": float(score[p]),
            "bbox": [x1, y1, x2 - x1, y2 - y1],
            "gt_id": None,
            "gt_category": None,
            "iou": None,
        }
        g = int(err.target[p]) if wrong[p] else -1
        if g >= 0:
            item["gt_id"] = int(gt.ids[g])
            item["gt_category"] = ds.categories.label(int(gt.category[g]))
            item["iou"] = float(err.target_iou[p])
        out.append(item)
    return out
