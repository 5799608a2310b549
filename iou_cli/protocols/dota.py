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
from ..matching.argmax import best_overlaps
from ..result import Result
from . import Protocol
from .voc import VocEvaluation, VocMatch, class_curves, voc_table

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def devkit_order(pr: Boxes, n_cat: int) -> IntArray:
    """Prediction rows class by class, each class in ``np.argsort(-confidence)`` order over
    its rows in reading order (the devkit's default, unstable sort)."""
    cat = pr.category
    parts = []
    if cat.shape[0] and (cat[1:] >= cat[:-1]).all():  # class by class (Task1 files): slices
        bounds = np.searchsorted(cat, np.arange(n_cat + 1))
        for c in range(n_cat):
            lo, hi = int(bounds[c]), int(bounds[c + 1])
            parts.append(lo + np.argsort(-pr.score[lo:hi]))  # the same rows, in the same order
    else:
        for c in range(n_cat):
            rows = np.flatnonzero(cat == c)
            parts.append(rows[np.argsort(-pr.score[rows])])
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def dota_match(ds: Dataset, *, iou_thr: float = 0.5, exact_misses: bool = True) -> VocMatch:
    """Match every prediction the DOTA devkit way (see the module docstring).

    ``exact_misses=False``: pairs whose IoU is provably below ``iou_thr`` are not clipped,
    so a miss's ``iou`` / ``gt_row`` may be lower / another ground truth than its best
    (``--matches`` rows show them; TP, FP, AP and the hits are identical either way)."""
    gt, pr = ds.gt, ds.pred
    n_pred = len(pr)
    hard = gt.difficult | gt.iscrowd | gt.ignore
    best, best_row = best_overlaps(ds, floor=None if exact_misses else iou_thr)
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
            "iou_type": "obb",
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
    m = dota_match(ds, iou_thr=iou_thr, exact_misses=matches)
    return dota_evaluation(
        ds, m, iou_thr=iou_thr, all_point=all_point, score_thr=score_thr, matches=matches
    )


def dota_evaluation(
    ds: Dataset,
    m: VocMatch,
    *,
    iou_thr: float,
    all_point: bool,
    score_thr: float | None,
    matches: bool,
) -> DotaEvaluation:
    """The evaluation of a DOTA match (one run's, or a merged state's stand-in): its
    parameters, match table and per-class curves (11-point AP unless ``all_point``)."""
    params = {
        "iou_thr": float(iou_thr),
        "all_point": bool(all_point),
        "score_thr": None if score_thr is None else float(score_thr),
        "matches": matches,
        "iou_type": "obb",
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


@dataclass(frozen=True)
class Params:
    """The DOTA protocol's own option: ``all_point`` (the area under the curve instead of the
    devkit's VOC2007 11-point AP)."""

    all_point: bool = False


PROTOCOLS = {
    "dota": Protocol(
        name="dota",
        description="DOTA devkit task 1: rotated-box IoU > 0.5, VOC2007 11-point AP",
        params=Params,
        iou_types=("obb",),
        summary_keys=lambda opts: ["mAP"],
        run=_run,
        curves="voc",
        bbox_as="obb",  # DOTA scores rotated boxes only: the default bbox means obb
    )
}
