"""COCO on rotated boxes against hotcoco's OBB evaluation (``COCOeval(gt, dt, "obb")``):
random scenes with crowd regions, score ties, empty images and every area range."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli import evaluate

hotcoco = pytest.importorskip("hotcoco", reason="hotcoco is the COCO-on-OBB oracle (test extra)")

# hotcoco says its OBB numbers have no reference to check against: we are checking them
pytestmark = pytest.mark.filterwarnings("ignore:hotcoco. oriented-box evaluation")

KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"]


def scene(seed: int, *, degrees: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    n_img = int(rng.integers(3, 8))
    images = [
        {"id": i, "width": 640, "height": 480, "file_name": f"{i}.png"} for i in range(1, n_img + 1)
    ]
    cats = [{"id": 1, "name": "plane"}, {"id": 2, "name": "ship"}, {"id": 5, "name": "car"}]
    anns: list[dict[str, Any]] = []
    res: list[dict[str, Any]] = []
    for im in images:
        if rng.random() < 0.15:
            continue  # an image without objects
        for _ in range(int(rng.integers(1, 10))):
            side = float(rng.choice([8.0, 20.0, 60.0, 150.0]))  # small, medium and large
            b = [
                float(rng.uniform(30, 600)),
                float(rng.uniform(30, 450)),
                side * float(rng.uniform(0.5, 1.5)),
                side * float(rng.uniform(0.5, 1.5)),
                float(rng.uniform(-math.pi, math.pi)),
            ]
            cat = int(rng.choice([1, 2, 5]))
            crowd = int(rng.random() < 0.08)
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": im["id"],
                    "category_id": cat,
                    "obb": b,
                    "area": b[2] * b[3],
                    "iscrowd": crowd,
                }
            )
            for _ in range(int(rng.integers(0, 4))):
                j = np.asarray(b) + rng.normal(0, [b[2] / 8, b[3] / 8, b[2] / 8, b[3] / 8, 0.15])
                j[2:4] = np.abs(j[2:4]) + 0.5
                res.append(
                    {
                        "image_id": im["id"],
                        "category_id": cat,
                        "obb": [float(v) for v in j],
                        "score": round(float(rng.random()), 1),  # many ties
                    }
                )
        for _ in range(int(rng.integers(0, 3))):  # background predictions
            b = [float(rng.uniform(0, 640)), float(rng.uniform(0, 480)), 30.0, 12.0, 0.4]
            res.append({"image_id": im["id"], "category_id": 2, "obb": b, "score": 0.5})
    if degrees:  # a tool that writes degrees writes them on both sides
        for r in res + anns:
            r["obb"][4] = math.degrees(r["obb"][4])
    return {"images": images, "annotations": anns, "categories": cats}, res


def hotcoco_stats(gt_file: Path, res: list[dict[str, Any]], tmp: Path) -> list[float]:
    res_file = tmp / "res_rad.json"
    res_file.write_text(json.dumps(res))
    g = hotcoco.COCO(str(gt_file))
    d = g.load_res(str(res_file))
    e = hotcoco.COCOeval(g, d, "obb")
    e.evaluate()
    e.accumulate()
    e.summarize()
    return [float(v) for v in e.stats]


@pytest.mark.parametrize("seed", range(12))
def test_coco_on_obb_equals_hotcoco(seed: int, tmp_path: Path) -> None:
    gt, res = scene(seed)
    if not res:
        pytest.skip("scene without predictions")
    gt_file = tmp_path / "gt.json"
    gt_file.write_text(json.dumps(gt))
    pred_file = tmp_path / "pred.json"
    pred_file.write_text(json.dumps(res))
    ref = hotcoco_stats(gt_file, res, tmp_path)
    ours = evaluate(str(pred_file), str(gt_file), iou_type="obb").summary
    for k, r in zip(KEYS, ref, strict=True):
        o = ours[k]
        if r < 0:
            assert o is None, k
        else:
            assert o is not None and abs(o - r) <= 1e-12, (k, o, r)


def test_angle_in_degrees(tmp_path: Path) -> None:
    gt, res = scene(3)
    gt_deg, res_deg = scene(3, degrees=True)
    gt_file = tmp_path / "gt.json"
    gt_file.write_text(json.dumps(gt))
    rad = tmp_path / "rad.json"
    rad.write_text(json.dumps(res))
    deg = tmp_path / "deg.json"
    deg.write_text(json.dumps(res_deg))
    gt_deg_file = tmp_path / "gt_deg.json"
    gt_deg_file.write_text(json.dumps(gt_deg))
    a = evaluate(str(rad), str(gt_file), iou_type="obb").summary
    b = evaluate(str(deg), str(gt_deg_file), iou_type="obb", angle_unit="deg").summary
    assert a["AP"] is not None and a["AP"] > 0
    assert all(abs(a[k] - b[k]) <= 1e-12 for k in KEYS if a[k] is not None)
