"""--per-keypoint: a hand-computed pair, and the invariant that the keypoints' parts of the
OKS lost add up to 1 - mean OKS of the true positives (the table's OKS, pinned to
pycocotools by tests/oracle/test_keypoints_oracle.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate
from iou_cli.errors import UsageError
from iou_cli.report.analyses import csv_table, to_markdown
from tests.oracle.kptgen import random_kpt_scene


def _scene() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    gt = {
        "images": [{"id": 1, "file_name": "a.jpg"}],
        "categories": [{"id": 1, "name": "p", "keypoints": ["a", "b", "c"]}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [0, 0, 100, 100],
                "area": 10000,
                "iscrowd": 0,
                "num_keypoints": 2,
                # a exact, b labelled and 10 px off, c not labelled
                "keypoints": [10, 10, 2, 50, 50, 1, 0, 0, 0],
            }
        ],
    }
    dets = [
        {
            "image_id": 1,
            "category_id": 1,
            "score": 0.9,
            "keypoints": [10, 10, 0.9, 56, 58, 0.2, 70, 70, 0.8],
        }
    ]
    return gt, dets


def test_hand_computed_pair() -> None:
    gt, dets = _scene()
    r = evaluate(dets, gt, iou_type="keypoints", sigmas=[0.1, 0.1, 0.1], per_keypoint=True)
    sec = r.extra["per_keypoint"]
    a, b, c = sec["keypoints"]
    # b: d^2 = 36 + 64 = 100; e = 100 / 0.04 / (10000 + eps) / 2 = 0.125
    sim_b = math.exp(-0.125)
    assert sec["n_pairs"] == 1 and sec["oks_thr"] == 0.5
    assert a["within"] == 1.0 and a["mean_error"] == 0.0 and a["mean_similarity"] == 1.0
    assert b["mean_error"] == pytest.approx(10 / 100, abs=1e-15)
    assert b["mean_similarity"] == pytest.approx(sim_b, abs=1e-15)
    assert b["within"] == 1.0  # 0.88 >= 0.5
    # OKS = (1 + sim_b) / 2: lost = (1 - sim_b) / 2, all of it keypoint b's
    assert b["oks_lost"] == pytest.approx((1 - sim_b) / 2, abs=1e-15)
    assert a["oks_lost"] == 0.0 and b["share_of_loss"] == 1.0
    assert c["n_labelled"] == 0 and c["within"] is None and c["oks_lost"] == 0.0
    assert c["visible_not_labelled"] == 1.0  # 0.8 >= 0.5 but not labelled
    assert b["labelled_not_visible"] == 1.0 and a["labelled_not_visible"] == 0.0
    assert [row["name"] for row in sec["keypoints"]] == ["a", "b", "c"]
    assert csv_table("per_keypoint", sec).splitlines()[0].startswith("keypoint,name,sigma,")
    assert "Per keypoint" in to_markdown(r.extra)


@pytest.mark.parametrize("seed", range(3))
def test_parts_of_the_oks_lost_add_up(seed: int) -> None:
    gt, dets = random_kpt_scene(seed)
    r = evaluate(dets, gt, iou_type="keypoints", per_keypoint=True, score_thr=0.0)
    sec = r.extra["per_keypoint"]
    from iou_cli.protocols.coco import CocoEvaluation

    ev = r.evaluation
    assert isinstance(ev, CocoEvaluation)
    g, oks, ign = r.table.dense(ev.op_t)
    tp = (g >= 0) & ~ign
    assert sec["n_pairs"] == int(tp.sum()) > 0
    lost = sum(row["oks_lost"] for row in sec["keypoints"])
    assert lost == pytest.approx(1 - float(np.mean(oks[tp])), abs=1e-12)
    shares = [row["share_of_loss"] for row in sec["keypoints"]]
    assert sum(shares) == pytest.approx(1.0, abs=1e-12)


def test_needs_keypoints() -> None:
    gt, dets = _scene()
    with pytest.raises(UsageError, match="--per-keypoint needs --iou-type keypoints"):
        evaluate(dets, gt, per_keypoint=True)
