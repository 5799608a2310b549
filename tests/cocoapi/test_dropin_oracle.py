"""iou_cli.cocoapi against pycocotools itself: every params variant, bbox and segm, random
scenes (tests/oracle/cocogen: integer IoU ties, score ties, crowds, empty images, more
detections than maxDets): ``eval`` arrays and ``stats`` array_equal, ``summarize()`` text
identical, ``evalImgs`` records equal field by field, and records fed back through
``evalImgs =`` accumulate to the same arrays."""

from __future__ import annotations

import contextlib
import copy
import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from iou_cli.cocoapi import COCO, COCOeval
from tests.cocoapi.scenes import pycoco_objects, scene

pytest.importorskip("pycocotools")

# each variant edits params (pycocotools' and ours the same way) before evaluate()
VARIANTS: dict[str, Callable[[Any, Any], None]] = {
    "default": lambda p, rng: None,
    "imgIds": lambda p, rng: setattr(
        p, "imgIds", sorted(rng.choice(p.imgIds, size=len(p.imgIds) // 2, replace=False).tolist())
    ),
    "catIds": lambda p, rng: setattr(p, "catIds", [p.catIds[0], p.catIds[2], p.catIds[-1]]),
    "useCats0": lambda p, rng: setattr(p, "useCats", 0),
    "iouThrs": lambda p, rng: setattr(p, "iouThrs", np.array([0.3, 0.5, 0.75, 0.9])),
    "recThrs": lambda p, rng: setattr(p, "recThrs", np.linspace(0.0, 1.0, 11)),
    "maxDets": lambda p, rng: setattr(p, "maxDets", [20, 1, 5]),
    "areaRng": lambda p, rng: (
        setattr(p, "areaRng", [[0, 1e10], [0, 400], [400, 3000], [3000, 1e10], [100, 200]]),
        setattr(p, "areaRngLbl", ["all", "small", "medium", "large", "band"]),
    ),
    "areaRngFew": lambda p, rng: (
        setattr(p, "areaRng", [[0, 1e10], [0, 900]]),
        setattr(p, "areaRngLbl", ["all", "tiny"]),
    ),
}


def _run(cls: Any, gt: Any, dt: Any, iou_type: str, variant: str, seed: int) -> tuple[Any, str]:
    ev = cls(gt, dt, iou_type)
    VARIANTS[variant](ev.params, np.random.default_rng(seed))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ev.evaluate()
        ev.accumulate()
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        ev.summarize()
    assert out.getvalue() == "" or cls is not COCOeval  # the drop-in is quiet
    return ev, text.getvalue()


def _same_records(ours: list[Any], ref: list[Any]) -> None:
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref, strict=True):
        assert (a is None) == (b is None)
        if b is None:
            continue
        assert set(a) == set(b)
        for key in b:
            assert np.array_equal(np.asarray(a[key]), np.asarray(b[key])), key


@pytest.mark.parametrize("iou_type", ["bbox", "segm"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_equals_pycocotools(iou_type: str, variant: str) -> None:
    from pycocotools.cocoeval import COCOeval as RefEval

    for seed in range(2 if iou_type == "segm" else 3):
        gt, dets = scene(seed, iou_type)
        p_gt, p_dt = pycoco_objects(gt, dets)
        ref, ref_text = _run(RefEval, p_gt, p_dt, iou_type, variant, seed)
        ours_gt = COCO(copy.deepcopy(gt))
        ours, text = _run(
            COCOeval, ours_gt, ours_gt.loadRes(copy.deepcopy(dets)), iou_type, variant, seed
        )
        for key in ("precision", "recall", "scores"):
            assert np.array_equal(ours.eval[key], ref.eval[key]), (seed, key)
        assert ours.eval["counts"] == ref.eval["counts"]
        assert np.array_equal(ours.stats, ref.stats), seed
        assert text == ref_text
        _same_records(ours.evalImgs, ref.evalImgs)
        # pycocotools' own COCO objects in our COCOeval
        mixed, _ = _run(COCOeval, p_gt, p_dt, iou_type, variant, seed)
        assert np.array_equal(mixed.eval["precision"], ref.eval["precision"])
        # records assigned back (what gathering code does) accumulate to the same arrays
        again = COCOeval(ours_gt, ours.cocoDt, iou_type)
        VARIANTS[variant](again.params, np.random.default_rng(seed))
        again.evaluate()
        again.evalImgs = [copy.deepcopy(r) for r in ours.evalImgs]
        again.accumulate()
        for key in ("precision", "recall", "scores"):
            assert np.array_equal(again.eval[key], ref.eval[key]), (seed, key, "records")


def test_load_res_and_getters_match_pycocotools() -> None:
    gt, dets = scene(3, "bbox")
    p_gt, p_dt = pycoco_objects(gt, dets)
    ours = COCO(copy.deepcopy(gt))
    res = ours.loadRes(copy.deepcopy(dets))
    assert res.anns == p_dt.anns
    assert ours.getImgIds() == p_gt.getImgIds()
    assert ours.getCatIds() == p_gt.getCatIds()
    cat = ours.getCatIds()[1]
    img = ours.getImgIds()[2]
    assert sorted(ours.getImgIds(catIds=[cat])) == sorted(p_gt.getImgIds(catIds=[cat]))
    assert ours.getAnnIds(imgIds=[img]) == p_gt.getAnnIds(imgIds=[img])
    assert ours.getAnnIds(catIds=cat, iscrowd=False) == p_gt.getAnnIds(catIds=cat, iscrowd=False)
    assert ours.getAnnIds(areaRng=[100, 900]) == p_gt.getAnnIds(areaRng=[100, 900])
    assert ours.loadAnns(ours.getAnnIds(imgIds=img)) == p_gt.loadAnns(p_gt.getAnnIds(imgIds=img))
    assert ours.loadImgs(img) == p_gt.loadImgs(img)
    assert ours.loadCats(cat) == p_gt.loadCats(cat)
    assert ours.getCatIds(catNms=["class2"]) == p_gt.getCatIds(catNms=["class2"])
    # results from an array: [image_id, x, y, w, h, score, category_id]
    rows = np.array([[d["image_id"], *d["bbox"], d["score"], d["category_id"]] for d in dets])
    assert ours.loadRes(rows).anns == p_gt.loadRes(rows).anns


def test_segm_load_res_and_masks_match_pycocotools() -> None:
    gt, dets = scene(4, "segm")
    p_gt, p_dt = pycoco_objects(gt, dets)
    ours = COCO(copy.deepcopy(gt))
    res = ours.loadRes(copy.deepcopy(dets))
    for i, ann in res.anns.items():
        ref = p_dt.anns[i]
        assert ann["area"] == ref["area"]
        assert np.array_equal(ann["bbox"], ref["bbox"])
    for ann in gt["annotations"][:20]:
        assert np.array_equal(ours.annToMask(ann), p_gt.annToMask(ann))


@pytest.mark.slow
@pytest.mark.parametrize("iou_type", ["bbox", "segm"])
def test_equals_pycocotools_many_scenes(iou_type: str) -> None:
    """40 more scenes per iou type, every variant (``make test-slow``)."""
    from pycocotools.cocoeval import COCOeval as RefEval

    for seed in range(100, 140):
        gt, dets = scene(seed, iou_type)
        p_gt, p_dt = pycoco_objects(gt, dets)
        ours_gt = COCO(copy.deepcopy(gt))
        ours_dt = ours_gt.loadRes(copy.deepcopy(dets))
        variant = list(VARIANTS)[seed % len(VARIANTS)]
        ref, ref_text = _run(RefEval, p_gt, p_dt, iou_type, variant, seed)
        ours, text = _run(COCOeval, ours_gt, ours_dt, iou_type, variant, seed)
        for key in ("precision", "recall", "scores"):
            assert np.array_equal(ours.eval[key], ref.eval[key]), (seed, variant, key)
        assert np.array_equal(ours.stats, ref.stats), (seed, variant)
        assert text == ref_text
