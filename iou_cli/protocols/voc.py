"""The Pascal VOC protocol (VOC devkit semantics): per-class AP at one IoU threshold.

Per class, detections are sorted by score across all images (stable: ties keep the order in
which the files were read, i.e. file-name order). Each detection takes the ground truth of
its image and class with the highest overlap, matched or not (first one on ties). At or
above ``iou_thr`` it is a true positive if that ground truth is still unmatched, a false
positive (duplicate) if it is matched, and neither if the ground truth is ``difficult``;
below the threshold (or with no ground truth) it is a false positive. Recall counts the
non-difficult ground truths. AP is the area under the interpolated precision envelope over
all recall points (VOC2010+), or the mean of the envelope at recall 0, 0.1, ..., 1 (VOC2007,
``use_07``). ``plus_one`` measures boxes the devkit way (``x2 - x1 + 1`` pixels wide).

COCO ``iscrowd`` and ``ignore`` ground truths are treated as ``difficult`` here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset
from ..errors import UsageError
from ..geometry.iou import overlap
from ..matching.table import MatchTable, matches_rows
from ..metrics import OP_KEYS, best_f1_grouped, best_f1_threshold, operating_point
from ..result import Evaluation, Matches, Result, clean
from . import Protocol

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
_BLOCK = 1 << 22  # IoU values computed at once per group (32 MiB of float64)


@dataclass
class VocMatch:
    """Per-prediction outcome (rows aligned with ``ds.pred``) and per-GT flags."""

    tp: npt.NDArray[np.bool_]
    fp: npt.NDArray[np.bool_]
    iou: FloatArray  # best overlap with a GT of the same image and class (NaN: none)
    gt_row: npt.NDArray[np.int64]  # that GT's row in ds.gt, -1 when none
    order: npt.NDArray[np.int64]  # prediction rows sorted by (class, -score), stable
    hard: npt.NDArray[np.bool_]  # GT rows that neither count nor penalise
    hit: npt.NDArray[np.bool_]  # best overlap >= iou_thr (paired with gt_row)


def _corners(xyxy: FloatArray, area: FloatArray, plus_one: bool) -> tuple[FloatArray, ...]:
    x1, y1, x2, y2 = xyxy[:, 0], xyxy[:, 1], xyxy[:, 2], xyxy[:, 3]
    if plus_one:
        x2 = x2 + 1.0
        y2 = y2 + 1.0
        area = (x2 - x1) * (y2 - y1)
    return x1, y1, x2, y2, area


def voc_match(
    ds: Dataset, *, iou_thr: float = 0.5, plus_one: bool = False, iou_type: str = "bbox"
) -> VocMatch:
    """Match every prediction the VOC devkit way (see the module docstring); rotated boxes
    (``iou_type="obb"``) by their polygon IoU."""
    gt, pr = ds.gt, ds.pred
    n_pred = len(pr)
    hard = gt.difficult | gt.iscrowd | gt.ignore
    if iou_type == "obb":
        from ..matching.argmax import best_overlaps

        best, best_row = best_overlaps(ds)
        return _outcome(ds, best, best_row, hard, iou_thr)
    g = _corners(gt.xyxy, gt.box_area, plus_one)
    p = _corners(pr.xyxy, pr.box_area, plus_one)
    best = np.full(n_pred, -np.inf)
    best_row = np.full(n_pred, -1, dtype=np.int64)

    # group GT and predictions by (image, class): one small IoU matrix per group
    n_cat = max(len(ds.categories), 1)
    g_key = gt.image * n_cat + gt.category
    p_key = pr.image * n_cat + pr.category
    g_order = np.argsort(g_key, kind="stable")
    g_sorted = g_key[g_order]
    p_order = np.argsort(p_key, kind="stable")
    p_sorted = p_key[p_order]
    keys, p_start = np.unique(p_sorted, return_index=True)
    p_end = np.append(p_start[1:], n_pred)
    g_lo: list[int] = np.asarray(np.searchsorted(g_sorted, keys, side="left")).tolist()
    g_hi: list[int] = np.asarray(np.searchsorted(g_sorted, keys, side="right")).tolist()
    for k in range(len(keys)):
        lo, hi = int(g_lo[k]), int(g_hi[k])
        if lo == hi:
            continue
        grow = g_order[lo:hi]  # file order within the image (stable sort)
        b = tuple(c[grow][None, :] for c in g)
        # predictions in slices, so one IoU block stays under _BLOCK values however many
        # boxes share an image and class
        step = max(1, _BLOCK // (hi - lo))
        for s in range(int(p_start[k]), int(p_end[k]), step):
            prow = p_order[s : min(s + step, int(p_end[k]))]
            a = tuple(c[prow][:, None] for c in p)
            m = overlap(a, b)  # type: ignore[arg-type]
            j = np.argmax(m, axis=1)  # first maximum, like the devkit
            best[prow] = m[np.arange(len(prow)), j]
            best_row[prow] = grow[j]
    return _outcome(ds, best, best_row, hard, iou_thr)


def _outcome(
    ds: Dataset,
    best: FloatArray,
    best_row: npt.NDArray[np.int64],
    hard: npt.NDArray[np.bool_],
    iou_thr: float,
) -> VocMatch:
    """TP / FP / neither of every prediction from its best overlap (module docstring)."""
    pr = ds.pred
    n_pred = len(pr)
    # per class, by descending score, stable
    order = np.lexsort((-pr.score, pr.category)).astype(np.int64)
    hit = best >= iou_thr
    has = best_row >= 0
    on_hard = np.zeros(n_pred, dtype=bool)
    on_hard[has] = hard[best_row[has]]
    cand = hit & ~on_hard
    tp = np.zeros(n_pred, dtype=bool)
    cand_rows = order[cand[order]]  # candidates in processing order
    if cand_rows.size:
        _, first = np.unique(best_row[cand_rows], return_index=True)
        tp[cand_rows[first]] = True  # the first detection on each GT takes it
    fp = ~tp & ~(hit & on_hard)
    iou = np.where(has, best, np.nan)
    return VocMatch(tp, fp, iou, best_row, order, hard, hit)


def voc_ap(rec: FloatArray, prec: FloatArray, *, use_07: bool = False) -> float:
    """VOC AP of one class from its cumulative recall/precision (devkit float order)."""
    if use_07:
        ap = 0.0
        for t in np.arange(0.0, 1.1, 0.1):
            sel = rec >= t
            p = float(np.max(prec[sel])) if sel.any() else 0.0
            ap = ap + p / 11.0
        return ap
    mrec = np.concatenate(([0.0], rec, [1.0]))
    mpre = np.concatenate(([0.0], prec, [0.0]))
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    i = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))


def class_curves(ds: Dataset, m: VocMatch, *, use_07: bool = False) -> list[dict[str, Any]]:
    """Per category: AP (None without non-difficult GT), tp/fp over all detections,
    n_gt (non-difficult), n_det, recall and precision arrays."""
    out = []
    pr_cat = ds.pred.category[m.order]
    gt_count = np.bincount(ds.gt.category[~m.hard], minlength=len(ds.categories))
    # the order is class by class (VOC's lexsort, DOTA's devkit order): slices of it
    grouped = pr_cat.shape[0] == 0 or bool((pr_cat[1:] >= pr_cat[:-1]).all())
    bounds = np.searchsorted(pr_cat, np.arange(len(ds.categories) + 1)) if grouped else None
    for c in range(len(ds.categories)):
        rows = m.order[bounds[c] : bounds[c + 1]] if bounds is not None else m.order[pr_cat == c]
        tp = np.cumsum(m.tp[rows]).astype(np.float64)
        fp = np.cumsum(m.fp[rows]).astype(np.float64)
        npos = int(gt_count[c])
        ap: float | None = None
        rec = tp / npos if npos else np.zeros_like(tp)
        prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
        if npos:
            ap = voc_ap(rec, prec, use_07=use_07)
        out.append(
            {
                "AP": ap,
                "tp": int(tp[-1]) if tp.size else 0,
                "fp": int(fp[-1]) if fp.size else 0,
                "n_gt": npos,
                "n_det": int(rows.size),
                "recall": rec,
                "precision": prec,
            }
        )
    return out


@dataclass
class VocEvaluation(Evaluation):
    """The VOC protocol's evaluation: the devkit's per-prediction outcome (``match``), the
    per-class curves and APs, and the match table (one threshold) built from them."""

    match: VocMatch
    curves: list[dict[str, Any]]
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def iou_thr(self) -> float:
        return float(self.params["iou_thr"])

    @property
    def score_thr(self) -> float | None:
        given = self.params.get("score_thr")
        if given is not None:
            return float(given)
        if "score_thr" not in self._cache:
            self._cache["score_thr"] = self._best_f1()
        thr: float | None = self._cache["score_thr"]
        return thr

    def _best_f1(self) -> float | None:
        """The score threshold maximising F1 over the operating point's rows."""
        score, tp, fp, _, _ = self._op_rows()
        if type(self)._op_rows is VocEvaluation._op_rows:  # rows aligned with match.order
            return best_f1_grouped(score, tp, fp, self._n_gt(), self.match.order)
        return best_f1_threshold(score, tp, fp, self._n_gt())

    def _op_rows(self) -> tuple[FloatArray, BoolArray, BoolArray, FloatArray, IntArray]:
        """The operating point's rows in file order: score, TP, FP, IoU, class (a cluster's
        combined evaluation keeps only its TPs and FPs: the others count for nothing)."""
        m, pr = self.match, self.dataset.pred
        return pr.score, m.tp, m.fp, m.iou, pr.category

    def _n_gt(self) -> int:
        return int(np.count_nonzero(~self.match.hard))

    def summary(self) -> dict[str, Any]:
        aps = [c["AP"] for c in self.curves if c["AP"] is not None]
        out: dict[str, Any] = {"mAP": float(np.mean(aps)) if aps else None}
        score, tp, fp, iou, _ = self._op_rows()
        out.update(
            operating_point(
                score, tp, fp, iou, self._n_gt(), score_thr=self.score_thr, iou_thr=self.iou_thr
            )
        )
        return out

    def per_class(self) -> list[dict[str, Any]]:
        ds = self.dataset
        score, tp, fp, iou, category = self._op_rows()
        rows: list[dict[str, Any]] = []
        for c, cur in enumerate(self.curves):
            sel_p = category == c
            op = operating_point(
                score[sel_p],
                tp[sel_p],
                fp[sel_p],
                iou[sel_p],
                cur["n_gt"],
                score_thr=self.score_thr,
                iou_thr=self.iou_thr,
            )
            row: dict[str, Any] = {
                "category_id": clean(ds.categories.ids[c]),
                "name": ds.categories.label(c),
                "AP": cur["AP"],
                "tp": cur["tp"],
                "fp": cur["fp"],
                "n_gt": cur["n_gt"],
                "n_det": cur["n_det"],
            }
            row.update({k: op[k] for k in OP_KEYS})  # tp/fp at the operating point
            rows.append(row)
        return rows

    def matches(self) -> Matches:
        """The ``--matches`` rows at the operating point: a duplicate or difficult hit
        names the ground truth it overlapped; a miss below the threshold names none."""
        m = self.match
        shown = np.where(m.hit, m.gt_row, -1)[m.order]
        return matches_rows(
            self.dataset,
            self.table,
            0,
            score_thr=self.score_thr,
            shown_gt=shown,
            shown_iou=m.iou[m.order],
        )

    def result(self) -> Result:
        p = self.params
        params: dict[str, Any] = {
            "protocol": self.protocol,
            "iou_thr": self.iou_thr,
            "plus_one": bool(p.get("plus_one", False)),
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


def voc_table(ds: Dataset, m: VocMatch, iou_thr: float) -> MatchTable:
    """The devkit's outcome as a match table (one threshold; predictions in processing
    order: by class, then by descending score). A true positive or a hit on a difficult
    ground truth takes it; a duplicate takes nothing. ``det_rank`` is 0 (no maxDets)."""
    pr, gt = ds.pred, ds.gt
    order = m.order
    K = len(ds.categories)
    hit = m.hit[order]
    cand = np.flatnonzero(hit).astype(np.int64)
    rows = order[cand]
    takes = m.tp[rows] | (hit[cand] & m.hard[np.maximum(m.gt_row[rows], 0)])
    return MatchTable(
        iou_thrs=np.asarray([iou_thr], dtype=np.float64),
        det=order,
        det_rank=np.zeros(order.shape[0], dtype=np.int64),
        det_category=pr.category[order],
        det_score=pr.score[order],
        det_image=pr.image[order],
        det_out=np.zeros(order.shape[0], dtype=bool),
        cand=cand,
        gt=np.where(takes, m.gt_row[rows], -1)[None, :],
        iou=np.where(takes, m.iou[rows], 0.0)[None, :],
        ignored=(~m.tp[rows] & ~m.fp[rows])[None, :],
        gt_counts=~m.hard,
        n_pos=np.bincount(gt.category[~m.hard], minlength=K).astype(np.int64),
        area="all",
    )


def run_voc(
    ds: Dataset,
    *,
    iou_thr: float = 0.5,
    use_07: bool = False,
    plus_one: bool = False,
    score_thr: float | None = None,
    matches: bool = True,
    iou_type: str = "bbox",
) -> VocEvaluation:
    """Run the VOC protocol on a joined dataset; see the module docstring.

    ``plus_one`` needs pixel coordinates: on normalised (YOLO vs YOLO) boxes it is a
    :class:`UsageError` (give image sizes to scale them).
    """
    if plus_one and not ds.pixel_units:
        raise UsageError(
            "--plus-one adds one pixel to widths and heights, but these boxes are normalised "
            "YOLO coordinates; give --images DIR or --image-size W,H to work in pixels"
        )
    if plus_one and iou_type == "obb":
        raise UsageError("--plus-one measures axis-aligned pixel boxes; rotated boxes have none")
    m = voc_match(ds, iou_thr=iou_thr, plus_one=plus_one, iou_type=iou_type)
    params = {
        "iou_thr": float(iou_thr),
        "use_07": use_07,
        "plus_one": plus_one,
        "score_thr": None if score_thr is None else float(score_thr),
        "matches": matches,
        "iou_type": iou_type,
    }
    return VocEvaluation(
        protocol="voc07" if use_07 else "voc",
        params=params,
        dataset=ds,
        table=voc_table(ds, m, iou_thr),
        match=m,
        curves=class_curves(ds, m, use_07=use_07),
    )


def evaluate_voc(
    ds: Dataset,
    *,
    iou_thr: float = 0.5,
    use_07: bool = False,
    plus_one: bool = False,
    score_thr: float | None = None,
) -> Result:
    """The flat result of :func:`run_voc` (with the ``--matches`` rows)."""
    return run_voc(
        ds, iou_thr=iou_thr, use_07=use_07, plus_one=plus_one, score_thr=score_thr
    ).result()


def _run(ds: Dataset, opts: Mapping[str, Any], *, use_07: bool) -> VocEvaluation:
    return run_voc(
        ds,
        iou_thr=float(opts.get("iou_thr", 0.5)),
        use_07=use_07,
        plus_one=bool(opts.get("plus_one", False)),
        score_thr=opts.get("score_thr"),
        matches=bool(opts.get("matches", False)),
        iou_type=str(opts.get("iou_type", "bbox")),
    )


@dataclass(frozen=True)
class Params:
    """The VOC protocols' own option: ``plus_one`` (the devkit's pixel convention, width =
    x2 - x1 + 1)."""

    plus_one: bool = False


def _protocol(name: str, description: str, use_07: bool) -> Protocol:
    def run(ds: Dataset, opts: Mapping[str, Any]) -> VocEvaluation:
        return _run(ds, opts, use_07=use_07)

    return Protocol(
        name=name,
        description=description,
        params=Params,
        iou_types=("bbox", "obb"),
        summary_keys=lambda opts: ["mAP"],
        run=run,
        curves="voc",
        bootstrap="voc",
        unscaled_boxes=True,
    )


PROTOCOLS = {
    "voc": _protocol("voc", "VOC all-point AP at --iou-thr (VOC2010+ devkit)", False),
    "voc07": _protocol("voc07", "VOC2007 11-point AP at --iou-thr", True),
}
