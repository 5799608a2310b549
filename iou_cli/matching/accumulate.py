"""PR accumulation over a match table, as pycocotools' ``COCOeval.accumulate``: the order in
which predictions are accumulated (per class by descending score, ties in image then rank
order: pycocotools' stable mergesort over images in id order), the cumulative true/false
positive counts, and precision read at the recall points. The COCO and LVIS protocols and
TIDE's re-scoring accumulate through here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .table import MatchTable

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# pycocotools Params.setDetParams, verbatim arithmetic
REC_THRS = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)


def by_score(score: FloatArray) -> IntArray:
    """Indices by descending score, ties in index order (pycocotools' mergesort); the
    order :func:`sort_later` made of the same array when there is one."""
    if _LATER:
        made = _take_later(score)
        if made is not None:
            return made
    return np.argsort(-score, kind="stable").astype(np.int64)


# :func:`sort_later`'s sort: (the array, its thread, the order once made)
_LATER: list[tuple[FloatArray, Any, list[IntArray]]] = []


def sort_later(score: FloatArray) -> None:
    """Start :func:`by_score` of ``score`` in a thread (NumPy's sort releases the GIL):
    with ``--jobs``, on a core that idles while this process joins the workers' columns
    (~9 ms at 100k predictions, else on the critical path); :func:`by_score` of the same
    array takes it, checked."""
    import threading

    out: list[IntArray] = []

    def run() -> None:
        out.append(np.argsort(-score, kind="stable").astype(np.int64))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    _LATER[:] = [(score, thread, out)]


def _take_later(score: FloatArray) -> IntArray | None:
    """:func:`sort_later`'s order when it was made of this very array (its memory, shape
    and strides) and is the stable descending order of its values now; else None (and
    the waiting order is dropped)."""
    try:
        made, thread, out = _LATER.pop()
    except IndexError:
        return None
    same = (
        made.dtype == score.dtype
        and made.shape == score.shape
        and made.strides == score.strides
        and made.ctypes.data == score.ctypes.data
    )
    if not same:
        return None
    thread.join()
    if not out or not _is_by_score(score, out[0]):
        return None
    return out[0]


def _is_by_score(score: FloatArray, order: IntArray) -> bool:
    """Whether ``order`` is :func:`by_score` of ``score``: a permutation along which the
    scores never rise, ties in index order (the one such order)."""
    n = score.shape[0]
    if order.shape != (n,) or (n and (order.min() < 0 or order.max() >= n)):
        return False
    hit = np.zeros(n, dtype=bool)
    hit[order] = True
    if not hit.all():
        return False
    s = score[order]
    if not bool((s[1:] <= s[:-1]).all()):  # (NaN compares false: sorted anew)
        return False
    tie = s[1:] == s[:-1]
    return bool((order[1:][tie] > order[:-1][tie]).all())


def by_score_from(global_order: IntArray, rows: IntArray, score: FloatArray, n: int) -> IntArray:
    """:func:`by_score` of ``score`` (the scores of ``rows``, a subset of ``n`` rows), read
    off ``global_order`` (:func:`by_score` of all ``n`` rows' scores) where that is the
    same: the rows in global score order are sorted by score; they are in position order
    within every run of equal scores when ties fall in row order (a results file listed by
    image, as it usually is), which one pass checks. Otherwise sorted anew. (~1 ms instead
    of a ~9 ms stable sort at 100k rows.)"""
    pos = np.full(n, -1, dtype=np.int64)
    pos[rows] = np.arange(rows.shape[0], dtype=np.int64)
    seq = pos[global_order]
    seq = seq[seq >= 0]
    s = score[seq]
    tie = s[1:] == s[:-1]
    if seq.shape[0] == rows.shape[0] and bool((seq[1:][tie] > seq[:-1][tie]).all()):
        return seq
    return by_score(score)


def by_small_key(keys: IntArray, perm: IntArray) -> IntArray:
    """``perm`` stably re-sorted by ``keys[perm]`` (radix sort when the keys fit 16 bits)."""
    k = keys[perm]
    if k.size and k.min() >= 0 and k.max() < 2**15:
        k = k.astype(np.int16)
    return perm[np.argsort(k, kind="stable")]


@dataclass(frozen=True)
class AccOrder:
    """pycocotools' accumulation order of a table's predictions (see :func:`accumulate`)."""

    acc_order: IntArray  # positions into det: per category, by score, ties by (image, rank)
    acc_pos: IntArray  # inverse of acc_order
    cat_start: IntArray  # (K + 1,) start of each category in acc_order
    cand_acc: IntArray  # candidates (positions into cand) in accumulation order


def acc_order(
    det_category: IntArray, cand: IntArray, K: int, score_order: IntArray | None = None
) -> AccOrder:
    """Accumulation order of predictions laid out in (image, category, rank) order: a
    stable sort by score and then by category leaves ties in (image, rank) order, as
    pycocotools' concatenation of images in id order followed by a mergesort does."""
    nD = det_category.shape[0]
    if score_order is None:
        raise ValueError("score_order is needed")
    acc_order = by_small_key(det_category, score_order)
    acc_pos = np.empty(nD, dtype=np.int64)
    acc_pos[acc_order] = np.arange(nD)
    cat_start = np.searchsorted(det_category[acc_order], np.arange(K + 1), side="left")
    cand_acc = np.argsort(acc_pos[cand], kind="stable")
    return AccOrder(acc_order, acc_pos, cat_start.astype(np.int64), cand_acc)


def accumulation_order(table: MatchTable, n_classes: int) -> AccOrder:
    """The accumulation order of ``table`` (its predictions must be in (image, category,
    rank) order, as the COCO protocol lays them out)."""
    return acc_order(table.det_category, table.cand, n_classes, by_score(table.det_score))


def _min_counts(npig: IntArray, rec_thrs: FloatArray) -> IntArray:
    """For each category and recall point r: the least c with ``c / npig >= r`` in float64
    (the exact comparison pycocotools' searchsorted makes on ``rc = tp / npig``)."""
    n = np.maximum(npig, 1).astype(np.float64)[:, None]
    r = rec_thrs[None, :]
    c = np.clip(np.ceil(r * n), 0, n + 1)
    for _ in range(3):  # fix the float rounding of ceil(r * n) either way
        down = (c > 0) & ((c - 1) / n >= r)
        c = np.where(down, c - 1, c)
        up = (c <= n) & (c / n < r)
        c = np.where(up, c + 1, c)
    return c.astype(np.int64)


def accumulate(
    table: MatchTable,
    *,
    n_classes: int,
    rec_thrs: FloatArray = REC_THRS,
    max_dets: tuple[int, ...] = (1, 10, 100),
    thresholds: Any = None,
    order: AccOrder | None = None,
    precision_at: Any = None,
    out: tuple[FloatArray, FloatArray, FloatArray] | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """pycocotools' ``accumulate`` for one match table (one area range), bit for bit.

    Returns ``(precision (T, R, K, M), recall (T, K, M), scores (T, R, K, M))`` for the
    table's thresholds ``thresholds`` (default: all), -1 where a class has no counted
    ground truth; ``precision_at`` (indices into ``max_dets``, default all) limits the M
    axis of precision and scores (recall always has every maxDets). An analysis may pass an
    edited :meth:`MatchTable.copy`. ``out``: arrays of those shapes, filled with -1, to
    write into instead of new ones.

    Precision is made monotone from the right and read at the first index whose recall
    reaches r. Within a category, between two true positives the precision only falls (a
    false positive raises fp, an ignored detection changes nothing), so the maximum over any
    suffix that starts at a true positive is the maximum over the true positives in it.
    The suffix for recall point r starts at the ``c_r``-th true positive, where ``c_r`` is
    the least count with ``c_r / npig >= r`` in float64 (exactly pycocotools' comparison),
    and ``scores`` holds that true positive's score. False positives enter through their
    count before each true positive: background detections (no candidate pair) are counted
    once per maxDets, the others per threshold.
    """
    K = n_classes
    t_sel = list(range(table.n_thresholds)) if thresholds is None else list(thresholds)
    T = len(t_sel)
    R = rec_thrs.shape[0]
    M = len(max_dets)
    p_at = list(range(M)) if precision_at is None else [int(m) % M for m in precision_at]
    if out is None:
        precision = np.full((T, R, K, len(p_at)), -1.0)
        recall = np.full((T, K, M), -1.0)
        scores = np.full((T, R, K, len(p_at)), -1.0)
    else:
        precision, recall, scores = out
    npig = table.n_pos
    valid_k = npig > 0
    nvalid = int(valid_k.sum())
    if nvalid == 0:
        return precision, recall, scores
    if order is None:
        order = accumulation_order(table, K)
    acc_order, acc_pos, cat_start, cand_acc = (
        order.acc_order,
        order.acc_pos,
        order.cat_start,
        order.cand_acc,
    )
    cdet = table.cand
    d_rank = table.det_rank
    is_cand = np.zeros(len(table), dtype=bool)
    is_cand[cdet] = True
    bg_fp = ~is_cand & ~table.det_out  # background detections are false positives in range
    c0 = _min_counts(npig, rec_thrs)  # (K, R); 0 only at recall 0
    cmin = np.maximum(c0, 1)
    at_zero = c0 == 0
    eps = np.spacing(1)
    rank_acc = d_rank[acc_order]
    bg_acc = bg_fp[acc_order]
    cat_first = cat_start[:-1]
    for mi, max_det in enumerate(max_dets):
        # background false positives before each candidate, in its category
        bg_pos = np.flatnonzero(bg_acc & (rank_acc < max_det))
        cols = cand_acc[d_rank[cdet[cand_acc]] < max_det]  # candidates, accumulation order
        pos = acc_pos[cdet[cols]]
        ccat = np.searchsorted(cat_start, pos, side="right") - 1
        bg_before = np.searchsorted(bg_pos, pos) - np.searchsorted(bg_pos, cat_first)[ccat]
        cseg = np.searchsorted(ccat, np.arange(K + 1), side="left")
        col_score = table.det_score[cdet[cols]]
        # at recall 0 pycocotools reads the first evaluated prediction of the class,
        # whatever its fate (searchsorted finds index 0); 0 when the class has none
        in_m = np.flatnonzero(rank_acc < max_det)
        first = np.searchsorted(in_m, cat_first)
        has = first < np.searchsorted(in_m, cat_start[1:])
        first_score = np.zeros(K)
        first_score[has] = table.det_score[acc_order[in_m[first[has]]]]
        for ti, t in enumerate(t_sel):
            hit = table.gt[t, cols] >= 0
            ig = table.ignored[t, cols]
            tpos = np.flatnonzero(hit & ~ig)
            fpos = np.flatnonzero(~hit & ~ig)
            tk = ccat[tpos]
            ntp = np.bincount(tk, minlength=K)
            tstart = np.r_[0, np.cumsum(ntp)]
            # the i-th true positive of its category has tp = i; fp counts every false
            # positive before it in the category: candidates, then background ones
            tp_v = (np.arange(1, tpos.shape[0] + 1) - tstart[tk]).astype(np.float64)
            fstart = np.searchsorted(fpos, cseg[:-1])
            fp_v = (np.searchsorted(fpos, tpos) - fstart[tk] + bg_before[tpos]).astype(np.float64)
            pr = tp_v / (fp_v + tp_v + eps)
            recall[ti, valid_k, mi] = (ntp / np.maximum(npig, 1))[valid_k]
            if mi not in p_at:
                continue
            pi = p_at.index(mi)
            # block maxima between the c_r-th true positives, then suffix maxima
            c = np.minimum(cmin, ntp[:, None] + 1)  # c > ntp: no true positive left
            b = tstart[:-1, None] + c - 1
            bounds = np.concatenate([b, tstart[1:, None]], axis=1).reshape(-1)
            blk = np.maximum.reduceat(np.r_[pr, -np.inf], bounds)
            nxt = np.r_[bounds[1:], pr.shape[0]]
            blk = np.where(bounds < nxt, blk, -np.inf).reshape(K, R + 1)[:, :R]
            suf = np.maximum.accumulate(blk[:, ::-1], axis=1)[:, ::-1]
            reached = cmin <= ntp[:, None]
            precision[ti][:, valid_k, pi] = np.where(reached, suf, 0.0)[valid_k].T
            # the score of the c_r-th true positive (pycocotools' dtScoresSorted[pi])
            tp_score = np.r_[col_score[tpos], 0.0]
            at = np.where(reached, b, tpos.shape[0])
            sc = np.where(at_zero, first_score[:, None], tp_score[at])
            scores[ti][:, valid_k, pi] = sc[valid_k].T
    return precision, recall, scores
