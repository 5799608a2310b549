"""COCO protocol against published values on real COCO data (copied fixtures, see NOTICE)."""

from __future__ import annotations

import pytest

from iou_cli.api import evaluate
from tests.conftest import DATA
from tests.oracle.pycoco import STAT_KEYS

COCO = DATA / "coco"

# faster_coco_eval tests/test_cocoapi_fake_data.py (asserted to 10 places there; pycocotools
# 2.0.11 gives these exact doubles; cocoapi publishes them rounded: 0.505 0.697 0.573 ...)
FAKEBBOX100 = [
    0.5045806987249628, 0.6969727247299577, 0.5729816669904824, 0.5856257209410443,
    0.5193996948036719, 0.5013978986347466, 0.38681277964578054, 0.5936795762842003,
    0.595352982877607, 0.6398109626113442, 0.5664205978994309, 0.5642905982905982,
]  # fmt: skip

# review_object_detection_metrics tests/test_eval_coco.py (tolerance 1e-6 there), the same
# detections against the ground truth without crowd regions and with area = w*h
REVIEW_NO_CROWD = [
    0.503647, 0.696973, 0.571667, 0.593252, 0.557991, 0.489363,
    0.386813, 0.593680, 0.595353, 0.654764, 0.603130, 0.553744,
]  # fmt: skip


def test_cocoapi_fake_bbox_results_match_to_1e12() -> None:
    r = evaluate(
        str(COCO / "instances_val2014_fakebbox100_results.json"),
        str(COCO / "instances_val2014_100.json"),
    )
    got = [r.summary[k] for k in STAT_KEYS]
    assert got == pytest.approx(FAKEBBOX100, abs=1e-12)


def test_cocoapi_fake_bbox_results_are_bit_identical() -> None:
    # stronger than the 1e-12: the same doubles pycocotools computes
    r = evaluate(
        str(COCO / "instances_val2014_fakebbox100_results.json"),
        str(COCO / "instances_val2014_100.json"),
    )
    assert [r.summary[k] for k in STAT_KEYS] == FAKEBBOX100


def test_review_variant_without_crowd() -> None:
    # predictions given as a COCO dataset whose annotations carry scores
    r = evaluate(str(COCO / "sampled_bbox_results.json"), str(COCO / "sampled_gts_bbox_area.json"))
    got = [r.summary[k] for k in STAT_KEYS]
    assert got == pytest.approx(REVIEW_NO_CROWD, abs=1e-6)


def test_review_variant_equals_pycocotools_exactly() -> None:
    import json

    from tests.oracle.pycoco import pycoco_eval, stats_of

    gt = json.loads((COCO / "sampled_gts_bbox_area.json").read_text())
    dets = json.loads((COCO / "sampled_bbox_results.json").read_text())["annotations"]
    ev = pycoco_eval(gt, dets)
    r = evaluate(str(COCO / "sampled_bbox_results.json"), str(COCO / "sampled_gts_bbox_area.json"))
    assert [r.summary[k] for k in STAT_KEYS] == stats_of(ev)


def test_per_class_ap_equals_pycocotools_on_real_set() -> None:
    import json

    from tests.oracle.pycoco import per_class_ap, pycoco_eval

    gt = json.loads((COCO / "instances_val2014_100.json").read_text())
    dets = json.loads((COCO / "instances_val2014_fakebbox100_results.json").read_text())
    ev = pycoco_eval(gt, dets)
    r = evaluate(
        str(COCO / "instances_val2014_fakebbox100_results.json"),
        str(COCO / "instances_val2014_100.json"),
    )
    assert [row["AP"] for row in r.per_class] == per_class_ap(ev)


def test_segm_equals_pycocotools_bit_for_bit() -> None:
    import json

    from tests.oracle.pycoco import pycoco_eval, stats_of

    segm = DATA / "segm" / "instances_val2014_fakesegm100_results.json"
    gt = json.loads((COCO / "instances_val2014_100.json").read_text())
    ev = pycoco_eval(gt, json.loads(segm.read_text()), "segm")
    r = evaluate(str(segm), str(COCO / "instances_val2014_100.json"), iou_type="segm")
    assert [r.summary[k] for k in STAT_KEYS] == stats_of(ev)
