"""``--iou-type segm`` against pycocotools and peer-published values (tests/data/segm, NOTICE).

* cocoapi val2014 100-image set with the official fake segm results: the 12 stats that
  faster_coco_eval asserts (tests/test_cocoapi_fake_data.py, places=10), here to 1e-12;
  pycocotools reproduces them (peers README: max difference 1.1e-16).
* faster_coco_eval's small polygon set (gt_dataset / dt_dataset): its asserted stats were
  produced with the detections' polygons merged to RLE and their bbox dropped (loadRes then
  takes mask areas); as shipped (bbox present, loadRes takes w*h) pycocotools gives another
  APm. Both are pinned.
* detectron2's case (faster_coco_eval test_coco_metric.py, asserted against pycocotools to
  12 places).
* Live: every (image, category) IoU matrix equals COCOeval.computeIoU's, and every mask
  equals COCO.annToRLE's.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate

DATA = Path(__file__).resolve().parents[1] / "data" / "segm"
KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"]

GT100 = DATA.parent / "coco" / "instances_val2014_100.json"  # shared with the bbox tests
SEGM100 = DATA / "instances_val2014_fakesegm100_results.json"

# faster_coco_eval tests/test_cocoapi_fake_data.py (segm); cocoapi's published 3-decimal
# results/val2014_fake_eval_res.txt: 0.320 0.562 0.299 0.387 0.310 0.327 0.268 0.415 0.417
# 0.469 0.377 0.381
FCE_SEGM = [
    0.3195452758576433,
    0.5622883972521636,
    0.29892653412086784,
    0.3873740315997838,
    0.31018272403369485,
    0.3269339071005138,
    0.2682297225711534,
    0.41544868114906375,
    0.4168394992198818,
    0.4694498622754236,
    0.37675922666197265,
    0.3814715099715099,
]
# faster_coco_eval tests/test_basic.py::test_coco_eval (segm; detection bbox dropped)
FCE_SMALL = [
    0.6947194719471946,
    0.6947194719471946,
    0.6947194719471946,
    None,
    0.7367986798679867,
    0.0,
    0.6666666666666666,
    0.75,
    0.75,
    None,
    0.7916666666666666,
    0.0,
]
# faster_coco_eval tests/test_coco_metric.py::test_detectron2_eval (segm)
DETECTRON2 = [0.7252475247524752, 1, 1, 0.8, 0.7, None, 0.35, 0.75, 0.75, 0.8, 0.7, None]


def _check(summary: dict[str, Any], expected: list[float | None], tol: float) -> None:
    for key, want in zip(KEYS, expected, strict=True):
        got = summary[key]
        if want is None:
            assert got is None, key
        else:
            assert got == pytest.approx(want, abs=tol, rel=0), key


def test_cocoapi_fake_segm_100_parity() -> None:
    result = evaluate(str(SEGM100), str(GT100), iou_type="segm")
    _check(result.summary, FCE_SEGM, 1e-12)


def test_small_polygon_set_as_the_peer_ran_it(tmp_path: Path) -> None:
    """Detections without bbox: prediction area = mask area (loadRes segmentation branch)."""
    dts = json.loads((DATA / "dt_dataset.json").read_text())
    for d in dts:
        d.pop("bbox")
    p = tmp_path / "dt_nobbox.json"
    p.write_text(json.dumps(dts))
    result = evaluate(str(p), str(DATA / "gt_dataset.json"), iou_type="segm")
    _check(result.summary, FCE_SMALL, 1e-12)


def test_small_polygon_set_as_shipped_matches_pycocotools() -> None:
    """With bbox in the results, pycocotools' loadRes sets area = w*h: APm 0.7920792079207921
    (pycocotools 2.0.11), everything else as the peer's values."""
    result = evaluate(str(DATA / "dt_dataset.json"), str(DATA / "gt_dataset.json"), iou_type="segm")
    expected = list(FCE_SMALL)
    expected[KEYS.index("APm")] = 0.7920792079207921
    _check(result.summary, expected, 1e-12)


def test_detectron2_case() -> None:
    d = DATA / "detectron2_case"
    result = evaluate(str(d / "detections.json"), str(d / "gt_annotations.json"), iou_type="segm")
    _check(result.summary, DETECTRON2, 1e-12)


def _quiet_coco(gt_path: Path, dt_path: Path) -> Any:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(gt_path))
        dt = gt.loadRes(str(dt_path))
        ev = COCOeval(gt, dt, "segm")
        ev.evaluate()
    return gt, dt, ev


def test_group_iou_equals_cocoeval_compute_iou() -> None:
    """Every (image, category) IoU matrix of the 100-image set, computed by the mask kernel on
    our converted masks, is bit-identical to COCOeval.computeIoU (its ``ious`` dict)."""
    from iou_cli.api import load_pair
    from iou_cli.geometry.masks import group_iou
    from iou_cli.options import LoadOptions

    _gt, _dt, ev = _quiet_coco(GT100, SEGM100)
    ds = load_pair(str(SEGM100), str(GT100), LoadOptions(iou_type="segm"))
    img_keys = ds.images.keys
    cat_ids = ds.categories.ids
    pm, gm = ds.pred.masks, ds.gt.masks
    assert pm is not None and gm is not None
    checked = 0
    for (img_id, cat_id), ious in ev.ious.items():
        i = img_keys.index(img_id)
        k = cat_ids.index(cat_id)
        d_rows = np.flatnonzero((ds.pred.image == i) & (ds.pred.category == k))
        g_rows = np.flatnonzero((ds.gt.image == i) & (ds.gt.category == k))
        # COCOeval: detections by score (mergesort), at most maxDets[-1]; GT in file order
        d_rows = d_rows[np.argsort(-ds.pred.score[d_rows], kind="mergesort")][:100]
        got = group_iou([pm[r] for r in d_rows], [gm[r] for r in g_rows], ds.gt.iscrowd[g_rows])
        if len(d_rows) and len(g_rows):
            np.testing.assert_array_equal(got, np.asarray(ious, dtype=np.float64))
            checked += 1
        else:  # pycocotools gives [] for an empty side, we give a (D, 0) / (0, G) array
            assert len(ious) == 0 and got.size == 0
    assert checked > 100
    # crowd ground truths take part (9 crowd RLE annotations in this set)
    assert int(ds.gt.iscrowd.sum()) == 9


def test_masks_and_areas_equal_pycocotools() -> None:
    """Every GT mask equals COCO.annToRLE's; every prediction's area equals loadRes's."""
    from iou_cli.api import load_pair
    from iou_cli.options import LoadOptions

    gt, dt, _ev = _quiet_coco(GT100, SEGM100)
    ds = load_pair(str(SEGM100), str(GT100), LoadOptions(iou_type="segm"))
    assert ds.gt.masks is not None and ds.pred.masks is not None
    id_to_row = {int(a): r for r, a in enumerate(ds.gt.ids)}
    for ann in gt.dataset["annotations"]:
        want = gt.annToRLE(copy.deepcopy(ann))
        got = ds.gt.masks[id_to_row[ann["id"]]]
        wc = want["counts"]
        assert got["counts"] == (wc.encode() if isinstance(wc, str) else wc), ann["id"]
        assert ds.gt.area[id_to_row[ann["id"]]] == ann["area"]
    for r, ann in enumerate(dt.dataset["annotations"]):
        assert ds.pred.area[r] == ann["area"]
