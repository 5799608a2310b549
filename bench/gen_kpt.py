"""A generated COCO-val-keypoints-sized set: 5,000 images, about 11,000 people (17 COCO
keypoints, some crowds, about 15% without labelled keypoints), 100,000 keypoint results
(20 per image: noisy copies of the people and background poses), cached under bench/_data."""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

K = 17
IMAGES = 5000
PEOPLE_PER_IMAGE = 2.2
DETS_PER_IMAGE = 20


def generate(scale: int, seed: int) -> tuple[dict, list[dict]]:
    rng = np.random.default_rng(seed)
    n_img = IMAGES * scale
    images = [
        {"id": i + 1, "file_name": f"{i + 1:012d}.jpg", "width": 640, "height": 480}
        for i in range(n_img)
    ]
    cats = [
        {
            "id": 1,
            "name": "person",
            "supercategory": "person",
            "keypoints": [f"k{j}" for j in range(K)],
            "skeleton": [[j + 1, j + 2] for j in range(K - 1)],
        }
    ]
    anns: list[dict] = []
    dets: list[dict] = []
    n_people = rng.poisson(PEOPLE_PER_IMAGE, n_img)
    for i in range(n_img):
        img_id = i + 1
        people = []
        for _ in range(int(n_people[i])):
            side = float(np.exp(rng.uniform(np.log(20), np.log(300))))
            w, h = side * rng.uniform(0.4, 0.8), side
            x, y = rng.uniform(0, 640 - min(w, 600)), rng.uniform(0, 480 - min(h, 470))
            kx = np.round(x + rng.uniform(0, 1, K) * w, 2)
            ky = np.round(y + rng.uniform(0, 1, K) * h, 2)
            v = rng.choice([0, 1, 2], size=K, p=[0.35, 0.1, 0.55])
            if rng.random() < 0.15:
                v[:] = 0
            kp = np.stack([np.where(v > 0, kx, 0), np.where(v > 0, ky, 0), v], 1).ravel()
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": img_id,
                    "category_id": 1,
                    "bbox": [round(x, 2), round(y, 2), round(w, 2), round(h, 2)],
                    "area": round(w * h * rng.uniform(0.4, 0.7), 2),
                    "iscrowd": int(rng.random() < 0.01),
                    "num_keypoints": int((v > 0).sum()),
                    "keypoints": [float(c) if j % 3 != 2 else int(c) for j, c in enumerate(kp)],
                }
            )
            people.append((kx, ky, w, h))
        for d in range(DETS_PER_IMAGE):
            if d < 2 * len(people):
                kx, ky, w, h = people[d // 2]
                noise = rng.choice([0.02, 0.05, 0.1, 0.3]) * np.sqrt(w * h)
                dx, dy = kx + rng.normal(0, noise, K), ky + rng.normal(0, noise, K)
            else:
                s = float(rng.uniform(20, 200))
                x0, y0 = rng.uniform(0, 600), rng.uniform(0, 440)
                dx, dy = x0 + rng.uniform(0, 0.6, K) * s, y0 + rng.uniform(0, 1, K) * s
            conf = rng.uniform(0, 1, K)
            kp = np.round(np.stack([dx, dy, conf], 1).ravel(), 2)
            dets.append(
                {
                    "image_id": img_id,
                    "category_id": 1,
                    "keypoints": kp.tolist(),
                    "score": round(float(rng.uniform(0, 1)), 4),
                }
            )
    return {"images": images, "annotations": anns, "categories": cats}, dets


def ensure(scale: int, seed: int = 0) -> tuple[str, str]:
    """Generate the set unless it already exists; returns (preds_path, gt_path)."""
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data", f"kpt_x{scale}_s{seed}")
    gt_path, pred_path = os.path.join(out, "gt.json"), os.path.join(out, "preds.json")
    if os.path.exists(gt_path) and os.path.exists(pred_path):
        return pred_path, gt_path
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    gt, dets = generate(scale, seed)
    for path, obj in ((gt_path, gt), (pred_path, dets)):
        with open(path + ".tmp", "w", encoding="ascii") as fh:
            json.dump(obj, fh)
        os.replace(path + ".tmp", path)
    print(
        f"generated {out}: {len(gt['images'])} images, {len(gt['annotations'])} people, "
        f"{len(dets)} keypoint results in {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )
    return pred_path, gt_path
