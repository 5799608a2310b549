"""The match table against pycocotools' own per-image records (``evalImgs``).

For every (image, category, area range) record pycocotools keeps at the largest maxDets,
each detection's matched ground-truth id (``dtMatches``), its ignore flag (``dtIgnore``) and
each ground truth's ignore flag (``gtIgnore``) must equal what our MatchTable says, at every
IoU threshold. The accumulated arrays (precision, recall and scores) must be equal too, and
re-scoring an unedited copy of a table through ``accumulate`` must give them back.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate
from iou_cli.protocols.coco import CocoEvaluation, accumulate
from tests.oracle.cocogen import random_scene
from tests.oracle.pycoco import pycoco_eval

N_SEEDS = int(os.environ.get("IOU_EVAL_DIFF_SEEDS", "25"))


def _scene(seed: int) -> tuple[dict, list, CocoEvaluation, Any]:
    gt, dets = random_scene(seed)
    if not dets:
        pytest.skip("pycocotools cannot load an empty result list")
    # in-memory COCO objects: the API's object path, as a notebook would call it
    r = evaluate(dets, gt, keep_tables=True)
    ev = r.evaluation
    assert isinstance(ev, CocoEvaluation)
    return gt, dets, ev, pycoco_eval(gt, dets)


@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_table_equals_evalimgs(seed: int) -> None:
    gt, dets, ev, oracle = _scene(seed)
    ds = ev.dataset
    area_names = {
        tuple(rng): name
        for name, rng in zip(
            ["all", "small", "medium", "large"], oracle.params.areaRng, strict=True
        )
    }
    max_det = oracle.params.maxDets[-1]
    T = len(oracle.params.iouThrs)
    checked = 0
    for e in oracle.evalImgs:
        if e is None or e["maxDet"] != max_det:
            continue
        table = ev.tables[area_names[tuple(e["aRng"])]]
        pos_of = {int(ds.pred.ids[r]): i for i, r in enumerate(table.det)}
        dense = [table.dense(t) for t in range(T)]
        for j, dt_id in enumerate(e["dtIds"]):
            p = pos_of[int(dt_id)]  # every evaluated detection is in the table
            for t in range(T):
                g_row, _, ign = dense[t]
                ours = int(ds.gt.ids[g_row[p]]) if g_row[p] >= 0 else 0
                assert ours == int(e["dtMatches"][t, j]), (seed, e["aRng"], dt_id, t)
                assert bool(ign[p]) == bool(e["dtIgnore"][t, j]), (seed, e["aRng"], dt_id, t)
            checked += 1
        row_of = {int(i): r for r, i in enumerate(ds.gt.ids)}
        for g_id, g_ign in zip(e["gtIds"], e["gtIgnore"], strict=True):
            assert bool(table.gt_counts[row_of[int(g_id)]]) == (not g_ign)
    # and nothing more: the table holds exactly the detections pycocotools evaluated
    n_eval = sum(
        len(e["dtIds"])
        for e in oracle.evalImgs
        if e is not None
        and e["maxDet"] == max_det
        and tuple(e["aRng"]) == tuple(oracle.params.areaRng[0])
    )
    assert len(ev.table) == n_eval
    assert checked > 0


@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_accumulated_arrays_equal_pycocotools(seed: int) -> None:
    _, _, ev, oracle = _scene(seed)
    for key in ("precision", "recall", "scores"):
        ours = getattr(ev, key)
        theirs = oracle.eval[key]
        assert ours.shape == theirs.shape, key
        assert np.array_equal(ours, theirs), (seed, key, np.argwhere(ours != theirs)[:5])


@pytest.mark.parametrize("seed", range(8))
def test_rescoring_an_unedited_copy_is_the_identity(seed: int) -> None:
    _, _, ev, _ = _scene(seed)
    K = len(ev.dataset.categories)
    T = len(ev.params.iou_thrs)
    for a, (name, _, _) in enumerate(ev.params.area_rngs):
        p, r, s = accumulate(
            ev.tables[name].copy(), n_classes=K, max_dets=ev.params.max_dets, thresholds=range(T)
        )
        assert np.array_equal(p, ev.precision[:, :, :, a, :])
        assert np.array_equal(r, ev.recall[:, :, a, :])
        assert np.array_equal(s, ev.scores[:, :, :, a, :])


def test_dropping_false_positives_through_the_same_ap_code() -> None:
    # hand case: one class, two ground truths; predictions by score: FP (0.9), TP (0.8),
    # FP (0.7), TP (0.6). 101-point AP50 = mean over r of the interpolated precision:
    # r in [0, 0.5] -> max(1/2, 2/4) = 0.5 (51 points), r in (0.5, 1] -> 2/4 = 0.5 (50
    # points): AP50 = 0.5. Dropping both FPs leaves TP, TP: AP50 = 1.0.
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100},
            {"id": 2, "image_id": 1, "category_id": 1, "bbox": [50, 50, 10, 10], "area": 100},
        ],
    }
    dets = [
        {"image_id": 1, "category_id": 1, "bbox": [80, 0, 10, 10], "score": 0.9},
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.8},
        {"image_id": 1, "category_id": 1, "bbox": [0, 80, 10, 10], "score": 0.7},
        {"image_id": 1, "category_id": 1, "bbox": [50, 50, 10, 10], "score": 0.6},
    ]
    r = evaluate(dets, gt)
    assert r.summary["AP50"] == pytest.approx(0.5, abs=1e-15)
    table = r.table.copy()
    t50 = table.thr_index(0.5)
    fp = np.flatnonzero(table.fp(t50))
    assert sorted(table.det_score[fp].tolist()) == [0.7, 0.9]
    table.drop(fp)
    p, _, _ = accumulate(table, n_classes=1)
    assert float(np.mean(p[t50, :, 0, -1])) == 1.0


@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_matches_rows_at_score_thr_0_are_evalimgs_fates(seed: int) -> None:
    # --matches at --score-thr 0: every evaluated prediction's fate at IoU 0.5 as
    # pycocotools' evalImgs (area all, largest maxDets), and one FN row per counted ground
    # truth no prediction took
    gt, dets = random_scene(seed)
    if not dets:
        pytest.skip("pycocotools cannot load an empty result list")
    r = evaluate(dets, gt, matches=True, score_thr=0.0)
    oracle = pycoco_eval(gt, dets)
    m = r.matches
    assert m is not None
    ours = {}
    fn = set()
    for pid, gid, outcome in zip(
        m.columns["pred_id"], m.columns["gt_id"], m.columns["outcome"], strict=True
    ):
        if outcome == "FN":
            fn.add(int(gid))
        else:
            ours[int(pid)] = (int(gid) if gid >= 0 else 0, outcome)
    theirs = {}
    taken = set()
    counted = set()
    all_rng = tuple(oracle.params.areaRng[0])
    for e in oracle.evalImgs:
        if e is None or tuple(e["aRng"]) != all_rng or e["maxDet"] != oracle.params.maxDets[-1]:
            continue
        for j, dt_id in enumerate(e["dtIds"]):
            g = int(e["dtMatches"][0, j])
            ign = bool(e["dtIgnore"][0, j])
            theirs[int(dt_id)] = (g, "ignored" if ign else ("TP" if g else "FP"))
            if g:
                taken.add(g)
        counted |= {int(g) for g, i in zip(e["gtIds"], e["gtIgnore"], strict=True) if not i}
    assert ours == theirs
    assert fn == counted - taken
