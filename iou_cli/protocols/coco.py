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

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Boxes, Dataset
from ..engine import Corners, overlap
from ..metrics import best_f1_threshold, operating_point
from ..result import Matches, Result

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


@dataclass
class CocoEval:
    """Everything ``accumulate`` gives in pycocotools, plus the operating-point inputs."""

    precision: FloatArray  # (T, R, K, A, M), -1 where undefined
    recall: FloatArray  # (T, K, A, M)
    params: CocoParams
    area_defined: bool
    n_gt: IntArray  # (K,) non-ignored ground truths (area "all")
    n_det: IntArray  # (K,) predictions (all, before maxDets)
    # operating point inputs over evaluated detections (area "all", maxDets[-1])
    op_det: IntArray  # prediction rows (into ds.pred)
    op_tp: BoolArray
    op_fp: BoolArray
    op_iou: FloatArray
    op_gt: IntArray  # matched ground-truth row or -1
    op_order: IntArray  # evaluated detections by descending score
    gt_keep: BoolArray  # non-ignored ground truths (area "all")


def _by_score(score: FloatArray) -> IntArray:
    """Indices by descending score, ties in index order (pycocotools' mergesort)."""
    return np.argsort(-score, kind="stable").astype(np.int64)


def _by_small_key(keys: IntArray, perm: IntArray) -> IntArray:
    """``perm`` stably re-sorted by ``keys[perm]`` (radix sort when the keys fit 16 bits)."""
    k = keys[perm]
    if k.size and k.min() >= 0 and k.max() < 2**15:
        k = k.astype(np.int16)
    return perm[np.argsort(k, kind="stable")]


def _group_starts(keys: IntArray, n_groups: int) -> IntArray:
    """Start offsets of each group id in a sorted key array (length n_groups + 1)."""
    return np.searchsorted(keys, np.arange(n_groups + 1), side="left").astype(np.int64)


def _corners(boxes: Boxes, rows: IntArray) -> Corners:
    """``(x1, y1, x2, y2, box_area)`` of ``rows``, the columns ``engine.overlap`` takes."""
    xy = boxes.xyxy
    return (xy[rows, 0], xy[rows, 1], xy[rows, 2], xy[rows, 3], boxes.box_area[rows])


def _pair_iou_bbox(ds: Dataset, d_rows: IntArray, g_rows: IntArray, crowd: BoolArray) -> FloatArray:
    return overlap(_corners(ds.pred, d_rows), _corners(ds.gt, g_rows), crowd)


def _pair_iou_segm(
    ds: Dataset,
    pair_det: IntArray,
    pair_gt: IntArray,
    d_rows: IntArray,
    g_rows: IntArray,
    crowd_sorted: BoolArray,
    d_gstart: IntArray,
    d_ng: IntArray,
) -> FloatArray:
    from ..masks import group_iou

    out = np.zeros(pair_det.shape[0], dtype=np.float64)
    pm, gm = ds.pred.masks, ds.gt.masks
    assert pm is not None and gm is not None
    # pairs are laid out group by group, det-major: find each group's det run
    if pair_det.size == 0:
        return out
    pos = 0
    nd_total = d_rows.shape[0]
    d = 0
    while d < nd_total:
        ng = int(d_ng[d])
        if ng == 0:
            d += 1
            continue
        gs = int(d_gstart[d])
        e = d
        while e < nd_total and d_gstart[e] == gs and d_ng[e] == ng:
            e += 1
        dts = [pm[int(r)] for r in d_rows[d:e]]
        gts = [gm[int(r)] for r in g_rows[gs : gs + ng]]
        m = group_iou(dts, gts, crowd_sorted[gs : gs + ng])
        n = (e - d) * ng
        out[pos : pos + n] = np.asarray(m, dtype=np.float64).reshape(-1)
        pos += n
        d = e
    return out


def run(ds: Dataset, params: CocoParams) -> CocoEval:
    K = len(ds.categories)
    n_img = len(ds.images)
    n_groups = max(n_img * K, 1)
    gt, pred = ds.gt, ds.pred
    max_det = int(params.max_dets[-1])

    # thresholds used for matching: the COCO ones plus the operating point's
    thrs = [float(t) for t in params.iou_thrs]
    op_t = next((i for i, t in enumerate(thrs) if t == params.op_iou_thr), None)
    if op_t is None:
        thrs.append(float(params.op_iou_thr))
        op_t = len(thrs) - 1
    thr_eff = np.minimum(np.asarray(thrs, dtype=np.float64), 1 - 1e-10)
    TT = len(thrs)
    T = len(params.iou_thrs)

    # ---- ground truths, grouped by (image, category), file order inside a group
    g_group = gt.image * K + gt.category
    g_rows = np.argsort(g_group, kind="stable").astype(np.int64)
    g_key = g_group[g_rows]
    g_start = _group_starts(g_key, n_groups)
    g_crowd = gt.iscrowd[g_rows]
    g_base_ign = gt.iscrowd | gt.difficult
    if params.honor_ignore:
        g_base_ign = g_base_ign | gt.ignore
    g_base_ign = g_base_ign[g_rows]
    g_area = gt.area[g_rows]
    nG = g_rows.shape[0]

    # ---- detections: stable sort by score inside each group, keep the first max_det
    d_group_all = pred.image * K + pred.category
    # stable sorts throughout, so ties keep file order; small-integer keys sort by radix
    order = _by_small_key(pred.image, _by_small_key(pred.category, _by_score(pred.score)))
    d_group_sorted = d_group_all[order]
    d_start_all = _group_starts(d_group_sorted, n_groups)
    rank_all = np.arange(order.shape[0]) - d_start_all[d_group_sorted]
    keep = rank_all < max_det
    d_rows = order[keep].astype(np.int64)
    d_group = d_group_sorted[keep]
    d_rank = rank_all[keep].astype(np.int64)
    nD = d_rows.shape[0]
    d_score = pred.score[d_rows]
    d_area = pred.area[d_rows]

    # ---- candidate pairs: every detection with every ground truth of its group
    d_gstart = g_start[d_group]
    d_ng = g_start[d_group + 1] - d_gstart
    n_pairs = int(d_ng.sum())
    pair_det = np.repeat(np.arange(nD, dtype=np.int64), d_ng)
    first_pair = np.cumsum(d_ng) - d_ng
    pair_gt = (
        np.repeat(d_gstart, d_ng) + np.arange(n_pairs, dtype=np.int64) - np.repeat(first_pair, d_ng)
    )
    if params.iou_type == "segm":
        pair_iou = _pair_iou_segm(ds, pair_det, pair_gt, d_rows, g_rows, g_crowd, d_gstart, d_ng)
    else:
        pair_iou = _pair_iou_bbox(ds, d_rows[pair_det], g_rows[pair_gt], g_crowd[pair_gt])

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
    is_cand = np.zeros(nD, dtype=bool)
    is_cand[cdet] = True

    area_defined = ds.pixel_units
    rngs = params.area_rngs if area_defined else params.area_rngs[:1]
    A = len(params.area_rngs)
    M = len(params.max_dets)
    R = params.rec_thrs.shape[0]
    precision = -np.ones((T, R, K, A, M))
    recall = -np.ones((T, K, A, M))

    # accumulation order (pycocotools: images in id order, each image's detections in score
    # order, then a stable sort by score per category)
    d_cat = pred.category[d_rows]
    # the kept detections are in (image, category, rank) order, so a stable sort by score
    # and then by category leaves ties in (image, rank) order
    score_order = _by_score(d_score)
    acc_order = _by_small_key(d_cat, score_order)
    acc_pos = np.empty(nD, dtype=np.int64)
    acc_pos[acc_order] = np.arange(nD)
    cat_start = np.searchsorted(d_cat[acc_order], np.arange(K + 1), side="left")
    cand_acc = np.argsort(acc_pos[cdet], kind="stable")  # candidates in accumulation order
    g_cat_sorted = gt.category[g_rows]

    # preference inside each detection: non-ignored first, then IoU, later GT on ties. The
    # order without the (area-dependent) ignore flag is sorted once; each area range then
    # only moves ignored ground truths behind the others (a nearly sorted stable sort)
    base = np.lexsort((-pair_gt, -pair_iou, pair_c, pair_rank))
    base_c = pair_c[base]
    base_seg = np.cumsum(np.r_[False, base_c[1:] != base_c[:-1]]).astype(np.int64) * 2

    op: dict[str, Any] = {}
    for a, (_name, lo, hi) in enumerate(rngs):
        g_ign = g_base_ign | (g_area < lo) | (g_area > hi)
        pref = base[np.argsort(base_seg + g_ign[pair_gt[base]], kind="stable")]
        p_c = pair_c[pref]
        p_gt = pair_gt[pref]
        p_iou = pair_iou[pref]
        p_crowd = g_crowd[p_gt]
        rank_bounds = np.searchsorted(pair_rank[pref], np.arange(max_det + 1), side="left")
        matched = np.zeros((TT, nG), dtype=bool)
        dt_m = np.full((TT, nC), -1, dtype=np.int64)
        dt_iou = np.zeros((TT, nC), dtype=np.float64)
        for k in range(max_det):
            s, e = int(rank_bounds[k]), int(rank_bounds[k + 1])
            if s == e:
                continue
            pg = p_gt[s:e]
            elig = (p_iou[s:e][None, :] >= thr_eff[:, None]) & (
                p_crowd[s:e][None, :] | ~matched[:, pg]
            )
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
        hit = dt_m >= 0
        d_out = (d_area < lo) | (d_area > hi)
        dt_ig = np.where(hit, g_ign[np.maximum(dt_m, 0)], d_out[cdet][None, :])
        npig = np.bincount(g_cat_sorted[~g_ign], minlength=K)
        if a == 0:
            tp_op = np.zeros(nD, dtype=bool)
            tp_op[cdet] = hit[op_t] & ~dt_ig[op_t]
            fp_op = ~d_out.copy()
            fp_op[cdet] = ~hit[op_t] & ~dt_ig[op_t]
            iou_op = np.zeros(nD)
            iou_op[cdet] = dt_iou[op_t]
            gt_op = np.full(nD, -1, dtype=np.int64)
            gt_op[cdet] = np.where(hit[op_t], g_rows[np.maximum(dt_m[op_t], 0)], -1)
            op = {
                "tp": tp_op,
                "fp": fp_op,
                "iou": iou_op,
                "gt": gt_op,
                "npig": npig,
                "gt_keep": ~g_ign,
            }
        bg_fp = ~is_cand & ~d_out  # background detections are false positives in range
        _accumulate(
            precision,
            recall,
            a,
            params,
            npig,
            acc_order,
            cat_start,
            bg_fp,
            cdet,
            cand_acc,
            acc_pos,
            d_rank,
            dt_m[:T],
            dt_ig[:T],
            K,
        )

    n_det = np.bincount(pred.category, minlength=K).astype(np.int64)
    gt_keep = np.zeros(len(gt), dtype=bool)
    gt_keep[g_rows] = op["gt_keep"]
    return CocoEval(
        precision=precision,
        recall=recall,
        params=params,
        area_defined=area_defined,
        n_gt=op["npig"].astype(np.int64),
        n_det=n_det,
        op_det=d_rows,
        op_order=score_order,
        op_tp=op["tp"],
        op_fp=op["fp"],
        op_iou=op["iou"],
        op_gt=op["gt"].astype(np.int64),
        gt_keep=gt_keep,
    )


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


def _accumulate(
    precision: FloatArray,
    recall: FloatArray,
    a: int,
    params: CocoParams,
    npig: IntArray,
    acc_order: IntArray,
    cat_start: IntArray,
    bg_fp: BoolArray,
    cdet: IntArray,
    cand_acc: IntArray,
    acc_pos: IntArray,
    d_rank: IntArray,
    dt_m: IntArray,
    dt_ig: BoolArray,
    K: int,
) -> None:
    """pycocotools' ``accumulate`` for one area range, on the true positives only.

    Precision is made monotone from the right and read at the first index whose recall
    reaches r. Within a category, between two true positives the precision only falls (a
    false positive raises fp, an ignored detection changes nothing), so the maximum over any
    suffix that starts at a true positive is the maximum over the true positives in it.
    The suffix for recall point r starts at the ``c_r``-th true positive, where ``c_r`` is
    the least count with ``c_r / npig >= r`` in float64 (exactly pycocotools' comparison).
    False positives enter through their count before each true positive: background
    detections (no candidate pair) are counted once per (area, maxDets), the others per
    threshold.
    """
    R = params.rec_thrs.shape[0]
    cmin = np.maximum(_min_counts(npig, params.rec_thrs), 1)  # (K, R)
    valid_k = npig > 0
    nvalid = int(valid_k.sum())
    if nvalid == 0:
        return
    eps = np.spacing(1)
    rank_acc = d_rank[acc_order]
    bg_acc = bg_fp[acc_order]
    cat_first = cat_start[:-1]
    T = dt_m.shape[0]
    for mi, max_det in enumerate(params.max_dets):
        # background false positives before each candidate, in its category
        bg_pos = np.flatnonzero(bg_acc & (rank_acc < max_det))
        cols = cand_acc[d_rank[cdet[cand_acc]] < max_det]  # candidates, accumulation order
        pos = acc_pos[cdet[cols]]
        ccat = np.searchsorted(cat_start, pos, side="right") - 1
        bg_before = np.searchsorted(bg_pos, pos) - np.searchsorted(bg_pos, cat_first)[ccat]
        cseg = np.searchsorted(ccat, np.arange(K + 1), side="left")
        hit = dt_m[:, cols] >= 0
        ig = dt_ig[:, cols]
        tps = hit & ~ig
        fps = ~hit & ~ig
        Q = np.zeros((T, nvalid, R))
        for t in range(T):
            tpos = np.flatnonzero(tps[t])
            fpos = np.flatnonzero(fps[t])
            tk = ccat[tpos]
            ntp = np.bincount(tk, minlength=K)
            tstart = np.r_[0, np.cumsum(ntp)]
            # the i-th true positive of its category has tp = i; fp counts every false
            # positive before it in the category: candidates, then background ones
            tp_v = (np.arange(1, tpos.shape[0] + 1) - tstart[tk]).astype(np.float64)
            fstart = np.searchsorted(fpos, cseg[:-1])
            fp_v = (np.searchsorted(fpos, tpos) - fstart[tk] + bg_before[tpos]).astype(np.float64)
            pr = tp_v / (fp_v + tp_v + eps)
            recall[t, valid_k, a, mi] = (ntp / np.maximum(npig, 1))[valid_k]
            # block maxima between the c_r-th true positives, then suffix maxima
            c = np.minimum(cmin, ntp[:, None] + 1)  # c > ntp: no true positive left
            b = tstart[:-1, None] + c - 1
            bounds = np.concatenate([b, tstart[1:, None]], axis=1).reshape(-1)
            blk = np.maximum.reduceat(np.r_[pr, -np.inf], bounds)
            nxt = np.r_[bounds[1:], pr.shape[0]]
            blk = np.where(bounds < nxt, blk, -np.inf).reshape(K, R + 1)[:, :R]
            suf = np.maximum.accumulate(blk[:, ::-1], axis=1)[:, ::-1]
            Q[t] = np.where(cmin <= ntp[:, None], suf, 0.0)[valid_k]
        precision[:, :, valid_k, a, mi] = Q.transpose(0, 2, 1)


def _summarize(
    ev: CocoEval,
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


def stats(ev: CocoEval, k: int | None = None) -> dict[str, float | None]:
    """The 12 pycocotools stats (keys ``AR<m>`` follow the actual maxDets)."""
    return {key: _summarize(ev, k=k, **kw) for key, kw in _stat_specs(ev.params.max_dets)}


def evaluate_coco(ds: Dataset, params: CocoParams | None = None) -> Result:
    params = params or CocoParams()
    ev = run(ds, params)
    K = len(ds.categories)
    pred = ds.pred
    det_score = pred.score[ev.op_det]
    det_cat = pred.category[ev.op_det]
    n_gt_total = int(ev.n_gt.sum())
    score_thr = params.score_thr
    if score_thr is None:
        score_thr = best_f1_threshold(det_score, ev.op_tp, ev.op_fp, n_gt_total, order=ev.op_order)
    summary: dict[str, Any] = dict(stats(ev))
    summary.update(
        operating_point(
            det_score,
            ev.op_tp,
            ev.op_fp,
            ev.op_iou,
            n_gt_total,
            score_thr=score_thr,
            iou_thr=params.op_iou_thr,
        )
    )
    per_class: list[dict[str, Any]] = []
    by_cat = np.argsort(det_cat, kind="stable")
    cat_bounds = np.searchsorted(det_cat[by_cat], np.arange(K + 1), side="left")
    for k in range(K):
        sel = by_cat[cat_bounds[k] : cat_bounds[k + 1]]
        row: dict[str, Any] = {
            "category_id": _plain(ds.categories.ids[k]),
            "name": ds.categories.label(k),
            "n_gt": int(ev.n_gt[k]),
            "n_det": int(ev.n_det[k]),
        }
        row.update(stats(ev, k))
        row.update(
            operating_point(
                det_score[sel],
                ev.op_tp[sel],
                ev.op_fp[sel],
                ev.op_iou[sel],
                int(ev.n_gt[k]),
                score_thr=score_thr,
                iou_thr=params.op_iou_thr,
            )
        )
        per_class.append(row)
    result_params: dict[str, Any] = {
        "protocol": "coco",
        "iou_type": params.iou_type,
        "iou_thrs": [float(t) for t in params.iou_thrs],
        "rec_thrs": int(params.rec_thrs.shape[0]),
        "max_dets": list(params.max_dets),
        "area_ranges": {n: [lo, hi] for n, lo, hi in params.area_rngs},
        "honor_ignore": params.honor_ignore,
        "op_iou_thr": params.op_iou_thr,
        "score_thr": score_thr,
        "score_thr_source": "given" if params.score_thr is not None else "max-f1",
        "area_ranges_defined": ev.area_defined,
    }
    matches = _matches(ds, ev, score_thr) if params.want_matches else None
    return Result(summary=summary, per_class=per_class, params=result_params, matches=matches)


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _matches(ds: Dataset, ev: CocoEval, score_thr: float | None) -> Matches:
    pred, gt = ds.pred, ds.gt
    rows = ev.op_det
    score = pred.score[rows]
    keep = score >= score_thr if score_thr is not None else np.ones(rows.shape, dtype=bool)
    rows, score = rows[keep], score[keep]
    tp, fp, iou_v, g = ev.op_tp[keep], ev.op_fp[keep], ev.op_iou[keep], ev.op_gt[keep]
    outcome = np.where(tp, "TP", np.where(fp, "FP", "ignored")).astype(object)
    matched = np.zeros(len(gt), dtype=bool)
    matched[g[g >= 0]] = True
    missed = np.flatnonzero(ev.gt_keep & ~matched)
    keys = ds.images.keys
    cats = ds.categories
    image = [keys[i] for i in pred.image[rows]] + [keys[i] for i in gt.image[missed]]
    category = [cats.label(c) for c in pred.category[rows]] + [
        cats.label(c) for c in gt.category[missed]
    ]
    gt_ids = np.where(g >= 0, gt.ids[np.maximum(g, 0)], -1)
    columns = {
        "image": image,
        "category": category,
        "pred_id": np.r_[pred.ids[rows], np.full(missed.shape, -1)].astype(np.int64),
        "gt_id": np.r_[gt_ids, gt.ids[missed]].astype(np.int64),
        "score": np.r_[score, np.full(missed.shape, np.nan)],
        "iou": np.r_[np.where(g >= 0, iou_v, np.nan), np.full(missed.shape, np.nan)],
        "outcome": list(outcome) + ["FN"] * int(missed.shape[0]),
    }
    return Matches(columns)
