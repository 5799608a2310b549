"""The ``curves`` JSON section: AP50/AP75/AP come back from the JSON alone, bit for bit.

The reference is pycocotools itself: its ``eval['precision']`` and ``eval['scores']`` go
through ``curves.pr_curves``, a JSON round trip, and ``curves.mean_ap``; the result must be
pycocotools' ``stats`` exactly (the recipe in the README). The confidence curve is checked
against a hand calculation written beside the test.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_cli.analysis import curves as C
from tests.conftest import DATA
from tests.oracle.cocogen import random_scene
from tests.oracle.pycoco import pycoco_eval


def _curves_of(ev: object, names: list[str]) -> dict:
    p = ev.params  # type: ignore[attr-defined]
    cv = C.pr_curves(
        ev.eval["precision"],  # type: ignore[attr-defined]
        p.iouThrs,
        p.recThrs,
        names,
        scores=ev.eval["scores"],  # type: ignore[attr-defined]
        max_dets=p.maxDets[-1],
    )
    return json.loads(json.dumps(cv))  # what a reader of the JSON gets


def _check(ev: object, names: list[str]) -> None:
    cv = _curves_of(ev, names)
    stats = ev.stats  # type: ignore[attr-defined]
    assert list(cv["precision"]) == ["0.5", "0.55", "0.6", "0.65", "0.7", "0.75", "0.8", "0.85", "0.9", "0.95"]  # fmt: skip
    assert len(cv["recall"]) == 101 and cv["recall"][1] == 0.01
    assert C.mean_ap(cv) == stats[0]
    assert C.mean_ap(cv, "0.5") == stats[1]
    assert C.mean_ap(cv, "0.75") == stats[2]
    # a plain mean over classes of each class's mean is the same to rounding
    rows = C.class_matrix(cv, "0.5")
    assert float(np.mean(rows.mean(axis=1))) == pytest.approx(stats[1], abs=1e-15)


def test_curves_reproduce_pycocotools_stats_on_real_coco() -> None:
    gt = json.loads((DATA / "coco" / "instances_val2014_100.json").read_text())
    dets = json.loads((DATA / "coco" / "instances_val2014_fakebbox100_results.json").read_text())
    ev = pycoco_eval(gt, dets)
    names = [c["name"] for c in gt["categories"]]
    _check(ev, names)
    cv = _curves_of(ev, names)
    # classes without ground truth are null, in precision and in score alike
    prec = ev.eval["precision"]
    for k, n in enumerate(names):
        none = bool((prec[0, :, k, 0, -1] == -1).all())
        assert (cv["precision"]["0.5"][n] is None) is none
        assert (cv["score"]["0.5"][n] is None) is none
        if not none:
            assert cv["precision"]["0.5"][n] == prec[0, :, k, 0, -1].tolist()
            assert cv["score"]["0.5"][n] == ev.eval["scores"][0, :, k, 0, -1].tolist()


@pytest.mark.parametrize("seed", range(6))
def test_curves_reproduce_pycocotools_stats_on_random_scenes(seed: int) -> None:
    gt, dets = random_scene(seed)
    ev = pycoco_eval(gt, dets)
    if ev.stats[0] == -1:
        pytest.skip("scene without ground truth")
    _check(ev, [c["name"] for c in gt["categories"]])


def test_threshold_keys_and_duplicate_names() -> None:
    assert C.thr_key(np.linspace(0.5, 0.95, 10)[1]) == "0.55"
    assert C.thr_key(0.5) == "0.5"
    assert C.unique_names(["a", "b", "a"], [1, 2, 3]) == ["a (id 1)", "b", "a (id 3)"]


def test_confidence_curve_by_hand() -> None:
    # scores 0.9 TP, 0.8 FP, 0.8 TP, 0.5 ignored (neither), 0.3 FP; 4 ground truths
    score = np.array([0.9, 0.8, 0.8, 0.5, 0.3])
    tp = np.array([True, False, True, False, False])
    fp = np.array([False, True, False, False, True])
    cc = C.confidence_curve(score, tp, fp, 4, iou_thr=0.5, score_thr=0.8)
    # cuts: >=0.9: 1 TP 0 FP; >=0.8: 2 TP 1 FP (ties enter together); >=0.3: 2 TP 2 FP
    assert cc["score"] == [0.9, 0.8, 0.3]
    assert cc["tp"] == [1, 2, 2] and cc["fp"] == [0, 1, 2]
    assert cc["precision"] == [1.0, 2 / 3, 0.5]
    assert cc["recall"] == [0.25, 0.5, 0.5]
    # F1 = 2TP / (2TP + FP + FN) = 2TP / (TP + FP + n_gt)
    assert cc["f1"] == [2 / 5, 4 / 7, 4 / 8]
    none = C.confidence_curve(score, tp, fp, 0, iou_thr=0.5)
    assert none["recall"] == [None, None, None]


def test_confidence_curve_thinning_keeps_the_operating_point() -> None:
    rng = np.random.default_rng(0)
    score = rng.random(5000)
    tp = rng.random(5000) < 0.5
    thr = float(np.sort(score)[1234])
    cc = C.confidence_curve(score, tp, ~tp, 3000, iou_thr=0.5, score_thr=thr, max_points=200)
    assert len(cc["score"]) <= 201
    assert cc["score"][0] == score.max() and cc["score"][-1] == score.min()
    assert thr in cc["score"]
    i = cc["score"].index(thr)
    keep = score >= thr
    assert cc["tp"][i] == int((tp & keep).sum()) and cc["fp"][i] == int((~tp & keep).sum())
