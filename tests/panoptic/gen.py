"""Generated COCO panoptic sets for the tests: small RGB PNGs written with Pillow.

An image is an (H, W) array of segment ids plus its ``segments_info``; :func:`write_set`
writes ``root/NAME.json`` and the folder ``root/NAME/`` beside it, as panopticapi expects.
:func:`random_pair` draws a ground truth (rectangles and ellipses, VOID gaps, crowd
segments) and a prediction from it (jittered shapes with new ids, some relabelled, some
spurious, some missing), which puts IoUs on both sides of 0.5.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

CATEGORIES = [
    {"id": 1, "name": "person", "isthing": 1},
    {"id": 2, "name": "car", "isthing": 1},
    {"id": 3, "name": "dog", "isthing": 1},
    {"id": 7, "name": "sky", "isthing": 0},
    {"id": 9, "name": "road", "isthing": 0},
    {"id": 11, "name": "grass", "isthing": 0},
]


def to_rgb(ids: np.ndarray) -> np.ndarray:
    ids = np.asarray(ids, dtype=np.uint32)
    return np.stack([ids & 255, (ids >> 8) & 255, (ids >> 16) & 255], axis=-1).astype(np.uint8)


def segments(ids: np.ndarray, cats: dict[int, int], crowd: set[int] = frozenset()) -> list[dict]:
    """segments_info of the ids present in ``ids`` (``cats``: id -> category_id)."""
    out = []
    vals, counts = np.unique(ids, return_counts=True)
    for v, n in zip(vals.tolist(), counts.tolist(), strict=True):
        if v == 0:
            continue
        ys, xs = np.nonzero(ids == v)
        out.append(
            {
                "id": v,
                "category_id": cats[v],
                "area": n,
                "bbox": [int(xs.min()), int(ys.min()), int(np.ptp(xs) + 1), int(np.ptp(ys) + 1)],
                "iscrowd": int(v in crowd),
            }
        )
    return out


def write_set(
    root: Path,
    name: str,
    images: list[tuple[Any, np.ndarray, list[dict]]],
    categories: list[dict] | None = None,
    *,
    with_images: bool = True,
) -> Path:
    """Write ``root/name.json`` and ``root/name/<image_id>.png``; returns the JSON path."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    anns, imgs = [], []
    for image_id, ids, segs in images:
        fname = f"{image_id}.png"
        Image.fromarray(to_rgb(ids), mode="RGB").save(folder / fname)
        anns.append({"image_id": image_id, "file_name": fname, "segments_info": segs})
        h, w = ids.shape
        imgs.append({"id": image_id, "file_name": f"{image_id}.jpg", "width": w, "height": h})
    doc: dict[str, Any] = {"annotations": anns, "categories": categories or CATEGORIES}
    if with_images:
        doc["images"] = imgs
    path = root / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def _paint(canvas: np.ndarray, rng: np.random.Generator, value: int, box: tuple) -> None:
    y0, x0, y1, x1 = box
    if rng.random() < 0.5:
        canvas[y0:y1, x0:x1] = value
        return
    yy, xx = np.ogrid[: canvas.shape[0], : canvas.shape[1]]
    cy, cx = (y0 + y1) / 2, (x0 + x1) / 2
    ry, rx = max((y1 - y0) / 2, 1), max((x1 - x0) / 2, 1)
    canvas[((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1] = value


def random_pair(
    rng: np.random.Generator,
    h: int = 48,
    w: int = 64,
    n: int = 8,
    categories: list[dict] = CATEGORIES,
) -> tuple[tuple[np.ndarray, list[dict]], tuple[np.ndarray, list[dict]]]:
    """One image: (gt ids, gt segments_info), (pred ids, pred segments_info)."""
    cat_ids = [c["id"] for c in categories]
    thing = {c["id"]: c["isthing"] for c in categories}
    gt = np.zeros((h, w), dtype=np.uint32)
    pred = np.zeros((h, w), dtype=np.uint32)
    if rng.random() < 0.7:  # a stuff background with a VOID border
        gt[2:-2, 2:-2] = 1
    gcat = {1: int(rng.choice([c for c in cat_ids if not thing[c]] or cat_ids))}
    pcat: dict[int, int] = {}
    crowd: set[int] = set()
    boxes = []
    for k in range(2, n + 2):
        y0, x0 = int(rng.integers(0, h - 4)), int(rng.integers(0, w - 4))
        box = (y0, x0, y0 + int(rng.integers(3, h // 2)), x0 + int(rng.integers(3, w // 2)))
        gid = k + int(rng.integers(0, 3)) * 1000  # sparse ids
        while gid in gcat:
            gid += 1
        _paint(gt, rng, gid, box)
        gcat[gid] = int(rng.choice(cat_ids))
        if thing[gcat[gid]] and rng.random() < 0.15:
            crowd.add(gid)
        boxes.append((gid, box))
    if rng.random() < 0.3:  # a VOID hole
        y0, x0 = int(rng.integers(0, h - 8)), int(rng.integers(0, w - 8))
        gt[y0 : y0 + 8, x0 : x0 + 12] = 0
    if 1 in gcat and rng.random() < 0.8:  # the background, predicted roughly
        pred[int(rng.integers(0, 5)) : h - int(rng.integers(0, 5)), :] = 5_000_001
        pcat[5_000_001] = gcat[1] if rng.random() < 0.8 else int(rng.choice(cat_ids))
    for gid, (y0, x0, y1, x1) in boxes:
        if rng.random() < 0.15:
            continue  # missed
        j = [int(v) for v in rng.integers(-4, 5, size=4)]
        box = (max(0, y0 + j[0]), max(0, x0 + j[1]), max(y0 + j[0] + 2, y1 + j[2]), x1 + j[3])
        pid = int(rng.integers(1, 1 << 24))
        while pid in pcat:
            pid = int(rng.integers(1, 1 << 24))
        _paint(pred, rng, pid, box)
        pcat[pid] = gcat[gid] if rng.random() < 0.85 else int(rng.choice(cat_ids))
    for _ in range(int(rng.integers(0, 3))):  # spurious
        y0, x0 = int(rng.integers(0, h - 4)), int(rng.integers(0, w - 4))
        pid = int(rng.integers(1, 1 << 24))
        while pid in pcat:
            pid = int(rng.integers(1, 1 << 24))
        _paint(
            pred, rng, pid, (y0, x0, y0 + int(rng.integers(2, 12)), x0 + int(rng.integers(2, 12)))
        )
        pcat[pid] = int(rng.choice(cat_ids))
    return (gt, segments(gt, gcat, crowd)), (pred, segments(pred, pcat))


def random_sets(root: Path, seed: int, n_images: int = 12) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    gts, preds = [], []
    for i in range(n_images):
        (g, gs), (p, ps) = random_pair(rng, n=int(rng.integers(1, 12)))
        gts.append((i + 1, g, gs))
        preds.append((i + 1, p, ps))
    return write_set(root, "pred", preds), write_set(root, "gt", gts)
