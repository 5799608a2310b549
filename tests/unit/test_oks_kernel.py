"""The OKS kernel's row sums are NumPy's own (pairwise) sums of each row's kept values, bit
for bit, for every K (the pycocotools oracle covers K = 1..26; this covers up to 140,
past NumPy's 128-value block)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.geometry.oks import row_sums
from tests.helpers import spy_oks_threads


@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("k", [1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 25, 68, 127, 128, 129, 133])
def test_row_sums_equal_numpy_sum(k: int, ordered: bool) -> None:
    # (ordered: the kept values gathered to the front by each row's kept-first order, as
    # the pairs' OKS does with its ground truths' KeptOrder)
    rng = np.random.default_rng(k)
    a = np.exp(-rng.random((400, k)) * rng.choice([1e-3, 1.0, 30.0, 300.0], size=(400, 1)))
    kept = rng.random((400, k)) < rng.uniform(0.05, 1.0, size=(400, 1))
    kept[:50] = True
    kept[kept.sum(axis=1) == 0, 0] = True
    n = kept.sum(axis=1)
    order = np.argsort(~kept, axis=1, kind="stable") if ordered else None
    ours = row_sums(a, kept, n, order)
    ref = np.array([np.sum(a[i][kept[i]]) for i in range(a.shape[0])])
    assert np.array_equal(ours.view(np.int64), ref.view(np.int64))


def test_kept_order_puts_each_ground_truths_counted_keypoints_first() -> None:
    from iou_cli.geometry.oks import KeptOrder

    g = np.zeros((3, 5, 3))
    g[0, [1, 3], 2] = [2, 1]  # keypoints 1 and 3 labelled
    g[2, :, 2] = 2  # all labelled; row 1: none (all count, by the out-of-box rule)
    got = KeptOrder.of(g)
    assert got.order.tolist() == [[1, 3, 0, 2, 4], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4]]
    assert got.labelled.tolist() == [True, False, True] and got.n.tolist() == [2, 5, 5]


@pytest.mark.parametrize("seed", range(4))
def test_far_pairs_are_only_pairs_below_the_threshold(seed: int) -> None:
    # the box-gap bound skips pairs: every skipped pair's exact OKS is below the threshold,
    # and the kept ones are untouched
    from iou_cli.api import load_pair
    from iou_cli.matching.pairs import pair_oks, sigma_table
    from iou_cli.options import LoadOptions
    from tests.oracle.kptgen import random_kpt_scene

    gt, dets = random_kpt_scene(seed, with_bbox=False)
    opts = LoadOptions(iou_type="keypoints", protocol="coco")
    ds = load_pair(dets, gt, opts)
    d = np.repeat(np.arange(len(ds.pred)), len(ds.gt))
    g = np.tile(np.arange(len(ds.gt)), len(ds.pred))
    sig = sigma_table(ds)[0]
    exact = pair_oks(ds, d, g, sig)
    for thr in (0.05, 0.5, 0.9):
        fast = pair_oks(ds, d, g, sig, min_oks=thr)
        skipped = fast != exact
        assert (exact[skipped] < thr).all() and (fast[skipped] == 0).all()
        assert np.array_equal(fast[exact >= thr], exact[exact >= thr])
        if thr == 0.5:
            assert skipped.mean() > 0.2  # the bound does skip far pairs


def _all_pairs(seed: int) -> tuple[Any, Any, Any, Any]:
    """A random keypoint scene loaded, every (prediction, ground truth) pair, the sigmas."""
    from iou_cli.api import load_pair
    from iou_cli.matching import pairs
    from iou_cli.options import LoadOptions
    from tests.oracle.kptgen import random_kpt_scene

    gt, dets = random_kpt_scene(seed, with_bbox=False)
    ds = load_pair(dets, gt, LoadOptions(iou_type="keypoints", protocol="coco"))
    d = np.repeat(np.arange(len(ds.pred)), len(ds.gt))
    g = np.tile(np.arange(len(ds.gt)), len(ds.pred))
    return ds, d, g, pairs.sigma_table(ds)[0]


@pytest.mark.parametrize("block", [1, 7, 16])
def test_oks_in_blocks_equals_one_block(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    # pairs are computed a block at a time (OKS_BLOCK): every pair's OKS is the one the
    # whole array at once gives, bit for bit, with and without the far-pair skip (blocks
    # that end inside a run of skipped pairs, a last block shorter than the others)
    from iou_cli.matching import pairs

    ds, d, g, sig = _all_pairs(11)
    assert d.shape[0] > 2 * 16 + 5
    whole = {t: pairs.pair_oks(ds, d, g, sig, min_oks=t) for t in (None, 0.5)}
    monkeypatch.setattr(pairs, "OKS_BLOCK", block)
    for t, ref in whole.items():
        assert np.array_equal(pairs.pair_oks(ds, d, g, sig, min_oks=t), ref)
    assert (whole[None] > 0).sum() > 10


@pytest.mark.parametrize("k", [3, 8, 17, 30])
@pytest.mark.parametrize("density", ["few", "all", "mixed"])
def test_row_sums_few_kept_all_kept_and_mixed(k: int, density: str) -> None:
    # rows with fewer than 8 kept values are summed in place with zeros for the rest;
    # rows with every value kept are not compacted; both must stay NumPy's sum bit for bit
    rng = np.random.default_rng(k)
    a = np.exp(-rng.random((300, k)) * rng.choice([1e-3, 1.0, 30.0], size=(300, 1)))
    if density == "all":
        kept = np.ones((300, k), dtype=bool)
    else:
        kept = rng.random((300, k)) < (0.2 if density == "few" else 0.7)
        if density == "few":
            kept &= np.cumsum(kept, axis=1) <= 7
        kept[kept.sum(axis=1) == 0, -1] = True
    n = kept.sum(axis=1)
    ref = np.array([np.sum(a[i][kept[i]]) for i in range(a.shape[0])])
    for order in (None, np.argsort(~kept, axis=1, kind="stable")):
        assert np.array_equal(row_sums(a, kept, n, order), ref)


@pytest.mark.parametrize("k", [1, 2, 17, 30])
def test_kpt_corners_are_each_rows_min_and_max(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    # the extent is taken a block of rows at a time from a transposed copy: it must be each
    # row's min and max of its x and y values (Python's, value by value), across blocks
    from iou_cli.geometry import oks

    rng = np.random.default_rng(k)
    kp = rng.normal(0, 500, size=(23, k, 3))
    kp[3] = 7.0  # a row of one value
    rows = [([p[0] for p in r], [p[1] for p in r]) for r in kp.tolist()]
    ref = np.array([[min(x), min(y), max(x), max(y)] for x, y in rows])
    monkeypatch.setattr(oks, "_CORNER_ROWS", 5)  # blocks of 5, a last one of 3
    assert np.array_equal(oks.kpt_corners(kp), ref)
    monkeypatch.setattr(oks, "_CORNER_ROWS", 2048)
    assert np.array_equal(oks.kpt_corners(kp), ref)
    assert oks.kpt_corners(np.zeros((0, k, 3))).shape == (0, 4)
    box, area = oks.extent(kp)
    assert np.array_equal(box[:, 2], ref[:, 2] - ref[:, 0])
    assert np.array_equal(area, (ref[:, 2] - ref[:, 0]) * (ref[:, 3] - ref[:, 1]))


@pytest.mark.parametrize("jobs", [2, 3])
def test_oks_split_between_threads_equals_one(monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    # --jobs splits the pairs' OKS between threads: every pair's value is the one a single
    # thread gives, bit for bit, with and without the far-pair skip, with far-test blocks
    # that end inside a thread's run; and the split really ran
    from iou_cli.geometry import oks
    from iou_cli.matching import pairs

    ds, d, g, sig = _all_pairs(5)
    one = {t: pairs.pair_oks(ds, d, g, sig, min_oks=t) for t in (None, 0.5)}
    seen = spy_oks_threads(monkeypatch)
    bounds: list[int] = []
    far_bound = oks.far_bound

    def counted(*args: Any) -> Any:
        bounds.append(1)
        return far_bound(*args)

    monkeypatch.setattr(oks, "far_bound", counted)
    monkeypatch.setattr(pairs, "OKS_SPLIT_MIN", 1)
    monkeypatch.setattr(pairs, "FAR_BLOCK", 7)
    for t, ref in one.items():
        assert np.array_equal(pairs.pair_oks(ds, d, g, sig, min_oks=t, jobs=jobs), ref)
    assert seen == [jobs, jobs]
    assert bounds == [1]  # the bound is made once (with the 0.5 threshold), not per thread
    assert (one[0.5] > 0).sum() > 10 and (one[0.5] == 0).sum() > 10


def test_fast_reader_extent_is_the_far_test_extent(tmp_path: Path) -> None:
    # the fast results reader hands each row's keypoint extent to the far-pair test
    # (Boxes.kpt_box); the test gives the same pairs as with the extent computed there
    from iou_cli.api import load_pair
    from iou_cli.geometry.oks import far_bound, kpt_corners
    from iou_cli.matching.pairs import kpt_boxes, sigma_table
    from iou_cli.options import LoadOptions
    from tests.oracle.kptgen import random_kpt_scene

    gt, dets = random_kpt_scene(3, with_bbox=False)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dets.json").write_text(json.dumps(dets))
    ds = load_pair(
        str(tmp_path / "dets.json"),
        str(tmp_path / "gt.json"),
        LoadOptions(iou_type="keypoints", protocol="coco"),
    )
    pred = ds.pred
    assert pred.keypoints is not None and ds.gt.keypoints is not None
    assert pred.kpt_box is not None  # (a results file: the fast reader made them)
    assert np.array_equal(pred.kpt_box, kpt_corners(pred.keypoints))
    d = np.repeat(np.arange(len(pred)), len(ds.gt))
    g = np.tile(np.arange(len(ds.gt)), len(pred))

    def far(corners: Any) -> Any:
        gk, pk = ds.gt.keypoints, pred.keypoints
        assert gk is not None and pk is not None
        box, sig = kpt_boxes(ds.gt, None), sigma_table(ds)[0]
        bound = far_bound(pk, gk, box, ds.gt.area, sig, ds.gt.category, 0.5, corners)
        assert bound is not None
        return bound.far(d, g)

    given = far(kpt_corners(pred.keypoints))
    assert np.array_equal(far(None), given) and given.any()
    half = pred.take(np.arange(0, len(pred), 2))
    assert half.keypoints is not None
    assert half.kpt_box is None or np.array_equal(half.kpt_box, kpt_corners(half.keypoints))


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_in_threads_does_every_item_once_and_raises_the_first_error(threads: int) -> None:
    import threading

    from iou_cli.workers import in_threads

    seen: list[tuple[int, int]] = []
    in_threads(lambda i: seen.append((i, threading.get_ident())), list(range(7)), threads)
    assert sorted(i for i, _ in seen) == list(range(7))
    assert len({t for _, t in seen}) <= threads

    def boom(i: int) -> None:
        if i == 4:
            raise MemoryError

    with pytest.raises(MemoryError):
        in_threads(boom, list(range(7)), threads)


def test_oks_threads_are_capped_by_the_pairs_and_oks_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # --jobs 64 on a big machine: at most OKS_THREADS threads, and one per half
    # OKS_SPLIT_MIN pairs; below that, no split at all
    from iou_cli.matching import pairs

    ds, d, g, sig = _all_pairs(5)
    P = d.shape[0]
    seen = spy_oks_threads(monkeypatch)
    ref = pairs.pair_oks(ds, d, g, sig, min_oks=0.5)
    for split_min, want in ((4 * P, None), (P, 2), (P // 2, 4), (P // 8, 4)):
        seen.clear()
        monkeypatch.setattr(pairs, "OKS_SPLIT_MIN", split_min)
        assert np.array_equal(pairs.pair_oks(ds, d, g, sig, min_oks=0.5, jobs=64), ref)
        assert seen == ([] if want is None else [want]), split_min
