"""The HTML report's drawings of the worst images: each image's ground truth and predictions
at the operating point, as SVG outlines (no pixels are read: the drawings show where the
boxes are, not what they cover). Rotated boxes are drawn as their four corners, axis-aligned
boxes as rectangles. Every text from the inputs (image keys, class names) is escaped."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..text import html_text as esc

MAX_IMAGES = 6
MAX_SHAPES = 400  # per drawing; the rest are counted in its caption
# outcome -> (stroke colour, dash, legend text)
STYLE = {
    "TP": ("#1f6feb", "", "true positive"),
    "FP": ("#d1242f", "", "false positive"),
    "GT": ("#1a7f37", "", "matched ground truth"),
    "FN": ("#bf8700", "6 3", "missed ground truth"),
    "NC": ("#8c959f", "2 3", "not counted (crowd, difficult, ignore)"),
}


def _corners(boxes: Any, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """``(len(rows), 4, 2)`` outline points: the rotated corners, or the rectangle."""
    if boxes.obb is not None:
        out: npt.NDArray[np.float64] = boxes.obb[rows].reshape(-1, 4, 2)
        return out
    x1, y1, x2, y2 = (boxes.xyxy[rows, k] for k in range(4))
    return np.stack([x1, y1, x2, y1, x2, y2, x1, y2], axis=1).reshape(-1, 4, 2)


def _operating_point(result: Any) -> tuple[int, float | None] | None:
    ev = getattr(result, "evaluation", None)
    table = getattr(ev, "table", None)
    if table is None or not len(table.iou_thrs):
        return None
    iou_thr = result.summary.get("iou_thr")
    t = 0 if iou_thr is None else int(np.argmin(np.abs(table.iou_thrs - float(iou_thr))))
    thr = result.summary.get("score_thr")
    return t, (None if thr is None else float(thr))


Shapes = list[tuple[str, str, npt.NDArray[np.float64]]]


def _outcomes(result: Any, n: int) -> dict[int, Shapes] | None:
    """For the ``n`` images with the most false positives plus missed ground truths (ties:
    image order), ``(outcome, class label, (4, 2) points)`` of each shape; None without a
    match table. Counting is vectorised; only the drawn images' shapes are built."""
    op = _operating_point(result)
    if op is None:
        return None
    t, score_thr = op
    ev = result.evaluation
    ds, table = ev.dataset, ev.table
    g, _, ign = table.dense(t)
    keep = ~ign if score_thr is None else ~ign & (table.det_score >= score_thr)
    det = table.det[keep]
    taken = g[keep]
    matched = np.zeros(len(ds.gt), dtype=bool)
    matched[taken[taken >= 0]] = True
    counted = np.asarray(table.gt_counts, dtype=bool)
    n_img = len(ds.images)
    fp = np.bincount(ds.pred.image[det[taken < 0]], minlength=n_img)
    fn = np.bincount(ds.gt.image[counted & ~matched], minlength=n_img)
    errors = fp + fn
    worst = [int(i) for i in np.argsort(-errors, kind="stable")[:n] if errors[i] > 0]
    label = ds.categories.label
    shapes: dict[int, Shapes] = {i: [] for i in worst}
    g_rows = np.flatnonzero(np.isin(ds.gt.image, worst))
    for r, q in zip(g_rows.tolist(), _corners(ds.gt, g_rows), strict=True):
        kind = "GT" if matched[r] else ("FN" if counted[r] else "NC")
        shapes[int(ds.gt.image[r])].append((kind, str(label(int(ds.gt.category[r]))), q))
    on = np.isin(ds.pred.image[det], worst)
    for r, hit, q in zip(
        det[on].tolist(), (taken[on] >= 0).tolist(), _corners(ds.pred, det[on]), strict=True
    ):
        kind = "TP" if hit else "FP"
        shapes[int(ds.pred.image[r])].append((kind, str(label(int(ds.pred.category[r]))), q))
    return shapes


def _svg(shapes: Shapes, size: tuple[float, float]) -> str:
    pts = np.concatenate([s[2] for s in shapes]) if shapes else np.zeros((0, 2))
    finite = pts[np.isfinite(pts).all(axis=1)]
    w, h = size
    sized = bool(np.isfinite(w) and np.isfinite(h) and w > 0 and h > 0)
    if finite.size:  # zoomed on the boxes (small objects on big images stay visible)
        x0, y0 = (float(v) for v in finite.min(axis=0))
        x1, y1 = (float(v) for v in finite.max(axis=0))
    elif sized:
        x0, y0, x1, y1 = 0.0, 0.0, float(w), float(h)
    else:
        x0, y0, x1, y1 = 0.0, 0.0, 1.0, 1.0
    frame = (0.0, 0.0, float(w), float(h)) if sized else (x0, y0, x1, y1)
    pad = 0.05 * max(x1 - x0, y1 - y0, 1e-9)
    view = f"{x0 - pad:.6g} {y0 - pad:.6g} {x1 - x0 + 2 * pad:.6g} {y1 - y0 + 2 * pad:.6g}"
    body = [
        f'<rect x="{frame[0]:.6g}" y="{frame[1]:.6g}" width="{frame[2] - frame[0]:.6g}" '
        f'height="{frame[3] - frame[1]:.6g}" fill="#f6f8fa" stroke="#d0d7de" '
        'vector-effect="non-scaling-stroke"/>'
    ]
    order = {"NC": 0, "FN": 1, "GT": 2, "FP": 3, "TP": 4}  # predictions on top
    for kind, name, q in sorted(shapes, key=lambda s: order[s[0]])[:MAX_SHAPES]:
        if not np.isfinite(q).all():
            continue
        colour, dash, text = STYLE[kind]
        points = " ".join(f"{x:.6g},{y:.6g}" for x, y in q)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(
            f'<polygon points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"'
            f'{dash_attr} vector-effect="non-scaling-stroke"><title>{esc(text)}: '
            f"{esc(name)}</title></polygon>"
        )
    return (
        f'<svg class="boxes" viewBox="{view}" preserveAspectRatio="xMidYMid meet" '
        f'role="img" xmlns="http://www.w3.org/2000/svg">{"".join(body)}</svg>'
    )


def worst_image_drawings(result: Any, n: int = MAX_IMAGES) -> str:
    """The section ("" when the result has no match table or no image has an error): the
    ``n`` images with the most false positives plus missed ground truths, drawn."""
    shapes = _outcomes(result, n)
    if not shapes:
        return ""
    ds = result.evaluation.dataset
    cells = []
    for i, items in shapes.items():
        counts = {k: sum(1 for s in items if s[0] == k) for k in STYLE}
        more = len(items) - MAX_SHAPES
        caption = (
            f"{esc(ds.images.keys[i])}: {counts['TP']} TP, {counts['FP']} FP, "
            f"{counts['FN']} missed" + (f" ({more} more shapes not drawn)" if more > 0 else "")
        )
        size = (float(ds.images.width[i]), float(ds.images.height[i]))
        cells.append(f"<figure>{_svg(items, size)}<figcaption>{caption}</figcaption></figure>")
    legend = " ".join(
        f'<span style="color:{c}">&#9632;</span> {esc(t)}' for c, _, t in STYLE.values()
    )
    rotated = ds.gt.obb is not None or ds.pred.obb is not None
    what = "rotated boxes by their four corners" if rotated else "boxes"
    return (
        '<section><h2>Worst images, drawn</h2><div class="drawings">'
        + "".join(cells)
        + f'</div><p class="note">At the operating point (IoU and score threshold of the '
        f"summary); {what}, outlines only (no pixels are read), zoomed on the boxes inside "
        f"the image frame (grey). {legend}</p></section>"
    )
