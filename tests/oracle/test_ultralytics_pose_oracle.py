"""``--protocol ultralytics --iou-type keypoints`` against the ultralytics package itself.

Random keypoint scenes (tests/oracle/kptgen.py: crowds, ground truths without labelled
keypoints, keypoints outside their box, tied scores, images without ground truth, several
classes) are evaluated by iou-eval and by Ultralytics' own ``PoseValidator`` (its
``init_metrics`` choosing the sigmas, its ``_process_batch`` giving box and pose match bits,
``kpt_iou`` the OKS) and ``PoseMetrics`` in a child process
(tests/oracle/ultralytics_harness.py). COCO's 17 keypoints (Ultralytics' OKS_SIGMA), a custom
K without sigmas (its 1/K) and with ``kpt_oks_sigmas``: the sigmas must be Ultralytics' bit
for bit, every OKS within 1e-6 (float32, summed in another order), every match bit equal,
and all eight ``(B)``/``(P)`` keys, every class's pose AP at every threshold, P and R to 1e-9.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate
from iou_cli.geometry.oks_f32 import sigmas_f32
from iou_cli.matching.pairs import sigma_table
from iou_cli.protocols.ultralytics import (
    POSE_KEYS,
    SUMMARY_KEYS,
    UltralyticsPoseEvaluation,
    pose_similarity,
)

from .kptgen import random_kpt_scene
from .ultralytics_oracle import missing, run_ultralytics

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

TOL = 1e-9
# (seed, K, sigmas): COCO's 17; a 5-keypoint skeleton without sigmas (Ultralytics' 1/K);
# a 6-keypoint one with kpt_oks_sigmas
CASES = [(0, 17, None), (1, 17, None), (2, 5, None), (3, 6, [0.05, 0.1, 0.03, 0.07, 0.2, 0.09])]


def _ours(seed: int, k: int, sigmas: list[float] | None) -> UltralyticsPoseEvaluation:
    gt, dets = random_kpt_scene(seed, k=k, with_bbox=True)
    result = evaluate(dets, gt, protocol="ultralytics", iou_type="keypoints", sigmas=sigmas)
    ev = result.evaluation
    assert isinstance(ev, UltralyticsPoseEvaluation)
    return ev


def _scene(ev: UltralyticsPoseEvaluation, k: int, sigmas: list[float] | None) -> dict[str, Any]:
    ds = ev.dataset
    assert ds.gt.keypoints is not None and ds.pred.keypoints is not None
    images: list[dict[str, Any]] = [{"gt": [], "pred": []} for _ in range(len(ds.images))]
    for r in range(len(ds.gt)):
        images[int(ds.gt.image[r])]["gt"].append(
            [int(ds.gt.category[r]), *map(float, ds.gt.xyxy[r]), *ds.gt.keypoints[r].ravel()]
        )
    for r in ev.order:
        images[int(ds.pred.image[r])]["pred"].append(
            [
                int(ds.pred.category[r]),
                float(ds.pred.score[r]),
                *map(float, ds.pred.xyxy[r]),
                *ds.pred.keypoints[r].ravel(),
            ]
        )
    out: dict[str, Any] = {"nc": len(ds.categories), "images": images, "kpt_shape": [k, 3]}
    if sigmas is not None:
        out["kpt_oks_sigmas"] = sigmas
    return out


@pytest.fixture(scope="module")
def runs() -> list[tuple[UltralyticsPoseEvaluation, dict[str, Any]]]:
    evs = [_ours(*case) for case in CASES]
    refs = run_ultralytics([_scene(ev, k, sg) for ev, (_, k, sg) in zip(evs, CASES, strict=True)])
    return list(zip(evs, refs, strict=True))  # one child (torch's import) for every case


@pytest.mark.parametrize("case", range(len(CASES)))
def test_pose_metrics_equal_ultralytics(
    runs: list[tuple[UltralyticsPoseEvaluation, dict[str, Any]]], case: int
) -> None:
    ev, ref = runs[case]
    ds = ev.dataset
    # the sigmas, bit for bit (COCO's: its float32 OKS_SIGMA; else 1/K or the data's)
    table = sigmas_f32(sigma_table(ds)[0])
    np.testing.assert_array_equal(table[0], np.asarray(ref["sigma"], dtype=np.float32))
    # every OKS of every (image, class) pair
    sim = pose_similarity(ds)
    img = ds.pred.image[ev.order]
    worst_oks = 0.0
    for i, oks in enumerate(ref["oks"]):
        if not oks:
            continue
        g_rows = np.flatnonzero(ds.gt.image == i)
        d_rows = ev.order[img == i]
        mine = sim(g_rows, d_rows).astype(np.float64)
        same = ds.gt.category[g_rows][:, None] == ds.pred.category[d_rows][None, :]
        worst_oks = max(worst_oks, float(np.max(np.abs(mine - np.asarray(oks))[same], initial=0)))
    assert worst_oks <= 1e-6
    # match bits (pose), per image in evaluation order
    ours = ev.taken >= 0
    for i, bits in enumerate(ref["correct_p"]):
        np.testing.assert_array_equal(
            ours[img == i].reshape(-1, 10), np.asarray(bits, bool).reshape(-1, 10)
        )
    c = ev.curves
    assert c.classes.tolist() == ref["classes"]
    worst = max(
        float(np.max(np.abs(c.ap - np.asarray(ref["ap_p"])))),
        float(np.max(np.abs(c.p - np.asarray(ref["p_p"])))),
        float(np.max(np.abs(c.r - np.asarray(ref["r_p"])))),
    )
    stats = ev.ultralytics_stats()
    for key in (*SUMMARY_KEYS, *POSE_KEYS):
        worst = max(worst, abs(float(stats[key] or 0.0) - ref["results"][key]))
    assert worst <= TOL, worst
    assert ev.box_curves is not None and ev.box_curves.classes.size
    assert ref["results"]["metrics/mAP50(P)"] > 0  # the scene has pose matches to compare
