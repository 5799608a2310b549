"""pycocotools' greedy matching, run for every group at once.

In ``COCOeval.evaluateImg`` the detections of one (image, category) group are visited by
score; each takes, among the ground truths still free (crowd regions never become taken),
the best one at IoU >= the threshold, where "best" is pycocotools' preference order: not
ignored first, then the highest IoU, later ground truths winning ties. The loop is
sequential only within a group, so here it runs over the detection *rank* (at most
``maxDets`` steps), each step deciding that rank's detection in every group and at every
threshold at once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def greedy_match(
    p_c: IntArray,
    p_gt: IntArray,
    p_iou: FloatArray,
    p_crowd: BoolArray,
    p_rank: IntArray,
    thr_eff: FloatArray,
    *,
    n_gt: int,
    n_cand: int,
) -> tuple[IntArray, FloatArray]:
    """Match candidate pairs; returns ``(dt_m, dt_iou)`` of shape ``(T, n_cand)``.

    The pairs must be sorted by (``p_rank``, ``p_c``, preference): ``p_c`` is the
    candidate detection (0..n_cand-1), ``p_gt`` the ground truth (0..n_gt-1, any
    numbering), ``p_iou`` their IoU, ``p_crowd`` whether that ground truth is a crowd
    region, ``p_rank`` the detection's rank in its group. ``thr_eff`` holds the effective
    thresholds (pycocotools' ``min(t, 1 - 1e-10)``). ``dt_m[t, c]`` is the ground truth
    taken at threshold ``t`` (-1: none) and ``dt_iou[t, c]`` its IoU (0: none).
    """
    T = thr_eff.shape[0]
    matched = np.zeros((T, n_gt), dtype=bool)
    dt_m = np.full((T, n_cand), -1, dtype=np.int64)
    dt_iou = np.zeros((T, n_cand), dtype=np.float64)
    if p_c.size == 0:
        return dt_m, dt_iou
    max_rank = int(p_rank[-1]) + 1
    rank_bounds = np.searchsorted(p_rank, np.arange(max_rank + 1), side="left")
    for k in range(max_rank):
        s, e = int(rank_bounds[k]), int(rank_bounds[k + 1])
        if s == e:
            continue
        pg = p_gt[s:e]
        elig = (p_iou[s:e][None, :] >= thr_eff[:, None]) & (p_crowd[s:e][None, :] | ~matched[:, pg])
        m = e - s
        pc = p_c[s:e]
        seg = np.flatnonzero(np.r_[True, pc[1:] != pc[:-1]])
        idx = np.where(elig, np.arange(m), m)
        first = np.minimum.reduceat(idx, seg, axis=1)
        t_i, s_i = np.nonzero(first < m)
        chosen = first[t_i, s_i] + s
        gsel = p_gt[chosen]
        csel = p_c[chosen]
        matched[t_i, gsel] = True
        dt_m[t_i, csel] = gsel
        dt_iou[t_i, csel] = p_iou[chosen]
    return dt_m, dt_iou
