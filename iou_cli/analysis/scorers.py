"""Scorers of the paired bootstrap: what a sample of image multiplicities gives for one model
(the COCO stats through :class:`~iou_cli.analysis.bootstrap.WeightedCoco`, the VOC mAP by
re-weighting the devkit's matching), the paired deltas of two models, and the scorer of a
protocol's kind (its registry entry's ``bootstrap``).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bootstrap import (
    BoolArray,
    FloatArray,
    IntArray,
    SampleStats,
    ScoreTable,
    WArray,
    WeightedCoco,
    multiplicities,
)

# --------------------------------------------------------------------------- summaries


def _masked_mean(x: FloatArray, valid: BoolArray) -> FloatArray:
    """Per sample ``b``: ``np.mean(x[b][..., valid[b]])`` over the trailing class axis, NaN
    when no class is valid. Samples sharing a mask are reduced together (one contiguous
    row each, so the pairwise sum is the one ``np.mean`` of that 1-D selection makes)."""
    B = x.shape[0]
    out = np.full(B, np.nan)
    patterns, inverse = np.unique(valid, axis=0, return_inverse=True)
    for p, mask in enumerate(patterns):
        if not mask.any():
            continue
        rows = np.flatnonzero(inverse.reshape(-1) == p)
        sel = x[rows][..., mask].reshape(rows.shape[0], -1)
        out[rows] = np.mean(sel, axis=1)
    return out


@dataclass
class OpTable:
    """The operating point's inputs (area "all", top ``maxDets[-1]``), fixed score cut:
    per evaluated prediction its image, whether it is a TP / FP at the cut, the TP's IoU;
    per counted ground truth its image."""

    det_image: IntArray
    tp: BoolArray
    fp: BoolArray
    iou: FloatArray
    gt_image: IntArray
    n_images: int

    def per_image(self) -> FloatArray:
        n = self.n_images
        return np.stack(
            [
                np.bincount(self.det_image[self.tp], minlength=n).astype(np.float64),
                np.bincount(self.det_image[self.fp], minlength=n).astype(np.float64),
                np.bincount(self.det_image[self.tp], weights=self.iou[self.tp], minlength=n),
                np.bincount(self.gt_image, minlength=n).astype(np.float64),
            ],
            axis=1,
        )


class CocoScorer:
    """Summary keys (pycocotools' 12 stats and the operating point) and per-class AP of one
    model for a chunk of image weights; undefined values are NaN."""

    def __init__(
        self,
        tables: dict[str, ScoreTable],
        *,
        n_classes: int,
        iou_thrs: FloatArray,
        rec_thrs: FloatArray,
        max_dets: tuple[int, ...],
        op: OpTable | None = None,
        frequency: IntArray | None = None,
    ) -> None:
        """``frequency`` (LVIS): each class's group, 0 rare, 1 common, 2 frequent, adding
        APr, APc, APf."""
        self.frequency = frequency
        self.engine = WeightedCoco(
            tables, n_classes=n_classes, rec_thrs=rec_thrs, max_dets=max_dets
        )
        self.iou_thrs = np.asarray(iou_thrs, dtype=np.float64)
        self.max_dets = tuple(int(m) for m in max_dets)
        self.R = int(np.asarray(rec_thrs).shape[0])
        self.op = op
        self._op_img = op.per_image() if op is not None else None

    def _ap(
        self, st: SampleStats, area: str, iou: float | None, cats: BoolArray | None = None
    ) -> FloatArray | None:
        t = self._t(iou)
        if area not in st.qsum or t is None:
            return None
        valid = st.n_pos[area] > 0
        if cats is not None:  # a class group (LVIS frequency)
            valid = valid & cats[None, :]
        if st.q:  # exact: pycocotools' mean over its (T, R, K) layout
            q = np.ascontiguousarray(st.q[area][:, t].transpose(0, 1, 3, 2))
            return _masked_mean(q, valid)
        qs = st.qsum[area][:, t]  # (B, T', K)
        n = valid.sum(axis=1) * qs.shape[1] * self.R
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, (qs * valid[:, None, :]).sum(axis=(1, 2)) / n, np.nan)

    def _t(self, iou: float | None) -> slice | None:
        """The threshold axis of one IoU (None: not a threshold here), or all of them."""
        if iou is None:
            return slice(None)
        idx = np.flatnonzero(self.iou_thrs == iou)
        return slice(int(idx[0]), int(idx[0]) + 1) if idx.size else None

    def _ar(
        self, st: SampleStats, area: str, mi: int, iou: float | None = None
    ) -> FloatArray | None:
        t = self._t(iou)
        if area not in st.rc or t is None:
            return None
        valid = st.n_pos[area] > 0
        r = st.rc[area][:, t, :, mi]  # (B, T, K)
        if st.q:
            return _masked_mean(np.ascontiguousarray(r), valid)
        n = valid.sum(axis=1) * r.shape[1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, (r * valid[:, None, :]).sum(axis=(1, 2)) / n, np.nan)

    def score(self, w: WArray, *, exact: bool = False) -> tuple[dict[str, FloatArray], FloatArray]:
        """Summary values (key -> (B,)) and per-class AP (B, K) of each sample. ``exact``:
        through the full precision array, bit for bit pycocotools' arithmetic (slower)."""
        st = self.engine.sample(w, grid=exact)
        B = w.shape[0]
        out: dict[str, FloatArray | None] = {
            "AP": self._ap(st, "all", None),
            "AP50": self._ap(st, "all", 0.5),
            "AP75": self._ap(st, "all", 0.75),
            "APs": self._ap(st, "small", None),
            "APm": self._ap(st, "medium", None),
            "APl": self._ap(st, "large", None),
        }
        if self.frequency is not None:
            for code, key in enumerate(("APr", "APc", "APf")):
                out[key] = self._ap(st, "all", None, cats=self.frequency == code)
        for mi, m in enumerate(self.max_dets):
            out[f"AR{m}"] = self._ar(st, "all", mi)
        last = len(self.max_dets) - 1
        out["ARs"] = self._ar(st, "small", last)
        out["ARm"] = self._ar(st, "medium", last)
        out["ARl"] = self._ar(st, "large", last)
        # keypoints (pycocotools' _summarizeKps): AR at the largest maxDets, and at .5 / .75
        for key, thr in (("AR", None), ("AR50", 0.5), ("AR75", 0.75)):
            out[key] = self._ar(st, "all", last, thr)
        if self._op_img is not None:
            out.update(_op_stats(w, self._op_img))
        # per-class AP: mean over (T, R) of each class with counted ground truth
        if exact:
            q = st.q["all"]
            K = q.shape[2]
            per = np.mean(np.ascontiguousarray(q.transpose(0, 2, 1, 3)).reshape(B, K, -1), axis=2)
        else:
            qs = st.qsum["all"]
            per = qs.sum(axis=1) / (qs.shape[1] * self.R)
        per[st.n_pos["all"] <= 0] = np.nan
        return {k: v for k, v in out.items() if v is not None}, per


def _op_stats(w: WArray, per_image: FloatArray) -> dict[str, FloatArray]:
    """Operating-point keys of each sample from per-image (tp, fp, TP IoU sum, n_gt)."""
    tp, fp, iou_sum, n_gt = (w.astype(np.float64) @ per_image).T
    fn = n_gt - tp
    out: dict[str, FloatArray] = {"tp": tp, "fp": fp, "fn": fn}
    with np.errstate(divide="ignore", invalid="ignore"):
        out["precision"] = np.where(tp + fp > 0, tp / (tp + fp), np.nan)
        out["recall"] = np.where(n_gt > 0, tp / n_gt, np.nan)
        den = 2 * tp + fp + fn
        out["f1"] = np.where(den > 0, 2 * tp / den, np.nan)
        out["mean_iou"] = np.where(tp > 0, iou_sum / tp, np.nan)
    return out


class VocScorer:
    """``mAP``, the operating point and per-class AP of one model under image weights, on
    the VOC devkit's curves (all-point area, or the 11-point mean with ``use_07``)."""

    def __init__(
        self, table: ScoreTable, *, n_classes: int, use_07: bool, op: OpTable | None = None
    ) -> None:
        rec = np.arange(0.0, 1.1, 0.1) if use_07 else np.zeros(0)
        self.R = rec.shape[0]
        self.engine = WeightedCoco(
            {"all": table}, n_classes=n_classes, rec_thrs=rec, max_dets=(1,), voc=True
        )
        self._op_img = op.per_image() if op is not None else None

    def score(self, w: WArray) -> tuple[dict[str, FloatArray], FloatArray]:
        st = self.engine.sample(w)
        per = st.qsum["all"][:, 0, :] / (self.R or 1)  # (B, K)
        valid = st.n_pos["all"] > 0
        per = np.where(valid, per, np.nan)
        n = valid.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            m_ap = np.where(n > 0, np.nansum(per, axis=1) / n, np.nan)
        out: dict[str, FloatArray] = {"mAP": m_ap}
        if self._op_img is not None:
            out.update(_op_stats(w, self._op_img))
        return out, per


Scorer = CocoScorer | VocScorer


def paired_deltas(
    a: Scorer, b: Scorer, *, n_images: int, n_samples: int, seed: int
) -> tuple[dict[str, FloatArray], FloatArray]:
    """Bootstrap deltas ``B - A`` per summary key (N,) and per class (N, K): both models are
    scored on the same image multiplicities (paired). NaN where a value is undefined."""
    keys: dict[str, list[FloatArray]] = {}
    per: list[FloatArray] = []
    pool = ThreadPoolExecutor(max_workers=2) if (os.cpu_count() or 1) > 1 else None
    for w in multiplicities(n_images, n_samples, seed):
        if pool is not None:  # NumPy releases the GIL in the big array operations
            fa = pool.submit(a.score, w)
            sb, pb = b.score(w)
            sa, pa = fa.result()
        else:
            sa, pa = a.score(w)
            sb, pb = b.score(w)
        for k in sa:
            if k in sb:
                keys.setdefault(k, []).append(sb[k] - sa[k])
        per.append(pb - pa)
    if pool is not None:
        pool.shutdown()
    deltas = {k: np.concatenate(v) for k, v in keys.items()}
    return deltas, np.concatenate(per) if per else np.zeros((0, 0))


# --------------------------------------------------------------------------- from an evaluation


def coco_scorer(ds: Any, result: Any) -> CocoScorer | None:
    """A scorer over a COCO evaluation's match tables (one per area range; the evaluation
    must have been run with ``keep_tables=True``), or None when there are none."""
    ev = getattr(result, "evaluation", None)
    tables = getattr(ev, "tables", None)
    if ev is None or not tables:
        return None
    from ..protocols import get_protocol

    if get_protocol(getattr(ev, "protocol", "coco")).bootstrap != "coco":
        return None
    p = ev.params
    iou_thrs = np.asarray(p.iou_thrs, dtype=np.float64)
    # the tables' rows refer to the evaluated dataset (LVIS: its federated selection)
    evaluated = getattr(ev, "dataset", None)
    if evaluated is None:
        evaluated = ds
    gt_image = np.asarray(evaluated.gt.image, dtype=np.int64)
    gt_category = np.asarray(evaluated.gt.category, dtype=np.int64)
    out: dict[str, ScoreTable] = {}
    op: OpTable | None = None
    for name, tab in tables.items():
        t_idx = [int(np.flatnonzero(tab.iou_thrs == t)[0]) for t in iou_thrs]
        views = [tab.dense(t) for t in t_idx]
        matched = np.stack([v[0] >= 0 for v in views]) if views else np.zeros((0, len(tab.det)))
        tp = np.stack([(v[0] >= 0) & ~v[2] for v in views]) if views else matched
        counts = np.asarray(tab.gt_counts, dtype=bool)
        out[name] = ScoreTable(
            det_image=np.asarray(tab.det_image, dtype=np.int64),
            det_category=np.asarray(tab.det_category, dtype=np.int64),
            det_score=np.asarray(tab.det_score, dtype=np.float64),
            det_rank=np.asarray(tab.det_rank, dtype=np.int64),
            det_out=np.asarray(tab.det_out, dtype=bool),
            matched=matched.astype(bool),
            tp=tp.astype(bool),
            gt_image=gt_image[counts],
            gt_category=gt_category[counts],
        )
        if name == "all":
            op = _op_table(ds, result, tab, gt_image[counts])
    return CocoScorer(
        out,
        n_classes=len(ds.categories),
        iou_thrs=iou_thrs,
        rec_thrs=np.asarray(p.rec_thrs, dtype=np.float64),
        max_dets=tuple(p.max_dets),
        op=op,
        frequency=getattr(ev, "frequency", None),  # LVIS: per-class frequency groups
    )


def _op_table(ds: Any, result: Any, tab: Any, gt_image: IntArray) -> OpTable | None:
    """The operating point at the single run's IoU and score thresholds (each model keeps
    its own score threshold; it is not re-chosen per sample)."""
    params = result.params
    thr = params.get("op_iou_thr", params.get("iou_thr"))
    if thr is None:
        return None
    where = np.flatnonzero(np.asarray(tab.iou_thrs) == thr)
    if where.size == 0:
        return None
    g, iou, ign = tab.dense(int(where[0]))
    score = np.asarray(tab.det_score, dtype=np.float64)
    s_thr = result.summary.get("score_thr")  # the cut actually used (given or max-F1)
    keep = score >= s_thr if s_thr is not None else np.ones(score.shape, dtype=bool)
    hit = g >= 0
    return OpTable(
        det_image=np.asarray(tab.det_image, dtype=np.int64),
        tp=hit & ~ign & keep,
        fp=~hit & ~np.asarray(tab.det_out, dtype=bool) & keep,
        iou=np.asarray(iou, dtype=np.float64),
        gt_image=gt_image,
        n_images=len(ds.images),
    )


def voc_scorer(
    ds: Any, result: Any, *, iou_thr: float, use_07: bool, plus_one: bool, iou_type: str = "bbox"
) -> VocScorer:
    """A scorer over the VOC devkit matching (re-run here: it is cheap and per image);
    rotated boxes (``iou_type="obb"``) by their polygon IoU, as the evaluation scored them."""
    from ..protocols.voc import voc_match

    m = voc_match(ds, iou_thr=iou_thr, plus_one=plus_one, iou_type=iou_type)
    n = len(ds.pred)
    on_hard = np.zeros(n, dtype=bool)
    has = m.gt_row >= 0
    on_hard[has] = m.hard[m.gt_row[has]]
    counted = ~m.hard
    table = ScoreTable(
        det_image=np.asarray(ds.pred.image, dtype=np.int64),
        det_category=np.asarray(ds.pred.category, dtype=np.int64),
        det_score=np.asarray(ds.pred.score, dtype=np.float64),
        det_rank=np.zeros(n, dtype=np.int64),
        det_out=np.zeros(n, dtype=bool),
        matched=(m.tp | (m.hit & on_hard))[None, :],
        tp=m.tp[None, :],
        gt_image=np.asarray(ds.gt.image, dtype=np.int64)[counted],
        gt_category=np.asarray(ds.gt.category, dtype=np.int64)[counted],
        det_tiebreak=np.arange(n, dtype=np.int64),
    )
    s_thr = result.summary.get("score_thr")  # the cut actually used (given or max-F1)
    keep = ds.pred.score >= s_thr if s_thr is not None else np.ones(n, dtype=bool)
    op = OpTable(
        det_image=table.det_image,
        tp=m.tp & keep,
        fp=m.fp & keep,
        iou=np.nan_to_num(m.iou),
        gt_image=table.gt_image,
        n_images=len(ds.images),
    )
    return VocScorer(table, n_classes=len(ds.categories), use_07=use_07, op=op)


def scorer_for(kind: str | None, ds: Any, result: Any, run: Any) -> Any:
    """The paired-bootstrap scorer of a protocol's kind (its registry entry's ``bootstrap``:
    ``"coco"`` re-scores the kept match tables, ``"voc"`` re-runs the devkit matching);
    None: no confidence intervals. ``run``: the RunOptions of the evaluation."""
    if kind == "coco":
        return coco_scorer(ds, result)
    if kind == "voc":
        params = result.evaluation.params
        return voc_scorer(
            ds,
            result,
            iou_thr=run.iou_thr,
            use_07=bool(params.get("use_07")),
            plus_one=bool(run.protocol_params().get("plus_one")),
            iou_type=str(params.get("iou_type", "bbox")),
        )
    return None
