"""Semantic segmentation: label-map PNGs -> one confusion matrix -> per-class IoU, mIoU...

Streaming: images are read one pair at a time (matched by file stem) and only a
``K x (K + 1)`` integer confusion matrix is kept (rows: ground-truth class; columns:
predicted class, and a last column for labelled pixels the prediction marks with the ignore
index). Pixels whose ground truth is the ignore index are not counted.

Per class ``c``: ``IoU = TP / (TP + FP + FN)``, ``precision = TP / (TP + FP)``,
``recall = TP / (TP + FN)`` (mmsegmentation's per-class "Acc"), ``f1 = 2TP / (2TP + FP + FN)``
(the Dice coefficient). Summary: ``mIoU`` (mean IoU over classes present in the ground
truth or the prediction), ``fwIoU`` (IoU weighted by ground-truth pixel frequency), ``mAcc``
(mean recall over classes present in the ground truth), ``aAcc`` (correct / labelled
pixels), ``mDice``.

PNG decoding uses Pillow (imported here only): label maps come as 8-bit grey, palette
("P", the indices are the labels) or 16-bit grey PNGs with all five PNG row filters, which
pycocotools cannot read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, UsageError
from ..limits import check_num_classes
from ..loaders.files import check_file_arg, is_readable_member, read_text
from ..metrics import prf
from ..result import Result

IntArray = npt.NDArray[np.int64]
Progress = Callable[[str, int, int], None]
# summary keys, in order (gates are checked against them before the work)
SUMMARY_KEYS = ("mIoU", "fwIoU", "mAcc", "aAcc", "mDice", "images", "pixels")
_MODES = {"L", "P", "I;16", "I;16B", "I;16L", "I", "1"}


def _list_pngs(path: str, role: str) -> dict[str, str]:
    """stem -> file path of the ``.png`` files directly in folder ``path`` (or the one file)."""
    if not os.path.exists(path):
        raise InputError(path, None, f"no such file or folder ({role} label maps)")
    if not os.path.isdir(path):
        if not os.path.isfile(path):  # a FIFO or a device: Pillow would hang or read forever
            check_file_arg(path, expected="a PNG label map")
            raise InputError(path, None, "not a regular file, expected a PNG label map")
        return {os.path.splitext(os.path.basename(path))[0]: path}
    found: dict[str, str] = {}
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        stem, ext = os.path.splitext(entry.name)
        if ext.lower() != ".png" or not is_readable_member(entry.path):
            continue
        if stem in found:
            raise InputError(
                path,
                None,
                f"two label maps with stem {stem!r}: {os.path.basename(found[stem])}, {entry.name}",
            )
        found[stem] = entry.path
    if not found:
        raise InputError(path, None, f"no .png label maps in this folder ({role})")
    return found


def read_label_map(path: str) -> npt.NDArray[Any]:
    """A single-channel PNG as an (H, W) integer array (palette PNGs give their indices)."""
    import warnings

    from PIL import Image, UnidentifiedImageError

    try:
        # Pillow warns above MAX_IMAGE_PIXELS (89 M) and refuses above twice that (a
        # decompression bomb); the warning is not said on stderr, the refusal is an error
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(path)
        with im:
            w, h = im.size
            if w == 0 or h == 0:
                raise InputError(path, None, f"empty label map ({w} x {h} pixels)")
            if im.format != "PNG":
                raise InputError(path, None, f"expected a PNG label map, got {im.format}")
            if im.mode not in _MODES:
                raise InputError(
                    path,
                    None,
                    f"expected a single-channel label map (grey or palette PNG), got mode "
                    f"{im.mode} (colour-coded masks must be converted to class indices first)",
                )
            im.load()
            arr = np.asarray(im)
    except Image.DecompressionBombError:
        raise InputError(
            path,
            None,
            f"refused: more than {2 * (Image.MAX_IMAGE_PIXELS or 0):,} pixels "
            "(a decompression bomb guard; label maps are never that large)",
        ) from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise InputError(path, None, f"not a readable PNG: {exc}") from None
    if arr.size == 0:
        raise InputError(path, None, f"empty label map ({arr.shape[-1]} x {arr.shape[0]} pixels)")
    if arr.dtype == bool:
        arr = arr.astype(np.uint8)
    return arr


def _read_names(names: str | Sequence[str] | None, k: int | None) -> list[str]:
    """The class names (``k`` None: as many as given)."""
    if names is None:
        assert k is not None
        return [str(i) for i in range(k)]
    if not isinstance(names, str):
        out = [str(n) for n in names]
        if k is not None and len(out) != k:
            raise UsageError(f"names: expected {k} names (num_classes), got {len(out)}")
        return out
    try:
        text = read_text(names, expected="a UTF-8 text file, one class name per line")
    except InputError as exc:
        if "not UTF-8" in exc.reason:
            raise InputError(
                names, None, "expected a UTF-8 text file, one class name per line"
            ) from None
        raise
    lines = [ln.strip() for ln in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    for i, ln in enumerate(lines, start=1):
        if not ln:
            raise InputError(names, i, "empty class name (one name per line, line i = class i - 1)")
    if not lines:
        raise InputError(names, None, "no class names in this file")
    if k is not None and len(lines) != k:
        raise InputError(names, None, f"expected {k} names (--num-classes), got {len(lines)}")
    return lines


def _check_values(arr: npt.NDArray[Any], path: str, k: int, ignore: int | None, side: str) -> None:
    bad = (arr >= k) | (arr < 0)
    if ignore is not None:
        bad &= arr != ignore
    if bad.any():
        y, x = divmod(int(np.flatnonzero(bad.ravel())[0]), arr.shape[1])
        value = int(arr[y, x])
        n = int(np.count_nonzero(bad))
        tail = f" and is not the --ignore-index {ignore}" if ignore is not None else ""
        if ignore is None and value == 255:
            tail = " (255 usually marks unlabelled pixels: add --ignore-index 255)"
        raise InputError(
            path,
            f"pixel (x={x}, y={y})",
            f"{side} class {value} is outside 0..{k - 1} (--num-classes {k}){tail}; "
            f"{n} such pixel(s) in this image",
        )


def accumulate(
    conf: IntArray, gt: npt.NDArray[Any], pred: npt.NDArray[Any], k: int, ignore: int | None
) -> None:
    """Add one image pair to the ``k x (k + 1)`` confusion matrix ``conf`` in place."""
    g = gt.ravel().astype(np.int64)
    p = pred.ravel().astype(np.int64)
    if ignore is not None:
        keep = g != ignore
        if not keep.all():
            g, p = g[keep], p[keep]
        p = np.where(p == ignore, k, p)
    conf += np.bincount(g * (k + 1) + p, minlength=k * (k + 1)).reshape(k, k + 1)


def summarize(conf: IntArray) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Summary metrics and per-class rows of a ``k x (k + 1)`` confusion matrix."""
    k = conf.shape[0]
    tp = np.diag(conf[:, :k]).astype(np.int64)
    n_gt = conf.sum(axis=1).astype(np.int64)
    n_det = conf[:, :k].sum(axis=0).astype(np.int64)
    fp = n_det - tp
    fn = n_gt - tp
    union = tp + fp + fn
    total = int(n_gt.sum())
    rows: list[dict[str, Any]] = []
    iou: list[float | None] = []
    for c in range(k):
        t, f_p, f_n = int(tp[c]), int(fp[c]), int(fn[c])
        u = int(union[c])
        v = t / u if u else None
        iou.append(v)
        precision, recall, f1 = prf(t, f_p, f_n)
        rows.append(
            {
                "IoU": v,
                "precision": precision,
                "recall": recall,
                "f1": f1,
                "n_gt": int(n_gt[c]),
                "n_det": int(n_det[c]),
                "tp": t,
                "fp": f_p,
                "fn": f_n,
            }
        )

    def mean(values: list[float | None]) -> float | None:
        vs = [v for v in values if v is not None]
        return float(np.mean(vs)) if vs else None

    fw = None
    if total:  # classes with ground truth always have a defined IoU
        fw = float(sum(int(n_gt[c]) / total * (iou[c] or 0.0) for c in range(k) if n_gt[c]))
    summary = {
        "mIoU": mean(iou),
        "fwIoU": fw,
        "mAcc": mean([r["recall"] for r in rows]),
        "aAcc": int(tp.sum()) / total if total else None,
        "mDice": mean([r["f1"] for r in rows]),
    }
    return summary, rows


def evaluate_segment(
    pred_dir: str,
    gt_dir: str,
    *,
    num_classes: int | None = None,
    ignore_index: int | None = None,
    names: str | Sequence[str] | None = None,
    unknown: str = "error",
    progress: Progress | None = None,
) -> Result:
    """Semantic segmentation IoU of two folders of label-map PNGs matched by file stem.

    ``num_classes`` K (default: the number of ``names``): ground-truth and predicted values must be in ``0..K-1`` or equal
    ``ignore_index`` (ground-truth pixels with it are not scored; predicted pixels with it
    on a labelled pixel count as misses). ``names``: a file with one class name per line
    (or a list). A ground-truth image without a prediction, or a prediction without a
    ground truth, is an error; ``unknown="skip"`` leaves them out and counts them.
    ``progress(label, done, total)`` is called after each image.
    """
    if num_classes is None:
        if names is None:
            raise UsageError("--num-classes: give the number of classes K, or --names FILE")
        num_classes = len(_read_names(names, None))
    if (
        isinstance(num_classes, bool)
        or not isinstance(num_classes, (int, np.integer))
        or num_classes < 1
    ):
        raise UsageError(f"--num-classes: expected a positive integer, got {num_classes!r}")
    k = int(num_classes)
    check_num_classes(k)
    if ignore_index is not None and (
        isinstance(ignore_index, bool)
        or not isinstance(ignore_index, (int, np.integer))
        or ignore_index < 0
    ):
        raise UsageError(f"--ignore-index: expected a non-negative integer, got {ignore_index!r}")
    if ignore_index is not None and 0 <= ignore_index < k:
        raise UsageError(
            f"--ignore-index {ignore_index} is a class index (0..{k - 1}); use a value >= --num-classes"
        )
    if unknown not in ("error", "skip"):
        raise UsageError(f"--unknown: expected error or skip, got {unknown!r}")
    class_names = _read_names(names, k)
    gts = _list_pngs(gt_dir, "ground truth")
    preds = _list_pngs(pred_dir, "predictions")
    if os.path.isfile(gt_dir) and os.path.isfile(pred_dir):
        preds = {next(iter(gts)): next(iter(preds.values()))}  # two files: one pair
    no_pred = [s for s in gts if s not in preds]
    no_gt = [s for s in preds if s not in gts]
    skipped: dict[str, int] = {}
    if unknown != "skip":
        if no_gt:
            shown = ", ".join(no_gt[:5]) + (" ..." if len(no_gt) > 5 else "")
            raise InputError(
                preds[no_gt[0]],
                None,
                f"no ground-truth label map with this stem in {gt_dir} ({len(no_gt)} such "
                f"prediction(s): {shown}; use --unknown skip to leave them out)",
            )
        if no_pred:
            shown = ", ".join(no_pred[:5]) + (" ..." if len(no_pred) > 5 else "")
            raise InputError(
                gts[no_pred[0]],
                None,
                f"no prediction with this stem in {pred_dir} ({len(no_pred)} such ground-truth "
                f"image(s): {shown}; use --unknown skip to leave them out)",
            )
    else:
        skipped = {"missing_prediction": len(no_pred), "unknown_image": len(no_gt)}
    stems = [s for s in gts if s in preds]
    conf = np.zeros((k, k + 1), dtype=np.int64)
    total = len(stems)
    for done, stem in enumerate(stems, start=1):
        gp, pp = gts[stem], preds[stem]
        gt = read_label_map(gp)
        pred = read_label_map(pp)
        if gt.shape != pred.shape:
            raise InputError(
                pp,
                None,
                f"size {pred.shape[1]} x {pred.shape[0]} differs from the ground truth's "
                f"{gt.shape[1]} x {gt.shape[0]} ({gp})",
            )
        _check_values(gt, gp, k, ignore_index, "ground-truth")
        _check_values(pred, pp, k, ignore_index, "predicted")
        accumulate(conf, gt, pred, k, ignore_index)
        if progress is not None:
            progress("images", done, total)
    summary, rows = summarize(conf)
    summary["images"] = total
    summary["pixels"] = int(conf.sum())
    per_class = [{"category_id": c, "name": class_names[c], **rows[c]} for c in range(k)]
    params: dict[str, Any] = {
        "task": "segment",
        "num_classes": k,
        "ignore_index": ignore_index,
        "predictions": pred_dir,
        "ground_truth": gt_dir,
        "unknown": unknown,
    }
    result = Result(summary=summary, per_class=per_class, params=params)
    if skipped:
        params["skipped"] = skipped
        if skipped["missing_prediction"]:
            result.warnings.append(
                f"skipped {skipped['missing_prediction']} ground-truth image(s) without a prediction"
            )
        if skipped["unknown_image"]:
            result.warnings.append(
                f"skipped {skipped['unknown_image']} prediction(s) without a ground truth"
            )
    result.info.append(
        f"read {total:,} image pairs, {k:,} classes, {summary['pixels']:,} labelled pixels"
    )
    if total == 0:
        result.warnings.append("no image pairs were evaluated")
    return result


__all__ = ["accumulate", "evaluate_segment", "read_label_map", "summarize"]
