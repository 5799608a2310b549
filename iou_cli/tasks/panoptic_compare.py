"""Two panoptic predictions on one ground truth: PQ/SQ/RQ deltas with paired bootstrap CIs.

``a`` and ``b`` are the single runs' values (:func:`~iou_cli.tasks.panoptic.run_evaluation`,
bit for bit). The bootstrap resamples images with replacement (the same draws as the
detection ``compare``, :func:`iou_cli.analysis.bootstrap.multiplicities`); the per-class
state (tp, fp, fn, IoU sum) is additive over images, so a sample's state is a weighted
sum of per-image rows, and both models are re-scored on the same sample. The percentile
interval of the deltas is the CI; a delta is significant when its CI excludes zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from ..analysis.bootstrap import multiplicities
from ..analysis.compare import (
    METHOD,
    Comparison,
    _class_rows,
    _entry,
    check_bootstrap_options,
)
from ..errors import UsageError
from ..result import Result
from .panoptic import Categories, categories_of, check_options, load_panoptic, run_evaluation
from .panoptic_match import ImageScore, Job

FloatArray = npt.NDArray[np.float64]
_STATS = ("PQ", "SQ", "RQ", "N")
BOOT_KEYS = (
    *(f"{m}{s}" for s in ("", "_th", "_st") for m in _STATS),
    "tp",
    "fp",
    "fn",
)


class _Dense:
    """Per image x category: tp, fp, fn, IoU sum (float64; 4 x 8 bytes per cell)."""

    def __init__(self, n_images: int, n_cats: int) -> None:
        self.m = np.zeros((4, n_images, n_cats), dtype=np.float64)
        self.ids: list[Any] = []

    def __call__(self, i: int, job: Job, s: ImageScore) -> None:
        self.m[0, i, s.cats] = s.tp
        self.m[1, i, s.cats] = s.fp
        self.m[2, i, s.cats] = s.fn
        self.m[3, i, s.cats] = s.iou
        self.ids.append(job.gt.image_id)


def _scores(tot: FloatArray, isthing: npt.NDArray[np.bool_]) -> dict[str, FloatArray]:
    """Summary values per sample from summed state ``tot`` (4, B, C)."""
    tp, fp, fn, iou = tot
    valid = (tp + fp + fn) > 0
    den = np.where(valid, tp + 0.5 * fp + 0.5 * fn, 1.0)
    pq = iou / den
    sq = np.where(tp > 0, iou / np.where(tp > 0, tp, 1.0), 0.0)
    rq = tp / den
    out: dict[str, FloatArray] = {}
    for suffix, sel in (("", None), ("_th", isthing), ("_st", ~isthing)):
        v = valid if sel is None else valid & sel[None, :]
        n = v.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            for name, x in (("PQ", pq), ("SQ", sq), ("RQ", rq)):
                out[f"{name}{suffix}"] = np.where(n > 0, (x * v).sum(axis=1) / n, np.nan)
        out[f"N{suffix}"] = n.astype(np.float64)
    out["tp"], out["fp"], out["fn"] = tp.sum(axis=1), fp.sum(axis=1), fn.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["_class_PQ"] = np.where(valid, pq, np.nan)
    return out


def _bootstrap(
    da: _Dense, db: _Dense, isthing: npt.NDArray[np.bool_], n: int, seed: int
) -> tuple[dict[str, FloatArray], FloatArray]:
    n_images = da.m.shape[1]
    deltas: dict[str, list[FloatArray]] = {k: [] for k in BOOT_KEYS}
    per_class: list[FloatArray] = []
    for w in _chunks(n_images, n, seed):
        wf = w.astype(np.float64)
        sa = _scores(np.einsum("bi,kic->kbc", wf, da.m), isthing)
        sb = _scores(np.einsum("bi,kic->kbc", wf, db.m), isthing)
        for k in BOOT_KEYS:
            deltas[k].append(sb[k] - sa[k])
        per_class.append(sb["_class_PQ"] - sa["_class_PQ"])
    return {k: np.concatenate(v) for k, v in deltas.items()}, np.concatenate(per_class)


def _chunks(n_images: int, n: int, seed: int) -> Iterator[npt.NDArray[np.int32]]:
    yield from multiplicities(n_images, n, seed)


def compare_panoptic(
    pred_a: str,
    pred_b: str,
    gt_json: str,
    *,
    folder_a: str | None = None,
    folder_b: str | None = None,
    gt_folder: str | None = None,
    unknown: str = "error",
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    jobs: int = 1,
) -> Comparison:
    """Evaluate A and B (COCO panoptic JSONs, folders as for the ``panoptic`` verb) on
    ``gt_json`` and compare: ``metrics`` per summary key, ``per_class`` on PQ."""
    check_bootstrap_options(bootstrap, confidence)
    check_options(unknown, jobs)
    gt = load_panoptic(gt_json, folder=gt_folder, ground_truth=True, role="ground truth")
    cats: Categories = categories_of(gt)
    results: list[Result] = []
    dense: list[_Dense] = []
    for path, folder in ((pred_a, folder_a), (pred_b, folder_b)):
        pred = load_panoptic(path, folder=folder, ground_truth=False, role="predictions")
        d = _Dense(len(gt.images), len(cats.ids))
        results.append(run_evaluation(pred, gt, cats, unknown=unknown, jobs=jobs, on_score=d))
        dense.append(d)
    res_a, res_b = results
    da, db = dense
    if da.ids != db.ids:
        raise UsageError(
            "A and B cover different images of the ground truth (with --unknown skip); "
            "compare them on the same images"
        )
    n_images = len(da.ids)
    da.m, db.m = da.m[:, :n_images], db.m[:, :n_images]
    samples: dict[str, FloatArray] = {}
    class_samples = None
    if bootstrap > 0 and n_images:
        samples, class_samples = _bootstrap(da, db, cats.isthing, bootstrap, seed)
    sa, sb = res_a.summary, res_b.summary
    metrics = {k: _entry(sa.get(k), sb.get(k), samples.get(k), confidence) for k in sa}
    per_class = _class_rows(res_a.per_class, res_b.per_class, "PQ", class_samples, confidence)
    n_done = bootstrap if samples else 0
    params = {
        "mode": "predictions",
        "task": "panoptic",
        "a": pred_a,
        "b": pred_b,
        "ground_truth": gt_json,
        "protocol": "panoptic",
        "images": n_images,
        "bootstrap": n_done,
        "seed": seed,
        "confidence": confidence,
        "method": METHOD if n_done else None,
        "class_key": "PQ",
        "params_a": res_a.params,
        "params_b": res_b.params,
    }
    warnings = [f"A: {w}" for w in res_a.warnings] + [f"B: {w}" for w in res_b.warnings]
    return Comparison(
        metrics=metrics,
        per_class=per_class,
        params=params,
        warnings=warnings,
        sources=(res_a, res_b),
    )


__all__ = ["compare_panoptic"]
