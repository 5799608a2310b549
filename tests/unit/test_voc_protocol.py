"""The VOC protocol on small cases: peers' inline unit-test cases and hand calculations.

Sources (copied into tests/data/peers_voc/micro_cases.json, see tests/data/NOTICE):
TF-OD-API PascalEvaluationTest (continuous IoU, difficult ignored) and chainercv's VOC tests
(+1 pixel convention). Boxes there are [ymin, xmin, ymax, xmax]; we swap to xyxy.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from iou_cli.data import Boxes, Categories, Dataset, Images
from iou_cli.protocols.voc import class_curves, evaluate_voc, voc_ap, voc_match

MICRO = json.loads(
    (Path(__file__).parents[1] / "data" / "peers_voc" / "micro_cases.json").read_text()
)


def _yx(b: list[float]) -> list[float]:
    y1, x1, y2, x2 = b
    return [x1, y1, x2, y2]


def make_ds(
    n_img: int,
    names: list[str],
    gt: list[tuple[int, int, list[float], bool]],
    pred: list[tuple[int, int, list[float], float]],
) -> Dataset:
    """gt rows (image, class, xyxy, difficult); pred rows (image, class, xyxy, score)."""
    keys = [f"img{i}" for i in range(n_img)]
    images = Images(list(keys), list(keys), np.full(n_img, np.nan), np.full(n_img, np.nan))
    g = Boxes.build(
        np.array([r[2] for r in gt], dtype=float).reshape(-1, 4),
        image=[r[0] for r in gt],
        category=[r[1] for r in gt],
        difficult=[r[3] for r in gt],
    )
    p = Boxes.build(
        np.array([r[2] for r in pred], dtype=float).reshape(-1, 4),
        image=[r[0] for r in pred],
        category=[r[1] for r in pred],
        score=[r[3] for r in pred],
    )
    return Dataset(images, Categories([None] * len(names), list(names)), g, p)


def test_tf_od_api_pascal_case_with_difficult() -> None:
    case = MICRO["tensorflow_models_PascalEvaluationTest_boxes"]
    cats = case["categories"]  # {"1": "cat", ...}
    ids = sorted(cats, key=int)
    names = [cats[i] for i in ids]
    imgs = ["img1", "img2", "img3"]
    gt = []
    for im, rec in case["groundtruth"].items():
        diff = rec.get("difficult") or [False] * len(rec["boxes"])
        for b, c, d in zip(rec["boxes"], rec["classes"], diff, strict=True):
            gt.append((imgs.index(im), ids.index(str(c)), _yx(b), bool(d)))
    pred = []
    for im, rec in case["detections"].items():
        for b, c, s in zip(rec["boxes"], rec["classes"], rec["scores"], strict=True):
            pred.append((imgs.index(im), ids.index(str(c)), _yx(b), s))
    r = evaluate_voc(make_ds(3, names, gt, pred))
    ap = {row["name"]: row["AP"] for row in r.per_class}
    exp = case["expected"]  # asserted by TF-OD-API to 8 places
    assert ap["cat"] == pytest.approx(exp["AP@0.5IOU/cat"], abs=1e-8)
    assert ap["dog"] == 0.0 and ap["elephant"] == 0.0
    assert r.summary["mAP"] == pytest.approx(exp["mAP@0.5IOU"], abs=1e-8)
    # hand: cat has 3 non-difficult GT (the 500..510 box is difficult); one TP at rank 2
    # of 2 detections -> recall 1/3 at precision 1/2 -> AP = 1/3 * 1/2 = 1/6
    assert ap["cat"] == pytest.approx(1 / 6, abs=1e-15)
    assert {row["name"]: row["n_gt"] for row in r.per_class} == {"cat": 3, "dog": 1, "elephant": 2}


@pytest.mark.parametrize(
    "thr, recall, precision", [(0.5, [0, 0, 1], [0, 0, 1 / 3]), (0.97, [0, 0, 0], [0, 0, 0])]
)
def test_chainercv_one_bbox_plus_one(
    thr: float, recall: list[float], precision: list[float]
) -> None:
    case = MICRO["chainercv_TestEvalDetectionVOCOneBbox"]
    gt = [(0, 0, _yx(b), False) for b in case["gt_bboxes"]]
    pred = [
        (0, 0, _yx(b), s) for b, s in zip(case["pred_bboxes"], case["pred_scores"], strict=True)
    ]
    ds = make_ds(1, ["a"], gt, pred)
    m = voc_match(ds, iou_thr=thr, plus_one=True)
    # chainercv's comment: IoUs (with +1) are [0.95, 0.422, 0.3789] for scores 0.8, 0.9, 1.0
    assert m.iou.round(4).tolist() == [0.95, 0.4222, 0.3789]
    cur = class_curves(ds, m)[0]
    np.testing.assert_allclose(cur["recall"], recall, rtol=0, atol=1e-15)
    np.testing.assert_allclose(cur["precision"], precision, rtol=0, atol=1e-15)


def test_chainercv_difficult_plus_one() -> None:
    case = MICRO["chainercv_TestEvalDetectionVOCDifficults"]
    gt = [(0, 0, _yx(b), d) for b, d in zip(case["gt_bboxes"], case["gt_difficults"], strict=True)]
    pred = [
        (0, 0, _yx(b), s) for b, s in zip(case["pred_bboxes"], case["pred_scores"], strict=True)
    ]
    ds = make_ds(1, ["a"], gt, pred)
    cur = class_curves(ds, voc_match(ds, iou_thr=0.5, plus_one=True))[0]
    np.testing.assert_allclose(cur["recall"], case["expected"]["recall"], atol=1e-15)
    np.testing.assert_allclose(cur["precision"], case["expected"]["precision"], atol=1e-15)


@pytest.mark.parametrize("use_07, key", [(False, "ap_allpoint"), (True, "ap_07_11pt")])
def test_chainercv_multiple_boxes(use_07: bool, key: str) -> None:
    case = MICRO["chainercv_TestEvalDetectionVOCMultipleBboxes"]
    gt, pred = [], []
    for i, im in enumerate(case["images"]):
        gt += [(i, c, _yx(b), False) for b, c in zip(im["gt_bboxes"], im["gt_labels"], strict=True)]
        pred += [
            (i, c, _yx(b), s)
            for b, c, s in zip(im["pred_bboxes"], im["pred_labels"], im["pred_scores"], strict=True)
        ]
    ds = make_ds(2, ["c0", "c1"], gt, pred)
    r = evaluate_voc(ds, iou_thr=case["iou_thresh"], use_07=use_07, plus_one=True)
    exp = case["expected"]
    assert r.per_class[0]["AP"] == pytest.approx(exp["class0"][key], abs=1e-15)
    assert r.per_class[1]["AP"] == pytest.approx(exp["class1"][key], abs=1e-15)
    map_key = "map_allpoint" if not use_07 else "map_07_11pt"
    assert r.summary["mAP"] == pytest.approx(exp[map_key], abs=1e-15)


def test_duplicate_is_fp_and_difficult_is_neither() -> None:
    # hand case: one image, GT A=[0,0,10,10] and difficult D=[20,20,30,30]
    # scores: 0.9 on A (IoU 1) -> TP; 0.8 on A again (IoU 0.81) -> FP (duplicate);
    # 0.7 on D (IoU 1) -> neither; 0.6 far away -> FP.
    # Ranked counted: TP, FP, FP -> precision 1, 1/2, 1/3 at recall 1 -> AP 1.0
    ds = make_ds(
        1,
        ["x"],
        [(0, 0, [0, 0, 10, 10], False), (0, 0, [20, 20, 30, 30], True)],
        [
            (0, 0, [0, 0, 10, 10], 0.9),
            (0, 0, [0, 0, 9, 9], 0.8),
            (0, 0, [20, 20, 30, 30], 0.7),
            (0, 0, [50, 50, 60, 60], 0.6),
        ],
    )
    m = voc_match(ds)
    assert m.tp.tolist() == [True, False, False, False]
    assert m.fp.tolist() == [False, True, False, True]
    r = evaluate_voc(ds, score_thr=0.0)
    assert r.summary["mAP"] == 1.0
    assert r.per_class[0]["n_gt"] == 1 and r.per_class[0]["n_det"] == 4
    assert (r.summary["tp"], r.summary["fp"], r.summary["fn"]) == (1, 2, 0)
    cols = r.matches.columns if r.matches else {}
    assert cols["outcome"] == ["TP", "FP", "ignored", "FP"]
    assert cols["gt_id"].tolist() == [1, 1, 2, -1]
    assert math.isnan(cols["iou"][3]) and cols["iou"][1] == pytest.approx(0.81)


def test_threshold_is_inclusive_and_ties_keep_file_order() -> None:
    # IoU exactly 0.5: [0,0,10,10] vs [0,0,10,5] = 50/100 -> a TP at >= 0.5
    ds = make_ds(1, ["x"], [(0, 0, [0, 0, 10, 10], False)], [(0, 0, [0, 0, 10, 5], 0.5)])
    assert voc_match(ds).tp.tolist() == [True]
    # two detections with equal score on one GT: the first read takes it
    ds = make_ds(
        1,
        ["x"],
        [(0, 0, [0, 0, 10, 10], False)],
        [(0, 0, [0, 0, 10, 8], 0.5), (0, 0, [0, 0, 10, 10], 0.5)],
    )
    assert voc_match(ds).tp.tolist() == [True, False]


def test_class_without_gt_has_no_ap_and_empty_inputs() -> None:
    ds = make_ds(1, ["a", "b"], [(0, 0, [0, 0, 1, 1], False)], [(0, 1, [0, 0, 1, 1], 0.9)])
    r = evaluate_voc(ds)
    assert [row["AP"] for row in r.per_class] == [0.0, None]
    assert r.summary["mAP"] == 0.0
    empty = make_ds(1, ["a"], [], [])
    r = evaluate_voc(empty)
    assert r.summary["mAP"] is None and r.per_class[0]["AP"] is None
    assert r.params == {
        "protocol": "voc",
        "iou_thr": 0.5,
        "plus_one": False,
        "score_thr": None,
        "difficult": "ignored (neither TP nor FP; not counted in recall)",
    }


def test_voc_ap_formulas_by_hand() -> None:
    # recall [0.5, 0.5, 1.0], precision [1, 0.5, 2/3]: envelope 1 on (0, .5], 2/3 on (.5, 1]
    rec = np.array([0.5, 0.5, 1.0])
    prec = np.array([1.0, 0.5, 2 / 3])
    assert voc_ap(rec, prec) == pytest.approx(0.5 * 1 + 0.5 * 2 / 3, abs=1e-15)
    # 11-point: t = 0 .. 0.5 -> 1 (6 points), 0.6 .. 1.0 -> 2/3 (5 points)
    assert voc_ap(rec, prec, use_07=True) == pytest.approx((6 + 5 * 2 / 3) / 11, abs=1e-15)
