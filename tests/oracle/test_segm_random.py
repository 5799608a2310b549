"""Differential test of the mask path: random segm scenes (tests/oracle/segmgen.py: polygons,
crowd regions as uncompressed RLE, compressed RLE, empty masks, images without predictions,
predictions as compressed RLE with and without bbox, as uncompressed RLE and as polygons),
iou-eval vs pycocotools' COCOeval, all 12 stats bit for bit; and every candidate pair's mask
IoU vs ``pycocotools.mask.iou`` of its two masks (the mask-box and area pre-filters of
``matching.pairs.pair_iou_segm`` never change a value that matters)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from iou_cli.api import evaluate, load_pair
from iou_cli.matching.pairs import expand_groups, group_keys, group_pair_iou
from iou_cli.options import LoadOptions
from tests.oracle.pycoco import pycoco_eval, stats_of
from tests.oracle.segmgen import random_segm_scene

# pycocotools' decode (used by the scene generator) warns under NumPy 2
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

N_SEEDS = int(os.environ.get("IOU_EVAL_SEGM_SEEDS", "60"))
N_FAST = 8  # `make test`: two scenes of each prediction kind; the rest are slow
SEEDS = [
    seed if seed < N_FAST else pytest.param(seed, marks=pytest.mark.slow) for seed in range(N_SEEDS)
]


def _files(tmp_path: Path, seed: int) -> tuple[str, str, dict[str, Any], list[dict[str, Any]]]:
    gt, dets = random_segm_scene(seed)
    if not dets:
        pytest.skip("pycocotools cannot load an empty result list")
    g, d = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    return str(d), str(g), gt, dets


@pytest.mark.parametrize("seed", SEEDS)
def test_random_segm_scene_matches_pycocotools(tmp_path: Path, seed: int) -> None:
    d, g, gt, dets = _files(tmp_path, seed)
    ours = evaluate(d, g, iou_type="segm")
    want = stats_of(pycoco_eval(gt, dets, "segm"))
    got = [ours.summary[k] for k in ["AP", "AP50", "AP75", "APs", "APm", "APl"]]
    got += [ours.summary[k] for k in ["AR1", "AR10", "AR100", "ARs", "ARm", "ARl"]]
    assert got == want  # bit for bit (None where pycocotools says -1)


@pytest.mark.parametrize("seed", range(N_FAST))
def test_every_pair_iou_is_pycocotools_mask_iou(tmp_path: Path, seed: int) -> None:
    d, g, _gt, _dets = _files(tmp_path, seed)
    ds = load_pair(d, g, LoadOptions(iou_type="segm"))
    assert ds.pred.masks is not None and ds.gt.masks is not None
    K = len(ds.categories)
    g_rows = np.argsort(group_keys(ds.gt, K), kind="stable").astype(np.int64)
    d_rows = np.arange(len(ds.pred), dtype=np.int64)
    pdet, pg, gstart, ng = expand_groups(group_keys(ds.pred, K), group_keys(ds.gt, K)[g_rows])
    if pdet.size == 0:
        pytest.skip("no pair in this scene")
    want = np.array(
        [
            mask_utils.iou(
                [ds.pred.masks[int(d_rows[i])]],
                [ds.gt.masks[int(g_rows[j])]],
                [int(ds.gt.iscrowd[g_rows[j]])],
            )[0][0]
            for i, j in zip(pdet, pg, strict=True)
        ]
    )
    exact = group_pair_iou(ds, "segm", d_rows, g_rows, pdet, pg, gstart, ng)
    np.testing.assert_array_equal(exact, want)
    # with a floor: every value at or above it is exact, every other one stays below it
    for floor in (0.5, 0.3):
        fast = group_pair_iou(ds, "segm", d_rows, g_rows, pdet, pg, gstart, ng, min_sim=floor)
        np.testing.assert_array_equal(fast[want >= floor], want[want >= floor])
        assert (fast[want < floor] < floor).all()
    assert (want > 0).any()  # the scene has overlapping masks


def test_fast_and_validating_readers_give_the_same_masks(tmp_path: Path) -> None:
    """The typed reader of compressed-RLE results (loaders/fastcoco.py) and the validating
    loader (forced by one polygon record) hold the same masks, areas and mask boxes."""
    gt, dets = random_segm_scene(0)  # compressed RLE without bbox
    assert all(isinstance(x["segmentation"], dict) for x in dets) and "bbox" not in dets[0]
    g = tmp_path / "gt.json"
    g.write_text(json.dumps(gt))
    fast_p, slow_p = tmp_path / "fast.json", tmp_path / "slow.json"
    fast_p.write_text(json.dumps(dets))
    slow = [*dets, {**dets[0], "segmentation": [[0, 0, 3, 0, 3, 3]]}]
    slow_p.write_text(json.dumps(slow))
    a = load_pair(str(fast_p), str(g), LoadOptions(iou_type="segm"))
    b = load_pair(str(slow_p), str(g), LoadOptions(iou_type="segm"))
    n = len(a.pred)
    assert a.pred.masks is not None and b.pred.masks is not None
    plain = [(list(m["size"]), m["counts"]) for m in a.pred.masks]
    assert plain == [(list(m["size"]), m["counts"]) for m in b.pred.masks[:n]]
    for col in ("area", "xyxy", "mask_box", "mask_area", "score", "image", "category"):
        np.testing.assert_array_equal(getattr(a.pred, col), getattr(b.pred, col)[:n])
