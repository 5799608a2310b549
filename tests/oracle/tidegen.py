"""Random COCO scenes on which TIDE's definitions and pycocotools' coincide.

No crowd or ignored regions, every predicted class has ground truth, at most 100 predictions
per image (tidecv caps per image, pycocotools per image and class), distinct scores and
continuous coordinates (no score or IoU ties, whose order the two break differently). The
predictions are jittered copies of ground truths (small jitter: true positives; larger: Loc and
Both errors), copies with another class (Cls), repeats (Dupe) and free boxes (Bkg); some
ground truths get no prediction (Miss); some images have predictions and no ground truth.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def tide_scene(
    seed: int, *, n_images: int = 10, n_cats: int = 5
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    ids = sorted(int(i) for i in rng.choice(np.arange(1, 5000), size=n_images, replace=False))
    images = [{"id": i, "file_name": f"{i}.jpg", "width": 640, "height": 480} for i in ids]
    categories = [{"id": c, "name": f"c{c}"} for c in range(1, n_cats + 1)]
    anns: list[dict[str, Any]] = []
    dets: list[dict[str, Any]] = []
    for im in images:
        gts: list[dict[str, Any]] = []
        n_gt = 0 if rng.random() < 0.1 else int(rng.integers(1, 9))
        for _ in range(n_gt):
            w, h = rng.uniform(8, 150, 2)
            x, y = rng.uniform(0, 480, 2)
            ann = {
                "id": len(anns) + 1,
                "image_id": im["id"],
                "category_id": int(rng.integers(1, n_cats + 1)),
                "bbox": [float(x), float(y), float(w), float(h)],
                "area": float(w * h),
                "iscrowd": 0,
            }
            anns.append(ann)
            gts.append(ann)
        n_det = int(rng.integers(0, 14))
        for _ in range(n_det):
            u = rng.random()
            if gts and u < 0.85:
                g = gts[int(rng.integers(0, len(gts)))]
                x, y, w, h = g["bbox"]
                s = rng.choice([0.03, 0.1, 0.25, 0.6])  # jitter scale: TP .. Loc .. Both
                dx, dy = rng.normal(0, s, 2) * np.array([w, h])
                sw, sh = np.exp(rng.normal(0, s, 2))
                box = [float(x + dx), float(y + dy), float(w * sw), float(h * sh)]
                cat = g["category_id"] if rng.random() < 0.8 else int(rng.integers(1, n_cats + 1))
            else:
                w, h = rng.uniform(5, 120, 2)
                x, y = rng.uniform(0, 500, 2)
                box = [float(x), float(y), float(w), float(h)]
                cat = int(rng.integers(1, n_cats + 1))
            dets.append(
                {
                    "image_id": im["id"],
                    "category_id": cat,
                    "bbox": box,
                    "score": float(rng.random()),
                }
            )
    with_gt = {a["category_id"] for a in anns}
    dets = [d for d in dets if d["category_id"] in with_gt]
    return {"images": images, "annotations": anns, "categories": categories}, dets


def harness_input(gt: dict[str, Any], dets: list[dict[str, Any]]) -> dict[str, Any]:
    """The scene as tests/oracle/tide_harness.py reads it (rows in file order)."""
    return {
        "images": [im["id"] for im in gt["images"]],
        "categories": [c["id"] for c in gt["categories"]],
        "gt": [[a["image_id"], a["category_id"], *a["bbox"]] for a in gt["annotations"]],
        "dets": [[d["image_id"], d["category_id"], d["score"], *d["bbox"]] for d in dets],
    }
