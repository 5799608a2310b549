"""Warnings for suspicious but legal input: said once each, on stderr, never an error.

Each check is one vectorised pass over the columns of a :class:`~iou_cli.data.Dataset`:

* prediction scores outside [0, 1] (legal: some models emit logits, but often a mistake);
* boxes that lie entirely outside their image (only when image sizes are known, in pixels);
* more predictions of one class on one image than the largest maxDets (COCO keeps only the
  highest-scoring ones, per image and category as pycocotools does);
* classes that have predictions but no ground truth anywhere (their AP is undefined).
"""

from __future__ import annotations

import numpy as np

from .data import Boxes, Dataset, first_few


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _first(ds: Dataset, role: str, mask: np.ndarray, n: int = 3) -> str:
    """`` (first: preds.json:[3].bbox, ...)``: where the first few offending boxes are."""
    if ds.locate is None or not mask.any():
        return ""
    rows = np.flatnonzero(mask)[:n]
    more = ", ..." if int(np.count_nonzero(mask)) > n else ""
    return f" (first: {', '.join(ds.locate(role, int(r)) for r in rows)}{more})"


def _outside_mask(boxes: Boxes, width: np.ndarray, height: np.ndarray) -> np.ndarray:
    """Boxes that do not touch the inside of their image (sizes known only)."""
    mask = np.zeros(len(boxes), dtype=bool)
    if not len(boxes):
        return mask
    w = width[boxes.image]
    h = height[boxes.image]
    known = np.isfinite(w) & np.isfinite(h)
    if not known.any():
        return mask
    if known.all():  # (views: no masked copy of 4 columns)
        x1, y1, x2, y2 = (boxes.xyxy[:, j] for j in range(4))
    else:
        x1, y1, x2, y2 = (boxes.xyxy[known, j] for j in range(4))
        w, h = w[known], h[known]
    iw = np.minimum(x2, w) - np.maximum(x1, 0.0)
    ih = np.minimum(y2, h) - np.maximum(y1, 0.0)
    # a box with extent that meets the image only on its border is outside too;
    # a zero-size box is outside only when it lies beyond the border
    out = (iw < 0) | (ih < 0) | ((iw == 0) & (x2 > x1)) | ((ih == 0) & (y2 > y1))
    mask[known] = out
    return mask


DENSE_SLACK = 1 << 20  # (image, class) pairs beyond 4 x predictions still counted by a table


def warnings_for(ds: Dataset, *, max_dets: int | None) -> list[str]:
    """The warnings for ``ds``; ``max_dets`` is the largest maxDets (None: no such limit)."""
    out: list[str] = []
    pred, gt = ds.pred, ds.gt

    score = pred.score
    bad = np.isfinite(score) & ((score < 0.0) | (score > 1.0))
    n_bad = int(np.count_nonzero(bad))
    if n_bad:
        lo, hi = float(score[bad].min()), float(score[bad].max())
        out.append(
            f"{_plural(n_bad, 'prediction score')} outside [0, 1] (from {lo:g} to {hi:g}): "
            "rankings still work, but --score-thr and the operating point assume "
            "probabilities" + _first(ds, "pred", bad)
        )

    if ds.pixel_units and len(ds.images):
        out_pred = _outside_mask(pred, ds.images.width, ds.images.height)
        out_gt = _outside_mask(gt, ds.images.width, ds.images.height)
        n_pred, n_gt = int(np.count_nonzero(out_pred)), int(np.count_nonzero(out_gt))
        if n_pred or n_gt:
            parts = []
            if n_pred:
                parts.append(_plural(n_pred, "predicted box", "predicted boxes"))
            if n_gt:
                parts.append(_plural(n_gt, "ground-truth box", "ground-truth boxes"))
            verb = "lies" if n_pred + n_gt == 1 else "lie"
            out.append(
                f"{' and '.join(parts)} {verb} entirely outside {'its' if verb == 'lies' else 'their'} "
                "image (check the box format and the image sizes)"
                + _first(ds, "pred", out_pred)
                + _first(ds, "gt", out_gt)
            )

    if max_dets is not None and len(pred):
        n_cat = max(len(ds.categories), int(pred.category.max()) + 1)
        group = pred.image.astype(np.int64) * n_cat + pred.category
        n_groups = (int(pred.image.max()) + 1) * n_cat
        if n_groups <= 4 * len(pred) + DENSE_SLACK:  # dense: counted, not sorted
            counts = np.bincount(group, minlength=n_groups)
            uniq = np.flatnonzero(counts)
            counts = counts[uniq]
        else:
            uniq, counts = np.unique(group, return_counts=True)
        over = int(np.count_nonzero(counts > max_dets))
        if over:
            pairs = [
                f"image {ds.images.keys[int(g // n_cat)]} / {ds.categories.label(int(g % n_cat))}"
                for g in uniq[counts > max_dets][:3]
            ]
            out.append(
                f"{_plural(over, 'image/class pair')} {'has' if over == 1 else 'have'} more "
                f"than {max_dets} predictions (at most {int(counts.max())}): only the "
                f"{max_dets} highest-scoring of each are scored (--max-dets)"
                f" (first: {', '.join(pairs)}{', ...' if over > 3 else ''})"
            )

    if len(pred) and len(ds.categories):
        k = len(ds.categories)
        has_pred = np.bincount(pred.category, minlength=k)[:k] > 0
        has_gt = np.bincount(gt.category, minlength=k)[:k] > 0 if len(gt) else np.zeros(k, bool)
        lonely = np.flatnonzero(has_pred & ~has_gt)
        if lonely.size:
            names = [ds.categories.label(int(c)) for c in lonely]
            n = len(names)
            out.append(
                f"{_plural(n, 'class', 'classes')} {'has' if n == 1 else 'have'} predictions "
                f"but no ground truth, so {'its' if n == 1 else 'their'} AP is undefined: "
                f"{first_few(names)}"
            )
    return out


def zero_ap_warning(ds: Dataset, summary: dict[str, object]) -> str | None:
    """A warning when AP is 0 although predictions overlap ground truths of their image.

    That combination is almost always a reading mistake, not a bad model: the YOLO column
    order, the box format, the image sizes or the class mapping. Checked only when the
    primary AP is exactly 0 (so it costs nothing on a normal run); class-agnostic IoU per
    image (IoU > 0), over at most the first 2,000 images that have both.
    """
    key = "AP" if "AP" in summary else "mAP" if "mAP" in summary else None
    if key is None or summary.get(key) != 0.0 or not len(ds.pred) or not len(ds.gt):
        return None
    from .geometry.iou import iou

    pred, gt = ds.pred, ds.gt
    p_order = np.argsort(pred.image, kind="stable")
    g_order = np.argsort(gt.image, kind="stable")
    common = np.intersect1d(pred.image, gt.image)[:2000]
    p_lo = np.searchsorted(pred.image[p_order], common, side="left")
    p_hi = np.searchsorted(pred.image[p_order], common, side="right")
    g_lo = np.searchsorted(gt.image[g_order], common, side="left")
    g_hi = np.searchsorted(gt.image[g_order], common, side="right")
    n = 0
    for a, b, c, d in zip(p_lo, p_hi, g_lo, g_hi, strict=True):
        m = iou(pred.xyxy[p_order[a:b]], gt.xyxy[g_order[c:d]])
        n += int(np.count_nonzero(m.max(axis=1) > 0.0))
    if not n:
        return None
    return (
        f"{key} is 0, yet {_plural(n, 'prediction')} "
        f"{'overlaps a ground truth of its' if n == 1 else 'overlap ground truths of their'} "
        "image (any class): check the class names or ids, the box format, the "
        "image sizes and, for YOLO predictions, the column order (--pred-format yolo or "
        "yolo-darknet)"
    )
