"""Argmax matching on rotated boxes (the VOC and DOTA devkits' rule): for each prediction,
the ground truth of its image and class with the largest IoU, matched or not.

Ground truths are ordered by (group, x1); each prediction visits only the window of that order
whose x1 lies within the widest ground truth of its group before its own x-range, so pairs that
cannot overlap are never formed, and only pairs whose axis-aligned boxes overlap are clipped.
"""

from __future__ import annotations

import os

import numpy as np
import numpy.typing as npt

from ..data import Dataset
from ..geometry.obb import PairGeometry
from .pairs import side_polygons

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
_PAIRS = 1 << 16  # candidate pairs handled at once (small blocks: their temporaries are
# reused from the heap; 2M-pair blocks spent a third of the time faulting fresh pages in)


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
    i64 = np.int64
    return (
        g_x,
        lo.astype(i64, copy=False),
        hi.astype(i64, copy=False),
        first.astype(i64, copy=False),
        has,
    )


def best_overlaps(ds: Dataset, *, floor: float | None = None) -> tuple[FloatArray, IntArray]:
    """For each prediction, the largest IoU with a ground truth of its image and class and
    that ground truth's row (first in file order on ties; the first of the group when no
    ground truth overlaps it); ``-inf`` / -1 when its image has none of its class.

    With ``floor``, pairs whose IoU is provably below it are not clipped (taken as 0): a
    best IoU of at least ``floor`` and its row are unchanged (every pair reaching it is
    clipped, and a pruned pair is below it, so it can neither win nor tie), while a best
    below ``floor`` may come out lower, with another row (for callers that only use bests
    of at least ``floor``: the DOTA protocol without ``--matches``)."""
    gt, pr = ds.gt, ds.pred
    n_pred = len(pr)
    best = np.full(n_pred, -np.inf)
    best_row = np.full(n_pred, -1, dtype=np.int64)
    if n_pred == 0 or len(gt) == 0:
        return best, best_row
    qg, ag, bg = side_polygons(gt)
    qp, ap, bp = side_polygons(pr)
    geo = PairGeometry(qp, qg, area_a=ap, area_b=ag, box_a=bp, box_b=bg)
    n_cat = max(len(ds.categories), 1)
    g_key = gt.image * n_cat + gt.category
    p_key = pr.image * n_cat + pr.category
    with np.errstate(invalid="ignore"):
        g_x, lo, hi, first_gt, has = _x_windows(bg, g_key, bp, p_key)
    best[has] = 0.0
    best_row[has] = first_gt[has]
    ng = hi - lo
    ends = np.cumsum(ng)
    blocks = []
    start = 0
    while start < n_pred:
        # a block of predictions whose pairs stay under _PAIRS (at least one prediction)
        base = int(ends[start - 1]) if start else 0
        stop = int(np.searchsorted(ends, base + _PAIRS, side="right"))
        stop = min(max(stop, start + 1), n_pred)
        blocks.append((start, stop))
        start = stop

    def block(span: tuple[int, int]) -> None:
        """Score one block's pairs; its predictions' entries are its own to write."""
        d = np.arange(span[0], span[1], dtype=np.int64)
        cnt = ng[d]
        n_pairs = int(cnt.sum())
        if not n_pairs:
            return
        pair_d = np.repeat(d, cnt)
        off = np.cumsum(cnt) - cnt
        pos = np.repeat(lo[d] - off, cnt) + np.arange(n_pairs)
        pair_g = g_x[pos]
        iou = geo.iou(pair_d, pair_g, floor=floor)
        pos_iou = iou > 0
        pair_d, pair_g, iou = pair_d[pos_iou], pair_g[pos_iou], iou[pos_iou]
        if iou.size:
            # per prediction: the largest IoU, then the lowest row (file order)
            o = np.lexsort((pair_g, -iou, pair_d))
            lead = o[np.r_[True, pair_d[o][1:] != pair_d[o][:-1]]]
            best[pair_d[lead]] = iou[lead]
            best_row[pair_d[lead]] = pair_g[lead]

    workers = min(_THREADS, len(blocks), _cpus())
    if workers < 2:
        for span in blocks:
            block(span)
    else:  # the array operations release the GIL: blocks on a few threads
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(block, blocks))
    return best, best_row


_THREADS = 4  # at most; blocks of pairs are scored on up to this many threads


def _cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
