"""Confusion matrix, per-image view, label-error candidates, the --matches error column.

A hand-made scene pins every cell; random scenes pin the sums (GT rows = counted ground truths,
per-image rows = the summary's tp/fp/fn) and the error column against tidecv's error types.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from iou_cli import evaluate
from iou_cli.analysis.run import analyze
from iou_cli.options import AnalysisOptions
from tests.oracle.tide_oracle import run_tidecv
from tests.oracle.tidegen import harness_input, tide_scene

ALL = AnalysisOptions(tide=True, confusion=True, per_image=True, calibration=True)


def _hand() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    gt = {
        "images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "A"}, {"id": 2, "name": "B"}],
        "annotations": [
            {
                "id": 11,
                "image_id": 1,
                "category_id": 1,
                "bbox": [0, 0, 10, 10],
                "area": 100,
                "iscrowd": 0,
            },
            {
                "id": 12,
                "image_id": 1,
                "category_id": 2,
                "bbox": [20, 0, 10, 10],
                "area": 100,
                "iscrowd": 0,
            },
            {
                "id": 13,
                "image_id": 1,
                "category_id": 1,
                "bbox": [40, 0, 10, 10],
                "area": 100,
                "iscrowd": 0,
            },
        ],
    }
    dets = [
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9},  # TP
        {"image_id": 1, "category_id": 1, "bbox": [20, 0, 10, 10], "score": 0.8},  # A on B: cls
        {"image_id": 1, "category_id": 2, "bbox": [60, 60, 5, 5], "score": 0.7},  # bkg
        {"image_id": 1, "category_id": 1, "bbox": [0.5, 0, 10, 10], "score": 0.6},  # dupe
    ]
    return gt, dets


def test_hand_scene_every_cell() -> None:
    gt, dets = _hand()
    r = evaluate(dets, gt, score_thr=0.0, matches=True)
    analyze(r, ALL)
    conf = r.extra["confusion"]
    assert conf["labels"] == ["A", "B", "background"]
    # rows ground truth, columns prediction:
    #   A: 1 TP, 1 missed (background column); B: taken by the A prediction;
    #   background: the dupe (A) and the stray B box
    assert conf["matrix"] == [[1, 0, 1], [1, 0, 0], [1, 1, 0]]
    tide = r.extra["tide"]
    assert tide["count"] == {
        "Cls": 1,
        "Loc": 0,
        "Both": 0,
        "Dupe": 1,
        "Bkg": 1,
        "Miss": 1,
        "FalsePos": 3,
        "FalseNeg": 2,
    }
    (row,) = r.extra["per_image"]
    assert row == {
        "image": 1,
        "n_gt": 3,
        "n_pred": 4,
        "tp": 1,
        "fp": 3,
        "fn": 2,
        "cls": 1,
        "loc": 0,
        "both": 0,
        "dupe": 1,
        "bkg": 1,
    }
    lab = r.extra["label_errors"]
    assert [(x["kind"], x["score"], x["gt_id"], x["gt_category"], x["iou"]) for x in lab] == [
        ("wrong_label", 0.8, 12, "B", 1.0),
        ("missing_annotation", 0.7, None, None, None),
    ]
    assert lab[0]["bbox"] == [20.0, 0.0, 10.0, 10.0]
    m = r.matches.columns
    fp_rows = [i for i, o in enumerate(m["outcome"]) if o == "FP"]  # (class, score) order
    assert [m["error"][i] for i in fp_rows] == ["cls", "dupe", "bkg"]
    assert [int(m["best_gt_id"][i]) for i in fp_rows] == [12, 11, -1]
    assert [m["best_gt_class"][i] for i in fp_rows] == ["B", "A", ""]
    # dupe: IoU of [0.5, 0, 10, 10] with [0, 0, 10, 10] = 95 / 105
    assert m["best_gt_iou"][fp_rows[1]] == 95 / 105
    assert np.isnan(m["best_gt_iou"][fp_rows[2]])
    cal = r.extra["calibration"]["overall"]
    # bins (0.5, 0.6]: 0.6 wrong; (0.6, 0.7]: 0.7 wrong; (0.7, 0.8]: 0.8 wrong; (0.8, 0.9]: 0.9 right
    # ECE = (0.6 + 0.7 + 0.8 + 0.1) / 4 = 0.55; MCE = 0.8
    assert cal["ece"] == pytest.approx(0.55, abs=1e-15)
    assert cal["mce"] == pytest.approx(0.8, abs=1e-15)


@pytest.mark.parametrize("seed", range(12))
def test_sums_match_the_summary(seed: int) -> None:
    gt, dets = tide_scene(seed)
    r = evaluate(dets, gt)
    analyze(r, ALL)
    s = r.summary
    rows = r.extra["per_image"]
    assert sum(x["tp"] for x in rows) == s["tp"]
    assert sum(x["fp"] for x in rows) == s["fp"]
    assert sum(x["fn"] for x in rows) == s["fn"]
    m = np.asarray(r.extra["confusion"]["matrix"])
    K = m.shape[0] - 1
    n_gt = [row["n_gt"] for row in r.per_class]
    assert m[:K].sum(axis=1).tolist() == n_gt
    assert m[K, K] == 0
    assert np.trace(m[:K, :K]) == s["tp"]
    assert [int(m[k, k]) for k in range(K)] == [row["tp"] for row in r.per_class]
    assert int(m[:, :K].sum()) == s["tp"] + s["fp"]
    assert int(m[:K, K].sum()) + int(m[:K, :K].sum()) == sum(n_gt)


def test_matches_error_column_equals_tidecv() -> None:
    built = [tide_scene(seed) for seed in range(6)]
    oracle = run_tidecv([harness_input(gt, dets) for gt, dets in built])
    name = {"Cls": "cls", "Loc": "loc", "Both": "both", "Dupe": "dupe", "Bkg": "bkg"}
    for (gt, dets), o in zip(built, oracle, strict=True):
        r = evaluate(dets, gt, score_thr=0.0, matches=True)
        analyze(r, AnalysisOptions())
        m = r.matches.columns
        ours = {
            int(m["pred_id"][i]) - 1: m["error"][i]
            for i, out in enumerate(m["outcome"])
            if out == "FP"
        }
        theirs = {int(k): name[v] for k, v in o["pred_error"].items()}
        assert ours == theirs


def test_no_ground_truth_leaves_tide_undefined() -> None:
    gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "a"}], "annotations": []}
    dets = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5}]
    r = evaluate(dets, gt)
    analyze(r, ALL)
    tide = r.extra["tide"]
    assert r.summary["AP50"] is None and tide["baseline"] is None
    assert set(tide["dAP"].values()) == {None}
    assert tide["count"]["Bkg"] == 1
    assert r.extra["confusion"]["matrix"] == [[0, 0], [1, 0]]


def test_segm_tide_baseline_and_counts() -> None:
    r = evaluate(
        "tests/data/segm/instances_val2014_fakesegm100_results.json",
        "tests/data/coco/instances_val2014_100.json",
        iou_type="segm",
    )
    analyze(r, ALL)
    tide = r.extra["tide"]
    assert tide["baseline"] == r.summary["AP50"]
    c = tide["count"]
    assert c["Cls"] + c["Loc"] + c["Both"] + c["Dupe"] + c["Bkg"] == c["FalsePos"]
    assert all(v is not None and v >= 0 for k, v in tide["dAP"].items() if k != "FalsePos")
