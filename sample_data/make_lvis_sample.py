"""Writes sample_data/lvis/{gt,preds}.json: a small synthetic LVIS scene (seeded, no third-party
data) laid out as LVIS v1 val is: images named by ``coco_url``, each with
``neg_category_ids`` and ``not_exhaustive_category_ids``; categories with a ``frequency``.
One image carries more than 300 predictions (the protocol keeps its best 300).

Run from the repository root: python sample_data/make_lvis_sample.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

# (id, name, frequency): LVIS v1 ids and names, a few of each group
CLASSES = [
    (3, "aerosol_can", "c"),
    (12, "apple", "f"),
    (35, "banana", "f"),
    (47, "basket", "f"),
    (95, "bolo_tie", "r"),
    (139, "broccoli", "f"),
    (215, "cayenne_(spice)", "r"),
    (240, "clementine", "c"),
]


def main() -> None:
    rng = random.Random(14)
    images, anns, preds = [], [], []
    ids = [c for c, _, _ in CLASSES]
    for i in range(1, 7):
        img_id = 397000 + i * 7
        present = rng.sample([c for c, _, f in CLASSES if c not in (95, 215)], 3)
        absent = [c for c in ids if c not in present]
        images.append(
            {
                "id": img_id,
                "width": 640,
                "height": 480,
                "coco_url": f"http://images.cocodataset.org/val2017/{img_id:012d}.jpg",
                "neg_category_ids": sorted(rng.sample(absent, 2)),
                "not_exhaustive_category_ids": [present[0]] if i % 3 == 0 else [],
            }
        )
        for cat in present:
            for _ in range(rng.randint(1, 4)):
                w, h = rng.choice([20, 45, 80, 150]), rng.choice([25, 60, 110, 200])
                x, y = rng.randint(0, 640 - w), rng.randint(0, 480 - h)
                anns.append(
                    {
                        "id": len(anns) + 1,
                        "image_id": img_id,
                        "category_id": cat,
                        "bbox": [x, y, w, h],
                        "area": w * h,
                        "segmentation": [[x, y, x + w, y, x + w, y + h, x, y + h]],
                    }
                )
                if rng.random() < 0.8:
                    d = [rng.randint(-6, 6) for _ in range(4)]
                    box = [x + d[0], y + d[1], max(1, w + d[2]), max(1, h + d[3])]
                    preds.append(_pred(img_id, cat, box, rng))
        n_bg = 320 if i == 1 else rng.randint(2, 8)
        for _ in range(n_bg):
            w, h = rng.randint(10, 120), rng.randint(10, 120)
            box = [rng.randint(0, 640 - w), rng.randint(0, 480 - h), w, h]
            preds.append(_pred(img_id, rng.choice(ids), box, rng, low=True))
    cats = [{"id": c, "name": n, "synset": f"{n}.n.01", "frequency": f} for c, n, f in CLASSES]
    gt = {"images": images, "annotations": anns, "categories": cats}
    out = Path("sample_data/lvis")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gt.json").write_text(json.dumps(gt, indent=1) + "\n")
    (out / "preds.json").write_text("[\n" + ",\n".join(json.dumps(p) for p in preds) + "\n]\n")


def _pred(
    img: int, cat: int, box: list[int], rng: random.Random, low: bool = False
) -> dict[str, object]:
    score = round(rng.uniform(0.05, 0.5) if low else rng.uniform(0.4, 0.99), 3)
    return {"image_id": img, "category_id": cat, "bbox": box, "score": score}


if __name__ == "__main__":
    main()
