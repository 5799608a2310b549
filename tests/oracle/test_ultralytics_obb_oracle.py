"""``--protocol ultralytics --iou-type obb`` against the ultralytics package itself (8.4, CPU
torch): its OBB validator matches rotated boxes by ``batch_probiou`` (not polygon IoU).

Random rotated scenes (jittered hits, duplicates, background boxes, score ties, empty
images, classes without predictions, squares turned by 45 degrees and boxes given with w and
h swapped, which probiou cannot tell apart) are evaluated by iou-eval and by Ultralytics'
``batch_probiou`` + ``match_predictions`` + ``OBBMetrics`` in a child process
(tests/oracle/ultralytics_harness.py), on the same float32 ``cx, cy, w, h, angle`` rows.
Every prediction's match bits must agree, and every summary key, class AP, P and R to
1e-12. probiou computed in float64 by both agrees to 1e-9 (the formula and its order of
operations). In float32, torch's ``cos``, ``sin``, ``log`` and ``exp`` are not correctly
rounded (SLEEF or libm, element by element) and ours are; below 0.99 the values agree to
1e-6, but for near-identical boxes (the distance at its 1e-7 floor) the square root in
``1 - sqrt(1 - exp(-d) + 1e-7)`` magnifies a last-bit difference about a thousand times, so
there the test allows 1e-3: such pairs sit far above the highest threshold (0.95), where it
changes no match, which the match bits and metrics (exact) confirm.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate
from iou_cli.geometry.probiou import min_area_rect, probiou
from iou_cli.protocols.ultralytics import IOU_THRS, SUMMARY_KEYS, UltralyticsEvaluation

from .obbgen import rotated_scene
from .ultralytics_oracle import missing, run_ultralytics

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

TOL = 1e-12
TOL64 = 1e-9  # probiou in float64, ours against torch's: the formula, to libm's last bits
IOU_TOL = 1e-6  # float32 probiou below 0.99
NEAR_ONE_TOL = 1e-3  # float32 probiou of near-identical boxes (see the module docstring)


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
            ref32, ref64 = np.asarray(iou[0]), np.asarray(iou[1])
            ours32 = probiou(g, p)
            np.testing.assert_allclose(probiou(g, p, np.float64), ref64, rtol=0, atol=TOL64)
            sharp = ref32 < 0.99  # near 1 the square root magnifies an ulp of cos/log/exp
            np.testing.assert_allclose(ours32[sharp], ref32[sharp], rtol=0, atol=IOU_TOL)
            np.testing.assert_allclose(ours32, ref32, rtol=0, atol=NEAR_ONE_TOL)
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


def _run(seeds: range) -> float:
    evs = [_ours(s) for s in seeds]
    scenes = [_scene(ev) for ev in evs]
    refs = run_ultralytics(scenes)
    worst = 0.0
    for ev, ref, sc in zip(evs, refs, scenes, strict=True):
        assert ref["version"].startswith("8.4"), ref["version"]
        worst = max(worst, _check(ev, ref, sc))
    assert worst <= TOL, worst
    assert any(ev.curves.ap.max() > 0 for ev in evs)
    return worst


def test_ultralytics_obb_random_scenes() -> None:
    _run(range(8))


@pytest.mark.slow
def test_ultralytics_obb_random_scenes_many() -> None:
    _run(range(8, int(os.environ.get("IOU_EVAL_UL_SEEDS", "60"))))
