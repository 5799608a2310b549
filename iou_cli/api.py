"""The library's front door: ``load`` and ``evaluate`` (no printing, no exiting)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .data import Dataset, Side
from .errors import UsageError
from .loaders import FORMATS, LoadOptions
from .result import Result

PROTOCOLS = ("coco", "voc", "voc07")
IOU_TYPES = ("bbox", "segm")


def load(path: str, *, role: str = "gt", fmt: str | None = None, iou_type: str = "bbox") -> Side:
    """Read one side (``role`` "pred" or "gt") into columns."""
    from .loaders.sniff import load_side

    return load_side(path, role=role, fmt=fmt, opts=LoadOptions(iou_type=iou_type))


def load_pair(pred_path: str, gt_path: str, opts: LoadOptions) -> Dataset:
    from .loaders.sniff import load_dataset

    ds = load_dataset(pred_path, gt_path, opts)
    if opts.iou_type == "segm":
        from .masks import prepare_masks

        ds = prepare_masks(ds)
    return ds


def evaluate(
    predictions: str,
    ground_truth: str,
    *,
    protocol: str = "coco",
    iou_type: str = "bbox",
    iou_thr: float = 0.5,
    score_thr: float | None = None,
    max_dets: Sequence[int] = (1, 10, 100),
    iou_thrs: Sequence[float] | None = None,
    honor_ignore: bool = False,
    plus_one: bool = False,
    matches: bool = False,
    pred_format: str | None = None,
    gt_format: str | None = None,
    names: str | None = None,
    gt_names: str | None = None,
    pred_names: str | None = None,
    images: str | None = None,
    image_size: tuple[float, float] | None = None,
    unknown: str = "error",
    progress: Callable[[str, int, int], None] | None = None,
    dataset: Dataset | None = None,
) -> Result:
    """Evaluate ``predictions`` against ``ground_truth`` (paths; any supported format).

    ``protocol="coco"`` reproduces pycocotools' COCOeval; ``"voc"``/``"voc07"`` the VOC
    devkit's all-point / 11-point AP at ``iou_thr``. The operating point (TP/FP/FN,
    precision, recall, F1, mean IoU) is taken at ``iou_thr`` and ``score_thr`` (default: the
    confidence that maximises F1).
    """
    check_options(
        protocol=protocol,
        iou_type=iou_type,
        iou_thr=iou_thr,
        score_thr=score_thr,
        max_dets=max_dets,
        iou_thrs=iou_thrs,
        unknown=unknown,
        formats=(pred_format, gt_format),
    )
    opts = LoadOptions(
        pred_format=pred_format,
        gt_format=gt_format,
        iou_type=iou_type,
        names=names,
        gt_names=gt_names,
        pred_names=pred_names,
        images=images,
        image_size=image_size,
        unknown=unknown,
        progress=progress,
    )
    ds = dataset if dataset is not None else load_pair(predictions, ground_truth, opts)
    return evaluate_dataset(
        ds,
        protocol=protocol,
        iou_type=iou_type,
        iou_thr=iou_thr,
        score_thr=score_thr,
        max_dets=max_dets,
        iou_thrs=iou_thrs,
        honor_ignore=honor_ignore,
        plus_one=plus_one,
        matches=matches,
    )


def evaluate_dataset(
    ds: Dataset,
    *,
    protocol: str = "coco",
    iou_type: str = "bbox",
    iou_thr: float = 0.5,
    score_thr: float | None = None,
    max_dets: Sequence[int] = (1, 10, 100),
    iou_thrs: Sequence[float] | None = None,
    honor_ignore: bool = False,
    plus_one: bool = False,
    matches: bool = False,
) -> Result:
    if protocol == "coco":
        from .protocols.coco import IOU_THRS, CocoParams, evaluate_coco

        params = CocoParams(
            iou_type=iou_type,
            iou_thrs=IOU_THRS.copy() if iou_thrs is None else np.asarray(iou_thrs, dtype=float),
            max_dets=tuple(int(m) for m in max_dets),
            honor_ignore=honor_ignore,
            op_iou_thr=float(iou_thr),
            score_thr=score_thr,
            want_matches=matches,
        )
        result = evaluate_coco(ds, params)
    else:
        if iou_type != "bbox":
            raise UsageError(
                f"--protocol {protocol} evaluates boxes only (got --iou-type {iou_type})"
            )
        from .protocols.voc import evaluate_voc

        result = evaluate_voc(
            ds,
            iou_thr=float(iou_thr),
            use_07=protocol == "voc07",
            plus_one=plus_one,
            score_thr=score_thr,
        )
        if not matches:
            result.matches = None
    from .checks import warnings_for, zero_ap_warning

    result.info.extend(ds.info)
    result.warnings.extend(ds.warnings)
    result.warnings.extend(
        warnings_for(ds, max_dets=max(int(m) for m in max_dets) if protocol == "coco" else None)
    )
    zero = zero_ap_warning(ds, result.summary)
    if zero:
        result.warnings.append(zero)
    if ds.skipped:
        n = sum(ds.skipped.values())
        if n:
            result.warnings.append(
                f"skipped {n} prediction(s) for images or categories the ground truth does not "
                f"know ({ds.skipped.get('unknown_image', 0)} image, "
                f"{ds.skipped.get('unknown_category', 0)} category)"
            )
    return result


def check_options(
    *,
    protocol: str,
    iou_type: str,
    iou_thr: float,
    score_thr: float | None,
    max_dets: Sequence[int],
    iou_thrs: Sequence[float] | None,
    unknown: str,
    formats: Sequence[str | None],
) -> None:
    if protocol not in PROTOCOLS:
        raise UsageError(f"--protocol: expected one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    if iou_type not in IOU_TYPES:
        raise UsageError(f"--iou-type: expected one of {', '.join(IOU_TYPES)}, got {iou_type!r}")
    if not (0.0 < iou_thr <= 1.0):
        raise UsageError(f"--tp-iou: expected an IoU in (0, 1], got {iou_thr:g}")
    if score_thr is not None and not (0.0 <= score_thr <= 1.0):
        raise UsageError(f"--score-thr: expected a confidence in [0, 1], got {score_thr:g}")
    md = list(max_dets)
    if not md or any(m < 1 for m in md) or md != sorted(set(md)):
        raise UsageError(
            f"--max-dets: expected increasing positive integers such as 1,10,100, got {md}"
        )
    if iou_thrs is not None:
        th = list(iou_thrs)
        if not th or any(not (0 < t <= 1) for t in th) or th != sorted(set(th)):
            raise UsageError(f"--iou-thrs: expected increasing thresholds in (0, 1], got {th}")
    if unknown not in ("error", "skip"):
        raise UsageError(f"--unknown: expected error or skip, got {unknown!r}")
    for f in formats:
        if f is not None and f not in FORMATS:
            raise UsageError(f"format {f!r}: expected one of {', '.join(FORMATS)}")
