"""Why two tools' numbers differ: switch one convention at a time (``iou-eval explain``).

From pycocotools (``--protocol coco``) to Ultralytics' ``yolo val`` (``--protocol
ultralytics``), in this order, each step changing one convention of the previous state:

1. **crowd and ignore**: crowd (and ``ignore``/``difficult``) ground truths stop being
   ignored regions and count as ordinary objects (Ultralytics has no such flag);
2. **maxDets**: every prediction of an image and class counts, not only its 100 best;
3. **matching rule**: per threshold, ties between equally good ground truths go to the first
   one, not the last, and nothing is preferred for being non-ignored (IoU still pycocotools'
   float64, thresholds ``min(t, 1 - 1e-10)``);
4. **IoU precision**: boxes, confidences, IoU (``+ 1e-7`` in the union) and thresholds in
   float32, as Ultralytics' tensors;

On rotated boxes the walk starts from COCO on polygon IoU, and one step comes before the
precision step: **IoU**, polygon IoU -> probiou (the Bhattacharyya similarity of the boxes'
Gaussians, Ultralytics' OBB validator's), both in float64; the precision step then rounds
probiou to float32.
5. **tie order**: predictions of equal confidence in the order of NumPy's default (unstable)
   sort over all classes, not a stable sort per class;
6. **AP integration**: the precision envelope (sentinels 1 and 0) interpolated at 101 recall
   points and integrated by the trapezoid rule, instead of the mean of 101 samples of the
   interpolated precision.

The class set (classes with ground truth) and the IoU thresholds (.50:.05:.95) are the same
in both. The first state is the COCO protocol's own result and the last the Ultralytics
protocol's own (the tests check both ends and that the steps add up to the total).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset
from ..errors import UsageError
from .explain_core import (  # noqa: F401 (re-exported: the reporters and tests use them)
    Explanation,
    Step,
    _diff,
    _no_ignore,
    _ul_ap,
    _walk,
    coco_ap,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

TARGETS = ("ultralytics", "voc", "voc07")
SOURCES = ("coco",)
# the keys compared: (COCO key, Ultralytics key)
KEYS = (
    ("AP", "metrics/mAP50-95(B)"),
    ("AP50", "metrics/mAP50(B)"),
    ("AP75", "mAP75"),
)


def _coco_stats(
    ds: Dataset, max_dets: tuple[int, ...] | None = None, iou_type: str = "bbox"
) -> dict[str, float | None]:
    from ..protocols import coco

    params = coco.CocoParams(iou_type=iou_type)
    if max_dets is not None:
        params = replace(params, max_dets=max_dets)
    ev = coco.run(ds, params)
    st = ev.stats()
    return {"AP": st["AP"], "AP50": st["AP50"], "AP75": st["AP75"]}


def _coco_to_ultralytics(ds: Dataset, rotated: bool = False) -> Explanation:
    from ..protocols import ultralytics as ul

    geo = "obb" if rotated else "bbox"
    n_gt = np.bincount(ds.gt.category, minlength=len(ds.categories)).astype(np.int64)
    start = _coco_stats(ds, iou_type=geo)
    ds1 = _no_ignore(ds)
    group = ds.pred.image * max(len(ds.categories), 1) + ds.pred.category
    most = int(np.bincount(group).max()) if group.size else 0
    no_cap = (1, 10, max(100, most))
    bits: dict[str, tuple[npt.NDArray[np.bool_], npt.NDArray[Any], IntArray]] = {}
    final = "probiou" if rotated else "box"

    def matched(
        precision: str, iou: str = final
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[Any], IntArray]:
        key = f"{precision} {iou}"
        if key not in bits:
            order, taken, _ = ul.match(ds1, precision=precision, iou=iou)
            score: npt.NDArray[Any] = ds1.pred.score[order]
            if precision == "float32":
                score = score.astype(np.float32)
            bits[key] = (taken >= 0, score, ds1.pred.category[order])
        return bits[key]

    def step3() -> dict[str, float | None]:
        correct, score, cls = matched("float64", "polygon" if rotated else "box")
        return coco_ap(correct, score, cls, n_gt)

    def step_probiou() -> dict[str, float | None]:
        correct, score, cls = matched("float64")
        return coco_ap(correct, score, cls, n_gt)

    def step4() -> dict[str, float | None]:
        correct, score, cls = matched("float32")
        return coco_ap(correct, score, cls, n_gt)

    def step5() -> dict[str, float | None]:
        correct, score, cls = matched("float32")
        return coco_ap(correct, score, cls, n_gt, sort="numpy")

    def step6() -> dict[str, float | None]:
        correct, conf, cls = matched("float32")
        return _ul_ap(ul.accumulate(correct, conf, cls, ds1.gt.category))

    states: list[tuple[str, str, str, Callable[[], dict[str, float | None]]]]
    states = [
        (
            "crowd and ignore",
            "ignored regions",
            "ordinary ground truth",
            lambda: _coco_stats(ds1, iou_type=geo),
        ),
        (
            "maxDets",
            "100 per image and class",
            "no limit",
            lambda: _coco_stats(ds1, no_cap, iou_type=geo),
        ),
        ("matching rule", "ties to the last ground truth", "ties to the first", step3),
    ]
    if rotated:
        states.append(
            ("IoU", "polygon IoU", "probiou (Gaussians of the enclosing rectangles)", step_probiou)
        )
    states += [
        (
            "IoU precision",
            "float64",
            "float32" if rotated else "float32 (+1e-7 in the union)",
            step4,
        ),
        ("tie order", "stable per class", "NumPy default sort over all classes", step5),
        ("AP integration", "mean of 101 samples", "trapezoid over 101 points", step6),
    ]
    steps = _walk(start, states)
    end_ev = ul.run_ultralytics(ds, iou_type=geo)
    end = _ul_ap(end_ev.curves)
    return Explanation("coco", "ultralytics", list(KEYS), start, end, steps)


def _coco_to_voc(ds: Dataset, use_07: bool, rotated: bool = False) -> Explanation:
    from ..protocols import voc

    geo = "obb" if rotated else "bbox"
    target = "voc07" if use_07 else "voc"
    start = {"AP50": _coco_stats(ds, iou_type=geo)["AP50"]}
    group = ds.pred.image * max(len(ds.categories), 1) + ds.pred.category
    most = int(np.bincount(group).max()) if group.size else 0
    m = voc.voc_match(ds, iou_thr=0.5, iou_type=geo)
    n_gt = np.bincount(ds.gt.category[~m.hard], minlength=len(ds.categories)).astype(np.int64)
    score, cls = ds.pred.score, ds.pred.category
    by_image = np.lexsort((-score, ds.pred.image))

    def voc_bits(rows: IntArray) -> dict[str, float | None]:
        tp = m.tp[rows][:, None]
        return coco_ap(tp, score[rows], cls[rows], n_gt, fp=m.fp[rows][:, None])

    integral = "11 points (VOC2007)" if use_07 else "all points (VOC2010+)"
    states: list[tuple[str, str, str, Callable[[], dict[str, float | None]]]] = [
        (
            "maxDets",
            "100 per image and class",
            "no limit",
            lambda: {"AP50": _coco_stats(ds, (1, 10, max(100, most)), iou_type=geo)["AP50"]},
        ),
        (
            "matching rule",
            "best free ground truth, crowds absorb",
            "best ground truth (a second hit is a duplicate), crowds as difficult",
            lambda: voc_bits(by_image),
        ),
        (
            "tie order",
            "images in order, then score",
            "score, then file order",
            lambda: voc_bits(np.arange(len(ds.pred), dtype=np.int64)),
        ),
        (
            "AP integration",
            "mean of 101 samples",
            integral,
            lambda: {
                "AP50": voc.run_voc(ds, iou_thr=0.5, use_07=use_07, iou_type=geo).summary()["mAP"]
            },
        ),
    ]
    steps = _walk(start, states)
    end = {"AP50": voc.run_voc(ds, iou_thr=0.5, use_07=use_07, iou_type=geo).summary()["mAP"]}
    return Explanation("coco", target, [("AP50", "mAP")], start, end, steps)


def explain(
    ds: Dataset, *, source: str = "coco", target: str = "ultralytics", iou_type: str = "bbox"
) -> Explanation:
    """Walk from protocol ``source`` to ``target`` one convention at a time (module doc).
    Rotated boxes (``iou_type="obb"``, or both sides read as rotated boxes) start from COCO
    on polygon IoU and have one more step to Ultralytics: polygon IoU -> probiou."""
    if source not in SOURCES:
        raise UsageError(f"--from: expected one of {', '.join(SOURCES)}, got {source!r}")
    if target not in TARGETS:
        raise UsageError(f"--to: expected one of {', '.join(TARGETS)}, got {target!r}")
    if iou_type == "keypoints" or ds.gt.keypoints is not None:
        if target != "ultralytics":
            raise UsageError(
                f"--to {target} compares boxes; with --iou-type keypoints explain walks to "
                "--to ultralytics (pose mAP)"
            )
        from .explain_pose import explain_pose

        coco_sigmas, ul_sigmas = pose_sigmas(ds)
        return explain_pose(ds, coco_sigmas, ul_sigmas)
    rotated = iou_type == "obb" or (ds.gt.obb is not None and ds.pred.obb is not None)
    if target == "ultralytics":
        return _coco_to_ultralytics(ds, rotated)
    return _coco_to_voc(ds, use_07=target == "voc07", rotated=rotated)


def pose_sigmas(ds: Dataset) -> tuple[FloatArray, FloatArray]:
    """(the COCO protocol's sigmas, Ultralytics') of a dataset whose keypoints were
    resolved by Ultralytics' rule: the same unless that rule fell back to its default,
    where COCO takes its 17 (K = 17) or has none (a usage error naming both rules)."""
    from ..geometry.oks import COCO_SIGMAS, resolved_sigmas, ultralytics_sigmas

    table, source = resolved_sigmas(ds)
    sk = ds.skeleton
    k = table.shape[1]
    dims = sk.dims if sk is not None else 3
    if source != ultralytics_sigmas(k, dims)[1]:
        return table, table
    if k == COCO_SIGMAS.shape[0]:
        return COCO_SIGMAS[None, :].copy(), table
    raise UsageError(
        f"the keypoints have K = {k} and no sigmas: Ultralytics takes 1/K = {1 / k:.4g} for "
        "every keypoint, COCO has no default; pass --sigmas v1,v2,... (or a file) to compare "
        "the two on the same sigmas"
    )


def explain_files(
    predictions: Any,
    ground_truth: Any,
    *,
    source: str = "coco",
    target: str = "ultralytics",
    pred_format: str | None = None,
    gt_format: str | None = None,
    names: str | None = None,
    gt_names: str | None = None,
    pred_names: str | None = None,
    pred_ids: str = "auto",
    images: str | None = None,
    image_size: tuple[float, float] | None = None,
    unknown: str = "error",
    split: str | None = None,
    image_map: str | None = None,
    voc_origin: int = 0,
    iou_type: str = "bbox",
    angle_unit: str = "rad",
    sigmas: tuple[float, ...] | None = None,
) -> tuple[Explanation, list[str], list[str]]:
    """Read a prediction/ground-truth pair (any format, the default verb's input options) and
    :func:`explain` it. Returns the explanation, the input's info and warning lines."""
    if source not in SOURCES:
        raise UsageError(f"--from: expected one of {', '.join(SOURCES)}, got {source!r}")
    if target not in TARGETS:
        raise UsageError(f"--to: expected one of {', '.join(TARGETS)}, got {target!r}")
    if iou_type not in ("bbox", "obb", "keypoints"):
        raise UsageError(
            "explain walks between protocols on --iou-type bbox or obb (boxes) or keypoints "
            f"(OKS), got {iou_type!r}",
            option="iou_type",
        )
    from ..api import load_pair, read_line
    from ..options import LoadOptions, RunOptions

    # the loaders' options as the default verb builds and checks them (under --from's rules)
    run = RunOptions(
        protocol=source,
        iou_type=iou_type,
        load=LoadOptions(
            sigmas=sigmas,
            angle_unit=angle_unit,
            pred_format=pred_format,
            gt_format=gt_format,
            names=names,
            gt_names=gt_names,
            pred_names=pred_names,
            images=images,
            image_size=image_size,
            unknown=unknown,
            split=split,
            image_map=image_map,
            voc_origin=voc_origin,
            pred_ids=pred_ids,
        ),
    )
    run.validate()
    opts = run.loader_options()
    if iou_type == "keypoints":  # Ultralytics' sigma rule; the COCO run's: pose_sigmas()
        from dataclasses import replace

        opts = replace(opts, protocol="ultralytics")
    ds = load_pair(predictions, ground_truth, opts)
    rotated = ds.gt.obb is not None and ds.pred.obb is not None
    ex = explain(ds, source=source, target=target, iou_type=iou_type)
    return ex, [read_line(ds, "obb" if rotated else iou_type), *ds.info], ds.warnings
