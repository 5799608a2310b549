"""The match table: each evaluated prediction's fate at each IoU threshold.

Candidates-only layout (what keeps memory at the number of boxes): only predictions with at
least one pair at the lowest threshold (*candidates*) have columns in the ``(T, C)`` arrays;
every other evaluated prediction is unmatched at every threshold. The fates follow
pycocotools' ``evalImgs`` (``dtMatches``, ``dtIgnore``, ``gtIgnore``) for one area range.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass
class Matches:
    """One row per prediction and per missed ground truth at the operating point.

    Columns (equal length): ``image`` (image key as in the ground truth), ``category``
    (category name or id), ``pred_id`` / ``gt_id`` (annotation ids, -1 where none),
    ``score`` (NaN for a missed ground truth), ``iou`` (NaN where no pair), ``outcome``
    (``TP``, ``FP``, ``FN`` or ``ignored``).
    """

    columns: dict[str, Any]

    def __len__(self) -> int:
        return len(self.columns["outcome"]) if self.columns else 0


@dataclass
class MatchTable:
    """Per evaluated prediction and IoU threshold: the ground truth taken, its IoU, ignored.

    Prediction columns (length D, the evaluated predictions: after maxDets per image and
    class for COCO, all of them for VOC):

    * ``det``: rows into ``ds.pred``; ``det_rank``: rank inside its (image, class) group by
      score; ``det_category``, ``det_score``, ``det_image``: copies of those columns;
    * ``det_out``: outside this table's area range (an unmatched such prediction is ignored).

    Candidate columns (length C): ``cand`` holds positions into ``det``; ``gt[t, c]`` is the
    ground-truth row (into ``ds.gt``) taken at threshold ``iou_thrs[t]`` (-1: none),
    ``iou[t, c]`` its IoU (0 when none), ``ignored[t, c]`` pycocotools' ``dtIgnore`` (matched
    an ignored ground truth, or unmatched and outside the area range).

    Ground truths: ``gt_counts`` (length G = ``len(ds.gt)``) marks those that count
    (pycocotools' ``gtIgnore == 0``); ``n_pos`` (length K) counts them per class.

    An analysis may score a corrected copy (:meth:`copy`) through the same AP code
    (``matching.accumulate``): drop a prediction with :meth:`drop`, give a candidate a
    ground truth by writing ``gt``/``iou``/``ignored``, take a ground truth out of ``n_pos``.
    """

    iou_thrs: FloatArray
    det: IntArray
    det_rank: IntArray
    det_category: IntArray
    det_score: FloatArray
    det_image: IntArray
    det_out: BoolArray
    cand: IntArray
    gt: IntArray
    iou: FloatArray
    ignored: BoolArray
    gt_counts: BoolArray
    n_pos: IntArray
    area: str = "all"

    def __len__(self) -> int:
        return int(self.det.shape[0])

    @classmethod
    def rowless(cls, iou_thrs: FloatArray, n_pos: IntArray, area: str = "all") -> MatchTable:
        """A table without prediction or ground-truth rows, only its thresholds and per-class
        ground-truth counts: what a result reduced per class (clusters, ``--jobs``) keeps,
        its curves computed where the rows were."""
        thr = np.asarray(iou_thrs, dtype=np.float64)
        T = thr.shape[0]
        none = np.zeros(0, dtype=np.int64)
        return cls(
            iou_thrs=thr, det=none, det_rank=none, det_category=none, det_score=np.zeros(0),
            det_image=none, det_out=np.zeros(0, dtype=bool), cand=none,
            gt=np.zeros((T, 0), dtype=np.int64), iou=np.zeros((T, 0)),
            ignored=np.zeros((T, 0), dtype=bool), gt_counts=np.zeros(0, dtype=bool),
            n_pos=np.array(n_pos, dtype=np.int64), area=area,
        )  # fmt: skip

    @property
    def n_thresholds(self) -> int:
        return int(self.iou_thrs.shape[0])

    def thr_index(self, iou_thr: float) -> int:
        """Index of ``iou_thr`` in ``iou_thrs`` (exact float match)."""
        hit = np.flatnonzero(self.iou_thrs == iou_thr)
        if hit.size == 0:
            raise KeyError(f"IoU threshold {iou_thr} is not in this table")
        return int(hit[0])

    def dense(self, t: int) -> tuple[IntArray, FloatArray, BoolArray]:
        """At threshold index ``t``, per evaluated prediction (length D): the ground-truth
        row taken (-1 none), its IoU (0 none), ignored."""
        D = len(self)
        gt = np.full(D, -1, dtype=np.int64)
        iou = np.zeros(D, dtype=np.float64)
        ign = self.det_out.copy()
        gt[self.cand] = self.gt[t]
        iou[self.cand] = self.iou[t]
        ign[self.cand] = self.ignored[t]
        return gt, iou, ign

    def tp(self, t: int) -> BoolArray:
        gt, _, ign = self.dense(t)
        return (gt >= 0) & ~ign

    def fp(self, t: int) -> BoolArray:
        gt, _, ign = self.dense(t)
        return (gt < 0) & ~ign

    def copy(self) -> MatchTable:
        """A deep copy of the mutable columns (safe to edit and re-score)."""
        return replace(
            self,
            det_out=self.det_out.copy(),
            det_category=self.det_category.copy(),
            det_score=self.det_score.copy(),
            gt=self.gt.copy(),
            iou=self.iou.copy(),
            ignored=self.ignored.copy(),
            gt_counts=self.gt_counts.copy(),
            n_pos=self.n_pos.copy(),
        )

    def drop(self, positions: npt.ArrayLike) -> None:
        """Take predictions (positions into ``det``) out of scoring at every threshold:
        they become ignored, neither true nor false positives."""
        pos = np.asarray(positions, dtype=np.int64).reshape(-1)
        self.det_out[pos] = True
        c = np.searchsorted(self.cand, pos)
        c = np.minimum(c, max(self.cand.shape[0] - 1, 0))
        is_c = self.cand.shape[0] > 0
        if is_c:
            sel = self.cand[c] == pos
            cols = c[sel]
            self.gt[:, cols] = -1
            self.iou[:, cols] = 0.0
            self.ignored[:, cols] = True


def matches_rows(
    ds: Dataset,
    table: MatchTable,
    t: int,
    *,
    score_thr: float | None,
    order: npt.ArrayLike | None = None,
    shown_gt: IntArray | None = None,
    shown_iou: FloatArray | None = None,
) -> Matches:
    """The ``--matches`` rows of a table at threshold index ``t`` (both protocols).

    One row per evaluated prediction scoring ``>= score_thr`` (in ``order``, positions into
    ``table.det``; default: table order) with its outcome (``TP``, ``FP``, ``ignored``), the
    ground truth it took and the IoU; then one ``FN`` row per counted ground truth that none
    of those predictions took. ``shown_gt``/``shown_iou`` (length D; -1 / NaN for none)
    replace the taken ground truth in the ``gt_id``/``iou`` columns (the VOC protocol shows
    the ground truth a duplicate hit).
    """
    pred, gt = ds.pred, ds.gt
    g, iou_v, ign = table.dense(t)
    pos = np.arange(len(table), dtype=np.int64) if order is None else np.asarray(order)
    score = table.det_score[pos]
    if score_thr is not None:
        keep = score >= score_thr
        pos, score = pos[keep], score[keep]
    rows = table.det[pos]
    g, iou_v, ign = g[pos], iou_v[pos], ign[pos]
    tp = (g >= 0) & ~ign
    fp = (g < 0) & ~ign
    outcome = np.where(tp, "TP", np.where(fp, "FP", "ignored")).astype(object)
    matched = np.zeros(len(gt), dtype=bool)
    matched[g[g >= 0]] = True
    missed = np.flatnonzero(table.gt_counts & ~matched)
    if shown_gt is not None:
        g = shown_gt[pos]
        iou_v = shown_iou[pos] if shown_iou is not None else iou_v
        iou_v = np.where(g >= 0, iou_v, np.nan)
    else:
        iou_v = np.where(g >= 0, iou_v, np.nan)
    keys = ds.images.keys
    labels = [ds.categories.label(k) for k in range(len(ds.categories))]
    gt_ids = np.where(g >= 0, gt.ids[np.maximum(g, 0)], -1) if len(gt) else np.full(g.shape, -1)
    columns = {
        "image": [keys[int(i)] for i in pred.image[rows]]
        + [keys[int(i)] for i in gt.image[missed]],
        "category": [labels[int(c)] for c in pred.category[rows]]
        + [labels[int(c)] for c in gt.category[missed]],
        "pred_id": np.r_[pred.ids[rows], np.full(missed.shape, -1)].astype(np.int64),
        "gt_id": np.r_[gt_ids, gt.ids[missed]].astype(np.int64),
        "score": np.r_[score, np.full(missed.shape, np.nan)],
        "iou": np.r_[iou_v, np.full(missed.shape, np.nan)],
        "outcome": list(outcome) + ["FN"] * int(missed.shape[0]),
    }
    return Matches(columns)
