"""Why pycocotools' keypoint AP and Ultralytics' pose mAP differ (``iou-eval explain
--iou-type keypoints``): one convention at a time, each step from the previous state.

1. **crowd and ignore**: crowds, and ground truths without labelled keypoints
   (``num_keypoints`` 0, which pycocotools ignores), count as ordinary objects;
2. **maxDets**: every prediction counts, not only the 20 best of an image and class;
3. **matching rule**: Ultralytics' (ties to the first ground truth, nothing preferred for
   being non-ignored), still on pycocotools' OKS in float64;
4. **OKS area**: the annotated object ``area`` -> 0.53 x the ground truth's box area
   (Ultralytics' approximation: YOLO labels have no area);
5. **ground truths without labelled keypoints**: the distance to their enlarged box ->
   OKS 0 with every prediction;
6. **sigmas**: the COCO run's -> Ultralytics' own rule (they differ for ``kpt_shape [17, 2]``
   labels, where Ultralytics takes 1/K; elsewhere both take the data's or COCO's 17);
7. **OKS precision**: float32 keypoints, areas, sigmas (Ultralytics' OKS_SIGMA), confidences
   and thresholds, its ``+ 1e-7`` terms;
8. **tie order** and 9. **AP integration**, as for boxes.

The first state is the COCO protocol's own keypoint AP and the last the Ultralytics
protocol's own pose mAP (``(P)`` keys); the steps add up to the difference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset
from .explain_core import Explanation, _no_ignore, _ul_ap, _walk, coco_ap

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

POSE_KEYS = (
    ("AP", "metrics/mAP50-95(P)"),
    ("AP50", "metrics/mAP50(P)"),
    ("AP75", "mAP75"),
)


def _coco_kpt_stats(
    ds: Dataset, max_dets: tuple[int, ...] | None = None
) -> dict[str, float | None]:
    from ..protocols import coco

    opts: dict[str, Any] = {"iou_type": "keypoints"}
    if max_dets is not None:
        opts["max_dets"] = max_dets
    st = coco.run(ds, coco._params(opts)).stats()
    return {"AP": st["AP"], "AP50": st["AP50"], "AP75": st["AP75"]}


def _oks64(
    ds: Dataset, sigmas: FloatArray, *, area: FloatArray, zero_unlabelled: bool
) -> Callable[[IntArray, IntArray], FloatArray]:
    """pycocotools' OKS (float64) of one group with another ``area`` per ground truth,
    other ``sigmas`` (1, K) or (C, K), and optionally OKS 0 for ground truths without
    labelled keypoints (Ultralytics) instead of the enlarged-box distance."""
    from ..geometry.oks import pair_oks
    from ..matching.pairs import kpt_boxes

    gt, pr = ds.gt, ds.pred
    assert gt.keypoints is not None and pr.keypoints is not None
    box = kpt_boxes(gt, None)
    unlabelled = np.asarray(~(gt.keypoints[:, :, 2] > 0).any(axis=1), dtype=bool)

    def sim(g_rows: IntArray, d_rows: IntArray) -> FloatArray:
        gg, dd = np.meshgrid(g_rows, d_rows, indexing="ij")
        g, d = gg.ravel(), dd.ravel()
        sig = sigmas[0] if sigmas.shape[0] == 1 else sigmas[gt.category[g]]
        assert gt.keypoints is not None and pr.keypoints is not None
        oks = pair_oks(pr.keypoints[d], gt.keypoints[g], area[g], box[g], sig)
        if zero_unlabelled:
            oks[unlabelled[g]] = 0.0
        return oks.reshape(gg.shape)

    return sim


def explain_pose(ds: Dataset, coco_sigmas: FloatArray, ul_sigmas: FloatArray) -> Explanation:
    """The walk above. ``ds``: the dataset with Ultralytics' sigmas resolved;
    ``coco_sigmas``: those the COCO protocol uses on the same files."""
    from ..protocols import ultralytics as ul

    gt = ds.gt
    assert gt.keypoints is not None
    n_gt = np.bincount(gt.category, minlength=len(ds.categories)).astype(np.int64)
    coco_sk = replace(ds.skeleton, sigmas=coco_sigmas) if ds.skeleton is not None else None
    ds0 = replace(ds, skeleton=coco_sk)
    start = _coco_kpt_stats(ds0)
    # 1: crowds and num_keypoints == 0 count (their OKS: pycocotools' rules still)
    nk = gt.num_keypoints
    ds1 = _no_ignore(ds0)
    if nk is not None:
        ds1 = replace(ds1, gt=replace(ds1.gt, num_keypoints=np.maximum(nk, 1)))
    group = ds.pred.image * max(len(ds.categories), 1) + ds.pred.category
    most = int(np.bincount(group).max()) if group.size else 0
    xywh = np.asarray(kpt_box_area(ds))
    cache: dict[str, Any] = {}

    def matched(name: str, sim: Callable[[IntArray, IntArray], Any], f32: bool) -> Any:
        if name not in cache:
            order, taken, _ = ul.match(ds1, precision="float32" if f32 else "float64", sim=sim)
            score: npt.NDArray[Any] = ds1.pred.score[order]
            if f32:
                score = score.astype(np.float32)
            cache[name] = (taken >= 0, score, ds1.pred.category[order])
        return cache[name]

    def coco_acc(name: str, sim: Callable[[IntArray, IntArray], Any], f32: bool = False) -> Any:
        def values() -> dict[str, float | None]:
            correct, score, cls = matched(name, sim, f32)
            return coco_ap(correct, score, cls, n_gt)

        return values

    s3 = _oks64(ds1, coco_sigmas, area=gt.area, zero_unlabelled=False)
    s4 = _oks64(ds1, coco_sigmas, area=xywh * 0.53, zero_unlabelled=False)
    s5 = _oks64(ds1, coco_sigmas, area=xywh * 0.53, zero_unlabelled=True)
    s6 = _oks64(ds1, ul_sigmas, area=xywh * 0.53, zero_unlabelled=True)
    s7 = ul.pose_similarity(ds)

    def tie_order() -> dict[str, float | None]:
        correct, score, cls = matched("f32", s7, True)
        return coco_ap(correct, score, cls, n_gt, sort="numpy")

    def integral() -> dict[str, float | None]:
        correct, conf, cls = matched("f32", s7, True)
        return _ul_ap(ul.accumulate(correct, conf, cls, gt.category))

    states: list[tuple[str, str, str, Callable[[], dict[str, float | None]]]] = [
        (
            "crowd and ignore",
            "ignored (crowds, num_keypoints 0)",
            "ordinary ground truth",
            lambda: _coco_kpt_stats(ds1),
        ),
        (
            "maxDets",
            "20 per image and class",
            "no limit",
            lambda: _coco_kpt_stats(ds1, (max(20, most),)),
        ),
        ("matching rule", "ties to the last ground truth", "ties to the first", coco_acc("3", s3)),
        ("OKS area", "annotated 'area'", "0.53 x box area (Ultralytics)", coco_acc("4", s4)),
        (
            "unlabelled ground truths",
            "distance to the enlarged box",
            "OKS 0",
            coco_acc("5", s5),
        ),
        ("sigmas", _sigma_text(coco_sigmas), _sigma_text(ul_sigmas), coco_acc("6", s6)),
        ("OKS precision", "float64", "float32 (+1e-7 terms, OKS_SIGMA)", coco_acc("f32", s7, True)),
        ("tie order", "stable per class", "NumPy default sort over all classes", tie_order),
        ("AP integration", "mean of 101 samples", "trapezoid over 101 points", integral),
    ]
    steps = _walk(start, states)
    end = _ul_ap(ul.run_ultralytics_pose(ds).curves)
    return Explanation("coco", "ultralytics", list(POSE_KEYS), start, end, steps)


def kpt_box_area(ds: Dataset) -> FloatArray:
    """Each ground truth's box area ``w * h`` (float64)."""
    x1, y1, x2, y2 = (ds.gt.xyxy[:, j] for j in range(4))
    out: FloatArray = (x2 - x1) * (y2 - y1)
    return out


def _sigma_text(table: FloatArray) -> str:
    from ..geometry.oks import COCO_SIGMAS

    row = table[0]
    if row.shape == COCO_SIGMAS.shape and np.array_equal(row, COCO_SIGMAS):
        return "COCO's 17"
    if np.all(row == row[0]):
        return f"{row[0]:.4g} for every keypoint"
    return "the data's own" if table.shape[0] == 1 else "the data's own, per class"
