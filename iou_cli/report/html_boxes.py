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


def _outcomes(result: Any) -> dict[int, list[tuple[str, str, npt.NDArray[np.float64]]]] | None:
    """Per image index: ``(outcome, class label, (4, 2) points)`` of each shape."""
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
    label = ds.categories.label
    shapes: dict[int, list[tuple[str, str, npt.NDArray[np.float64]]]] = {}
    g_rows = np.arange(len(ds.gt), dtype=np.int64)
    g_pts = _corners(ds.gt, g_rows)
    counted = table.gt_counts
    for r in g_rows.tolist():
        kind = "GT" if matched[r] else ("FN" if counted[r] else "NC")
        shapes.setdefault(int(ds.gt.image[r]), []).append(
            (kind, str(label(int(ds.gt.category[r]))), g_pts[r])
        )
    p_pts = _corners(ds.pred, det)
    for i, r in enumerate(det.tolist()):
        kind = "TP" if taken[i] >= 0 else "FP"
        shapes.setdefault(int(ds.pred.image[r]), []).append(
            (kind, str(label(int(ds.pred.category[r]))), p_pts[i])
        )
    return shapes


def _svg(shapes: list[tuple[str, str, npt.NDArray[np.float64]]], size: tuple[float, float]) -> str:
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
    shapes = _outcomes(result)
    if not shapes:
        return ""
    ds = result.evaluation.dataset

    def errors(i: int) -> int:
        return sum(1 for k, _, _ in shapes[i] if k in ("FP", "FN"))

    worst = [i for i in sorted(shapes, key=lambda i: (-errors(i), i)) if errors(i)][:n]
    if not worst:
        return ""
    cells = []
    for i in worst:
        items = shapes[i]
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
