"""The COCO protocol, exactly as ``pycocotools.cocoeval.COCOeval`` (iouType bbox, segm and
keypoints: only the similarity of a pair changes, OKS for keypoints).

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset
from ..matching.accumulate import (
    REC_THRS,
    acc_order,
    accumulate,
    by_score,
    by_score_from,
    by_small_key,
)
from ..matching.greedy import greedy_match
from ..matching.pairs import expand_groups, group_keys, group_pair_iou, run_ranks, sigma_table
from ..matching.table import MatchTable, matches_rows
from ..metrics import best_f1_threshold, operating_point
from ..result import Evaluation, Matches, Result, clean
from ..workers import in_threads
from . import Protocol
from .coco_stats import class_stats, stat_keys, stats

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# pycocotools Params.setDetParams, verbatim arithmetic
IOU_THRS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
AREA_RNGS: tuple[tuple[str, float, float], ...] = (
    ("all", 0**2, 1e5**2),
    ("small", 0**2, 32**2),
    ("medium", 32**2, 96**2),
    ("large", 96**2, 1e5**2),
)
MAX_DETS = (1, 10, 100)
# pycocotools Params.setKpParams
KP_AREA_RNGS: tuple[tuple[str, float, float], ...] = (
    ("all", 0**2, 1e5**2),
    ("medium", 32**2, 96**2),
    ("large", 96**2, 1e5**2),
)
KP_MAX_DETS = (20,)


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
    pair_jobs: int = 1  # threads the matching may use: keypoint pairs' OKS, area ranges (--jobs)


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
    sigma_source: str = ""  # keypoints: where the OKS sigmas came from
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

    def _op_category(self) -> IntArray:
        """The class of each row of :meth:`_op_columns`."""
        return self.table.det_category

    @property
    def score_thr(self) -> float | None:
        """The operating point's confidence: given, or the one that maximises F1."""
        if self.params.score_thr is not None:
            return float(self.params.score_thr)
        if "score_thr" not in self._cache:
            score, tp, fp, _ = self._op_columns()
            n_gt = int(self.n_gt.sum())
            order = self.score_order if self.score_order.shape == score.shape else None
            self._cache["score_thr"] = best_f1_threshold(score, tp, fp, n_gt, order=order)
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
                int(self.n_gt.sum()),
                score_thr=self.score_thr,
                iou_thr=self.params.op_iou_thr,
            )
        )
        return out

    def per_class(self) -> list[dict[str, Any]]:
        ds = self.dataset
        K = len(ds.categories)
        score, tp, fp, iou = self._op_columns()
        det_cat = self._op_category()
        by_cat = np.argsort(det_cat, kind="stable")
        cat_bounds = np.searchsorted(det_cat[by_cat], np.arange(K + 1), side="left")
        per_stats = class_stats(self)
        rows: list[dict[str, Any]] = []
        for k in range(K):
            sel = by_cat[cat_bounds[k] : cat_bounds[k + 1]]
            row: dict[str, Any] = {
                "category_id": clean(ds.categories.ids[k]),
                "name": ds.categories.label(k),
                "n_gt": int(self.n_gt[k]),
                "n_det": int(self.n_det[k]),
            }
            row.update(per_stats[k])
            row.update(
                operating_point(
                    score[sel],
                    tp[sel],
                    fp[sel],
                    iou[sel],
                    int(self.n_gt[k]),
                    score_thr=self.score_thr,
                    iou_thr=self.params.op_iou_thr,
                )
            )
            rows.append(row)
        return rows

    def matches(self) -> Matches:
        """The ``--matches`` rows at the operating point (keypoints: ``oks`` = ``iou``)."""
        m = matches_rows(self.dataset, self.table, self.op_t, score_thr=self.score_thr)
        if self.params.iou_type == "keypoints":
            m.columns["oks"] = m.columns["iou"]
        return m

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
        info: list[str] = []
        if p.iou_type == "keypoints":
            params["oks_sigmas"] = self.sigma_source
            info.append(f"OKS sigmas: {self.sigma_source}")
        return Result(
            info=info,
            summary=self.summary(),
            per_class=self.per_class(),
            params=params,
            matches=self.matches() if p.want_matches else None,
            evaluation=self,
        )


def run(
    ds: Dataset,
    params: CocoParams,
    *,
    ignore_unmatched: BoolArray | None = None,
    classes: IntArray | None = None,
) -> CocoEvaluation:
    """Match and accumulate every area range; see the module docstring.

    ``ignore_unmatched`` (per row of ``ds.pred``): predictions that are ignored when they
    match nothing, in every area range, as if outside it (LVIS's not-exhaustive classes).
    ``classes``: evaluate these classes only (the others' slices stay -1; ``--jobs``
    gives each process some), without a copy of their rows.
    """
    K = len(ds.categories)
    gt, pred = ds.gt, ds.pred
    max_det = int(params.max_dets[-1])
    g_sel = p_sel = None
    if classes is not None:
        wanted = np.zeros(K, dtype=bool)
        wanted[classes] = True
        g_sel = np.flatnonzero(wanted[gt.category])
        p_sel = np.flatnonzero(wanted[pred.category])

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
    if g_sel is None:
        g_rows = np.argsort(g_group, kind="stable").astype(np.int64)
    else:
        g_rows = g_sel[np.argsort(g_group[g_sel], kind="stable")].astype(np.int64)
    g_key = g_group[g_rows]
    g_crowd = gt.iscrowd[g_rows]
    g_base_ign = gt.iscrowd | gt.difficult
    if params.iou_type == "keypoints" and gt.num_keypoints is not None:
        g_base_ign = g_base_ign | (gt.num_keypoints == 0)  # pycocotools' _prepare
    if params.honor_ignore:
        g_base_ign = g_base_ign | gt.ignore
    g_base_ign = g_base_ign[g_rows]
    g_area = gt.area[g_rows]
    nG = g_rows.shape[0]
    g_cat_sorted = gt.category[g_rows]

    # ---- detections: stable sort by score inside each group, keep the first max_det
    d_group_all = group_keys(pred, K)
    # stable sorts throughout, so ties keep file order; small-integer keys sort by radix
    by_sc = by_score(pred.score) if p_sel is None else p_sel[by_score(pred.score[p_sel])]
    order = by_small_key(pred.image, by_small_key(pred.category, by_sc))
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
    sigma_source = sigma_table(ds)[1] if params.iou_type == "keypoints" else ""
    pair_iou = group_pair_iou(
        ds,
        params.iou_type,
        d_rows,
        g_rows,
        pair_det,
        pair_gt,
        d_gstart,
        d_ng,
        min_sim=float(thr_eff.min()),
        jobs=params.pair_jobs,
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
    # (the map of --jobs and partial files accumulates nowhere: no score order there)
    score_order = (
        by_score_from(by_sc, d_rows, d_score, len(pred))
        if params.accumulate
        else np.zeros(0, dtype=np.int64)
    )
    del by_sc
    acc = acc_order(d_cat, cdet, K, score_order) if params.accumulate else None

    # preference inside each detection: non-ignored first, then IoU, later GT on ties. The
    # order without the (area-dependent) ignore flag is sorted once; each area range then
    # only moves ignored ground truths behind the others (a nearly sorted stable sort)
    base = np.lexsort((-pair_gt, -pair_iou, pair_c, pair_rank))
    base_c = pair_c[base]
    base_seg = np.cumsum(np.r_[False, base_c[1:] != base_c[:-1]]).astype(np.int64) * 2
    del base_c

    # area "all" last: only its table is kept (unless keep_tables), so at most one
    # area's match arrays are alive at a time besides it (two with threads)
    areas = list(range(1, A)) + [0] if area_defined else [0]
    tables: dict[str, MatchTable] = {}

    def area_pass(a: int) -> None:
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
        gt_counts = np.zeros(len(gt), dtype=bool)  # (nG rows unless ``classes``)
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

    # each area range is matched and accumulated apart (its own slices of the arrays):
    # with --jobs, threads take them in turn (NumPy releases the GIL in their loops)
    in_threads(area_pass, areas, params.pair_jobs)

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
        sigma_source=sigma_source,
    )


def _params(opts: Mapping[str, Any]) -> CocoParams:
    thrs = opts.get("iou_thrs")
    iou_type = opts.get("iou_type", "bbox")
    return CocoParams(
        iou_type=iou_type,
        area_rngs=KP_AREA_RNGS if iou_type == "keypoints" else AREA_RNGS,
        iou_thrs=IOU_THRS.copy() if thrs is None else np.asarray(thrs, dtype=np.float64),
        max_dets=_max_dets(opts.get("max_dets"), iou_type),
        honor_ignore=bool(opts.get("honor_ignore", False)),
        op_iou_thr=float(opts.get("iou_thr", 0.5)),
        score_thr=opts.get("score_thr"),
        want_matches=bool(opts.get("matches", False)),
        keep_tables=bool(opts.get("keep_tables", False)),
        accumulate=not opts.get("map_only", False),
        pair_jobs=int(opts.get("pair_jobs", 1)),
    )


def _max_dets(given: Sequence[int] | None, iou_type: str) -> tuple[int, ...]:
    """maxDets: given, else pycocotools' default for the IoU type (keypoints: 20)."""
    if given:
        return tuple(int(m) for m in given)
    return KP_MAX_DETS if iou_type == "keypoints" else MAX_DETS


@dataclass(frozen=True)
class Params:
    """The COCO protocol's own options: ``max_dets`` (pycocotools' maxDets; None: 1,10,100,
    for keypoints 20), ``iou_thrs``
    (the AP thresholds; None: .50:.05:.95), ``honor_ignore`` (a ground truth's own
    ``ignore`` flag also ignores it), ``keep_tables`` (keep every area range's match table)."""

    max_dets: Sequence[int] | None = None
    iou_thrs: Sequence[float] | None = None
    honor_ignore: bool = False
    keep_tables: bool = False


PROTOCOLS = {
    "coco": Protocol(
        name="coco",
        description="COCO 101-point AP over IoU .50:.95 (pycocotools)",
        params=Params,
        iou_types=("bbox", "segm", "obb", "keypoints"),
        summary_keys=lambda opts: stat_keys(
            _max_dets(opts.get("max_dets"), opts.get("iou_type", "bbox")),
            opts.get("iou_type", "bbox"),
        ),
        run=lambda ds, opts: run(ds, _params(opts)),
        curves="coco",
        bootstrap="coco",
        bootstrap_options={"keep_tables": True},
        tide=True,
    )
}
