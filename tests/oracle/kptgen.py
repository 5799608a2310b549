"""Random COCO keypoint scenes for the OKS oracles (pycocotools, xtcocotools).

Each scene mixes what decides OKS numbers: crowd regions, ground truths without labelled
keypoints (``num_keypoints`` 0, scored by the enlarged-box rule), keypoints outside their
box, hidden (v=1) and unlabelled (v=0) keypoints, tied scores, images without ground truth,
more than 20 predictions per image, several classes and areas on both sides of 32^2 and 96^2.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def random_kpt_scene(
    seed: int, *, k: int = 17, n_cats: int = 2, with_bbox: bool | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    n_img = int(rng.integers(3, 9))
    images: list[dict[str, Any]] = [
        {"id": i + 1, "file_name": f"im{i + 1}.jpg", "width": 640, "height": 480}
        for i in range(n_img)
    ]
    cats = [
        {
            "id": c + 1,
            "name": f"c{c + 1}",
            "keypoints": [f"k{j}" for j in range(k)],
            "skeleton": [[j + 1, j + 2] for j in range(k - 1)],
        }
        for c in range(n_cats)
    ]
    anns: list[dict[str, Any]] = []
    dets: list[dict[str, Any]] = []
    if with_bbox is None:
        with_bbox = bool(rng.random() < 0.5)
    integer = rng.random() < 0.2  # integer coordinates (pycocotools' int arithmetic path)
    for img in images:
        # some images without ground truth (predictions only)
        n_gt = 0 if rng.random() < 0.15 else int(rng.integers(1, 7))
        for _ in range(n_gt):
            cat = int(rng.integers(1, n_cats + 1))
            side = float(rng.choice([12.0, 40.0, 70.0, 150.0])) * float(rng.uniform(0.6, 1.4))
            w = side * float(rng.uniform(0.5, 1.5))
            h = side * float(rng.uniform(0.5, 1.5))
            x = float(rng.uniform(0, 640 - w))
            y = float(rng.uniform(0, 480 - h))
            kx = x + rng.uniform(-0.2, 1.2, k) * w  # some keypoints outside the box
            ky = y + rng.uniform(-0.2, 1.2, k) * h
            v = rng.choice([0, 1, 2], size=k, p=[0.3, 0.2, 0.5])
            if rng.random() < 0.15:
                v[:] = 0  # no labelled keypoint: the enlarged-box rule
            if integer:
                kx, ky = np.round(kx), np.round(ky)
            kx = np.where(v > 0, kx, 0.0)
            ky = np.where(v > 0, ky, 0.0)
            kp: list[float | int] = []
            for j in range(k):
                kp += (
                    [int(kx[j]), int(ky[j]), int(v[j])]
                    if integer
                    else [float(kx[j]), float(ky[j]), int(v[j])]
                )
            area = w * h * float(rng.uniform(0.4, 0.9))
            crowd = int(rng.random() < 0.08)
            ann = {
                "id": len(anns) + 1,
                "image_id": img["id"],
                "category_id": cat,
                "bbox": [x, y, w, h],
                "area": area,
                "iscrowd": crowd,
                "keypoints": kp,
                "num_keypoints": int((v > 0).sum()),
            }
            anns.append(ann)
            # predictions near this ground truth, with noise on the scale of the object
            for _ in range(int(rng.integers(0, 4))):
                dets.append(_det(rng, img["id"], cat, kx, ky, w, h, x, y, k, with_bbox))
        # background predictions, sometimes many (more than maxDets 20 in a group)
        n_bg = int(rng.integers(0, 4)) if rng.random() < 0.7 else int(rng.integers(18, 30))
        for _ in range(n_bg):
            cat = int(rng.integers(1, n_cats + 1))
            w, h = float(rng.uniform(10, 200)), float(rng.uniform(10, 200))
            x, y = float(rng.uniform(0, 500)), float(rng.uniform(0, 350))
            kx = x + rng.uniform(0, 1, k) * w
            ky = y + rng.uniform(0, 1, k) * h
            dets.append(_det(rng, img["id"], cat, kx, ky, w, h, x, y, k, with_bbox))
    # ties: some predictions share a score
    if dets:
        tied = rng.random(len(dets)) < 0.2
        for i in np.flatnonzero(tied):
            dets[int(i)]["score"] = 0.5
    gt = {"images": images, "annotations": anns, "categories": cats}
    return gt, dets


def _det(
    rng: Any,
    image_id: int,
    cat: int,
    kx: Any,
    ky: Any,
    w: float,
    h: float,
    x: float,
    y: float,
    k: int,
    with_bbox: bool,
) -> dict[str, Any]:
    noise = float(rng.choice([0.01, 0.04, 0.1, 0.3])) * np.sqrt(w * h)
    dx = kx + rng.normal(0, noise, k)
    dy = ky + rng.normal(0, noise, k)
    kp: list[float] = []
    for j in range(k):
        kp += [float(dx[j]), float(dy[j]), float(rng.uniform(0, 1))]
    d: dict[str, Any] = {
        "image_id": image_id,
        "category_id": cat,
        "keypoints": kp,
        "score": float(np.round(rng.uniform(0, 1), 3)),
    }
    if with_bbox:
        d["bbox"] = [x, y, w * float(rng.uniform(0.8, 1.2)), h * float(rng.uniform(0.8, 1.2))]
    return d
