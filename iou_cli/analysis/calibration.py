"""Calibration of the confidence scores: ECE and MCE over 10 equal-width score bins.

Definition (stated in the README): the predictions are the evaluated ones (after maxDets, every
score), each either correct (a true positive at the TIDE positive IoU threshold) or not (a
false positive there); predictions that hit a crowd or ignored region take no part. Bin edges
are ``0, 0.1, ..., 1``; a score falls in the bin whose upper edge is the first >= the score
(bins ``[0, 0.1], (0.1, 0.2], ..., (0.9, 1]``, scikit-learn's ``calibration_curve`` binning;
scores below 0 or above 1 fall in the first or last bin and are counted in ``out_of_range``).
For bin b with n_b predictions, confidence_b = mean score and accuracy_b = fraction correct:

    ECE = sum_b (n_b / N) * |accuracy_b - confidence_b|        MCE = max_b |accuracy_b - confidence_b|

over the non-empty bins; ``None`` when there is no prediction. Overall pools every prediction;
per class uses that class's predictions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .sections import Calibration

N_BINS = 10


def _bins(score: npt.NDArray[np.float64], correct: npt.NDArray[np.bool_]) -> dict[str, Any]:
    edges = np.linspace(0.0, 1.0, N_BINS + 1)
    ids = np.searchsorted(edges[1:-1], score)
    count = np.bincount(ids, minlength=N_BINS)
    conf_sum = np.bincount(ids, weights=score, minlength=N_BINS)
    true_sum = np.bincount(ids, weights=correct.astype(np.float64), minlength=N_BINS)
    nz = count > 0
    conf = np.where(nz, conf_sum / np.maximum(count, 1), np.nan)
    acc = np.where(nz, true_sum / np.maximum(count, 1), np.nan)
    gap = np.abs(acc - conf)
    n = int(score.shape[0])
    ece = float(np.sum(count[nz] / n * gap[nz])) if n else None
    mce = float(np.max(gap[nz])) if n else None
    bins = [
        {
            "lo": float(edges[b]),
            "hi": float(edges[b + 1]),
            "count": int(count[b]),
            "confidence": float(conf[b]) if nz[b] else None,
            "accuracy": float(acc[b]) if nz[b] else None,
        }
        for b in range(N_BINS)
    ]
    return {
        "n": n,
        "ece": ece,
        "mce": mce,
        "out_of_range": int(np.count_nonzero((score < 0) | (score > 1))),
        "bins": bins,
    }


def calibration(
    score: npt.NDArray[np.float64],
    correct: npt.NDArray[np.bool_],
    category: npt.NDArray[np.int64],
    labels: list[str],
    iou_thr: float,
) -> Calibration:
    """The ``calibration`` section: ``iou_thr``, ``overall`` and ``per_class`` (label order).

    ``score``/``correct``/``category`` hold the scored predictions only (ignored ones left out).
    """
    overall = _bins(score, correct)
    order = np.argsort(category, kind="stable")
    bounds = np.searchsorted(category[order], np.arange(len(labels) + 1))
    per_class = []
    for k, name in enumerate(labels):
        sel = order[bounds[k] : bounds[k + 1]]
        b = _bins(score[sel], correct[sel])
        per_class.append({"name": name, "n": b["n"], "ece": b["ece"], "mce": b["mce"]})
    return Calibration(iou_thr=float(iou_thr), n_bins=N_BINS, overall=overall, per_class=per_class)
