"""The DOTA protocol: the DOTA devkit's task-1 evaluation (``dota_evaluation_task1.py``) on
rotated boxes.

Per class, predictions are visited in the order ``np.argsort(-confidence)`` gives over that
class's predictions in reading order (the devkit's sort, which is not stable: ties keep the
order NumPy's default sort leaves them in, as in the devkit). Each takes the ground truth of
its image and class with the largest polygon IoU, matched or not, difficult or not (the first
one in file order on ties; the devkit's pixel-inclusive axis-aligned pre-filter only skips
pairs whose polygons cannot overlap, so it never changes that choice). With IoU strictly
above ``iou_thr`` (0.5) the prediction is a true positive if that ground truth is not yet
taken, a false positive if it is, and neither if the ground truth is difficult; otherwise it
is a false positive. Recall counts the non-difficult ground truths. AP is VOC2007's 11-point
mean of the precision envelope by default, the area under it with ``all_point``; mAP is the
mean over the classes that have a non-difficult ground truth (the devkit divides by its fixed
list of 15 classes, all present in DOTA's validation set).

Quadrilaterals that are not convex are scored by their convex hull (``geometry.obb``; the
devkit's ``polyiou`` measures the polygon itself): the loaders say how many there are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Boxes, Dataset
from ..errors import UsageError
from ..geometry.obb import aabb, indexed_iou, signed_area
from ..matching.pairs import side_quads
from ..result import Result
from . import Protocol
from .voc import VocEvaluation, VocMatch, class_curves, voc_table

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
_PAIRS = 1 << 21  # candidate pairs handled at once


def quads_of(boxes: Boxes) -> tuple[FloatArray, FloatArray]:
    """Convex counter-clockwise quads of a side and their polygon areas (``polyiou``
    measures the polygons, never a ``w*h`` field)."""
    q, _ = side_quads(boxes)
    return q, signed_area(q)


def _x_windows(
    bg: FloatArray, g_key: IntArray, bp: FloatArray, p_key: IntArray
) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """Ground truths ordered by (group, x1) and, per prediction, the range of that order
    whose x1 lies in ``[px1 - widest GT of the group, px2]`` (widened by a rounding margin):
    every ground truth whose axis-aligned box can overlap the prediction's, and few others.
    Returns ``(g_x, lo, hi, group_first, has_group)``; ``group_first`` is each prediction's
    first ground truth of its group in file order (row order), -1 without one."""
    n_g = g_key.shape[0]
    g_x = np.lexsort((bg[:, 0], g_key)).astype(np.int64)
    keys_x = g_key[g_x]
    uk, g_start = np.unique(keys_x, return_index=True)
    width = (bg[:, 2] - bg[:, 0])[g_x]
    wmax = np.maximum.reduceat(width, g_start)
    grp_first = np.minimum.reduceat(g_x, g_start)  # lowest row = first in file order
    x0 = float(min(bg[:, 0].min(), bp[:, 0].min()))
    span = float(max(bg[:, 2].max(), bp[:, 2].max())) - x0 + float(wmax.max()) + 2.0
    margin = 1e-9 * span * (uk.shape[0] + 1)
    sorted_key = np.arange(uk.shape[0], dtype=np.float64).repeat(np.diff(np.r_[g_start, n_g]))
    sorted_key = sorted_key * span + (bg[g_x, 0] - x0)
    r = np.searchsorted(uk, p_key)
    r_ok = np.minimum(r, uk.shape[0] - 1)
    has = (r < uk.shape[0]) & (uk[r_ok] == p_key)
    base = r_ok.astype(np.float64) * span
    lo = np.searchsorted(sorted_key, base + (bp[:, 0] - x0) - wmax[r_ok] - margin, "left")
    hi = np.searchsorted(sorted_key, base + (bp[:, 2] - x0) + margin, "right")
    g_end = np.r_[g_start[1:], n_g]
    lo = np.maximum(lo, g_start[r_ok])
    hi = np.minimum(hi, g_end[r_ok])
    hi = np.where(has, np.maximum(hi, lo), lo)
    first = np.where(has, grp_first[r_ok], -1)
    return g_x, lo.astype(np.int64), hi.astype(np.int64), first.astype(np.int64), has


def best_overlaps(ds: Dataset) -> tuple[FloatArray, IntArray]:
    """For each prediction, the largest IoU with a ground truth of its image and class and
    that ground truth's row (first in file order on ties; the first of the group when no
    ground truth overlaps it); ``-inf`` / -1 when its image has none of its class."""
    gt, pr = ds.gt, ds.pred
    n_pred = len(pr)
    best = np.full(n_pred, -np.inf)
    best_row = np.full(n_pred, -1, dtype=np.int64)
    if n_pred == 0 or len(gt) == 0:
        return best, best_row
    qg, ag = quads_of(gt)
    qp, ap = quads_of(pr)
    bg, bp = aabb(qg), aabb(qp)
    n_cat = max(len(ds.categories), 1)
    g_key = gt.image * n_cat + gt.category
    p_key = pr.image * n_cat + pr.category
    with np.errstate(invalid="ignore"):
        g_x, lo, hi, first_gt, has = _x_windows(bg, g_key, bp, p_key)
    best[has] = 0.0
    best_row[has] = first_gt[has]
    ng = hi - lo
    ends = np.cumsum(ng)
    start = 0
    while start < n_pred:
        # a block of predictions whose pairs stay under _PAIRS (at least one prediction)
        base = int(ends[start - 1]) if start else 0
        stop = int(np.searchsorted(ends, base + _PAIRS, side="right"))
        stop = min(max(stop, start + 1), n_pred)
        d = np.arange(start, stop, dtype=np.int64)
        cnt = ng[d]
        n_pairs = int(cnt.sum())
        if n_pairs:
            pair_d = np.repeat(d, cnt)
            off = np.cumsum(cnt) - cnt
            pos = np.repeat(lo[d] - off, cnt) + np.arange(n_pairs)
            pair_g = g_x[pos]
            iou = indexed_iou(qp, qg, pair_d, pair_g, area_a=ap, area_b=ag, box_a=bp, box_b=bg)
            pos_iou = iou > 0
            pair_d, pair_g, iou = pair_d[pos_iou], pair_g[pos_iou], iou[pos_iou]
            if iou.size:
                # per prediction: the largest IoU, then the lowest row (file order)
                o = np.lexsort((pair_g, -iou, pair_d))
                lead = o[np.r_[True, pair_d[o][1:] != pair_d[o][:-1]]]
                best[pair_d[lead]] = iou[lead]
                best_row[pair_d[lead]] = pair_g[lead]
        start = stop
    return best, best_row


def devkit_order(pr: Boxes, n_cat: int) -> IntArray:
    """Prediction rows class by class, each class in ``np.argsort(-confidence)`` order over
    its rows in reading order (the devkit's default, unstable sort)."""
    parts = []
    for c in range(n_cat):
        rows = np.flatnonzero(pr.category == c)
        parts.append(rows[np.argsort(-pr.score[rows])])
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def dota_match(ds: Dataset, *, iou_thr: float = 0.5) -> VocMatch:
    """Match every prediction the DOTA devkit way (see the module docstring)."""
    gt, pr = ds.gt, ds.pred
    n_pred = len(pr)
    hard = gt.difficult | gt.iscrowd | gt.ignore
    best, best_row = best_overlaps(ds)
    order = devkit_order(pr, len(ds.categories))
    hit = best > iou_thr
    has = best_row >= 0
    on_hard = np.zeros(n_pred, dtype=bool)
    on_hard[has] = hard[best_row[has]]
    cand = hit & ~on_hard
    tp = np.zeros(n_pred, dtype=bool)
    cand_rows = order[cand[order]]
    if cand_rows.size:
        _, first = np.unique(best_row[cand_rows], return_index=True)
        tp[cand_rows[first]] = True  # the first visited prediction on each GT takes it
    fp = ~tp & ~(hit & on_hard)
    iou = np.where(has, best, np.nan)
    return VocMatch(tp, fp, iou, best_row, order, hard, hit)


@dataclass
class DotaEvaluation(VocEvaluation):
    """The DOTA devkit's evaluation (the VOC evaluation's shape, DOTA's matching)."""

    def result(self) -> Result:
        p = self.params
        params: dict[str, Any] = {
            "protocol": self.protocol,
            "iou_thr": self.iou_thr,
            "iou_rule": "IoU > iou_thr (strict, as the devkit)",
            "ap": "all-point" if p.get("all_point") else "VOC2007 11-point",
            "score_thr": p.get("score_thr"),
            "difficult": "ignored (neither TP nor FP; not counted in recall)",
        }
        return Result(
            self.summary(),
            self.per_class(),
            params,
            matches=self.matches() if p.get("matches", True) else None,
            evaluation=self,
        )


def run_dota(
    ds: Dataset,
    *,
    iou_thr: float = 0.5,
    all_point: bool = False,
    score_thr: float | None = None,
    matches: bool = True,
) -> DotaEvaluation:
    """Run the DOTA task-1 protocol on a joined dataset; see the module docstring."""
    if not 0.0 <= iou_thr < 1.0:
        raise UsageError(f"--iou-thr: expected a value in [0, 1), got {iou_thr}")
    m = dota_match(ds, iou_thr=iou_thr)
    params = {
        "iou_thr": float(iou_thr),
        "all_point": bool(all_point),
        "score_thr": None if score_thr is None else float(score_thr),
        "matches": matches,
    }
    return DotaEvaluation(
        protocol="dota",
        params=params,
        dataset=ds,
        table=voc_table(ds, m, iou_thr),
        match=m,
        curves=class_curves(ds, m, use_07=not all_point),
    )


def _run(ds: Dataset, opts: Mapping[str, Any]) -> DotaEvaluation:
    return run_dota(
        ds,
        iou_thr=float(opts.get("iou_thr", 0.5)),
        all_point=bool(opts.get("all_point", False)),
        score_thr=opts.get("score_thr"),
        matches=bool(opts.get("matches", False)),
    )


PROTOCOLS = {
    "dota": Protocol(
        name="dota",
        description="DOTA devkit task 1: rotated-box IoU > 0.5, VOC2007 11-point AP",
        options=frozenset({"all_point"}),
        defaults={"all_point": False},
        iou_types=("obb",),
        summary_keys=lambda opts: ["mAP"],
        run=_run,
    )
}
