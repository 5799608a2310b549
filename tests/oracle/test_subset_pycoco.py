"""--class-agnostic, --classes, --image-ids against pycocotools with useCats=0 / catIds /
imgIds restricted: the 12 stats (and per-class AP) equal to the last digit (==, no tolerance).

The random scenes (tests/oracle/cocogen.py) have integer boxes (exact IoU ties), score ties,
crowd regions and images with more than 100 detections, so the order in which pycocotools
concatenates categories under useCats=0 (and cuts maxDets per image across them) is tested.
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
from iou_cli.errors import UsageError
from tests.oracle.cocogen import random_scene
from tests.oracle.pycoco import STAT_KEYS, per_class_ap, stats_of


def _pycoco(gt: dict[str, Any], dets: list[dict[str, Any]], **params: Any) -> Any:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = copy.deepcopy(gt)
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(copy.deepcopy(dets))
        ev = COCOeval(coco_gt, coco_dt, "bbox")
        for k, v in params.items():
            setattr(ev.params, k, v)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def _files(tmp_path: Path, seed: int) -> tuple[dict[str, Any], list[dict[str, Any]], str, str]:
    gt, dets = random_scene(seed)
    if not dets:
        pytest.skip("pycocotools cannot load an empty result list")
    g = tmp_path / "gt.json"
    d = tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    return gt, dets, str(d), str(g)


def _stats(result: Any) -> list[float | None]:
    return [result.summary[k] for k in STAT_KEYS]


@pytest.mark.parametrize("seed", range(25))
def test_class_agnostic_equals_usecats_0(tmp_path: Path, seed: int) -> None:
    gt, dets, d, g = _files(tmp_path, seed)
    ev = _pycoco(gt, dets, useCats=0)
    r = evaluate(d, g, class_agnostic=True)
    assert _stats(r) == stats_of(ev)
    assert len(r.per_class) == 1
    assert r.per_class[0]["AP"] == stats_of(ev)[0]


@pytest.mark.parametrize("seed", range(15))
def test_classes_equal_restricted_catids(tmp_path: Path, seed: int) -> None:
    gt, dets, d, g = _files(tmp_path, seed)
    rng = np.random.default_rng(seed)
    cats = sorted(c["id"] for c in gt["categories"])
    pick = sorted(int(c) for c in rng.choice(cats, size=2, replace=False))
    ev = _pycoco(gt, dets, catIds=pick)
    names = {c["id"]: c["name"] for c in gt["categories"]}
    # names and ids are both accepted
    r = evaluate(d, g, classes=[names[pick[0]], str(pick[1])])
    assert _stats(r) == stats_of(ev)
    assert [row["AP"] for row in r.per_class] == per_class_ap(ev)
    assert [row["category_id"] for row in r.per_class] == pick
    # and combined with --class-agnostic: useCats=0 over the restricted catIds
    ev0 = _pycoco(gt, dets, catIds=pick, useCats=0)
    r0 = evaluate(d, g, classes=[str(c) for c in pick], class_agnostic=True)
    assert _stats(r0) == stats_of(ev0)


@pytest.mark.parametrize("seed", range(15))
def test_image_ids_equal_restricted_imgids(tmp_path: Path, seed: int) -> None:
    gt, dets, d, g = _files(tmp_path, seed)
    rng = np.random.default_rng(100 + seed)
    ids = [im["id"] for im in gt["images"]]
    pick = [int(i) for i in rng.choice(ids, size=5, replace=False)]
    ev = _pycoco(gt, dets, imgIds=sorted(pick))
    r = evaluate(d, g, image_ids=[str(i) for i in pick])
    assert _stats(r) == stats_of(ev)
    assert [row["AP"] for row in r.per_class] == per_class_ap(ev)


def test_unknown_class_and_image_are_usage_errors(tmp_path: Path) -> None:
    _, _, d, g = _files(tmp_path, 0)
    with pytest.raises(UsageError, match="--classes: 1 class"):
        evaluate(d, g, classes=["no-such-class"])
    with pytest.raises(UsageError, match="--image-ids: 1 image"):
        evaluate(d, g, image_ids=["999999"])
