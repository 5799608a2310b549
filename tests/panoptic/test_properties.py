"""Properties of PQ on generated images: a perfect prediction scores 1 (crowd regions left
unpredicted: a predicted copy of a crowd segment that is not the last crowd of its category
in segments_info is a false positive, as in panopticapi), and renumbering the predicted
segment ids (a bijection, PNG and JSON together) changes nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from iou_cli.tasks.panoptic import evaluate_panoptic

from .gen import random_pair, write_set


def _scene(seed: int, n_images: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    return [random_pair(rng, n=int(rng.integers(1, 10))) for _ in range(n_images)]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n_images=st.integers(1, 3))
def test_perfect_prediction_scores_one(seed: int, n_images: int) -> None:
    scenes = _scene(seed, n_images)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        gts = [(i, g, gs) for i, ((g, gs), _) in enumerate(scenes)]
        preds = []
        for i, ((g, gs), _) in enumerate(scenes):
            ids = g.copy()
            for s in gs:  # crowd regions left unpredicted (VOID in the prediction)
                if s["iscrowd"]:
                    ids[ids == s["id"]] = 0
            ids[ids > 0] += 7  # other ids, the same segments
            segs = [
                {"id": s["id"] + 7, "category_id": s["category_id"]} for s in gs if not s["iscrowd"]
            ]
            preds.append((i, ids, segs))
        res = evaluate_panoptic(
            str(write_set(root, "pred", preds)), str(write_set(root, "gt", gts))
        )
    things = {s["category_id"] for _, _, gs in gts for s in gs if not s["iscrowd"]}
    assert res.summary["N"] == len(things)
    if things:
        assert res.summary["PQ"] == res.summary["SQ"] == res.summary["RQ"] == 1.0
    assert res.summary["fp"] == res.summary["fn"] == 0


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), shift=st.integers(1, 1 << 20))
def test_renumbering_predicted_ids_changes_nothing(seed: int, shift: int) -> None:
    scenes = _scene(seed, 2)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        gts = [(i, g, gs) for i, ((g, gs), _) in enumerate(scenes)]
        preds = [(i, p, ps) for i, (_, (p, ps)) in enumerate(scenes)]
        gt = str(write_set(root, "gt", gts))
        before = evaluate_panoptic(str(write_set(root, "pred", preds)), gt)
        moved = []
        for i, p, ps in preds:
            q = p.copy()
            nz = q > 0
            q[nz] = (q[nz] + shift) % ((1 << 24) - 1) + 1
            segs = [dict(s, id=(s["id"] + shift) % ((1 << 24) - 1) + 1) for s in ps]
            moved.append((i, q, segs))
        after = evaluate_panoptic(str(write_set(root, "pred2", moved)), gt)
    assert before.summary == after.summary
    assert before.per_class == after.per_class
