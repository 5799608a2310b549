"""Metrics shared by the protocols and verbs: precision/recall/F1 of counts, and the
operating point (P/R/F1/mean IoU at a confidence).

AP/AR curves live with their protocol (``protocols/coco.py``: 101-point COCO;
``protocols/voc.py``: all-point and 11-point VOC) because their exact float behaviour is
part of each protocol's definition.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

OP_KEYS = ("iou_thr", "score_thr", "tp", "fp", "fn", "precision", "recall", "f1", "mean_iou")


def prf(tp: int, fp: int, fn: int) -> tuple[float | None, float | None, float | None]:
    """Precision ``TP / (TP + FP)``, recall ``TP / (TP + FN)`` and F1
    ``2TP / (2TP + FP + FN)`` of counts; a ratio with a zero denominator (0/0) is ``None``.
    The one definition used by the detection protocols, ``segment`` and ``labels``."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else None
    return precision, recall, f1


def best_f1_threshold(
    score: npt.NDArray[np.float64],
    tp: npt.NDArray[np.bool_],
    fp: npt.NDArray[np.bool_],
    n_gt: int,
    *,
    order: npt.NDArray[np.int64] | None = None,
) -> float | None:
    """The confidence whose ``score >= thr`` cut maximises F1 on the real (not interpolated)
    PR curve, pooled over all classes. Ties go to the highest confidence (fewest
    detections). ``None`` when there is no prediction or no ground truth.

    Only cuts between distinct scores are considered: a cut at ``s`` keeps every prediction
    scoring ``>= s``, so tied scores enter together. ``order`` (indices by descending score)
    saves the sort when the caller has one.
    """
    if order is None:
        order = np.argsort(-score, kind="stable")
    order = order[(tp | fp)[order]]
    if order.size == 0 or n_gt <= 0:
        return None
    s = score[order]
    ctp = np.cumsum(tp[order])
    cfp = np.cumsum(fp[order])
    last = np.ones(s.size, dtype=bool)  # last position of each run of equal scores
    last[:-1] = s[1:] != s[:-1]
    ctp, cfp, s = ctp[last], cfp[last], s[last]
    f1 = 2.0 * ctp / (ctp + cfp + n_gt)  # F1 = 2TP / (2TP + FP + FN), FN = n_gt - TP
    return float(s[int(np.argmax(f1))])


def best_f1_grouped(
    score: npt.NDArray[np.float64],
    tp: npt.NDArray[np.bool_],
    fp: npt.NDArray[np.bool_],
    n_gt: int,
    grouped: npt.NDArray[np.int64],
) -> float | None:
    """:func:`best_f1_threshold` given ``grouped``: every row, in runs (class by class) of
    descending score. The answer depends only on the TP and FP counts at or above each
    distinct score, never on the order within ties, so the scores are merged from their
    sorted runs (a stable sort finds them: much cheaper than sorting from scratch) and the
    counts are read by search: the same integers, so the same F1 floats and argmax.
    Scores that are NaN, or zeros of both signs (the value returned would depend on which
    comes last), take :func:`best_f1_threshold` itself."""
    if grouped.shape[0] != score.shape[0]:  # not every row once: the plain way
        return best_f1_threshold(score, tp, fp, n_gt)
    rows = grouped[(tp | fp)[grouped]]
    if rows.size == 0 or n_gt <= 0:
        return None
    neg = -score[rows]  # ascending runs
    zero = neg[neg == 0]
    if np.isnan(neg).any() or (zero.size and len(set(np.signbit(zero).tolist())) > 1):
        return best_f1_threshold(score, tp, fp, n_gt)
    every = np.sort(neg, kind="stable")
    hits = np.sort(neg[tp[rows]], kind="stable")
    last = np.ones(every.size, dtype=bool)  # last position of each run of equal scores
    last[:-1] = every[1:] != every[:-1]
    at = np.flatnonzero(last)
    cut = every[at]
    ctp = np.searchsorted(hits, cut, side="right")  # TPs scoring >= each cut
    cfp = (at + 1) - ctp
    f1 = 2.0 * ctp / (ctp + cfp + n_gt)
    return float(-cut[int(np.argmax(f1))])


def operating_point(
    score: npt.NDArray[np.float64],
    tp: npt.NDArray[np.bool_],
    fp: npt.NDArray[np.bool_],
    iou: npt.NDArray[np.float64],
    n_gt: int,
    *,
    score_thr: float | None,
    iou_thr: float,
) -> dict[str, Any]:
    """TP/FP/FN, precision, recall, F1 and mean IoU of the TP pairs for predictions
    scoring ``>= score_thr``. ``tp`` and ``fp`` are exclusive; a prediction that is neither
    (matched to an ignored/difficult ground truth) does not count. ``iou`` holds each TP's
    IoU with its ground truth. With ``score_thr=None`` nothing is cut (every prediction
    counts). Undefined ratios (0/0) are ``None``.
    """
    keep = score >= score_thr if score_thr is not None else np.ones(score.shape, dtype=bool)
    n_tp = int(np.count_nonzero(tp & keep))
    n_fp = int(np.count_nonzero(fp & keep))
    n_fn = int(n_gt) - n_tp
    precision, recall, f1 = prf(n_tp, n_fp, n_fn)
    tp_iou = iou[tp & keep]
    mean_iou = float(np.mean(tp_iou)) if tp_iou.size else None
    return {
        "iou_thr": float(iou_thr),
        "score_thr": None if score_thr is None else float(score_thr),
        "tp": n_tp,
        "fp": n_fp,
        "fn": n_fn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "mean_iou": mean_iou,
    }
