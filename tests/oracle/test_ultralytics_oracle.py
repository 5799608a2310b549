"""``--protocol ultralytics`` against the ultralytics package itself (8.4, CPU torch).

Random COCO scenes (tests/oracle/cocogen.py: integer grids so IoUs land exactly on
thresholds, score ties, crowd and ignore flags, empty images, classes without ground truth
or without predictions, images with more than 100 predictions) are evaluated by iou-eval and
by Ultralytics' own ``box_iou`` + ``match_predictions`` + ``DetMetrics`` in a child process
(tests/oracle/ultralytics_harness.py). Every summary key, every class's AP at every
threshold, P and R, and every prediction's match bits must agree to 1e-9.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate
from iou_cli.protocols.ultralytics import IOU_THRS, SUMMARY_KEYS, UltralyticsEvaluation

from .cocogen import random_scene
from .ultralytics_oracle import missing, run_ultralytics

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

TOL = 1e-9
FAST_SEEDS = range(6)
SLOW_SEEDS = range(6, int(os.environ.get("IOU_EVAL_UL_SEEDS", "60")))


def _ours(seed: int) -> UltralyticsEvaluation:
    gt, dets = random_scene(seed)
    if seed % 3 == 1:  # float64 scores that float32 merges into ties
        rng = np.random.default_rng(seed)
        for d in dets:
            d["score"] = round(float(d["score"]), 2) + float(rng.integers(0, 3)) * 1e-9
    if seed % 3 == 2:  # tiny (normalised-scale) boxes: float32 rounding and the 1e-7 matter
        for a in [*gt["annotations"], *dets]:
            a["bbox"] = [v / 640.0 for v in a["bbox"]]
            if "area" in a:
                a["area"] = a["area"] / 640.0**2
    result = evaluate(dets, gt, protocol="ultralytics")
    ev = result.evaluation
    assert isinstance(ev, UltralyticsEvaluation)
    return ev


def _scene(ev: UltralyticsEvaluation) -> dict[str, Any]:
    ds = ev.dataset
    images: list[dict[str, Any]] = [{"gt": [], "pred": []} for _ in range(len(ds.images))]
    for r in range(len(ds.gt)):
        images[int(ds.gt.image[r])]["gt"].append(
            [int(ds.gt.category[r]), *map(float, ds.gt.xyxy[r])]
        )
    for r in ev.order:
        images[int(ds.pred.image[r])]["pred"].append(
            [int(ds.pred.category[r]), float(ds.pred.score[r]), *map(float, ds.pred.xyxy[r])]
        )
    return {"nc": len(ds.categories), "images": images}


def _check(ev: UltralyticsEvaluation, ref: dict[str, Any]) -> float:
    """Largest |delta| over every compared number; asserts match bits and class sets."""
    assert np.array_equal(np.asarray(ref["iouv"], dtype=np.float32), IOU_THRS)
    ds = ev.dataset
    # match bits, per image in evaluation order
    ours = ev.taken >= 0
    img = ds.pred.image[ev.order]
    for i, bits in enumerate(ref["correct"]):
        np.testing.assert_array_equal(
            ours[img == i].reshape(-1, 10), np.asarray(bits, bool).reshape(-1, 10)
        )
    c = ev.curves
    assert c.classes.tolist() == ref["classes"]
    worst = 0.0
    if c.classes.size:
        worst = max(
            float(np.max(np.abs(c.ap - np.asarray(ref["ap"])))),
            float(np.max(np.abs(c.p - np.asarray(ref["p"])))),
            float(np.max(np.abs(c.r - np.asarray(ref["r"])))),
        )
    stats = ev.ultralytics_stats()
    for key in SUMMARY_KEYS:
        if stats[key] is None:  # no ground truth: Ultralytics prints 0
            assert ref["results"][key] == 0.0
            continue
        worst = max(worst, abs(float(stats[key]) - ref["results"][key]))
    return worst


def _run(seeds: range) -> float:
    evs = [_ours(s) for s in seeds]
    refs = run_ultralytics([_scene(ev) for ev in evs])
    worst = 0.0
    for ev, ref in zip(evs, refs, strict=True):
        assert ref["version"].startswith("8.4"), ref["version"]
        worst = max(worst, _check(ev, ref))
    assert worst <= TOL, worst
    return worst


def test_ultralytics_random_scenes() -> None:
    _run(FAST_SEEDS)


@pytest.mark.slow
def test_ultralytics_random_scenes_many() -> None:
    _run(SLOW_SEEDS)
