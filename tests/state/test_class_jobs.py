"""``--jobs`` for COCO splits the classes over processes (:mod:`iou_cli.state.classjobs`):
each process evaluates every image of its classes; the Result is ``--jobs 1``'s bit for bit
(summary, per class, the precision / recall / scores arrays, the rendered JSON) on random
scenes with ties at every score, with more processes than classes with predictions; a worker
that raises or dies makes the parent evaluate its classes (same numbers, no hang)."""

from __future__ import annotations

import copy
import os
from typing import Any

import numpy as np
import pytest

from iou_cli import evaluate
from iou_cli.report import render
from iou_cli.state import classjobs
from tests.oracle.cocogen import random_scene
from tests.oracle.lvisgen import random_lvis_scene


def _scene(seed: int, iou_type: str, ties: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if iou_type == "segm":
        gt, dets = random_lvis_scene(seed, n_images=8, segm=True)
    else:
        gt, dets = random_scene(seed, n_images=14, n_cats=5)
    if ties:  # few distinct scores: ties across images and classes
        levels = np.linspace(0.1, 0.9, ties)
        rng = np.random.default_rng(seed + 3)
        for d in dets:
            d["score"] = float(levels[int(rng.integers(0, ties))])
    return gt, dets


def _same(one: Any, other: Any) -> None:
    assert other.summary == one.summary
    assert other.per_class == one.per_class
    assert other.params == one.params
    assert other.warnings == one.warnings
    for name in ("precision", "recall", "scores", "n_det", "n_gt"):
        a, b = getattr(one.evaluation, name), getattr(other.evaluation, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert render(other, "json") == render(one, "json")


@pytest.fixture
def combined(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per class-split run: the number of parts combined."""
    seen: list[int] = []
    combine = classjobs.combine_parts

    def spy(ds: Any, parts: list[dict[str, Any]]) -> Any:
        seen.append(len(parts))
        return combine(ds, parts)

    monkeypatch.setattr(classjobs, "combine_parts", spy)
    return seen


@pytest.mark.parametrize("iou_type", ["bbox", "segm"])
@pytest.mark.parametrize("seed", range(4))
def test_class_split_equals_one_process(iou_type: str, seed: int, combined: list[int]) -> None:
    gt, dets = _scene(seed, iou_type, ties=seed % 3 + 1)
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), iou_type=iou_type)
    for jobs in (2, 3, 7):  # 7: more processes than classes with predictions
        got = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), iou_type=iou_type, jobs=jobs)
        _same(one, got)
    assert len(combined) == 3 and min(combined) >= 2


def test_class_groups_cover_every_class_once_and_weigh_pairs() -> None:
    from iou_cli.api import load_pair, run_options

    gt, dets = random_scene(5, n_images=20, n_cats=6)
    # one class crowded in one image: few predictions but many candidate pairs
    img = gt["images"][0]["id"]
    for i in range(30):
        gt["annotations"].append(
            {"id": 10_000 + i, "image_id": img, "category_id": 2, "bbox": [i, i, 20, 20],
             "area": 400.0, "iscrowd": 0}
        )  # fmt: skip
        dets.append({"image_id": img, "category_id": 2, "bbox": [i, i, 20, 20], "score": 0.5})
    ds = load_pair(dets, gt, run_options(None, {}).for_inputs().loader_options())
    K = len(ds.categories)
    weights = classjobs.class_weights(ds)
    n_pred = np.bincount(ds.pred.category, minlength=K)
    k2 = ds.categories.ids.index(2)
    assert weights[k2] >= n_pred[k2] + classjobs.PAIR_COST * 30 * 30
    for n in (1, 2, 3, K + 2):
        groups = classjobs.class_groups(ds, n)
        assert len(groups) == n
        assert sorted(np.concatenate(groups).tolist()) == list(range(K))
    two = classjobs.class_groups(ds, 2)
    assert two[1].tolist() == [k2]  # the costliest class alone, and the heavier group last
    assert weights[two[0]].sum() < weights[k2]


def _fail_in_worker(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    parent = os.getpid()
    part = classjobs.class_part

    def flaky(ds: Any, options: dict[str, Any], cats: Any) -> dict[str, Any]:
        if os.getpid() != parent:
            if how == "die":
                os._exit(3)  # no message through the pipe: EOF in the parent
            raise RuntimeError("worker failed")
        return part(ds, options, cats)

    monkeypatch.setattr(classjobs, "class_part", flaky)


@pytest.mark.parametrize("how", ["raise", "die"])
def test_failed_worker_falls_back_to_this_process(
    monkeypatch: pytest.MonkeyPatch, combined: list[int], how: str
) -> None:
    gt, dets = _scene(9, "bbox", ties=2)
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt))
    _fail_in_worker(monkeypatch, how)
    got = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), jobs=3)
    _same(one, got)
    assert combined == [3]


def test_input_error_in_the_parent_is_raised_once_workers_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An error while this process evaluates its classes ends the workers and propagates."""
    gt, dets = _scene(2, "bbox", ties=0)

    def boom(ds: Any, options: dict[str, Any], cats: Any) -> dict[str, Any]:
        raise MemoryError

    monkeypatch.setattr(classjobs, "class_part", boom)
    from iou_cli.errors import ResourceError

    with pytest.raises(ResourceError, match="out of memory"):
        evaluate(copy.deepcopy(dets), copy.deepcopy(gt), jobs=2)


@pytest.mark.parametrize("n_cats", [5, 400])  # (image, class) table; sorted keys (sparse)
def test_class_weights_count_candidate_pairs(n_cats: int) -> None:
    from collections import Counter

    from iou_cli.api import load_pair, run_options

    gt, dets = random_scene(8, n_images=14, n_cats=n_cats)
    ds = load_pair(dets, gt, run_options(None, {}).for_inputs().loader_options())
    K = len(ds.categories)
    assert (len(ds.images) * K > 8 * (len(ds.pred) + len(ds.gt))) == (n_cats == 400)
    nd = Counter(zip(ds.pred.image.tolist(), ds.pred.category.tolist(), strict=True))
    ng = Counter(zip(ds.gt.image.tolist(), ds.gt.category.tolist(), strict=True))
    pairs = np.zeros(K, dtype=np.int64)
    for (i, k), n in nd.items():
        pairs[k] += n * ng.get((i, k), 0)
    want = np.bincount(ds.pred.category, minlength=K) + classjobs.PAIR_COST * pairs
    assert pairs.any()
    assert np.allclose(classjobs.class_weights(ds), want, rtol=1e-12, atol=0)


def test_keypoints_of_one_class_split_their_oks_between_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One keypoint class: no class split; ``--jobs`` reaches the pairs' OKS (threads), and
    the Result is ``--jobs 1``'s bit for bit."""
    from iou_cli.matching import pairs
    from tests.helpers import spy_oks_threads
    from tests.oracle.kptgen import random_kpt_scene

    gt, dets = random_kpt_scene(9, n_cats=1)
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), iou_type="keypoints")
    seen = spy_oks_threads(monkeypatch)
    monkeypatch.setattr(pairs, "OKS_SPLIT_MIN", 1)
    two = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), iou_type="keypoints", jobs=2)
    assert seen == [2]
    _same(one, two)
    assert render(one, "json") == render(two, "json")
