"""``--protocol ultralytics --iou-type obb`` against the ultralytics package itself (8.4, CPU
torch): its OBB validator matches rotated boxes by ``batch_probiou`` (not polygon IoU).

Random rotated scenes (jittered hits, duplicates, background boxes, score ties, empty
images, classes without predictions, squares turned by 45 degrees and boxes given with w and
h swapped, which probiou cannot tell apart) are evaluated by iou-eval and by Ultralytics'
``batch_probiou`` + ``match_predictions`` + ``OBBMetrics`` in a child process
(tests/oracle/ultralytics_harness.py), on the same float32 ``cx, cy, w, h, angle`` rows.
Every prediction's match bits must agree, and every summary key, class AP, P and R to
1e-12. The probiou values themselves agree to float32 rounding (torch's float32 ``cos``,
``log`` and ``exp`` may differ from the correctly rounded ones by an ulp): 1e-6.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate
from iou_cli.geometry.probiou import min_area_rect, probiou
from iou_cli.protocols.ultralytics import IOU_THRS, SUMMARY_KEYS, UltralyticsEvaluation

from .ultralytics_oracle import missing, run_ultralytics

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

TOL = 1e-12
IOU_TOL = 1e-6


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


def _ours(seed: int) -> UltralyticsEvaluation:
    gt, dets = rotated_scene(seed)
    ev = evaluate(dets, gt, protocol="ultralytics", iou_type="obb").evaluation
    assert isinstance(ev, UltralyticsEvaluation)
    return ev


def _scene(ev: UltralyticsEvaluation) -> dict[str, Any]:
    ds = ev.dataset
    assert ds.gt.obb is not None and ds.pred.obb is not None
    g5, p5 = min_area_rect(ds.gt.obb), min_area_rect(ds.pred.obb)
    images: list[dict[str, Any]] = [{"gt": [], "pred": []} for _ in range(len(ds.images))]
    for r in range(len(ds.gt)):
        images[int(ds.gt.image[r])]["gt"].append([int(ds.gt.category[r]), *map(float, g5[r])])
    for r in ev.order:
        images[int(ds.pred.image[r])]["pred"].append(
            [int(ds.pred.category[r]), float(ds.pred.score[r]), *map(float, p5[r])]
        )
    return {"nc": len(ds.categories), "images": images, "obb": True}


def _check(ev: UltralyticsEvaluation, ref: dict[str, Any], scene: dict[str, Any]) -> float:
    assert np.array_equal(np.asarray(ref["iouv"], dtype=np.float32), IOU_THRS)
    ds = ev.dataset
    ours = ev.taken >= 0
    img = ds.pred.image[ev.order]
    for i, bits in enumerate(ref["correct"]):
        np.testing.assert_array_equal(
            ours[img == i].reshape(-1, 10), np.asarray(bits, bool).reshape(-1, 10)
        )
    for im, iou in zip(scene["images"], ref["iou"], strict=True):  # probiou itself
        if iou:
            g = np.asarray(im["gt"])[:, 1:]
            p = np.asarray(im["pred"])[:, 2:]
            np.testing.assert_allclose(probiou(g, p), np.asarray(iou), rtol=0, atol=IOU_TOL)
    c = ev.curves
    assert c.classes.tolist() == ref["classes"]
    worst = max(
        float(np.max(np.abs(c.ap - np.asarray(ref["ap"])))),
        float(np.max(np.abs(c.p - np.asarray(ref["p"])))),
        float(np.max(np.abs(c.r - np.asarray(ref["r"])))),
    )
    stats = ev.ultralytics_stats()
    assert set(ref["results"]) >= set(SUMMARY_KEYS)
    for key in SUMMARY_KEYS:
        worst = max(worst, abs(float(stats[key] or 0.0) - ref["results"][key]))
    return worst


def test_ultralytics_obb_random_scenes() -> None:
    evs = [_ours(s) for s in range(8)]
    scenes = [_scene(ev) for ev in evs]
    refs = run_ultralytics(scenes)
    worst = 0.0
    for ev, ref, sc in zip(evs, refs, scenes, strict=True):
        assert ref["version"].startswith("8.4"), ref["version"]
        worst = max(worst, _check(ev, ref, sc))
    assert worst <= TOL, worst
    assert any(ev.curves.ap.max() > 0 for ev in evs)
