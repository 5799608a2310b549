"""Confusion matrix at the operating point (score and IoU threshold of the report).

Rows are ground truth, columns predictions, ``background`` last in both. Counted ground truths
and scored predictions (score >= the operating point's threshold, not ignored) take part;
crowd / ignored regions and the predictions that hit them do not.

* the diagonal is the evaluation's own true positives at the operating point (so it sums to
  the summary's ``tp`` and each class's diagonal cell to its per-class ``tp``);
* the remaining predictions claim, class-agnostically, a ground truth of another class that
  no true positive took: in descending score order, each takes the free one with the highest
  IoU >= the IoU threshold (ties: first in file order) -> cell (its class, the prediction's);
* a prediction left over is a ``background`` row (a false positive of nothing), a ground
  truth left over a ``background`` column (missed). background/background is 0.

Every ground-truth row sums to that class's counted ground truths; every prediction column
to that class's scored predictions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .sections import Confusion
from .tide import TideErrors

BACKGROUND = "background"


def confusion(
    ds: Any, table: Any, err: TideErrors, *, score_thr: float, iou_thr: float
) -> Confusion:
    K = len(ds.categories)
    gt_cat = ds.gt.category
    det_cat = np.asarray(table.det_category, dtype=np.int64)
    scored = np.asarray(table.det_score) >= score_thr
    tp = err.tp & scored
    fp = err.fp & scored
    counted = np.asarray(table.gt_counts, dtype=bool)
    taken = np.zeros(len(ds.gt), dtype=bool)
    taken[err.det_gt[tp]] = True
    m = np.zeros((K + 1, K + 1), dtype=np.int64)
    np.add.at(m, (det_cat[tp], det_cat[tp]), 1)

    # other-class claims among the false positives' pairs, greedy in score order
    thr = min(iou_thr, 1 - 1e-10)
    pd, pg, pv = err.pair_det, err.pair_gt, err.pair_iou
    sel = fp[pd] & (pv >= thr) & (gt_cat[pg] != det_cat[pd]) & ~taken[pg] & counted[pg]
    pd, pg, pv = pd[sel], pg[sel], pv[sel]
    claimed = np.zeros(len(ds.gt), dtype=bool)
    det_claim = np.full(det_cat.shape[0], -1, dtype=np.int64)
    if pd.size:
        score = np.asarray(table.det_score)
        # by prediction (score desc, then table order), then IoU desc, then ground-truth row
        o = np.lexsort((pg, -pv, pd, -score[pd]))
        pd, pg = pd[o], pg[o]
        starts = np.flatnonzero(np.r_[True, pd[1:] != pd[:-1]])
        ends = np.r_[starts[1:], pd.shape[0]]
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            for j in range(s, e):
                g = int(pg[j])
                if not claimed[g]:
                    claimed[g] = True
                    det_claim[int(pd[s])] = g
                    break
    hit = det_claim >= 0
    np.add.at(m, (gt_cat[det_claim[hit]], det_cat[hit]), 1)
    bg_row = fp & ~hit
    np.add.at(m, (np.full(int(bg_row.sum()), K), det_cat[bg_row]), 1)
    missed = counted & ~taken & ~claimed
    np.add.at(m, (gt_cat[missed], np.full(int(missed.sum()), K)), 1)
    labels = [ds.categories.label(k) for k in range(K)] + [BACKGROUND]
    return Confusion(
        score_thr=float(score_thr) if np.isfinite(score_thr) else None,
        iou_thr=float(iou_thr),
        labels=labels,
        matrix=m.tolist(),
    )


def top_confusions(section: dict[str, Any], n: int = 10) -> list[tuple[str, str, int]]:
    """The largest off-diagonal cells: (ground truth, predicted, count), largest first."""
    m = np.asarray(section["matrix"], dtype=np.int64)
    labels = section["labels"]
    off = m.copy()
    np.fill_diagonal(off, 0)
    idx = np.argsort(-off, axis=None, kind="stable")[:n]
    out = []
    for flat in idx.tolist():
        i, j = divmod(flat, m.shape[1])
        if off[i, j] <= 0:
            break
        out.append((labels[i], labels[j], int(off[i, j])))
    return out
