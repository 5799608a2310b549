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
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset, Federated
from ..errors import InputError, UsageError

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
    precision: FloatArray,
    recall: FloatArray,
    iou_thrs: FloatArray,
    frequency: IntArray,
    *,
    k: int | None = None,
) -> dict[str, float | None]:
    """The 13 values of ``LVISEval.summarize`` from ``precision (T, R, K, A)`` and
    ``recall (T, K, A)`` (areas all, small, medium, large); ``k``: one class only (its
    frequency group's value is its AP, the other groups' None)."""

    def ap(t: float | None = None, a: int = 0, cats: IntArray | None = None) -> float | None:
        s = precision
        if t is not None:
            s = s[np.flatnonzero(iou_thrs == t)]
        if cats is not None:
            return mean_defined(s[:, :, cats, a])
        return mean_defined(s[:, :, :, a] if k is None else s[:, :, k, a])

    def ar(a: int = 0) -> float | None:
        return mean_defined(recall[:, :, a] if k is None else recall[:, k, a])

    def group(g: int) -> float | None:
        if k is not None:
            return ap(cats=np.asarray([k])) if frequency[k] == g else None
        return ap(cats=np.flatnonzero(frequency == g))

    return {
        "AP": ap(),
        "AP50": ap(t=0.5),
        "AP75": ap(t=0.75),
        "APs": ap(a=1),
        "APm": ap(a=2),
        "APl": ap(a=3),
        "APr": group(0),
        "APc": group(1),
        "APf": group(2),
        "AR300": ar(),
        "ARs": ar(1),
        "ARm": ar(2),
        "ARl": ar(3),
    }


def frequency_label(code: int) -> str | None:
    return FREQUENCY_GROUPS[code] if 0 <= code < 3 else None


def check_iou_type(iou_type: str) -> None:
    if iou_type not in ("bbox", "segm"):
        raise UsageError(f"--protocol lvis: --iou-type bbox or segm, got {iou_type!r}")


def _unused(*_: Any) -> None:  # placeholder until the protocol registry lands
    return None


def evaluate_lvis(ds: Dataset, *, iou_type: str = "bbox") -> Any:
    """Prototype on the pre-M1 COCO core (replaced by the registry version)."""
    from dataclasses import replace

    from ..result import Result
    from .coco import CocoParams, run

    fed = federated(ds)
    rows, g_rows, nel = select(ds, fed)
    pred = ds.pred.take(rows)
    area = pred.area.copy()
    area[nel] = -1.0  # outside every area range: ignored when unmatched
    pred = replace(pred, area=area)
    gt = ds.gt.take(g_rows)
    n = len(gt)
    gt = replace(gt, iscrowd=np.zeros(n, bool), difficult=np.zeros(n, bool))
    sub = replace(ds, pred=pred, gt=gt)
    params = CocoParams(iou_type=iou_type, max_dets=(MAX_DETS,), honor_ignore=True)
    ev = run(sub, params)
    prec = ev.precision[..., 0]
    rec = ev.recall[..., 0]
    summ = summary(prec, rec, params.iou_thrs, fed.frequency)
    per_class = []
    for k in range(len(ds.categories)):
        row: dict[str, Any] = {
            "category_id": ds.categories.ids[k],
            "name": ds.categories.label(k),
            "frequency": frequency_label(int(fed.frequency[k])),
        }
        s = summary(prec, rec, params.iou_thrs, fed.frequency, k=k)
        row.update({key: v for key, v in s.items() if key not in ("APr", "APc", "APf")})
        per_class.append(row)
    return Result(summary=summ, per_class=per_class, params={"protocol": "lvis"})
