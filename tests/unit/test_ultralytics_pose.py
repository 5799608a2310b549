"""Ultralytics' pose rules by hand (the package itself: tests/oracle/
test_ultralytics_pose_oracle.py): its float32 OKS, the 0.53 area, its sigma defaults, and
YOLO-pose labels of two values per keypoint (a negative coordinate: not labelled)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from iou_cli.api import evaluate
from iou_cli.errors import UsageError
from iou_cli.geometry.oks import COCO_SIGMAS
from iou_cli.geometry.oks_f32 import OKS_SIGMA, box_area_f32, default_sigmas, oks_f32, sigmas_f32
from iou_cli.protocols.ultralytics import UltralyticsPoseEvaluation


def test_oks_by_hand() -> None:
    # one ground truth, box 10 x 20 -> area 0.53 * 200 = 106; two keypoints, the second not
    # labelled (it counts for nothing, and n = 1); prediction 3 px off on the first
    gt = np.array([[[5.0, 5.0, 2.0], [0.0, 0.0, 0.0]]], dtype=np.float32)
    pred = np.array([[[8.0, 5.0, 0.9], [50.0, 50.0, 0.9]]], dtype=np.float32)
    area = box_area_f32(np.array([[0.0, 0.0, 10.0, 20.0]]))
    assert area[0] == np.float32(200) * np.float32(0.53)
    sigma = np.array([0.1, 0.1], dtype=np.float32)
    got = float(oks_f32(gt, pred, area, sigma)[0, 0])
    e = 9.0 / ((2 * 0.1) ** 2 * (106.0 + 1e-7) * 2)
    assert got == pytest.approx(math.exp(-e) / (1 + 1e-7), rel=1e-6)
    # a ground truth with no labelled keypoint: OKS 0 (no enlarged-box rule)
    gt[0, 0, 2] = 0
    assert float(oks_f32(gt, pred, area, sigma)[0, 0]) == 0.0


def test_sigma_defaults() -> None:
    # COCO's 17 for [17, 3], as Ultralytics' float32 OKS_SIGMA (not COCO's float64 cast)
    table, src = default_sigmas(17, 3)
    assert np.array_equal(table[0], COCO_SIGMAS) and "OKS_SIGMA" in src
    assert np.array_equal(sigmas_f32(table)[0], OKS_SIGMA)
    assert not np.array_equal(OKS_SIGMA, COCO_SIGMAS.astype(np.float32))  # 1 ulp apart
    # [17, 2] and any other K: 1/K
    for k, d in ((17, 2), (5, 3)):
        table, src = default_sigmas(k, d)
        assert np.array_equal(table[0], np.full(k, 1.0 / k)) and "1/K" in src


def _write(tmp: Path, gt_rows: list[str], pred_rows: list[str], yaml: str) -> tuple[str, str]:
    (tmp / "gt").mkdir()
    (tmp / "pred").mkdir()
    (tmp / "gt" / "data.yaml").write_text(yaml)
    (tmp / "pred" / "data.yaml").write_text(yaml)
    (tmp / "gt" / "a.txt").write_text("".join(r + "\n" for r in gt_rows))
    (tmp / "pred" / "a.txt").write_text("".join(r + "\n" for r in pred_rows))
    return str(tmp / "pred"), str(tmp / "gt")


def test_custom_skeleton_without_sigmas(tmp_path: Path) -> None:
    # K = 2 without sigmas: --protocol coco refuses (no silent default), --protocol
    # ultralytics takes Ultralytics' 1/K and says so
    gt = ["0 0.5 0.5 0.5 0.5 0.4 0.4 2 0.6 0.6 2"]
    pred = ["0 0.5 0.5 0.5 0.5 0.41 0.4 2 0.6 0.6 2 0.9"]
    p, g = _write(tmp_path, gt, pred, "names: [a]\nkpt_shape: [2, 3]\n")
    with pytest.raises(UsageError, match="one sigma per keypoint"):
        evaluate(p, g, iou_type="keypoints", image_size=(100, 100))
    r = evaluate(p, g, iou_type="keypoints", image_size=(100, 100), protocol="ultralytics")
    assert "1/K = 1/2" in r.params["oks_sigmas"]
    assert r.summary["metrics/mAP50(P)"] == pytest.approx(0.995)  # Ultralytics' perfect AP


def test_two_value_labels_negative_is_unlabelled(tmp_path: Path) -> None:
    # kpt_shape [2, 2]: the second keypoint at (-1, -1) is not labelled (Ultralytics'
    # loader), so a prediction far from it loses nothing: OKS 1 on the first alone
    gt = ["0 0.5 0.5 0.5 0.5 0.4 0.4 -1 -1"]
    pred = ["0 0.5 0.5 0.5 0.5 0.4 0.4 0.9 0.9 0.9"]
    p, g = _write(tmp_path, gt, pred, "names: [a]\nkpt_shape: [2, 2]\nkpt_oks_sigmas: [0.1, 0.1]\n")
    # (Ultralytics' AP of a perfect match is 0.995: its trapezoid over 101 recall points)
    for protocol, key, best in (("coco", "AP", 1.0), ("ultralytics", "metrics/mAP50-95(P)", 0.995)):
        r = evaluate(p, g, iou_type="keypoints", image_size=(100, 100), protocol=protocol)
        assert r.summary[key] == pytest.approx(best), protocol


def test_per_keypoint_under_ultralytics_uses_its_oks() -> None:
    # --per-keypoint reads the pose matches and Ultralytics' OKS (area 0.53 x box): the
    # keypoints' parts of the OKS lost add up to 1 - the mean OKS of those true positives
    # (float32 OKS against the float64 terms: 1e-6)
    from tests.oracle.kptgen import random_kpt_scene

    gt, dets = random_kpt_scene(4, with_bbox=True)
    r = evaluate(dets, gt, iou_type="keypoints", protocol="ultralytics", per_keypoint=True)
    ev = r.evaluation
    assert isinstance(ev, UltralyticsPoseEvaluation)
    kp = r.analyses["per_keypoint"]
    t = ev.op_t
    score = ev.dataset.pred.score[ev.order]
    tp = (ev.taken[:, t] >= 0) & (score >= (ev.score_thr or -np.inf))
    assert kp["n_pairs"] == int(tp.sum()) > 0
    mean_oks = float(ev.taken_iou[tp, t].astype(np.float64).mean())
    lost = sum(row["oks_lost"] for row in kp["keypoints"])
    assert abs(lost - (1 - mean_oks)) <= 1e-6
    # pycocotools' annotated areas would give another split
    c = evaluate(dets, gt, iou_type="keypoints", per_keypoint=True)
    assert c.analyses["per_keypoint"]["keypoints"] != kp["keypoints"]
