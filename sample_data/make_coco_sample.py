"""Writes sample_data/coco/{gt,preds}.json: a small synthetic COCO scene (seeded, no third-party data).

Run from the repository root: python sample_data/make_coco_sample.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

CLASSES = ["person", "car", "dog"]


def main() -> None:
    rng = random.Random(7)
    images, anns, preds = [], [], []
    for i in range(1, 9):
        images.append({"id": i, "file_name": f"street_{i:02d}.jpg", "width": 640, "height": 480})
        for _ in range(rng.randint(1, 5)):
            cat = rng.randint(1, 3)
            w, h = rng.choice([20, 45, 80, 150]), rng.choice([25, 60, 110, 200])
            x, y = rng.randint(0, 640 - w), rng.randint(0, 480 - h)
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": i,
                    "category_id": cat,
                    "bbox": [x, y, w, h],
                    "area": w * h,
                    "iscrowd": 0,
                }
            )
            if rng.random() < 0.8:  # found, with some localisation error
                dx, dy = rng.randint(-6, 6), rng.randint(-6, 6)
                preds.append(
                    {
                        "image_id": i,
                        "category_id": cat,
                        "bbox": [x + dx, y + dy, w, h],
                        "score": round(rng.uniform(0.5, 0.99), 2),
                    }
                )
            if rng.random() < 0.3:  # a duplicate
                preds.append(
                    {
                        "image_id": i,
                        "category_id": cat,
                        "bbox": [x + 3, y + 3, w - 4, h],
                        "score": round(rng.uniform(0.1, 0.6), 2),
                    }
                )
        for _ in range(rng.randint(0, 2)):  # background false positives
            preds.append(
                {
                    "image_id": i,
                    "category_id": rng.randint(1, 3),
                    "bbox": [rng.randint(0, 500), rng.randint(0, 350), 60, 60],
                    "score": round(rng.uniform(0.05, 0.7), 2),
                }
            )
    # a crowd region: detections inside it are neither right nor wrong
    anns.append(
        {
            "id": len(anns) + 1,
            "image_id": 1,
            "category_id": 1,
            "bbox": [300, 200, 300, 250],
            "area": 60000,
            "iscrowd": 1,
        }
    )
    preds.append({"image_id": 1, "category_id": 1, "bbox": [350, 250, 40, 90], "score": 0.66})
    gt = {
        "images": images,
        "annotations": anns,
        "categories": [{"id": k + 1, "name": n} for k, n in enumerate(CLASSES)],
    }
    out = Path(__file__).parent / "coco"
    out.mkdir(exist_ok=True)
    (out / "gt.json").write_text(json.dumps(gt, indent=1) + "\n")
    (out / "preds.json").write_text(json.dumps(preds, indent=1) + "\n")


if __name__ == "__main__":
    main()
