"""Random COCO segm scenes built to stress the mask path (``--iou-type segm``).

Every kind of mask pycocotools reads: polygons (one or several per object), crowd regions as
uncompressed RLE (as COCO ships them), compressed RLE strings, empty masks; predictions as
compressed RLE (with or without ``bbox``: pycocotools' ``loadRes`` then takes w*h or the mask
area), as uncompressed RLE, or as polygons (``loadRes`` needs a bbox then). Predictions are
shifted, grown or shrunk copies of ground truths (IoUs near every threshold), random false
positives and wrong classes; scores from a small set (ties); images without predictions and
images without ground truth; small images, so masks touch the borders.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pycocotools import mask as mask_utils


def encode(m: np.ndarray) -> dict[str, Any]:
    """Compressed RLE of a binary (h, w) mask, counts as str (as JSON holds it)."""
    r = mask_utils.encode(np.asfortranarray(m.astype(np.uint8)))
    return {"size": [int(v) for v in r["size"]], "counts": r["counts"].decode()}


def uncompressed(m: np.ndarray) -> dict[str, Any]:
    """Uncompressed RLE: column-major run lengths starting with a background run."""
    flat = m.flatten(order="F").astype(np.int8)
    change = np.flatnonzero(np.diff(np.concatenate(([0], flat, [1 - flat[-1]]))))
    runs = np.diff(np.concatenate(([0], change)))
    return {"size": [int(m.shape[0]), int(m.shape[1])], "counts": [int(v) for v in runs]}


def _blob(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A rectangle or an ellipse (sometimes empty, sometimes touching a border)."""
    m = np.zeros((h, w), dtype=np.uint8)
    if rng.random() < 0.05:
        return m
    y0, x0 = int(rng.integers(-3, h)), int(rng.integers(-3, w))
    bh, bw = int(rng.integers(1, h + 2)), int(rng.integers(1, w + 2))
    if rng.random() < 0.5:
        m[max(y0, 0) : max(y0 + bh, 0), max(x0, 0) : max(x0 + bw, 0)] = 1
    else:
        yy, xx = np.mgrid[0:h, 0:w]
        cy, cx = y0 + bh / 2, x0 + bw / 2
        m[((yy - cy) / (bh / 2 + 0.5)) ** 2 + ((xx - cx) / (bw / 2 + 0.5)) ** 2 <= 1] = 1
    return m


def _polygons(rng: np.random.Generator, h: int, w: int) -> list[list[float]]:
    """One to three rectangles or triangles, corners possibly on or past a border."""
    out = []
    for _ in range(int(rng.integers(1, 4))):
        x0, y0 = float(rng.integers(-2, w)), float(rng.integers(-2, h))
        x1, y1 = x0 + float(rng.integers(1, w + 3)), y0 + float(rng.integers(1, h + 3))
        if rng.random() < 0.5:
            out.append([x0, y0, x1, y0, x1, y1, x0, y1])
        else:
            out.append([x0, y0, x1, y0 + 0.5, (x0 + x1) / 2, y1])
    return out


def _mask_of(segm: Any, h: int, w: int) -> np.ndarray:
    if isinstance(segm, list):
        rle = mask_utils.merge(mask_utils.frPyObjects(segm, h, w))
    elif isinstance(segm["counts"], list):
        rle = mask_utils.frPyObjects(segm, h, w)
    else:
        rle = {"size": segm["size"], "counts": segm["counts"].encode()}
    return np.asarray(mask_utils.decode(rle), dtype=np.uint8)


def _perturb(rng: np.random.Generator, m: np.ndarray) -> np.ndarray:
    if rng.random() < 0.3:  # an exact copy (IoU 1)
        return m.copy()
    out = np.roll(m, (int(rng.integers(-1, 2)), int(rng.integers(-1, 2))), axis=(0, 1))
    if rng.random() < 0.3:  # grow by one pixel
        g = out.copy()
        g[1:] |= out[:-1]
        g[:, 1:] |= out[:, :-1]
        out = g
    if rng.random() < 0.2:  # drop a column
        out[:, int(rng.integers(0, m.shape[1]))] = 0
    return out


def _bbox(m: np.ndarray) -> list[float]:
    ys, xs = np.nonzero(m)
    if ys.size == 0:
        return [0.0, 0.0, 0.0, 0.0]
    return [
        float(xs.min()),
        float(ys.min()),
        float(xs.max() - xs.min() + 1),
        float(ys.max() - ys.min() + 1),
    ]


def random_segm_scene(
    seed: int, *, n_images: int = 8, n_cats: int = 4
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(ground-truth dataset, results list). The results' kind is one per scene: compressed
    RLE without bbox, compressed RLE with bbox, uncompressed RLE with bbox, polygons with
    bbox, chosen by the seed."""
    rng = np.random.default_rng(seed)
    kind = ["rle", "rle+bbox", "raw+bbox", "poly+bbox"][seed % 4]
    images: list[dict[str, Any]] = []
    for i in rng.choice(np.arange(1, 1000), size=n_images, replace=False):
        h, w = int(rng.integers(8, 90)), int(rng.integers(8, 90))
        images.append({"id": int(i), "file_name": f"im{i}.jpg", "height": h, "width": w})
    cats = [{"id": c, "name": f"c{c}"} for c in range(1, n_cats + 1)]
    anns: list[dict[str, Any]] = []
    dets: list[dict[str, Any]] = []
    scores = [0.9, 0.75, 0.5, 0.5, 0.3, 0.1]
    for im in images:
        h, w = im["height"], im["width"]
        gts = []
        for _ in range(0 if rng.random() < 0.15 else int(rng.integers(0, 7))):
            crowd = rng.random() < 0.15
            r = rng.random()
            if crowd:
                m = _blob(rng, h, w)
                segm: Any = uncompressed(m)
            elif r < 0.5:
                segm = _polygons(rng, h, w)
                m = _mask_of(segm, h, w)
            else:
                m = _blob(rng, h, w)
                segm = encode(m)
            pixels = int(m.sum())
            ann = {
                "id": len(anns) + 1,
                "image_id": im["id"],
                "category_id": int(rng.integers(1, n_cats + 1)),
                "segmentation": segm,
                "area": float(pixels) if rng.random() < 0.8 else float(rng.integers(0, 300)),
                "bbox": _bbox(m),
                "iscrowd": int(crowd),
            }
            anns.append(ann)
            gts.append((ann, m))
        if rng.random() < 0.15:
            continue  # an image without predictions
        for _ in range(int(rng.integers(0, 9))):
            if gts and rng.random() < 0.75:
                g, gm = gts[int(rng.integers(0, len(gts)))]
                m = _perturb(rng, gm)
                cat = g["category_id"] if rng.random() < 0.85 else int(rng.integers(1, n_cats + 1))
            else:
                m = _blob(rng, h, w)
                cat = int(rng.integers(1, n_cats + 1))
            det: dict[str, Any] = {
                "image_id": im["id"],
                "category_id": cat,
                "score": float(scores[int(rng.integers(0, len(scores)))]),
            }
            if kind == "poly+bbox":  # polygons: a rectangle around the mask, or random ones
                x, y, bw, bh = _bbox(m)
                det["segmentation"] = (
                    [[x, y, x + bw, y, x + bw, y + bh, x, y + bh]]
                    if bw > 0 and rng.random() < 0.7
                    else _polygons(rng, h, w)
                )
                m = _mask_of(det["segmentation"], h, w)
            else:
                det["segmentation"] = uncompressed(m) if kind == "raw+bbox" else encode(m)
            if kind != "rle":
                det["bbox"] = _bbox(m)
            dets.append(det)
    return {"images": images, "categories": cats, "annotations": anns}, dets
