"""The LVIS protocol (federated labels), exactly as lvis-api 0.5.3's ``LVISEval``.

LVIS evaluation is COCO's (same candidate pairs, greedy rank loop and accumulation: they are
reused, not re-implemented) on a selection of the data, with one change to what an unmatched
prediction means:

* predictions: per image, the 300 best by score (``LVISResults.limit_dets_per_image``: a
  stable sort, so ties keep file order), before anything else is looked at;
* then, as ``LVIS.get_ann_ids`` filters with ``0 < area < inf``: ground truths and
  predictions of area 0 are dropped (a prediction so dropped still took one of the 300);
* a prediction is evaluated only where its class is in the image (a ground truth of it
  survived) or listed in the image's ``neg_category_ids``;
* an unmatched prediction of a class in the image's ``not_exhaustive_category_ids`` is
  ignored (as one outside the area range is), not a false positive;
* no crowd rule (lvis-api passes ``iscrowd=0`` to the IoU); a ground truth's own ``ignore``
  field is honoured; one maxDets, 300 (per image, so per (image, class) too);
* AP means over classes with ground truth (others are -1 and left out), AR at 300; APr,
  APc, APf mean over the classes of each frequency group.

:func:`select` does the first three on columns; :func:`run` hands the selection to the COCO
core (``coco.run`` with ``ignore_unmatched`` for the fourth, which it folds into each match
table's ``det_out``) and wraps the result as an :class:`LvisEvaluation`, which adds the
13 lvis-api values; the operating point and ``--matches`` rows are the COCO protocol's, over
the evaluated predictions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset, Federated
from ..errors import InputError
from ..result import Result
from . import Protocol
from .coco import CocoEvaluation, CocoParams
from .coco import run as run_coco

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

MAX_DETS = 300  # lvis-api's Params.max_dets and LVISResults' max_dets
FREQUENCY_GROUPS = ("r", "c", "f")
SUMMARY_KEYS = [
    "AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf",
    "AR300", "ARs", "ARm", "ARl",
]  # fmt: skip


def federated(ds: Dataset) -> Federated:
    """The ground truth's LVIS labels, or the located reason there are none."""
    fed = ds.federated
    if fed is None:
        raise InputError(
            ds.gt_path,
            None,
            "--protocol lvis needs an LVIS ground truth: a COCO-style JSON whose images list "
            "'neg_category_ids' and 'not_exhaustive_category_ids' and whose categories have a "
            "'frequency' (r, c or f)",
        )
    if fed.missing is not None:
        raise InputError(ds.gt_path, fed.missing, "missing (an LVIS ground truth needs it)")
    return fed


def top_per_image(image: IntArray, score: FloatArray, n: int = MAX_DETS) -> BoolArray:
    """Rows among the ``n`` best scores of their image (``LVISResults.limit_dets_per_image``:
    ``sorted(..., key=score, reverse=True)`` is stable, so ties keep the file order)."""
    keep = np.ones(image.shape[0], dtype=bool)
    if image.shape[0] == 0:
        return keep
    counts = np.bincount(image)
    if counts.max() <= n:
        return keep
    order = np.argsort(-score, kind="stable")
    order = order[np.argsort(image[order], kind="stable")]
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    rank = np.arange(order.shape[0]) - starts[image[order]]
    keep[order[rank >= n]] = False
    return keep


def select(ds: Dataset, fed: Federated) -> tuple[IntArray, IntArray, BoolArray]:
    """What lvis-api evaluates: ``(prediction rows, ground-truth rows, not_exhaustive)``.

    Prediction rows keep file order; ``not_exhaustive`` (aligned with them) marks those whose
    class the image lists in ``not_exhaustive_category_ids``.
    """
    K = max(len(ds.categories), 1)
    gt, pred = ds.gt, ds.pred
    g_rows = np.flatnonzero((gt.area > 0) & (gt.area < np.inf)).astype(np.int64)
    present = np.unique(gt.image[g_rows] * K + gt.category[g_rows])
    neg = Federated.pair_keys(fed.neg_ptr, fed.neg_cat, K)
    known = np.union1d(present, neg)
    keep = top_per_image(pred.image, pred.score) & (pred.area > 0) & (pred.area < np.inf)
    rows = np.flatnonzero(keep).astype(np.int64)
    key = pred.image[rows] * K + pred.category[rows]
    rows = rows[np.isin(key, known)]
    key = pred.image[rows] * K + pred.category[rows]
    nel = Federated.pair_keys(fed.nel_ptr, fed.nel_cat, K)
    return rows, g_rows, np.isin(key, nel)


def mean_defined(values: FloatArray) -> float | None:
    """lvis-api's ``np.mean(s[s > -1])``, None where nothing is defined (it says -1)."""
    vals = values[values > -1]
    return float(np.mean(vals)) if vals.size else None


def summary(
    precision: FloatArray, recall: FloatArray, iou_thrs: FloatArray, frequency: IntArray
) -> dict[str, float | None]:
    """The 13 values of ``LVISEval.summarize`` from ``precision (T, R, K, A)`` and
    ``recall (T, K, A)`` (areas all, small, medium, large), ``np.mean`` over the same
    elements in the same order as lvis-api's ``_summarize``."""

    def ap(t: float | None = None, a: int = 0, cats: IntArray | None = None) -> float | None:
        s = precision[..., a]  # a view: (T, R, K)
        if t is not None:
            s = s[np.flatnonzero(iou_thrs == t)]
        return mean_defined(s if cats is None else s[:, :, cats])

    def ar(a: int = 0) -> float | None:
        return mean_defined(recall[:, :, a])

    return {
        "AP": ap(),
        "AP50": ap(t=0.5),
        "AP75": ap(t=0.75),
        "APs": ap(a=1),
        "APm": ap(a=2),
        "APl": ap(a=3),
        "APr": ap(cats=np.flatnonzero(frequency == 0)),
        "APc": ap(cats=np.flatnonzero(frequency == 1)),
        "APf": ap(cats=np.flatnonzero(frequency == 2)),
        "AR300": ar(),
        "ARs": ar(1),
        "ARm": ar(2),
        "ARl": ar(3),
    }


def frequency_label(code: int) -> str | None:
    return FREQUENCY_GROUPS[code] if 0 <= code < len(FREQUENCY_GROUPS) else None


@dataclass
class LvisEvaluation(CocoEvaluation):
    """lvis-api's ``eval`` as COCO-shaped arrays, on what lvis-api evaluates.

    ``dataset`` is the evaluated selection (the top 300 predictions per image of area > 0 in
    classes present or verified absent; ground truths of area > 0), so ``table``'s rows and
    the ``--matches`` ids refer to it; ``source`` is the whole joined dataset. ``precision``
    (T, R, K, A, 1) and ``recall`` (T, K, A, 1) are lvis-api's ``precision`` (T, R, K, A) and
    ``recall`` (T, K, A) with pycocotools' maxDets axis (300) kept; ``frequency`` is each
    class's group (0 r, 1 c, 2 f).
    """

    frequency: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    source: Dataset | None = None
    n_over: int = 0  # images with more than 300 predictions
    most: int = 0  # the most predictions of one image
    n_crowd: int = 0  # ground truths marked iscrowd (scored as ordinary boxes, said)

    def lvis_stats(self) -> dict[str, float | None]:
        """The 13 values of ``LVISEval.summarize``."""
        return summary(
            self.precision[..., -1], self.recall[..., -1], self.params.iou_thrs, self.frequency
        )

    def summary_stats(self) -> dict[str, float | None]:
        return self.lvis_stats()

    def per_class(self) -> list[dict[str, Any]]:
        """Per class: ``frequency``, then the COCO protocol's row, whose stats with the one
        maxDets 300 are lvis-api's per class (AP ... APl, AR300, ARs, ARm, ARl: the same
        means over the class's slice of ``precision`` / ``recall``), and operating point."""
        out: list[dict[str, Any]] = []
        for k, row in enumerate(super().per_class()):
            new: dict[str, Any] = {
                "category_id": row.pop("category_id"),
                "name": row.pop("name"),
                "frequency": frequency_label(int(self.frequency[k])),
            }
            new.update(row)
            out.append(new)
        return out

    def result(self) -> Result:
        p = self.params
        params: dict[str, Any] = {
            "protocol": "lvis",
            "iou_type": p.iou_type,
            "iou_thrs": [float(t) for t in p.iou_thrs],
            "rec_thrs": int(p.rec_thrs.shape[0]),
            "max_dets_per_image": MAX_DETS,
            "area_ranges": {n: [lo, hi] for n, lo, hi in p.area_rngs},
            "op_iou_thr": p.op_iou_thr,
            "score_thr": self.score_thr,
            "score_thr_source": "given" if p.score_thr is not None else "max-f1",
            "evaluated_predictions": len(self.dataset.pred),
            "evaluated_ground_truths": len(self.dataset.gt),
        }
        result = Result(
            summary=self.summary(),
            per_class=self.per_class(),
            params=params,
            matches=self.matches() if p.want_matches else None,
            evaluation=self,
        )
        if self.n_crowd:
            result.warnings.append(
                f"{self.n_crowd} ground truth{'s are' if self.n_crowd > 1 else ' is'} marked "
                "iscrowd: LVIS has no crowd rule (lvis-api scores them as ordinary boxes), "
                "and so does --protocol lvis; use --protocol coco for COCO's crowd rule"
            )
        if self.n_over:
            result.warnings.append(
                f"{self.n_over} image{'s have' if self.n_over > 1 else ' has'} more than "
                f"{MAX_DETS} predictions (at most {self.most}): only the {MAX_DETS} "
                f"highest-scoring of each are evaluated (LVIS's limit per image)"
            )
        return result


def run(ds: Dataset, opts: Mapping[str, Any]) -> LvisEvaluation:
    """Select what lvis-api evaluates, then match and accumulate it with the COCO core."""
    fed = federated(ds)
    rows, g_rows, not_exhaustive = select(ds, fed)
    gt = ds.gt.take(g_rows)
    n = len(gt)
    no = np.zeros(n, dtype=bool)
    # lvis-api passes iscrowd=0 to the IoU and honours a ground truth's own `ignore`
    gt = replace(gt, iscrowd=no, difficult=no.copy())
    sub = replace(ds, pred=ds.pred.take(rows), gt=gt)
    params = CocoParams(
        iou_type=opts.get("iou_type", "bbox"),
        max_dets=(MAX_DETS,),  # per image, so per (image, class) too
        honor_ignore=True,
        op_iou_thr=float(opts.get("iou_thr", 0.5)),
        score_thr=opts.get("score_thr"),
        want_matches=bool(opts.get("matches", False)),
        keep_tables=bool(opts.get("keep_tables", False)),
        accumulate=not opts.get("map_only", False),
    )
    ev = run_coco(sub, params, ignore_unmatched=not_exhaustive)
    counts = np.bincount(ds.pred.image) if len(ds.pred) else np.zeros(0, dtype=np.int64)
    return LvisEvaluation(
        **{f.name: getattr(ev, f.name) for f in fields(ev) if f.init and f.name != "protocol"},
        protocol="lvis",
        frequency=fed.frequency,
        source=ds,
        n_over=int(np.count_nonzero(counts > MAX_DETS)),
        n_crowd=int(np.count_nonzero(ds.gt.take(g_rows).iscrowd)),
        most=int(counts.max()) if counts.size else 0,
    )


PROTOCOLS = {
    "lvis": Protocol(
        name="lvis",
        description="LVIS federated AP (lvis-api): 300 predictions per image, APr/APc/APf",
        options=frozenset({"keep_tables"}),
        defaults={},
        iou_types=("bbox", "segm"),
        summary_keys=lambda opts: list(SUMMARY_KEYS),
        run=run,
    )
}
