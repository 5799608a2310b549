"""Shortcuts of the DOTA / VOC evaluation when predictions come class by class (DOTA's
Task1 files do): ``devkit_order`` sorts slices instead of masked rows, ``class_curves``
reads each class's rows as a slice of the processing order. Both give exactly what the
general path gives; these tests fail if a shortcut changed a row or a value."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from iou_cli.protocols.dota import devkit_order
from iou_cli.protocols.voc import VocMatch, class_curves


def _straight(category: np.ndarray, score: np.ndarray, n_cat: int) -> np.ndarray:
    # the devkit: per class, np.argsort(-confidence) over that class's rows in file order
    parts = [np.flatnonzero(category == c) for c in range(n_cat)]
    return np.concatenate([r[np.argsort(-score[r])] for r in parts]).astype(np.int64)


@pytest.mark.parametrize("seed", range(12))
def test_devkit_order_on_class_blocks_is_the_devkit_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, n_cat = int(rng.integers(1, 3000)), int(rng.integers(1, 9))
    score = np.round(rng.random(n), int(rng.integers(0, 3)))  # ties: the unstable sort's
    category = rng.integers(0, n_cat, n)
    for cat in (np.sort(category), category):  # class blocks (the slices) and mixed
        pr = SimpleNamespace(category=cat, score=score)
        got = devkit_order(pr, n_cat)  # type: ignore[arg-type]
        assert got.tolist() == _straight(cat, score, n_cat).tolist()


def test_devkit_order_empty() -> None:
    pr = SimpleNamespace(category=np.zeros(0, np.int64), score=np.zeros(0))
    assert devkit_order(pr, 3).size == 0  # type: ignore[arg-type]


@pytest.mark.parametrize("use_07", [False, True])
def test_class_curves_slices_equal_masks(use_07: bool) -> None:
    rng = np.random.default_rng(5)
    n, n_gt, n_cat = 2000, 300, 6
    cat = rng.integers(0, n_cat, n)
    score = np.round(rng.random(n), 2)
    order = np.lexsort((-score, cat)).astype(np.int64)  # class by class
    u = rng.random(n)
    tp, fp = u < 0.3, u >= 0.4
    m = VocMatch(tp, fp, np.zeros(n), np.zeros(n, np.int64), order, rng.random(n_gt) < 0.1, tp)
    ds = SimpleNamespace(
        pred=SimpleNamespace(category=cat),
        gt=SimpleNamespace(category=rng.integers(0, n_cat, n_gt)),
        categories=list(range(n_cat)),
    )
    # the same rows per class in the same order, classes interleaved: the masked path
    mixed = order[rng.permutation(n)]
    by_class = {c: order[cat[order] == c] for c in range(n_cat)}
    mixed_cat = cat[mixed]
    for c in range(n_cat):
        mixed[mixed_cat == c] = by_class[c]
    assert (np.diff(cat[mixed]) < 0).any()
    m_mixed = VocMatch(tp, fp, m.iou, m.gt_row, mixed, m.hard, m.hit)
    a = class_curves(ds, m, use_07=use_07)  # type: ignore[arg-type]
    b = class_curves(ds, m_mixed, use_07=use_07)  # type: ignore[arg-type]
    assert len(a) == n_cat
    for x, y in zip(a, b, strict=True):
        assert x["AP"] == y["AP"] and x["tp"] == y["tp"] and x["fp"] == y["fp"]
        assert x["recall"].tobytes() == y["recall"].tobytes()
        assert x["precision"].tobytes() == y["precision"].tobytes()
