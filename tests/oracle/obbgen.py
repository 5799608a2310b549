"""Random scenes of rotated boxes (COCO JSON with ``obb`` fields, radians) for the
Ultralytics-OBB oracle and ``explain`` tests: jittered hits, copies, the same box with w and
h swapped a quarter turn on, score ties, empty images, a class with ground truth only, and
squares turned 45 degrees (same Gaussian, polygon IoU 0.707)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def rotated_scene(seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    images = [{"id": i, "width": 1024, "height": 1024} for i in range(1, int(rng.integers(3, 9)))]
    cats = [{"id": k, "name": f"c{k}"} for k in (1, 2, 3, 4)]  # 4: ground truth only
    anns: list[dict[str, Any]] = []
    res: list[dict[str, Any]] = []
    for im in images:
        if rng.random() < 0.15:
            continue
        for _ in range(int(rng.integers(1, 12))):
            b = [
                float(rng.uniform(50, 950)),
                float(rng.uniform(50, 950)),
                float(rng.lognormal(3.0, 0.5)),
                float(rng.lognormal(2.6, 0.5)),
                float(rng.uniform(-math.pi, math.pi)),
            ]
            cat = int(rng.choice([1, 2, 3, 4], p=[0.4, 0.3, 0.2, 0.1]))
            anns.append({"id": len(anns) + 1, "image_id": im["id"], "category_id": cat, "obb": b})
            if cat == 4:
                continue
            for _ in range(int(rng.integers(0, 4))):
                j = np.asarray(b) + rng.normal(0, [b[2] / 6, b[3] / 6, b[2] / 6, b[3] / 6, 0.2])
                j[2:4] = np.abs(j[2:4]) + 0.5
                kind = rng.random()
                if kind < 0.1:  # the same box, w and h swapped a quarter turn on
                    j = np.asarray([b[0], b[1], b[3], b[2], b[4] + math.pi / 2])
                elif kind < 0.2:  # a copy
                    j = np.asarray(b)
                res.append(
                    {
                        "image_id": im["id"],
                        "category_id": cat,
                        "obb": [float(v) for v in j],
                        "score": round(float(rng.random()), 1),  # ties
                    }
                )
        for _ in range(int(rng.integers(0, 4))):  # background, and a square turned 45 degrees
            x, y = float(rng.uniform(0, 1000)), float(rng.uniform(0, 1000))
            res.append(
                {
                    "image_id": im["id"],
                    "category_id": 2,
                    "obb": [x, y, 20.0, 20.0, 0.0],
                    "score": 0.5,
                }
            )
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": im["id"],
                    "category_id": 2,
                    "obb": [x, y, 20.0, 20.0, math.pi / 4],
                }
            )
    for a in anns:
        a["area"] = a["obb"][2] * a["obb"][3]
        a["iscrowd"] = 0
    return {"images": images, "annotations": anns, "categories": cats}, res
