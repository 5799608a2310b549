"""The Ultralytics protocol: the numbers ``yolo val`` prints (``DetMetrics`` of Ultralytics 8.4).

Our own NumPy code, written from a reading of Ultralytics' ``DetectionValidator``,
``BaseValidator.match_predictions`` and ``utils/metrics.ap_per_class``; pinned to the
package itself by tests/oracle/test_ultralytics_oracle.py. What differs from pycocotools:

* **float32 everywhere**: boxes, scores and the ten IoU thresholds (``linspace(0.5, 0.95,
  10)`` in float32, so 0.55 is 0.550000011920929) are single precision, as Ultralytics'
  tensors; IoU is ``inter / (area_gt + area_pred - inter + 1e-7)`` in float32 (on
  normalised coordinates, where unions are small, the 1e-7 moves an IoU of exactly 0.5
  below 0.5, which then does not match);
* **matching per image**: a prediction never matches a ground truth of another class; the
  predictions of an image, by descending confidence, each take per threshold the unclaimed
  ground truth of highest IoU (first on ties) when that IoU reaches the threshold;
* **no maxDets** (every prediction counts), **no crowd, ignore or difficult**: every ground
  truth counts (Ultralytics' labels have no such flag), **no area ranges**;
* **AP per class**: predictions of all images sorted by ``argsort(-conf)`` (NumPy's default,
  unstable sort, as Ultralytics calls it), precision ``tp / (tp + fp)`` and recall
  ``tp / (n_gt + 1e-16)``; the envelope of the precision (with sentinels 1 before and 0
  after) interpolated at 101 recall points and integrated with the trapezoid rule;
* **only classes with ground truth** count (a class with predictions only is not scored:
  its false positives change nothing); a class with ground truth but no prediction has AP 0;
* **P and R** are read on per-class precision- and recall-confidence curves sampled at 1000
  confidences, at the confidence where the mean F1 over classes, smoothed by a box filter
  of 10% of its length, is highest.

``metrics/mAP50-95(B)`` is the mean over classes and the ten thresholds. With no ground
truth at all every key is undefined (null; Ultralytics prints 0 with a warning).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Boxes, Dataset
from ..errors import UsageError
from ..matching.pairs import pair_iou_bbox, pair_iou_obb
from ..matching.table import MatchTable, matches_rows
from ..metrics import OP_KEYS, best_f1_threshold, operating_point
from ..result import Evaluation, Matches, Result, clean
from . import Protocol
from .coco import IOU_THRS as COCO_THRS

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
F32 = npt.NDArray[np.float32]

# Ultralytics' IoU vector: torch.linspace(0.5, 0.95, 10) in float32 (same values as NumPy's)
IOU_THRS = np.linspace(0.5, 0.95, 10).astype(np.float32)
EPS_IOU = np.float32(1e-7)
EPS = 1e-16
_X = np.linspace(0.0, 1.0, 1000)  # confidences of the P/R/F1 curves
_AP_X = np.linspace(0.0, 1.0, 101)  # recall points of the AP integral

KEY_P = "metrics/precision(B)"
KEY_R = "metrics/recall(B)"
KEY_MAP50 = "metrics/mAP50(B)"
KEY_MAP = "metrics/mAP50-95(B)"
SUMMARY_KEYS = (KEY_P, KEY_R, KEY_MAP50, KEY_MAP)


def iou_f32(gt: F32, pred: F32) -> F32:
    """(G, D) IoU of float32 xyxy boxes in Ultralytics' order of float32 operations."""
    wx = np.minimum(gt[:, None, 2], pred[None, :, 2]) - np.maximum(gt[:, None, 0], pred[None, :, 0])
    wy = np.minimum(gt[:, None, 3], pred[None, :, 3]) - np.maximum(gt[:, None, 1], pred[None, :, 1])
    inter = np.maximum(wx, np.float32(0)) * np.maximum(wy, np.float32(0))
    a_gt = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
    a_pr = (pred[:, 2] - pred[:, 0]) * (pred[:, 3] - pred[:, 1])
    out: F32 = inter / (a_gt[:, None] + a_pr[None, :] - inter + EPS_IOU)
    return out


def _match_group(iou: npt.NDArray[Any], thrs: npt.NDArray[Any]) -> tuple[IntArray, Any]:
    """Greedy matching of one (image, class) group: ``iou`` (G, D), predictions by
    descending confidence. Returns per prediction and threshold the ground truth taken
    (-1: none) and its IoU (``iou``'s dtype)."""
    G, D = iou.shape
    T = thrs.shape[0]
    zero = iou.dtype.type(0)
    taken = np.full((D, T), -1, dtype=np.int64)
    t_iou = np.zeros((D, T), dtype=iou.dtype)
    claimed = np.zeros((G, T), dtype=bool)
    cols = np.arange(T)
    for j in np.flatnonzero((iou >= thrs.min()).any(axis=0)):
        avail = np.where(claimed, zero, iou[:, j, None])
        k = avail.argmax(axis=0)
        best = avail[k, cols]
        ok = best >= thrs
        taken[j] = np.where(ok, k, -1)
        t_iou[j] = np.where(ok, best, zero)
        claimed[k[ok], cols[ok]] = True
    return taken, t_iou


def _smooth(y: FloatArray, frac: float) -> FloatArray:
    """Box filter of an odd width ``frac`` of the length, ends padded with the end values."""
    n = round(len(y) * frac * 2) // 2 + 1
    pad = np.ones(n // 2)
    padded = np.concatenate((pad * y[0], y, pad * y[-1]), 0)
    out: FloatArray = np.convolve(padded, np.ones(n) / n, mode="valid")
    return out


def _ap(recall: FloatArray, precision: FloatArray) -> float:
    """101-point interpolated envelope integrated by the trapezoid rule."""
    last = recall[-1] if len(recall) else 1.0
    mrec = np.concatenate(([0.0], recall, [last], [1.0]))
    mpre = np.concatenate(([1.0], precision, [0.0], [0.0]))
    mpre = np.flip(np.maximum.accumulate(np.flip(mpre)))
    return float(np.trapezoid(np.interp(_AP_X, mrec, mpre), _AP_X))


@dataclass
class UltralyticsCurves:
    """Per class with ground truth (``classes``, indices into the categories): AP at each
    threshold (C, T), and P, R, F1 at the max-mean-F1 confidence ``conf``."""

    classes: IntArray
    n_gt: IntArray
    ap: FloatArray
    p: FloatArray
    r: FloatArray
    f1: FloatArray
    conf: float | None


def accumulate(
    correct: BoolArray, conf: F32, pred_cls: IntArray, gt_cls: IntArray
) -> UltralyticsCurves:
    """Ultralytics' ``ap_per_class`` over the concatenated predictions (image order)."""
    i = np.argsort(-conf)  # NumPy's default (unstable) sort, as Ultralytics calls it
    correct, conf, pred_cls = correct[i], conf[i], pred_cls[i]
    classes, nt = np.unique(gt_cls, return_counts=True)
    nc = classes.shape[0]
    T = correct.shape[1]
    ap = np.zeros((nc, T))
    p_curve = np.zeros((nc, 1000))
    r_curve = np.zeros((nc, 1000))
    for ci, c in enumerate(classes):
        sel = pred_cls == c
        n_l = nt[ci]
        if not sel.any():
            continue
        tpc = correct[sel].cumsum(0)
        fpc = (1 - correct[sel]).cumsum(0)
        recall = tpc / (n_l + EPS)
        precision = tpc / (tpc + fpc)
        r_curve[ci] = np.interp(-_X, -conf[sel], recall[:, 0], left=0)
        p_curve[ci] = np.interp(-_X, -conf[sel], precision[:, 0], left=1)
        for t in range(T):
            ap[ci, t] = _ap(recall[:, t], precision[:, t])
    f1_curve = 2 * p_curve * r_curve / (p_curve + r_curve + EPS)
    at = int(_smooth(f1_curve.mean(0), 0.1).argmax()) if nc else 0
    return UltralyticsCurves(
        classes=classes.astype(np.int64),
        n_gt=nt.astype(np.int64),
        ap=ap,
        p=p_curve[:, at],
        r=r_curve[:, at],
        f1=f1_curve[:, at],
        conf=float(_X[at]) if nc else None,
    )


def rotated_xywhr(boxes: Boxes) -> FloatArray:
    """``cx, cy, w, h, angle`` of each rotated box as Ultralytics' OBB validator sees it: the
    smallest rectangle around the corners (``cv2.minAreaRect`` of its labels; a rectangle is
    itself)."""
    from ..geometry.probiou import min_area_rect

    if boxes.obb is None:
        x1, y1, x2, y2 = (boxes.xyxy[:, k] for k in range(4))
        corners = np.stack([x1, y1, x2, y1, x2, y2, x1, y2], axis=1)
    else:
        corners = boxes.obb
    return min_area_rect(corners)


def _group_iou(ds: Dataset, iou: str, f32: bool) -> Any:
    """``(gt rows, pred rows) -> (G, D) IoU`` for one (image, class) group."""
    if iou == "probiou":
        from ..geometry.probiou import probiou

        dtype = np.float32 if f32 else np.float64
        g5, p5 = rotated_xywhr(ds.gt).astype(dtype), rotated_xywhr(ds.pred).astype(dtype)
        return lambda g, d: probiou(g5[g], p5[d], dtype)
    if iou == "box" and f32:
        g32 = ds.gt.xyxy.astype(np.float32)
        p32 = ds.pred.xyxy.astype(np.float32)
        return lambda g, d: iou_f32(g32[g], p32[d])
    if f32:
        raise ValueError("polygon IoU is float64 only")
    pair = pair_iou_obb if iou == "polygon" else pair_iou_bbox

    def exact(g: IntArray, d: IntArray) -> FloatArray:
        gg, dd = np.meshgrid(g, d, indexing="ij")
        out: FloatArray = pair(ds, dd.ravel(), gg.ravel()).reshape(gg.shape)
        return out

    return exact


def match(
    ds: Dataset, *, precision: str = "float32", iou: str = "box"
) -> tuple[IntArray, IntArray, F32]:
    """Match every prediction. Returns ``order`` (prediction rows by image, then descending
    float32 confidence, stable: Ultralytics' evaluation order), and per position of
    ``order`` and threshold the ground-truth row taken (-1 none) and its IoU.

    ``iou``: ``"box"`` (axis-aligned boxes), ``"probiou"`` (rotated boxes, as Ultralytics'
    OBB validator), ``"polygon"`` (rotated boxes by polygon IoU, float64 only: ``explain``).
    ``precision="float64"`` (for ``explain``) keeps the same rule on float64 IoU (pycocotools'
    for boxes), thresholds (``min(t, 1 - 1e-10)``) and float64 confidences."""
    gt, pr = ds.gt, ds.pred
    K = max(len(ds.categories), 1)
    f32 = precision == "float32"
    conf = pr.score.astype(np.float32) if f32 else pr.score
    order = np.lexsort((-conf, pr.image)).astype(np.int64)
    thrs: npt.NDArray[Any] = IOU_THRS if f32 else np.minimum(COCO_THRS, 1 - 1e-10)
    T = IOU_THRS.shape[0]
    taken = np.full((order.shape[0], T), -1, dtype=np.int64)
    t_iou = np.zeros((order.shape[0], T), dtype=np.float32 if f32 else np.float64)
    if not len(gt) or not order.size:
        return order, taken, t_iou
    p_key = (pr.image * K + pr.category)[order]
    by_key = np.argsort(p_key, kind="stable")  # positions into order, groups keep conf order
    p_sorted = p_key[by_key]
    g_key = gt.image * K + gt.category
    g_rows = np.argsort(g_key, kind="stable").astype(np.int64)  # file order inside a group
    g_sorted = g_key[g_rows]
    keys, p_lo = np.unique(p_sorted, return_index=True)
    p_hi = np.append(p_lo[1:], p_sorted.shape[0])
    g_lo = np.asarray(np.searchsorted(g_sorted, keys, side="left"))
    g_hi = np.asarray(np.searchsorted(g_sorted, keys, side="right"))
    group_iou = _group_iou(ds, iou, f32)
    for k in np.flatnonzero(g_hi > g_lo):
        pos = by_key[p_lo[k] : p_hi[k]]
        grows = g_rows[g_lo[k] : g_hi[k]]
        g_idx, g_iou = _match_group(group_iou(grows, order[pos]), thrs)
        taken[pos] = np.where(g_idx >= 0, grows[np.maximum(g_idx, 0)], -1)
        t_iou[pos] = g_iou
    return order, taken, t_iou


@dataclass
class UltralyticsEvaluation(Evaluation):
    """Ultralytics' validation metrics: the match (``order``, ``taken``, ``taken_iou``) and
    the per-class curves."""

    order: IntArray
    taken: IntArray
    taken_iou: F32
    curves: UltralyticsCurves
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def op_t(self) -> int:
        return int(self.params["op_t"])

    @property
    def op_iou_thr(self) -> float:
        return float(IOU_THRS[self.op_t])

    @property
    def score_thr(self) -> float | None:
        given = self.params.get("score_thr")
        if given is not None:
            return float(given)
        if "score_thr" not in self._cache:
            tp = self.taken[:, self.op_t] >= 0
            score = self.dataset.pred.score[self.order]
            self._cache["score_thr"] = best_f1_threshold(score, tp, ~tp, len(self.dataset.gt))
        thr: float | None = self._cache["score_thr"]
        return thr

    def ultralytics_stats(self) -> dict[str, float | None]:
        """The four keys of Ultralytics' ``results_dict`` (mean over classes with ground truth)."""
        c = self.curves
        if not c.classes.size:
            return dict.fromkeys(SUMMARY_KEYS)
        return {
            KEY_P: float(c.p.mean()),
            KEY_R: float(c.r.mean()),
            KEY_MAP50: float(c.ap[:, 0].mean()),
            KEY_MAP: float(c.ap.mean()),
        }

    def _op(self, sel: BoolArray | None, n_gt: int) -> dict[str, Any]:
        score = self.dataset.pred.score[self.order]
        tp = self.taken[:, self.op_t] >= 0
        iou = self.taken_iou[:, self.op_t].astype(np.float64)
        if sel is not None:
            score, tp, iou = score[sel], tp[sel], iou[sel]
        return operating_point(
            score, tp, ~tp, iou, n_gt, score_thr=self.score_thr, iou_thr=self.op_iou_thr
        )

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.ultralytics_stats())
        out.update(self._op(None, len(self.dataset.gt)))
        return out

    def per_class(self) -> list[dict[str, Any]]:
        ds, c = self.dataset, self.curves
        at = {int(k): i for i, k in enumerate(c.classes)}
        n_det = np.bincount(ds.pred.category, minlength=len(ds.categories))
        n_gt = np.bincount(ds.gt.category, minlength=len(ds.categories))
        det_cat = ds.pred.category[self.order]
        rows: list[dict[str, Any]] = []
        for k in range(len(ds.categories)):
            i = at.get(k)
            row: dict[str, Any] = {
                "category_id": clean(ds.categories.ids[k]),
                "name": ds.categories.label(k),
                "n_gt": int(n_gt[k]),
                "n_det": int(n_det[k]),
                "P": None if i is None else float(c.p[i]),
                "R": None if i is None else float(c.r[i]),
                "mAP50": None if i is None else float(c.ap[i, 0]),
                "mAP75": None if i is None else float(c.ap[i, 5]),
                "mAP50-95": None if i is None else float(c.ap[i].mean()),
            }
            op = self._op(det_cat == k, int(n_gt[k]))
            row.update({key: op[key] for key in OP_KEYS})
            rows.append(row)
        return rows

    def matches(self) -> Matches:
        return matches_rows(self.dataset, self.table, self.op_t, score_thr=self.score_thr)

    def result(self) -> Result:
        params: dict[str, Any] = {
            "protocol": "ultralytics",
            "iou_thrs": [float(t) for t in IOU_THRS],
            "precision": "float32 boxes, scores, IoU and thresholds",
            "iou": (
                "probiou of the rotated boxes (their smallest enclosing rectangles), "
                "as Ultralytics' OBB validator"
                if self.params.get("iou_type") == "obb"
                else "box IoU + 1e-7 in the union"
            ),
            "max_dets": None,
            "crowd": "counted as ordinary ground truth (Ultralytics has no crowd or ignore)",
            "classes": "only classes with ground truth",
            "ap": "101-point interpolated envelope, trapezoid rule",
            "p_r_conf": self.curves.conf,
            "op_iou_thr": self.op_iou_thr,
            "score_thr": self.score_thr,
            "score_thr_source": "given" if self.params.get("score_thr") is not None else "max-f1",
        }
        return Result(
            self.summary(),
            self.per_class(),
            params,
            matches=self.matches() if self.params.get("matches") else None,
            evaluation=self,
        )


def _table(ds: Dataset, order: IntArray, taken: IntArray, taken_iou: F32) -> MatchTable:
    pr, gt = ds.pred, ds.gt
    cand = np.flatnonzero((taken >= 0).any(axis=1)).astype(np.int64)
    return MatchTable(
        iou_thrs=IOU_THRS.astype(np.float64),
        det=order,
        det_rank=np.zeros(order.shape[0], dtype=np.int64),
        det_category=pr.category[order],
        det_score=pr.score[order],
        det_image=pr.image[order],
        det_out=np.zeros(order.shape[0], dtype=bool),
        cand=cand,
        gt=taken[cand].T.copy(),
        iou=taken_iou[cand].T.astype(np.float64),
        ignored=np.zeros((IOU_THRS.shape[0], cand.shape[0]), dtype=bool),
        gt_counts=np.ones(len(gt), dtype=bool),
        n_pos=np.bincount(gt.category, minlength=len(ds.categories)).astype(np.int64),
        area="all",
    )


def run_ultralytics(
    ds: Dataset,
    *,
    iou_thr: float = 0.5,
    score_thr: float | None = None,
    matches: bool = False,
    iou_type: str = "bbox",
) -> UltralyticsEvaluation:
    """Evaluate a joined dataset the way Ultralytics' validator does (module docstring);
    ``iou_type="obb"``: rotated boxes matched by probiou, as its OBB validator does."""
    hit = np.flatnonzero(np.float32(iou_thr) == IOU_THRS)
    if not hit.size:
        raise UsageError(
            f"--tp-iou {iou_thr:g}: under --protocol ultralytics the operating point is at one "
            "of its thresholds 0.5, 0.55, ..., 0.95"
        )
    if iou_type == "obb" and not ds.pixel_units and (len(ds.gt) or len(ds.pred)):
        raise UsageError(
            "--protocol ultralytics scores rotated boxes by probiou in pixels, as yolo val "
            "does (probiou is not scale-free: Ultralytics adds 1e-7 to pixel-sized terms); "
            "these corners are normalised: give --images DIR or --image-size W,H",
            option="image_size",
        )
    order, taken, taken_iou = match(ds, iou="probiou" if iou_type == "obb" else "box")
    conf = ds.pred.score.astype(np.float32)[order]
    curves = accumulate(taken >= 0, conf, ds.pred.category[order], ds.gt.category)
    return UltralyticsEvaluation(
        protocol="ultralytics",
        params={
            "score_thr": score_thr,
            "matches": matches,
            "op_t": int(hit[0]),
            "iou_type": iou_type,
        },
        dataset=ds,
        table=_table(ds, order, taken, taken_iou),
        order=order,
        taken=taken,
        taken_iou=taken_iou,
        curves=curves,
    )


def _run(ds: Dataset, opts: Mapping[str, Any]) -> UltralyticsEvaluation:
    return run_ultralytics(
        ds,
        iou_thr=float(opts.get("iou_thr") or 0.5),
        score_thr=opts.get("score_thr"),
        matches=bool(opts.get("matches", False)),
        iou_type=str(opts.get("iou_type", "bbox")),
    )


@dataclass(frozen=True)
class Params:
    """The Ultralytics protocol takes no options of its own (its thresholds are fixed)."""


PROTOCOLS = {
    "ultralytics": Protocol(
        name="ultralytics",
        description="Ultralytics' yolo val metrics (P, R, mAP50, mAP50-95; float32, no maxDets)",
        params=Params,
        iou_types=("bbox", "obb"),
        summary_keys=lambda opts: list(SUMMARY_KEYS),
        run=_run,
        curves="ultralytics",  # its own curves object: no curves JSON section
        bootstrap="voc",  # compare re-runs the devkit-style matching, as before
        class_key="mAP50-95",  # Ultralytics' per-class metric
    )
}
