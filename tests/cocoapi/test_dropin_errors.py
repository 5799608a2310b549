"""The drop-in's refusals: located library errors (never AssertionError or KeyError), and
quiet evaluation (only summarize() prints)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

from iou_cli.cocoapi import COCO, COCOeval
from iou_cli.errors import InputError, UsageError

GT = {
    "images": [{"id": 1, "width": 20, "height": 10}],
    "annotations": [
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 4], "area": 16, "iscrowd": 0}
    ],
    "categories": [{"id": 1, "name": "a"}],
}


def test_unreadable_and_malformed_ground_truth(tmp_path: Path) -> None:
    bad = tmp_path / "gt.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match=r"gt\.json: cannot read a COCO JSON file"):
        COCO(bad)
    with pytest.raises(InputError, match=r"missing\.json: cannot read"):
        COCO(tmp_path / "missing.json")
    with pytest.raises(InputError, match="expected a path or a COCO dict"):
        COCO([1])  # type: ignore[arg-type]
    top = tmp_path / "list.json"
    top.write_text("[]")
    with pytest.raises(InputError, match=r"list\.json: expected a COCO object"):
        COCO(top)
    with pytest.raises(InputError, match=r"annotations\[0\]: expected an object with an 'id'"):
        COCO({"annotations": [{"image_id": 1}]})


def test_result_refusals_are_located() -> None:
    gt = COCO(GT)
    with pytest.raises(InputError, match=r"\[1\]\.image_id: image 7 is not in the ground truth"):
        gt.loadRes(
            [
                {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1},
                {"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1},
            ]
        )
    with pytest.raises(InputError, match=r"\[0\]: a result needs a 'bbox' or a 'segmentation'"):
        gt.loadRes([{"image_id": 1, "category_id": 1, "score": 1}])
    with pytest.raises(InputError, match=r"\[1\]\.bbox: expected \[x, y, w, h\]"):
        gt.loadRes(
            [
                {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1},
                {"image_id": 1, "category_id": 1, "bbox": [0, 0], "score": 1},
            ]
        )
    with pytest.raises(InputError, match="expected a list of results"):
        gt.loadRes({"image_id": 1})
    with pytest.raises(UsageError, match=r"expected an \(N, 7\) array"):
        gt.loadRes(np.zeros((2, 6)))


def test_call_order_and_iou_type() -> None:
    gt = COCO(GT)
    with pytest.raises(UsageError, match="keypoints"):
        COCOeval(gt, gt, "keypoints")
    ev = COCOeval(gt, gt.loadRes([]), "bbox")
    with pytest.raises(UsageError, match="evaluate"):
        ev.accumulate()
    with pytest.raises(UsageError, match="accumulate"):
        ev.summarize()
    with pytest.raises(UsageError, match="cocoGt and cocoDt"):
        COCOeval(gt, None, "bbox").evaluate()


def test_results_not_edited_and_only_summarize_prints() -> None:
    gt = COCO(GT)
    dets = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 4], "score": 0.9}]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ev = COCOeval(gt, gt.loadRes(dets), "bbox")
        ev.evaluate()
        ev.accumulate()
    assert out.getvalue() == ""
    assert dets == [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 4], "score": 0.9}]
    with contextlib.redirect_stdout(out):
        ev.summarize()
    assert len(out.getvalue().splitlines()) == 12
    # one perfect detection: precision tp / (tp + fp + eps) = 1 / (1 + 2**-52) at every recall
    assert ev.stats[0] == 1 / (1 + np.spacing(1))
