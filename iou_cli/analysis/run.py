"""Attach the requested analyses to a :class:`~iou_cli.result.Result` (``result.analyses``).

Everything is read from ``result.evaluation`` (its dataset and match table of area "all"):
nothing is matched again. The operating point's analyses (confusion, per-image, label-error
candidates, the ``--matches`` ``error`` column) use the report's score and IoU thresholds;
TIDE and calibration use ``tide_pos_thr``, which must be one of the table's thresholds (the
COCO ones, or ``--iou-thr``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UsageError
from ..options import AnalysisOptions


def _thr_index(table: Any, thr: float, option: str) -> int:
    hit = np.flatnonzero(np.asarray(table.iou_thrs) == thr)
    if hit.size == 0:
        shown = ", ".join(f"{t:g}" for t in table.iou_thrs)
        raise UsageError(
            f"{option} {thr:g} is not a matching threshold of this evaluation ({shown}); "
            f"add it with --iou-thr or --iou-thrs"
        )
    return int(hit[0])


def _op_iou_thr(ev: Any) -> float:
    p = ev.params
    if isinstance(p, dict):
        return float(p["iou_thr"])
    return float(p.op_iou_thr)


def _op_index(ev: Any) -> int:
    if hasattr(ev, "op_t"):
        return int(ev.op_t)
    return _thr_index(ev.table, _op_iou_thr(ev), "--iou-thr")


def _iou_type(ev: Any) -> str:
    p = ev.params
    if isinstance(p, dict):
        return str(p.get("iou_type", "bbox"))
    return str(getattr(p, "iou_type", "bbox"))


def _baseline(ev: Any, thr: float) -> float | None:
    """The report's AP at ``thr`` (pycocotools' summarize over area all, maxDets[-1])."""
    hit = np.flatnonzero(np.asarray(ev.params.iou_thrs) == thr)
    if hit.size == 0:
        return None
    s = ev.precision[int(hit[0]), :, :, 0, -1]
    vals = s[s > -1]
    return float(np.mean(vals)) if vals.size else None


def analyze(result: Any, opts: AnalysisOptions) -> None:
    """Fill ``result.analyses`` with the requested sections and add the ``error`` columns to
    ``result.matches`` (when there are matches)."""
    from .tide import classify

    ev = result.evaluation
    if ev is None:
        raise UsageError("the analyses need an evaluation (result.evaluation is None)")
    opts.validate(ev.protocol)
    if not opts.any and result.matches is None:
        return
    ds, table = ev.dataset, ev.table
    iou_type = _iou_type(ev)
    op_t = _op_index(ev)
    op_thr = float(table.iou_thrs[op_t])
    score_thr = ev.score_thr
    s_thr = -np.inf if score_thr is None else float(score_thr)
    op_err = classify(ds, table, op_t, pos_thr=op_thr, bg_thr=opts.tide_bg_thr, iou_type=iou_type)

    if opts.tide:
        from .tide import breakdown

        t = _thr_index(table, opts.tide_pos_thr, "--tide-pos-thr")
        section, _ = breakdown(
            ds,
            table,
            pos_thr=float(table.iou_thrs[t]),
            bg_thr=opts.tide_bg_thr,
            max_det=int(ev.params.max_dets[-1]),
            rec_thrs=ev.params.rec_thrs,
            iou_type=iou_type,
            baseline=_baseline(ev, float(table.iou_thrs[t])),
            errors=op_err if t == op_t else None,
        )
        result.analyses["tide"] = section
    if opts.confusion:
        from .confusion import confusion

        result.analyses["confusion"] = confusion(ds, table, op_err, score_thr=s_thr, iou_thr=op_thr)
    if opts.per_image:
        from .per_image import label_errors, per_image
        from .sections import Rows

        result.analyses["per_image"] = Rows(per_image(ds, table, op_err, score_thr=s_thr))
        result.analyses["label_errors"] = Rows(label_errors(ds, table, op_err, score_thr=s_thr))
    if opts.calibration:
        from .calibration import calibration

        t = _thr_index(table, opts.tide_pos_thr, "--tide-pos-thr")
        gt, _iou, ign = table.dense(t)
        keep = ~ign
        labels = [ds.categories.label(k) for k in range(len(ds.categories))]
        result.analyses["calibration"] = calibration(
            np.asarray(table.det_score, dtype=np.float64)[keep],
            (gt >= 0)[keep],
            np.asarray(table.det_category, dtype=np.int64)[keep],
            labels,
            float(table.iou_thrs[t]),
        )
    if opts.per_keypoint:
        if iou_type != "keypoints":
            raise UsageError("--per-keypoint needs --iou-type keypoints")
        from .keypoints import per_keypoint

        area = ev.oks_area() if hasattr(ev, "oks_area") else None  # the protocol's OKS area
        result.analyses["per_keypoint"] = per_keypoint(ds, table, op_t, score_thr=s_thr, area=area)
    if result.matches is not None:
        add_error_columns(result.matches, ds, table, op_err, score_thr)


def add_error_columns(matches: Any, ds: Any, table: Any, err: Any, score_thr: float | None) -> None:
    """``error`` (cls/loc/both/dupe/bkg for FP rows) and the best-overlapping ground truth of
    an FP row (``best_gt_id``, ``best_gt_class``, ``best_gt_iou``: any class, IoU >= the
    background threshold) -- rows laid out as ``matching.table.matches_rows`` lays them."""
    from .tide import ERROR_NAMES

    cols = matches.columns
    n_rows = len(cols["outcome"])
    score = np.asarray(table.det_score)
    pos = np.arange(score.shape[0]) if score_thr is None else np.flatnonzero(score >= score_thr)
    n_det_rows = n_rows - sum(1 for o in cols["outcome"] if o == "FN")
    if pos.shape[0] != n_det_rows:  # not the layout this function knows: leave the rows be
        return
    names = np.asarray(ERROR_NAMES, dtype=object)
    code = err.code[pos]
    fp = err.fp[pos]
    best = np.where(fp, err.best_gt[pos], -1)
    labels = [ds.categories.label(k) for k in range(len(ds.categories))]
    pad = n_rows - n_det_rows
    cols["error"] = list(np.where(fp, names[code], "")) + [""] * pad
    cols["best_gt_id"] = np.r_[
        np.where(best >= 0, ds.gt.ids[np.maximum(best, 0)] if len(ds.gt) else -1, -1),
        np.full(pad, -1),
    ].astype(np.int64)
    cols["best_gt_class"] = [
        labels[int(ds.gt.category[b])] if b >= 0 else "" for b in best.tolist()
    ] + [""] * pad
    cols["best_gt_iou"] = np.r_[
        np.where(best >= 0, err.best_iou[pos], np.nan), np.full(pad, np.nan)
    ]
