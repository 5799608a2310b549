"""Exactness across any split (issue 24): the images split into parts, each part updated in
random batches, the parts merged in any order (through their bytes or not), give the one-shot
``evaluate`` bit for bit: summary, per-class rows and pycocotools' precision / recall /
scores arrays (``array_equal``), with score ties everywhere."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iou_cli import Evaluator, evaluate
from tests.oracle.cocogen import random_scene
from tests.oracle.lvisgen import random_lvis_scene
from tests.state.hypo import many, quick

CASES = {
    "coco-bbox": ("coco", "bbox"),
    "coco-segm": ("coco", "segm"),
    "lvis-bbox": ("lvis", "bbox"),
    "lvis-segm": ("lvis", "segm"),
    "voc": ("voc", "bbox"),
    "voc07": ("voc07", "bbox"),
}


def scene(case: str, seed: int, ties: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    protocol, iou_type = CASES[case]
    if protocol == "lvis" or iou_type == "segm":
        gt, dets = random_lvis_scene(seed, n_images=8, segm=iou_type == "segm")
    else:
        gt, dets = random_scene(seed, n_images=10, n_cats=4)
    if ties:  # few distinct scores: ties at every score, across images and classes
        levels = np.linspace(0.1, 0.9, ties)
        rng = np.random.default_rng(seed + 7)
        for d in dets:
            d["score"] = float(levels[int(rng.integers(0, ties))])
    if protocol.startswith("voc"):
        # the devkit breaks ties by file order; a file listed image by image is the order
        # an Evaluator (which never sees a file) reproduces
        dets = sorted(dets, key=lambda d: d["image_id"])
    return gt, dets


def same(one: Any, other: Any) -> None:
    assert other.summary == one.summary
    assert other.per_class == one.per_class
    a, b = one.evaluation, other.evaluation
    for name in ("precision", "recall", "scores"):
        if hasattr(a, name):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name


def split_run(
    gt: dict[str, Any],
    dets: list[dict[str, Any]],
    protocol: str,
    iou_type: str,
    data: st.DataObject,
) -> Any:
    ids = [im["id"] for im in gt["images"]]
    n_parts = data.draw(st.integers(1, 4), label="parts")
    owner = data.draw(st.lists(st.integers(0, n_parts - 1), min_size=len(ids), max_size=len(ids)))
    by_image: dict[int, list[dict[str, Any]]] = {}
    for d in dets:
        by_image.setdefault(d["image_id"], []).append(d)
    evaluators = []
    for k in data.draw(st.permutations(range(n_parts)), label="update order"):
        ev = Evaluator(copy.deepcopy(gt), protocol, iou_type=iou_type)
        mine = [i for i, o in zip(ids, owner, strict=True) if o == k]
        mine = data.draw(st.permutations(mine), label="image order")
        pos = 0
        while pos < len(mine):
            size = data.draw(st.integers(1, 5), label="batch")
            batch = mine[pos : pos + size]
            pos += size
            recs = [r for i in batch for r in by_image.get(i, [])]
            ev.update(recs, image_ids=batch)
        if data.draw(st.booleans(), label="through bytes"):
            ev = Evaluator.from_bytes(ev.to_bytes())
        evaluators.append(ev)
    order = data.draw(st.permutations(range(len(evaluators))), label="merge order")
    return Evaluator.merge([evaluators[i] for i in order]).compute()


def check(case: str, data: st.DataObject) -> None:
    protocol, iou_type = CASES[case]
    seed = data.draw(st.integers(0, 10_000), label="seed")
    ties = data.draw(st.sampled_from([0, 1, 2, 3]), label="distinct scores (0: any)")
    gt, dets = scene(case, seed, ties)
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), protocol=protocol, iou_type=iou_type)
    same(one, split_run(gt, dets, protocol, iou_type, data))


@pytest.mark.parametrize("case", list(CASES))
@quick(6)
@given(data=st.data())
def test_any_split_equals_one_shot(case: str, data: st.DataObject) -> None:
    check(case, data)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
@many(80)
@given(data=st.data())
def test_any_split_equals_one_shot_many(case: str, data: st.DataObject) -> None:
    check(case, data)
