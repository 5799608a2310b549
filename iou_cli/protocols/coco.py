"""The COCO protocol, exactly as ``pycocotools.cocoeval.COCOeval`` (iouType bbox/segm).

Vectorised across all (image, category) groups; the float operations that decide a number
are the ones pycocotools performs, in the same order:

* detections per (image, category): stable sort by score, keep the first ``maxDets[-1]``;
* ground truths per group: non-ignored first (stable); a detection takes, among the ground
  truths still free (crowd regions never become taken), the highest IoU >=
  ``min(t, 1 - 1e-10)``, later ground truths winning ties, non-ignored ones preferred;
* accumulation per category: detections of all images concatenated in image-id order,
  stable-sorted by score; ``rc = tp / npig``, ``pr = tp / (tp + fp + eps)``, precision made
  monotone from the right and read at 101 recall points (``searchsorted(..., 'left')``);
* summary means over the same (T, R, K) arrays with ``np.mean``.

The greedy matching is sequential only within a group, so it runs as one loop over the
detection rank (at most ``maxDets[-1]`` steps), each step handling every group at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset
from ..matching.greedy import greedy_match
from ..matching.pairs import expand_groups, group_keys, group_pair_iou, run_ranks
from ..matching.table import MatchTable, matches_rows
from ..metrics import best_f1_threshold, operating_point
from ..result import Evaluation, Matches, Result, clean
from . import Protocol

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# pycocotools Params.setDetParams, verbatim arithmetic
IOU_THRS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
REC_THRS = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
AREA_RNGS: tuple[tuple[str, float, float], ...] = (
    ("all", 0**2, 1e5**2),
    ("small", 0**2, 32**2),
    ("medium", 32**2, 96**2),
    ("large", 96**2, 1e5**2),
)
MAX_DETS = (1, 10, 100)


@dataclass
class CocoParams:
    iou_type: str = "bbox"
    iou_thrs: FloatArray = field(default_factory=lambda: IOU_THRS.copy())
    rec_thrs: FloatArray = field(default_factory=lambda: REC_THRS.copy())
    max_dets: tuple[int, ...] = MAX_DETS
    area_rngs: tuple[tuple[str, float, float], ...] = AREA_RNGS
    honor_ignore: bool = False
    op_iou_thr: float = 0.5
    score_thr: float | None = None
    want_matches: bool = False
    keep_tables: bool = False  # keep every area range's MatchTable (else only "all")
    # precision/scores for every maxDets (pycocotools' shape) or only the largest, which is
    # all the summary reads; None: every maxDets while the array stays within 256 MiB
    full_arrays: bool | None = None
    accumulate: bool = True  # False: match only (iou_cli.state's map), the arrays stay -1


@dataclass
class CocoEvaluation(Evaluation):
    """pycocotools' ``eval`` dict as arrays, with the match tables it was accumulated from.

    ``precision``/``scores`` are (T, R, K, A, M) and ``recall`` (T, K, A, M), -1 where
    undefined, exactly as ``COCOeval.accumulate`` fills them. With many classes (when the
    full array would pass 256 MiB, unless ``params.full_arrays``) the last axis of
    ``precision``/``scores`` holds only the largest maxDets (``precision_max_dets``), the
    one every AP of the summary reads; index it with ``-1`` to work either way; ``tables`` holds the match
    table of area "all" (and of every area range with ``params.keep_tables``); ``table`` is
    the one of area "all", whose thresholds are the COCO ones plus, at index ``op_t``, the
    operating point's when it is not among them.
    """

    precision: FloatArray
    recall: FloatArray
    scores: FloatArray
    precision_max_dets: tuple[int, ...]  # the maxDets the last axis of precision/scores holds
    tables: dict[str, MatchTable]
    area_defined: bool
    n_det: IntArray  # (K,) predictions per class (all, before maxDets)
    score_order: IntArray  # positions into table.det by descending score (stable)
    op_t: int
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def n_gt(self) -> IntArray:
        """Counted ground truths per class (area "all")."""
        return self.table.n_pos

    def stats(self, k: int | None = None) -> dict[str, float | None]:
        """The 12 pycocotools stats, of class ``k`` or of all (``AR<m>`` follow maxDets)."""
        return stats(self, k)

    def _op_columns(self) -> tuple[FloatArray, BoolArray, BoolArray, FloatArray]:
        g, iou, ign = self.table.dense(self.op_t)
        return self.table.det_score, (g >= 0) & ~ign, (g < 0) & ~ign, iou

    @property
    def score_thr(self) -> float | None:
        """The operating point's confidence: given, or the one that maximises F1."""
        if self.params.score_thr is not None:
            return float(self.params.score_thr)
        if "score_thr" not in self._cache:
            score, tp, fp, _ = self._op_columns()
            n_gt = int(self.table.n_pos.sum())
            self._cache["score_thr"] = best_f1_threshold(
                score, tp, fp, n_gt, order=self.score_order
            )
        thr: float | None = self._cache["score_thr"]
        return thr

    def summary_stats(self) -> dict[str, float | None]:
        """The protocol's metrics (here pycocotools' 12 stats; LVIS overrides this)."""
        return self.stats()

    def summary(self) -> dict[str, Any]:
        """The metrics, then the operating point (TP/FP/FN, P/R/F1, mean IoU)."""
        score, tp, fp, iou = self._op_columns()
        out: dict[str, Any] = dict(self.summary_stats())
        out.update(
            operating_point(
                score,
                tp,
                fp,
                iou,
                int(self.table.n_pos.sum()),
                score_thr=self.score_thr,
                iou_thr=self.params.op_iou_thr,
            )
        )
        return out

    def per_class(self) -> list[dict[str, Any]]:
        ds = self.dataset
        K = len(ds.categories)
        score, tp, fp, iou = self._op_columns()
        det_cat = self.table.det_category
        by_cat = np.argsort(det_cat, kind="stable")
        cat_bounds = np.searchsorted(det_cat[by_cat], np.arange(K + 1), side="left")
        per_stats = class_stats(self)
        rows: list[dict[str, Any]] = []
        for k in range(K):
            sel = by_cat[cat_bounds[k] : cat_bounds[k + 1]]
            row: dict[str, Any] = {
                "category_id": clean(ds.categories.ids[k]),
                "name": ds.categories.label(k),
                "n_gt": int(self.table.n_pos[k]),
                "n_det": int(self.n_det[k]),
            }
            row.update(per_stats[k])
            row.update(
                operating_point(
                    score[sel],
                    tp[sel],
                    fp[sel],
                    iou[sel],
                    int(self.table.n_pos[k]),
                    score_thr=self.score_thr,
                    iou_thr=self.params.op_iou_thr,
                )
            )
            rows.append(row)
        return rows

    def matches(self) -> Matches:
        """The ``--matches`` rows at the operating point."""
        return matches_rows(self.dataset, self.table, self.op_t, score_thr=self.score_thr)

    def result(self) -> Result:
        p = self.params
        params: dict[str, Any] = {
            "protocol": "coco",
            "iou_type": p.iou_type,
            "iou_thrs": [float(t) for t in p.iou_thrs],
            "rec_thrs": int(p.rec_thrs.shape[0]),
            "max_dets": list(p.max_dets),
            "area_ranges": {n: [lo, hi] for n, lo, hi in p.area_rngs},
            "honor_ignore": p.honor_ignore,
            "op_iou_thr": p.op_iou_thr,
            "score_thr": self.score_thr,
            "score_thr_source": "given" if p.score_thr is not None else "max-f1",
            "area_ranges_defined": self.area_defined,
        }
        return Result(
            summary=self.summary(),
            per_class=self.per_class(),
            params=params,
            matches=self.matches() if p.want_matches else None,
            evaluation=self,
        )


def _by_score(score: FloatArray) -> IntArray:
    """Indices by descending score, ties in index order (pycocotools' mergesort)."""
    return np.argsort(-score, kind="stable").astype(np.int64)


def _by_small_key(keys: IntArray, perm: IntArray) -> IntArray:
    """``perm`` stably re-sorted by ``keys[perm]`` (radix sort when the keys fit 16 bits)."""
    k = keys[perm]
    if k.size and k.min() >= 0 and k.max() < 2**15:
        k = k.astype(np.int16)
    return perm[np.argsort(k, kind="stable")]


def run(
    ds: Dataset, params: CocoParams, *, ignore_unmatched: BoolArray | None = None
) -> CocoEvaluation:
    """Match and accumulate every area range; see the module docstring.

    ``ignore_unmatched`` (per row of ``ds.pred``): predictions that are ignored when they
    match nothing, in every area range, as if outside it (LVIS's not-exhaustive classes).
    """
    K = len(ds.categories)
    gt, pred = ds.gt, ds.pred
    max_det = int(params.max_dets[-1])

    # thresholds used for matching: the COCO ones plus the operating point's
    thrs = [float(t) for t in params.iou_thrs]
    op_t = next((i for i, t in enumerate(thrs) if t == params.op_iou_thr), None)
    if op_t is None:
        thrs.append(float(params.op_iou_thr))
        op_t = len(thrs) - 1
    thr_arr = np.asarray(thrs, dtype=np.float64)
    thr_eff = np.minimum(thr_arr, 1 - 1e-10)
    T = len(params.iou_thrs)

    # ---- ground truths, grouped by (image, category), file order inside a group
    g_group = group_keys(gt, K)
    g_rows = np.argsort(g_group, kind="stable").astype(np.int64)
    g_key = g_group[g_rows]
    g_crowd = gt.iscrowd[g_rows]
    g_base_ign = gt.iscrowd | gt.difficult
    if params.honor_ignore:
        g_base_ign = g_base_ign | gt.ignore
    g_base_ign = g_base_ign[g_rows]
    g_area = gt.area[g_rows]
    nG = g_rows.shape[0]
    g_cat_sorted = gt.category[g_rows]

    # ---- detections: stable sort by score inside each group, keep the first max_det
    d_group_all = group_keys(pred, K)
    # stable sorts throughout, so ties keep file order; small-integer keys sort by radix
    order = _by_small_key(pred.image, _by_small_key(pred.category, _by_score(pred.score)))
    d_group_sorted = d_group_all[order]
    rank_all = run_ranks(d_group_sorted)
    keep = rank_all < max_det
    d_rows = order[keep].astype(np.int64)
    d_group = d_group_sorted[keep]
    d_rank = rank_all[keep].astype(np.int64)
    del order, d_group_sorted, rank_all, keep
    d_score = pred.score[d_rows]
    d_area = pred.area[d_rows]
    d_cat = pred.category[d_rows]
    d_never = ignore_unmatched[d_rows] if ignore_unmatched is not None else None

    # ---- candidate pairs: every detection with every ground truth of its group
    pair_det, pair_gt, d_gstart, d_ng = expand_groups(d_group, g_key)
    pair_iou = group_pair_iou(
        ds, params.iou_type, d_rows, g_rows, pair_det, pair_gt, d_gstart, d_ng
    )
    del d_gstart, d_ng, d_group

    # ---- candidates: a pair below the lowest threshold can never match, and a detection
    # without any candidate pair is unmatched at every threshold ("background")
    cand_pair = pair_iou >= thr_eff.min()
    pair_det = pair_det[cand_pair]
    pair_gt = pair_gt[cand_pair]
    pair_iou = pair_iou[cand_pair]
    # candidate detections (indices into the kept detections); pair_det is sorted
    cdet = pair_det[np.r_[True, pair_det[1:] != pair_det[:-1]]] if pair_det.size else pair_det
    nC = cdet.shape[0]
    pair_c = np.searchsorted(cdet, pair_det)
    pair_rank = d_rank[pair_det]
    del pair_det

    area_defined = ds.pixel_units
    A = len(params.area_rngs)
    M = len(params.max_dets)
    R = params.rec_thrs.shape[0]
    full = params.full_arrays
    if full is None:
        full = 8 * T * R * K * A * M <= 256 * 2**20
    p_at = list(range(M)) if full else [M - 1]
    precision = np.full((T, R, K, A, len(p_at)), -1.0)
    recall = np.full((T, K, A, M), -1.0)
    scores = np.full((T, R, K, A, len(p_at)), -1.0)

    # accumulation order (pycocotools: images in id order, each image's detections in score
    # order, then a stable sort by score per category)
    score_order = _by_score(d_score)
    acc = _acc_order(d_cat, cdet, K, score_order) if params.accumulate else None

    # preference inside each detection: non-ignored first, then IoU, later GT on ties. The
    # order without the (area-dependent) ignore flag is sorted once; each area range then
    # only moves ignored ground truths behind the others (a nearly sorted stable sort)
    base = np.lexsort((-pair_gt, -pair_iou, pair_c, pair_rank))
    base_c = pair_c[base]
    base_seg = np.cumsum(np.r_[False, base_c[1:] != base_c[:-1]]).astype(np.int64) * 2
    del base_c

    # area "all" last: only its table is kept (unless keep_tables), so at most one
    # area's match arrays are alive at a time besides it
    areas = list(range(1, A)) + [0] if area_defined else [0]
    tables: dict[str, MatchTable] = {}
    for a in areas:
        name, lo, hi = params.area_rngs[a]
        g_ign = g_base_ign | (g_area < lo) | (g_area > hi)
        pref = base[np.argsort(base_seg + g_ign[pair_gt[base]], kind="stable")]
        p_gt = pair_gt[pref]
        dt_m, dt_iou = greedy_match(
            pair_c[pref],
            p_gt,
            pair_iou[pref],
            g_crowd[p_gt],
            pair_rank[pref],
            thr_eff,
            n_gt=nG,
            n_cand=nC,
        )
        del pref, p_gt
        hit = dt_m >= 0
        d_out = (d_area < lo) | (d_area > hi)
        if d_never is not None:
            d_out |= d_never
        dt_ig = np.where(hit, g_ign[np.maximum(dt_m, 0)], d_out[cdet][None, :])
        gt_counts = np.zeros(nG, dtype=bool)
        gt_counts[g_rows] = ~g_ign
        table = MatchTable(
            iou_thrs=thr_arr,
            det=d_rows,
            det_rank=d_rank,
            det_category=d_cat,
            det_score=d_score,
            det_image=pred.image[d_rows],
            det_out=d_out,
            cand=cdet,
            gt=np.where(hit, g_rows[np.maximum(dt_m, 0)], -1),
            iou=dt_iou,
            ignored=dt_ig,
            gt_counts=gt_counts,
            n_pos=np.bincount(g_cat_sorted[~g_ign], minlength=K).astype(np.int64),
            area=name,
        )
        del dt_m, hit
        if params.accumulate:
            accumulate(
                table,
                n_classes=K,
                rec_thrs=params.rec_thrs,
                max_dets=params.max_dets,
                thresholds=range(T),
                order=acc,
                precision_at=p_at,
                out=(precision[:, :, :, a, :], recall[:, :, a, :], scores[:, :, :, a, :]),
            )
        if a == 0 or params.keep_tables:
            tables[name] = table
        del table

    return CocoEvaluation(
        protocol="coco",
        params=params,
        dataset=ds,
        table=tables["all"],
        precision=precision,
        recall=recall,
        scores=scores,
        precision_max_dets=tuple(params.max_dets[m] for m in p_at),
        tables=tables,
        area_defined=area_defined,
        n_det=np.bincount(pred.category, minlength=K).astype(np.int64),
        score_order=score_order,
        op_t=op_t,
    )


@dataclass(frozen=True)
class AccOrder:
    """pycocotools' accumulation order of a table's predictions (see :func:`accumulate`)."""

    acc_order: IntArray  # positions into det: per category, by score, ties by (image, rank)
    acc_pos: IntArray  # inverse of acc_order
    cat_start: IntArray  # (K + 1,) start of each category in acc_order
    cand_acc: IntArray  # candidates (positions into cand) in accumulation order


def _acc_order(
    det_category: IntArray, cand: IntArray, K: int, score_order: IntArray | None = None
) -> AccOrder:
    """Accumulation order of predictions laid out in (image, category, rank) order: a
    stable sort by score and then by category leaves ties in (image, rank) order, as
    pycocotools' concatenation of images in id order followed by a mergesort does."""
    nD = det_category.shape[0]
    if score_order is None:
        raise ValueError("score_order is needed")
    acc_order = _by_small_key(det_category, score_order)
    acc_pos = np.empty(nD, dtype=np.int64)
    acc_pos[acc_order] = np.arange(nD)
    cat_start = np.searchsorted(det_category[acc_order], np.arange(K + 1), side="left")
    cand_acc = np.argsort(acc_pos[cand], kind="stable")
    return AccOrder(acc_order, acc_pos, cat_start.astype(np.int64), cand_acc)


def accumulation_order(table: MatchTable, n_classes: int) -> AccOrder:
    """The accumulation order of ``table`` (its predictions must be in (image, category,
    rank) order, as the COCO protocol lays them out)."""
    return _acc_order(table.det_category, table.cand, n_classes, _by_score(table.det_score))


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
    max_dets: tuple[int, ...] = MAX_DETS,
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
    acc_order, acc_pos, cat_start = order.acc_order, order.acc_pos, order.cat_start
    cand_acc = order.cand_acc
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


def _summarize(
    ev: CocoEvaluation,
    *,
    ap: bool,
    iou_thr: float | None = None,
    area: int = 0,
    max_det_index: int = -1,
    k: int | None = None,
) -> float | None:
    p = ev.params
    if area != 0 and not ev.area_defined:
        return None
    if ap:
        s = ev.precision
        if iou_thr is not None:
            t = np.where(iou_thr == p.iou_thrs)[0]
            if t.size == 0:
                return None
            s = s[t]
        s = s[:, :, :, area, max_det_index] if k is None else s[:, :, k, area, max_det_index]
    else:
        s = ev.recall
        if iou_thr is not None:
            t = np.where(iou_thr == p.iou_thrs)[0]
            if t.size == 0:
                return None
            s = s[t]
        s = s[:, :, area, max_det_index] if k is None else s[:, k, area, max_det_index]
    vals = s[s > -1]
    if vals.size == 0:
        return None
    return float(np.mean(vals))


def _stat_specs(max_dets: tuple[int, ...]) -> list[tuple[str, dict[str, Any]]]:
    """pycocotools' summary, stat by stat: key and ``_summarize`` arguments."""
    specs: list[tuple[str, dict[str, Any]]] = [
        ("AP", {"ap": True}),
        ("AP50", {"ap": True, "iou_thr": 0.5}),
        ("AP75", {"ap": True, "iou_thr": 0.75}),
        ("APs", {"ap": True, "area": 1}),
        ("APm", {"ap": True, "area": 2}),
        ("APl", {"ap": True, "area": 3}),
    ]
    specs += [(f"AR{m}", {"ap": False, "max_det_index": i}) for i, m in enumerate(max_dets)]
    specs += [
        ("ARs", {"ap": False, "area": 1}),
        ("ARm", {"ap": False, "area": 2}),
        ("ARl", {"ap": False, "area": 3}),
    ]
    return specs


def stat_keys(max_dets: tuple[int, ...]) -> list[str]:
    """The summary's stat keys for these maxDets (``AR<m>`` follow the actual values)."""
    return [key for key, _ in _stat_specs(max_dets)]


def class_stats(ev: CocoEvaluation) -> list[dict[str, float | None]]:
    """:func:`stats` of every class at once (what ``per_class`` reports), bit-identical to
    ``stats(ev, k)``: a class's values are all defined or all -1, and ``np.mean`` over a
    C-contiguous row sums in the same order as over that row alone."""
    p = ev.params
    K = ev.recall.shape[1]
    cols: dict[str, list[float | None]] = {}
    for key, kw in _stat_specs(p.max_dets):
        area = int(kw.get("area", 0))
        if area != 0 and not ev.area_defined:
            cols[key] = [None] * K
            continue
        t_sel: Any = slice(None)
        if kw.get("iou_thr") is not None:
            hit = np.flatnonzero(kw["iou_thr"] == p.iou_thrs)
            if hit.size == 0:
                cols[key] = [None] * K
                continue
            t_sel = slice(int(hit[0]), int(hit[0]) + 1)
        if kw["ap"]:
            sub = ev.precision[t_sel, :, :, area, -1]  # (T', R, K)
        else:
            sub = ev.recall[t_sel, :, area, int(kw.get("max_det_index", -1))][:, None, :]
        rows = np.ascontiguousarray(np.moveaxis(sub, 2, 0).reshape(K, sub.shape[0] * sub.shape[1]))
        valid = rows > -1
        n_valid = valid.sum(axis=1)
        means = np.mean(rows, axis=1)
        out: list[float | None] = []
        for k in range(K):
            if n_valid[k] == rows.shape[1]:
                out.append(float(means[k]))
            elif n_valid[k] == 0:
                out.append(None)
            else:  # mixed (not produced by accumulate): the plain definition
                out.append(float(np.mean(rows[k][valid[k]])))
        cols[key] = out
    return [{key: vals[k] for key, vals in cols.items()} for k in range(K)]


def stats(ev: CocoEvaluation, k: int | None = None) -> dict[str, float | None]:
    """The 12 pycocotools stats (keys ``AR<m>`` follow the actual maxDets)."""
    return {key: _summarize(ev, k=k, **kw) for key, kw in _stat_specs(ev.params.max_dets)}


def evaluate_coco(ds: Dataset, params: CocoParams | None = None) -> Result:
    """Run the COCO protocol and return the flat result (see :class:`CocoEvaluation`)."""
    return run(ds, params or CocoParams()).result()


def _params(opts: Mapping[str, Any]) -> CocoParams:
    thrs = opts.get("iou_thrs")
    return CocoParams(
        iou_type=opts.get("iou_type", "bbox"),
        iou_thrs=IOU_THRS.copy() if thrs is None else np.asarray(thrs, dtype=np.float64),
        max_dets=tuple(int(m) for m in opts.get("max_dets") or MAX_DETS),
        honor_ignore=bool(opts.get("honor_ignore", False)),
        op_iou_thr=float(opts.get("iou_thr", 0.5)),
        score_thr=opts.get("score_thr"),
        want_matches=bool(opts.get("matches", False)),
        keep_tables=bool(opts.get("keep_tables", False)),
        accumulate=not opts.get("map_only", False),
    )


PROTOCOLS = {
    "coco": Protocol(
        name="coco",
        description="COCO 101-point AP over IoU .50:.95 (pycocotools)",
        options=frozenset({"max_dets", "iou_thrs", "honor_ignore", "keep_tables"}),
        defaults={"max_dets": MAX_DETS, "iou_thrs": None, "honor_ignore": False},
        iou_types=("bbox", "segm", "obb"),
        summary_keys=lambda opts: stat_keys(tuple(opts.get("max_dets") or MAX_DETS)),
        run=lambda ds, opts: run(ds, _params(opts)),
    )
}
