"""Panoptic segmentation: PQ, SQ and RQ as panopticapi's ``pq_compute`` computes them.

Per image (one pair of PNGs in memory at a time), every pixel's (ground-truth segment,
predicted segment) pair is counted at once (:mod:`.panoptic_match`: runs of unchanged pixels,
segment ids mapped to small indices, one ``bincount``) into the ``(G + 1) x (P + 1)``
intersection matrix, row and column 0 being VOID (id 0). Then panopticapi's rules:

* a pair matches when both segments have the same category, the ground truth is not crowd,
  and ``IoU = I / (area_pred + area_gt - I - I(VOID, pred)) > 0.5`` (the prediction's
  overlap with VOID is left out of the union); the ground-truth area is the JSON ``area``
  (the pixel count where the JSON has none), the predicted area is the pixel count;
* an unmatched non-crowd ground truth is a false negative;
* an unmatched prediction is a false positive unless more than half of its pixels lie in
  VOID or in the crowd region of its category (the last crowd segment of that category in
  ``segments_info``, as panopticapi's dictionary keeps it).

Per category ``c``: ``PQ = IoU_sum / (TP + FP/2 + FN/2)``, ``SQ = IoU_sum / TP`` (0 when
``TP = 0``), ``RQ = TP / (TP + FP/2 + FN/2)``; All, Things and Stuff average over the
categories of the ground truth's ``categories`` with ``TP + FP + FN > 0``, in that order.
IoU sums are added one pair at a time in the order a single-process panopticapi run adds
them (images in the ground truth's order, pairs by ground-truth id then predicted id).

The state (per class: tp, fp, fn, IoU sum) is additive over images.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, UsageError
from ..loaders.panoptic import PanopticImage, PanopticSet, load_panoptic
from ..result import Result
from .panoptic_match import ImageScore, Job, Packed, run_chunks, run_jobs

IntArray = npt.NDArray[np.int64]
Progress = Callable[[str, int, int], None]
SUMMARY_KEYS = (
    "PQ",
    "SQ",
    "RQ",
    "N",
    "PQ_th",
    "SQ_th",
    "RQ_th",
    "N_th",
    "PQ_st",
    "SQ_st",
    "RQ_st",
    "N_st",
    "tp",
    "fp",
    "fn",
    "images",
)


@dataclass
class PanopticState:
    """Per category (index into the ground truth's categories): tp, fp, fn, IoU sum."""

    tp: IntArray
    fp: IntArray
    fn: IntArray
    iou: list[float]
    images: int = 0

    @classmethod
    def zeros(cls, n: int) -> PanopticState:
        z = np.zeros(n, dtype=np.int64)
        return cls(z.copy(), z.copy(), z.copy(), [0.0] * n)

    def add_packed(self, s: Packed) -> None:
        """:meth:`add` of each image in turn (the IoUs in the same order: the same bits)."""
        self._add_counts(s)
        self.images += len(s.n_cats)

    def add(self, s: ImageScore) -> None:
        self._add_counts(s)
        self.images += 1

    def _add_counts(self, s: ImageScore | Packed) -> None:
        np.add.at(self.tp, s.cats, s.tp)
        np.add.at(self.fp, s.cats, s.fp)
        np.add.at(self.fn, s.cats, s.fn)
        iou = self.iou
        for c, v in zip(s.match_cat.tolist(), s.match_iou.tolist(), strict=True):
            iou[c] += v  # one pair at a time: panopticapi's rounding


@dataclass
class Categories:
    ids: list[int]
    names: list[str]
    isthing: npt.NDArray[np.bool_]
    index: dict[int, int] = field(default_factory=dict)


def categories_of(gt: PanopticSet) -> Categories:
    ids = list(gt.categories)
    return Categories(
        ids=ids,
        names=[gt.categories[i][0] for i in ids],
        isthing=np.array([gt.categories[i][1] for i in ids], dtype=bool),
        index={cid: k for k, cid in enumerate(ids)},
    )


def _cat_index(img: PanopticImage, side: PanopticSet, cats: Categories, gt_path: str) -> IntArray:
    out = np.empty(len(img.category), dtype=np.int64)
    for j, cid in enumerate(img.category.tolist()):
        k = cats.index.get(cid)
        if k is None:
            raise InputError(
                side.path,
                f"{img.where}.segments_info[{j}].category_id",
                f"category_id {cid} is not in the ground truth's categories ({gt_path})",
            )
        out[j] = k
    return out


def pair_images(
    pred: PanopticSet, gt: PanopticSet, unknown: str
) -> tuple[list[tuple[PanopticImage, PanopticImage]], dict[str, int]]:
    """(ground truth, prediction) records by image_id, in the ground truth's order."""
    no_pred = [g for g in gt.images if g.image_id not in pred.by_id]
    no_gt = [p for p in pred.images if p.image_id not in gt.by_id]
    if unknown == "error":
        if no_pred:
            g = no_pred[0]
            raise InputError(
                gt.path,
                f"{g.where}.image_id",
                f"no prediction record for image_id {g.image_id!r} in {pred.path} "
                f"({len(no_pred)} such image(s); use --unknown skip to leave them out)",
            )
        if no_gt:
            p = no_gt[0]
            raise InputError(
                pred.path,
                f"{p.where}.image_id",
                f"image_id {p.image_id!r} is not in the ground truth {gt.path} "
                f"({len(no_gt)} such record(s); use --unknown skip to leave them out)",
            )
    pairs = [
        (g, pred.images[pred.by_id[g.image_id]]) for g in gt.images if g.image_id in pred.by_id
    ]
    return pairs, {"missing_prediction": len(no_pred), "unknown_image": len(no_gt)}


def make_jobs(
    pred: PanopticSet,
    gt: PanopticSet,
    cats: Categories,
    pairs: list[tuple[PanopticImage, PanopticImage]],
) -> list[Job]:
    """One job per image pair; every segment's category checked before any PNG is read."""
    index = _cat_indices(pairs, cats)
    if index is None:  # a category not in the ground truth's: the first one, located
        index = [
            _cat_index(im, side, cats, gt.path)
            for g, p in pairs
            for im, side in ((g, gt), (p, pred))
        ]
    return [
        Job(
            gt=g,
            pred=p,
            gt_cat=index[2 * k],
            pred_cat=index[2 * k + 1],
            gt_png=os.path.join(gt.folder, g.file_name),
            pred_png=os.path.join(pred.folder, p.file_name),
            gt_json=gt.path,
            pred_json=pred.path,
            size=gt.sizes.get(g.image_id),
        )
        for k, (g, p) in enumerate(pairs)
    ]


def _cat_indices(
    pairs: list[tuple[PanopticImage, PanopticImage]], cats: Categories
) -> list[IntArray] | None:
    """:func:`_cat_index` of every pair's two images at once (ground truth, prediction, in
    turn), or None when a category is not in ``cats`` (then the loop locates the first)."""
    parts = [im.category for g, p in pairs for im in (g, p)]
    if not parts:
        return []
    flat = np.concatenate(parts)
    ids = np.array(cats.ids, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    at = np.searchsorted(ids[order], flat).clip(0, len(ids) - 1) if len(ids) else flat
    if not len(ids) or not np.array_equal(ids[order][at], flat):
        return None
    return np.split(order[at], np.cumsum([len(x) for x in parts[:-1]]))


def pq_average(
    state: PanopticState, cats: Categories, things: bool | None
) -> tuple[dict[str, float | int | None], list[dict[str, Any]]]:
    """panopticapi's ``pq_average``: (PQ, SQ, RQ, N) over the selected categories with
    TP + FP + FN > 0, and the per-class rows (undefined where TP + FP + FN = 0)."""
    pq = sq = rq = 0.0
    n = 0
    rows: list[dict[str, Any]] = []
    for k in range(len(cats.ids)):
        if things is not None and bool(cats.isthing[k]) != things:
            continue
        tp, fp, fn = int(state.tp[k]), int(state.fp[k]), int(state.fn[k])
        iou = state.iou[k]
        row: dict[str, Any] = {"category_id": cats.ids[k], "name": cats.names[k]}
        row["isthing"] = int(cats.isthing[k])
        if tp + fp + fn == 0:
            row.update(PQ=None, SQ=None, RQ=None)
        else:
            n += 1
            den = tp + 0.5 * fp + 0.5 * fn
            pq_c, sq_c, rq_c = iou / den, (iou / tp if tp != 0 else 0.0), tp / den
            pq, sq, rq = pq + pq_c, sq + sq_c, rq + rq_c
            row.update(PQ=pq_c, SQ=sq_c, RQ=rq_c)
        row.update(tp=tp, fp=fp, fn=fn, iou_sum=iou)
        rows.append(row)
    if n == 0:
        return {"PQ": None, "SQ": None, "RQ": None, "N": 0}, rows
    return {"PQ": pq / n, "SQ": sq / n, "RQ": rq / n, "N": n}, rows


def summarize(
    state: PanopticState, cats: Categories
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The summary (All, Things, Stuff, totals) and the per-class rows."""
    summary: dict[str, Any] = {}
    allv, rows = pq_average(state, cats, None)
    summary.update(allv)
    for suffix, things in (("_th", True), ("_st", False)):
        part, _ = pq_average(state, cats, things)
        summary.update({f"{k}{suffix}": v for k, v in part.items()})
    summary["tp"] = int(state.tp.sum())
    summary["fp"] = int(state.fp.sum())
    summary["fn"] = int(state.fn.sum())
    summary["images"] = state.images
    return summary, rows


def load_pair(
    pred_json: str,
    gt_json: str,
    *,
    pred_folder: str | None = None,
    gt_folder: str | None = None,
    jobs: int = 1,
) -> tuple[PanopticSet, PanopticSet, Categories]:
    """The two sides (ground truth first: its errors come first); with ``jobs`` above 1 the
    predictions are read by a forked process meanwhile (:mod:`.panoptic_load`)."""
    from . import panoptic_load

    if panoptic_load.forkable(pred_json, gt_json, jobs):
        pred, gt = panoptic_load.load_sides(pred_json, gt_json, pred_folder, gt_folder)
        return pred, gt, categories_of(gt)
    gt = load_panoptic(gt_json, folder=gt_folder, ground_truth=True, role="ground truth")
    pred = load_panoptic(pred_json, folder=pred_folder, ground_truth=False, role="predictions")
    return pred, gt, categories_of(gt)


def evaluate_panoptic(
    pred_json: str,
    gt_json: str,
    *,
    pred_folder: str | None = None,
    gt_folder: str | None = None,
    unknown: str = "error",
    per_image: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
) -> Result:
    """PQ, SQ, RQ (All, Things, Stuff) and per-class tp/fp/fn/IoU sum, as panopticapi.

    ``pred_json``/``gt_json``: COCO panoptic JSONs; their PNG folders default to the JSON
    paths without ``.json``. ``unknown="skip"`` leaves out images present on one side only
    (default: an error). ``per_image``: add ``extra["per_image"]`` rows (image_id,
    file_name, PQ, tp, fp, fn), worst PQ first. ``jobs``: worker processes (the numbers do
    not depend on it).
    """
    check_options(unknown, jobs)
    pred, gt, cats = load_pair(
        pred_json, gt_json, pred_folder=pred_folder, gt_folder=gt_folder, jobs=jobs
    )
    return run_evaluation(
        pred, gt, cats, unknown=unknown, per_image=per_image, jobs=jobs, progress=progress
    )


def _image_row(job: Job, score: ImageScore) -> dict[str, Any]:
    g = job.gt
    return {
        "image_id": g.image_id,
        "file_name": g.file_name,
        "PQ": score.pq(),
        "tp": int(score.tp.sum()),
        "fp": int(score.fp.sum()),
        "fn": int(score.fn.sum()),
    }


def check_options(unknown: str, jobs: int) -> None:
    if unknown not in ("error", "skip"):
        raise UsageError(f"--unknown: expected error or skip, got {unknown!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise UsageError(f"--jobs: expected a positive integer, got {jobs!r}")


def run_evaluation(
    pred: PanopticSet,
    gt: PanopticSet,
    cats: Categories,
    *,
    unknown: str = "error",
    per_image: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
    on_score: Callable[[int, Job, ImageScore], None] | None = None,
) -> Result:
    """:func:`evaluate_panoptic` on loaded sets; ``on_score(i, job, score)`` sees each
    image's score (``i``: its position among the evaluated pairs)."""
    pairs, skipped = pair_images(pred, gt, unknown)
    state = PanopticState.zeros(len(cats.ids))
    work = make_jobs(pred, gt, cats, pairs)
    mismatch = 0
    images: list[dict[str, Any]] = []
    if on_score is None and not per_image:  # the sums only: a chunk of images at a time
        for packed in run_chunks(work, jobs, progress):
            state.add_packed(packed)
            mismatch += int(packed.area_mismatch.sum())
    else:
        for i, (job, score) in enumerate(zip(work, run_jobs(work, jobs, progress), strict=False)):
            state.add(score)
            if on_score is not None:
                on_score(i, job, score)
            mismatch += score.area_mismatch
            if per_image:
                images.append(_image_row(job, score))
    summary, rows = summarize(state, cats)
    params: dict[str, Any] = {
        "task": "panoptic",
        "predictions": pred.path,
        "ground_truth": gt.path,
        "pred_folder": pred.folder,
        "gt_folder": gt.folder,
        "unknown": unknown,
    }
    result = Result(summary=summary, per_class=rows, params=params)
    if per_image:
        images.sort(key=lambda r: (r["PQ"] is None, r["PQ"] if r["PQ"] is not None else 0.0))
        result.extra["per_image"] = images
    if unknown == "skip":
        params["skipped"] = skipped
        if skipped["missing_prediction"]:
            result.warnings.append(
                f"skipped {skipped['missing_prediction']} ground-truth image(s) without a prediction"
            )
        if skipped["unknown_image"]:
            result.warnings.append(
                f"skipped {skipped['unknown_image']} prediction record(s) without a ground truth"
            )
    result.info.append(
        f"read {state.images:,} image pairs, {len(cats.ids):,} categories "
        f"({int(cats.isthing.sum())} things)"
    )
    if mismatch:
        result.warnings.append(
            f"{mismatch:,} ground-truth segment(s) have a JSON area that differs from their "
            "pixel count in the PNG; the JSON area was used, as panopticapi does"
        )
    if state.images == 0:
        result.warnings.append("no image pairs were evaluated")
    return result


__all__ = [
    "SUMMARY_KEYS",
    "ImageScore",
    "PanopticState",
    "evaluate_panoptic",
    "pq_average",
    "summarize",
]
