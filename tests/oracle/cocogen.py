"""Random COCO scenes built to stress every corner of the COCO protocol.

Integer coordinates (IoU lands exactly on thresholds), score ties, crowd regions, user
`ignore` flags, annotation `area` unlike w*h, images without ground truth, more detections
per image than maxDets, categories without ground truth or without detections, zero-size boxes.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def random_scene(
    seed: int, *, n_images: int = 12, n_cats: int = 5
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    images = [
        {"id": int(i), "file_name": f"img{i:04d}.jpg", "width": 640, "height": 480}
        for i in rng.choice(np.arange(1, 10_000), size=n_images, replace=False)
    ]
    categories = [{"id": int(c), "name": f"class{c}"} for c in range(1, n_cats + 1)]
    anns: list[dict[str, Any]] = []
    dets: list[dict[str, Any]] = []
    grid = int(rng.choice([1, 2, 4, 8]))  # coarse grids make exact IoU ties likely
    for im in images:
        n_gt = 0 if rng.random() < 0.15 else int(rng.integers(0, 9))
        gts: list[dict[str, Any]] = []
        for _ in range(n_gt):
            w = int(rng.integers(0, 40)) * grid
            h = int(rng.integers(0, 40)) * grid
            x = int(rng.integers(0, 60)) * grid
            y = int(rng.integers(0, 60)) * grid
            cat = int(rng.integers(1, n_cats))  # the last category never has ground truth
            ann = {
                "id": len(anns) + 1,
                "image_id": im["id"],
                "category_id": cat,
                "bbox": [x, y, w, h],
                "area": float(w * h) if rng.random() < 0.7 else float(rng.integers(0, 12000)),
                "iscrowd": int(rng.random() < 0.1),
            }
            if rng.random() < 0.1:
                ann["ignore"] = 1
            anns.append(ann)
            gts.append(ann)
        n_det = int(rng.integers(0, 12)) if rng.random() > 0.08 else int(rng.integers(100, 130))
        for _ in range(n_det):
            if gts and rng.random() < 0.7:
                g = gts[int(rng.integers(0, len(gts)))]
                x, y, w, h = g["bbox"]
                jitter = rng.integers(-3, 4, size=4) * grid
                box = [
                    x + int(jitter[0]),
                    y + int(jitter[1]),
                    max(0, w + int(jitter[2])),
                    max(0, h + int(jitter[3])),
                ]
                cat = g["category_id"] if rng.random() < 0.85 else int(rng.integers(1, n_cats + 1))
            else:
                box = [int(v) * grid for v in rng.integers(0, 60, size=2)] + [
                    int(v) * grid for v in rng.integers(0, 40, size=2)
                ]
                cat = int(rng.integers(1, n_cats + 1))
            score = (
                float(rng.choice([0.9, 0.5, 0.25]))
                if rng.random() < 0.3
                else float(np.round(rng.random(), 3))
            )
            dets.append({"image_id": im["id"], "category_id": cat, "bbox": box, "score": score})
    order = rng.permutation(len(dets))
    dets = [dets[i] for i in order]
    gt = {"images": images, "annotations": anns, "categories": categories}
    return gt, dets
