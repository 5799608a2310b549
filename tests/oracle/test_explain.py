"""``explain`` (coco -> ultralytics): the steps add up to the total and both ends are the
protocols' own results; the pycocotools-style accumulation used between them is pycocotools'
(checked on the COCO protocol's own match bits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.analysis.explain import _no_ignore, coco_ap, explain
from iou_cli.api import evaluate
from iou_cli.protocols import coco
from tests.oracle.cocogen import random_scene

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
UL = {"AP": "metrics/mAP50-95(B)", "AP50": "metrics/mAP50(B)"}


def _dataset(result: Any) -> Any:
    return result.evaluation.dataset


def _check(preds: Any, gt: Any) -> None:
    c = evaluate(preds, gt)
    u = evaluate(preds, gt, protocol="ultralytics")
    ex = explain(_dataset(c))
    for key in ("AP", "AP50", "AP75"):
        assert ex.start[key] == c.summary[key]
        if ex.start[key] is None:
            continue
        total = ex.total[key]
        assert total is not None
        assert abs(sum(s.effect[key] or 0.0 for s in ex.steps) - total) <= 1e-12
        assert ex.steps[-1].values[key] == ex.end[key]
    for key, ukey in UL.items():
        assert ex.end[key] == u.summary[ukey]
    assert [r["step"] for r in ex.rows()][0] == "coco (start)"


def test_sample_data() -> None:
    _check(str(SAMPLE / "coco" / "preds.json"), str(SAMPLE / "coco" / "gt.json"))
    ex = explain(_dataset(evaluate(str(SAMPLE / "coco" / "preds.json"), str(SAMPLE / "coco" / "gt.json"))))  # fmt: skip
    # the sample's crowd regions are the biggest step (README: why numbers differ)
    big = ex.biggest()
    assert big is not None and big.name == "crowd and ignore"
    assert "crowd and ignore" in ex.reading()


@pytest.mark.parametrize("seed", range(6))
def test_random_scenes(seed: int) -> None:
    gt, dets = random_scene(seed)
    _check(dets, gt)


@pytest.mark.parametrize("seed", range(4))
def test_coco_ap_is_pycocotools_accumulation(seed: int) -> None:
    gt, dets = random_scene(seed)
    ds = _no_ignore(_dataset(evaluate(dets, gt)))
    ev = coco.run(ds, coco.CocoParams(max_dets=(1, 10, 1000)))
    t = ev.table
    bits = np.stack([t.tp(i) for i in range(10)], axis=1)
    order = np.lexsort((t.det, -t.det_score, t.det_image))
    n_gt = np.bincount(ds.gt.category, minlength=len(ds.categories))
    got = coco_ap(bits[order], t.det_score[order], t.det_category[order], n_gt)
    st = ev.stats()
    for key in ("AP", "AP50", "AP75"):
        assert got[key] == pytest.approx(st[key], abs=1e-12)


@pytest.mark.parametrize("target", ["voc", "voc07"])
@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3])
def test_to_voc(seed: int | None, target: str) -> None:
    if seed is None:
        preds: Any = str(SAMPLE / "coco" / "preds.json")
        gt: Any = str(SAMPLE / "coco" / "gt.json")
    else:
        gt, preds = random_scene(seed)
    c = evaluate(preds, gt)
    v = evaluate(preds, gt, protocol=target)
    ex = explain(_dataset(c), target=target)
    assert ex.keys == [("AP50", "mAP")]
    assert ex.start["AP50"] == c.summary["AP50"]
    assert ex.end["AP50"] == v.summary["mAP"]
    total = ex.total["AP50"]
    assert total is not None
    assert abs(sum(s.effect["AP50"] or 0.0 for s in ex.steps) - total) <= 1e-12


@pytest.mark.parametrize("seed", [0, 3])
def test_rotated_boxes_to_ultralytics(seed: int) -> None:
    """Rotated boxes: COCO on polygon IoU -> Ultralytics' probiou; one step more (polygon
    IoU -> probiou, which the turned squares of the scene move), ends the protocols' own."""
    from .obbgen import rotated_scene

    gt, dets = rotated_scene(seed)
    c = evaluate(dets, gt, iou_type="obb")
    u = evaluate(dets, gt, protocol="ultralytics", iou_type="obb")
    ex = explain(_dataset(c), iou_type="obb")
    names = [s.name for s in ex.steps]
    assert names.index("IoU") == names.index("matching rule") + 1
    for key in ("AP", "AP50", "AP75"):
        start, end = ex.start[key], ex.end[key]
        assert start is not None and end is not None and start == c.summary[key]
        walked = start + sum(s.effect[key] or 0.0 for s in ex.steps)
        assert abs(walked - end) < 1e-12
    assert ex.end["AP"] == u.summary["metrics/mAP50-95(B)"]
    assert ex.end["AP50"] == u.summary["metrics/mAP50(B)"]
    step = ex.steps[names.index("IoU")]
    assert step.before == "polygon IoU" and step.effect["AP"]  # probiou moves AP here


def test_rotated_boxes_to_voc() -> None:
    from .obbgen import rotated_scene

    gt, dets = rotated_scene(1)
    ex = explain(_dataset(evaluate(dets, gt, iou_type="obb")), target="voc")
    assert ex.end["AP50"] == evaluate(dets, gt, iou_type="obb", protocol="voc").summary["mAP"]
