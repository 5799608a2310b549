"""Pruning before polygon clipping (``indexed_iou(floor=...)``): a pair left out is provably
below the floor, every pair at or above it keeps its exact value, and the DOTA protocol
without ``--matches`` (which prunes at its threshold) gives the same TP/FP/AP as with it,
on dense random scenes full of pairs a hair either side of 0.5."""

from __future__ import annotations

import numpy as np
import pytest

import iou_cli.geometry.obb as obb
from iou_cli.data import Boxes, Categories, Dataset, Images
from iou_cli.geometry.obb import aabb, convex_quads, indexed_iou, signed_area, xywhr_to_corners
from iou_cli.protocols.dota import run_dota


def _near_half(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rotated rectangles and partners slid along their own x axis by w/3 (IoU 0.5 exactly
    in real numbers), give or take a few ulps to 1e-6 of w."""
    a = np.column_stack(
        [
            rng.uniform(0, 4000, n),
            rng.uniform(0, 4000, n),
            rng.uniform(1, 300, n),
            rng.uniform(1, 300, n),
            rng.choice([0.0, np.pi / 2, rng.uniform(-np.pi, np.pi)], n),
        ]
    )
    eps = rng.choice([0.0, 1e-15, -1e-15, 1e-12, -1e-12, 1e-9, -1e-9, 1e-6, -1e-6], n)
    shift = a[:, 2] * (1 / 3 + eps)
    b = a.copy()
    b[:, 0] += shift * np.cos(a[:, 4])
    b[:, 1] += shift * np.sin(a[:, 4])
    return xywhr_to_corners(a), xywhr_to_corners(b)


def _dense(rng: np.random.Generator, n: int) -> np.ndarray:
    return xywhr_to_corners(
        np.column_stack(
            [
                rng.uniform(0, 300, n),
                rng.uniform(0, 300, n),
                rng.lognormal(3, 0.7, n),
                rng.lognormal(3, 0.7, n),
                rng.uniform(-np.pi, np.pi, n),
            ]
        )
    )


@pytest.mark.parametrize("floor", [0.5, 0.05, 0.75, 0.95])
@pytest.mark.parametrize("seed", range(3))
def test_pruned_pairs_are_below_the_floor(seed: int, floor: float) -> None:
    rng = np.random.default_rng(seed)
    a0, b0 = _near_half(rng, 3000)
    d = _dense(rng, 200)
    qa, _ = convex_quads(np.concatenate([a0, d]).reshape(-1, 4, 2))
    qb, _ = convex_quads(np.concatenate([b0, d[::-1]]).reshape(-1, 4, 2))
    n0 = a0.shape[0]
    ia = np.r_[np.arange(n0), np.repeat(np.arange(n0, n0 + 200), 200)].astype(np.int64)
    ib = np.r_[np.arange(n0), np.tile(np.arange(n0, n0 + 200), 200)].astype(np.int64)
    crowd = rng.random(ia.shape[0]) < 0.2
    for cr in (None, crowd):
        exact = indexed_iou(qa, qb, ia, ib, crowd=cr)
        pruned = indexed_iou(qa, qb, ia, ib, crowd=cr, floor=floor)
        keep = exact >= floor
        assert pruned[keep].tobytes() == exact[keep].tobytes()  # at/above: untouched
        assert np.all((pruned == exact) | (pruned == 0.0))
        gone = (pruned == 0.0) & (exact > 0)
        assert np.all(exact[gone] < floor)
        assert gone.sum() > 30  # the test prunes something
    if floor == 0.5:  # exactly 0.5 (axis-aligned, exact shift) is never pruned
        assert ((exact == 0.5) & (pruned == 0.5)).any()


def _scene(seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    n_img, n = 3, 250
    g = _dense(rng, n)
    gi = rng.integers(0, n_img, n)
    gc = rng.integers(0, 2, n)
    near_a, near_b = _near_half(rng, n)  # predictions a hair either side of IoU 0.5
    p = np.concatenate([g + rng.normal(0, 2, g.shape), near_b, _dense(rng, n)])
    g = np.concatenate([g, near_a])
    gi, gc = np.r_[gi, rng.integers(0, n_img, n)], np.r_[gc, rng.integers(0, 2, n)]
    pi = np.r_[gi, rng.integers(0, n_img, n)]
    pc = np.r_[gc, rng.integers(0, 2, n)]
    gt = Boxes.build(
        np.zeros((g.shape[0], 4)), image=gi, category=gc, obb=g,
        difficult=rng.random(g.shape[0]) < 0.1,
    )  # fmt: skip
    pr = Boxes.build(
        np.zeros((p.shape[0], 4)), image=pi, category=pc, obb=p,
        score=np.round(rng.random(p.shape[0]), 1),
    )  # fmt: skip
    names: list[str | None] = [f"P{k}" for k in range(n_img)]
    imgs = Images(list(names), names, np.full(n_img, np.nan), np.full(n_img, np.nan))
    return Dataset(imgs, Categories([None, None], ["a", "b"]), gt, pr)


def _count_clips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of pairs each polygon clipping call gets (appended as they come)."""
    clipped: list[int] = []
    real = obb.intersection_area

    def counting(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
        clipped.append(pa.shape[0])
        return real(pa, pb)

    monkeypatch.setattr(obb, "intersection_area", counting)
    return clipped


@pytest.mark.parametrize("seed", range(6))
def test_dota_pruning_changes_no_result(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = _scene(seed)
    clipped = _count_clips(monkeypatch)
    full = run_dota(ds, matches=True)
    n_full = sum(clipped)
    clipped.clear()
    fast = run_dota(ds, matches=False)
    assert sum(clipped) < 0.8 * n_full  # pruning happened
    for all_point in (False, True):
        a = run_dota(ds, matches=True, all_point=all_point).result()
        b = run_dota(ds, matches=False, all_point=all_point).result()
        assert a.summary == b.summary
        assert a.per_class == b.per_class
    mf, mp = full.match, fast.match
    for col in ("tp", "fp", "hit", "order"):
        assert np.array_equal(getattr(mf, col), getattr(mp, col)), col
    assert np.array_equal(mf.gt_row[mf.hit], mp.gt_row[mp.hit])
    assert mf.iou[mf.hit].tobytes() == mp.iou[mp.hit].tobytes()
    near = (mf.iou > 0.5 - 1e-6) & (mf.iou < 0.5 + 1e-6)
    assert near.sum() > 20  # the scene tests the threshold's edge


def test_areas_of_the_bound() -> None:
    """The bound is the hull overlap over the union it implies: two unit squares offset by
    1/3 (IoU exactly 0.5) are kept at floor 0.5, pruned at a floor just above."""
    q = np.array([[0, 0, 3, 0, 3, 3, 0, 3], [1, 0, 4, 0, 4, 3, 1, 3]], float).reshape(-1, 4, 2)
    qq, _ = convex_quads(q)
    ba, ar = aabb(qq), signed_area(qq)
    i, j = np.array([0]), np.array([1])
    assert indexed_iou(qq, qq, i, j, floor=0.5)[0] == 0.5
    assert indexed_iou(qq, qq, i, j, floor=0.5 + 1e-6)[0] == 0.0
    assert not obb._below(ba[i], ba[j], ar[i], ar[j], None, 0.5)[0]


def _coco_scene(seed: int) -> Dataset:
    from iou_cli.geometry.obb import polygon_area

    ds = _scene(seed)
    rng = np.random.default_rng(seed + 100)

    def side(b: Boxes, **kw: object) -> Boxes:
        assert b.obb is not None
        q = b.obb.reshape(-1, 4, 2)
        area = polygon_area(b.obb)
        return Boxes.build(
            aabb(q), image=b.image, category=b.category, obb=b.obb, area=area, box_area=area,
            **kw,  # type: ignore[arg-type]
        )  # fmt: skip

    n_img = len(ds.images)
    imgs = Images(
        list(range(n_img)), [None] * n_img, np.full(n_img, 4000.0), np.full(n_img, 4000.0)
    )
    gt = side(ds.gt, iscrowd=rng.random(len(ds.gt)) < 0.05)
    pr = side(ds.pred, score=ds.pred.score)
    return Dataset(imgs, Categories([1, 2], ["a", "b"]), gt, pr)


@pytest.mark.parametrize("seed", range(4))
def test_coco_obb_pruning_changes_no_result(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from iou_cli.api import evaluate_dataset
    from iou_cli.matching import pairs

    ds = _coco_scene(seed)
    clipped = _count_clips(monkeypatch)
    fast = evaluate_dataset(ds, protocol="coco", iou_type="obb")
    n_fast = sum(clipped)
    clipped.clear()
    real = pairs._group_pair_iou_obb
    floors: list[float | None] = []

    def unpruned(
        d: Dataset,
        d_rows: np.ndarray,
        g_rows: np.ndarray,
        pair_det: np.ndarray,
        pair_g: np.ndarray,
        min_iou: float | None,
    ) -> np.ndarray:
        floors.append(min_iou)
        return real(d, d_rows, g_rows, pair_det, pair_g, None)

    monkeypatch.setattr(pairs, "_group_pair_iou_obb", unpruned)
    full = evaluate_dataset(ds, protocol="coco", iou_type="obb")
    assert floors and floors[0] == 0.5  # the run asks for pruning at its lowest threshold
    assert n_fast < 0.8 * sum(clipped)  # and pruning happened
    assert fast.summary == full.summary
    assert fast.per_class == full.per_class
    ef, eu = fast.evaluation, full.evaluation
    assert ef is not None and eu is not None
    assert ef.precision.tobytes() == eu.precision.tobytes()  # type: ignore[attr-defined]
    assert ef.recall.tobytes() == eu.recall.tobytes()  # type: ignore[attr-defined]


def test_convex_geometry_is_remembered_only_for_equal_corners() -> None:
    rng = np.random.default_rng(4)
    c = _dense(rng, obb._MEMO_ROWS)
    q1, bad1, area1, box1 = obb.convex_geometry(c)
    assert not q1.flags.writeable and not area1.flags.writeable
    q2, _, area2, _ = obb.convex_geometry(c.copy())  # equal corners: the same answer
    assert q2 is q1 and area2 is area1
    c[7] += 5.0  # the caller changes its corners in place: computed afresh
    q3, _, area3, box3 = obb.convex_geometry(c)
    assert q3 is not q1
    want_q, want_bad, want_area = obb.convex_quads_area(c.reshape(-1, 4, 2))
    assert q3.tobytes() == want_q.tobytes() and area3.tobytes() == want_area.tobytes()
    assert box3.tobytes() == aabb(want_q).tobytes()
    assert area1.tobytes() != area3.tobytes()


def test_blocks_of_pairs_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """COCO's pairs and DOTA's candidate pairs are scored a block at a time: tiny blocks
    (and tiny clipping chunks) give the same bits as one block."""
    from iou_cli.api import evaluate_dataset
    from iou_cli.matching import argmax, pairs

    ds, dd = _coco_scene(1), _scene(1)
    coco = evaluate_dataset(ds, protocol="coco", iou_type="obb").evaluation
    dota = run_dota(dd, matches=True).match
    monkeypatch.setattr(pairs, "_OBB_BLOCK", 7)
    monkeypatch.setattr(argmax, "_PAIRS", 5)
    monkeypatch.setattr(obb, "_CHUNK", 3)
    coco2 = evaluate_dataset(ds, protocol="coco", iou_type="obb").evaluation
    dota2 = run_dota(dd, matches=True).match
    assert coco is not None and coco2 is not None
    assert coco.precision.tobytes() == coco2.precision.tobytes()  # type: ignore[attr-defined]
    assert dota.iou.tobytes() == dota2.iou.tobytes()
    assert np.array_equal(dota.gt_row, dota2.gt_row) and np.array_equal(dota.tp, dota2.tp)
    monkeypatch.setattr(argmax, "_cpus", lambda: 3)  # many blocks on threads, or on one
    for threads in (3, 1):
        monkeypatch.setattr(argmax, "_THREADS", threads)
        again = run_dota(dd, matches=True).match
        assert again.iou.tobytes() == dota.iou.tobytes()
        assert np.array_equal(again.gt_row, dota.gt_row)
