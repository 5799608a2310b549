"""``best_f1_grouped`` (the VOC and DOTA evaluations' shortcut: scores merged from their
per-class sorted runs, counts read by search) gives exactly what ``best_f1_threshold``
(the straight sort and cumulative sums) gives, ties, zeros and degenerate cases included."""

from __future__ import annotations

import numpy as np
import pytest

from iou_cli.metrics import best_f1_grouped, best_f1_threshold


def _grouped(score: np.ndarray, cat: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # class by class, descending score, ties in any order (the devkit's sort is unstable)
    parts = []
    for c in np.unique(cat):
        rows = np.flatnonzero(cat == c)
        rows = rows[rng.permutation(rows.size)]
        parts.append(rows[np.argsort(-score[rows], kind="stable")])
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


@pytest.mark.parametrize("seed", range(40))
def test_grouped_is_the_straight_answer(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    decimals = int(rng.integers(0, 4))  # few decimals: many ties
    score = np.round(rng.random(n), decimals)
    if seed % 5 == 0:
        score[rng.random(n) < 0.2] = 0.0
    if seed % 7 == 0:
        score[rng.random(n) < 0.2] = -0.0  # one sign of zero only: still the shortcut
    cat = rng.integers(0, 6, n)
    u = rng.random(n)
    tp = u < 0.3
    fp = (u >= 0.3) & (u < 0.9)  # the rest: neither (difficult hits)
    n_gt = int(rng.integers(0, 80))
    want = best_f1_threshold(score, tp, fp, n_gt)
    got = best_f1_grouped(score, tp, fp, n_gt, _grouped(score, cat, rng))
    assert (got is None) == (want is None)
    if want is not None:
        assert got is not None
        assert np.float64(got).tobytes() == np.float64(want).tobytes()  # the sign of 0 too


def test_the_shortcut_would_differ_without_its_guards() -> None:
    """Zeros of both signs in one run, NaN scores, and an order that misses rows take the
    straight path: each case below returns the straight answer."""
    rng = np.random.default_rng(3)
    score = np.array([0.0, -0.0, 0.5, 0.0, -0.0, np.nan, 0.7])
    tp = np.array([1, 0, 1, 0, 1, 0, 0], dtype=bool)
    fp = ~tp
    for s in (score[:5], score, score[[0, 1, 2, 6]]):
        n = s.shape[0]
        want = best_f1_threshold(s, tp[:n], fp[:n], 3)
        got = best_f1_grouped(s, tp[:n], fp[:n], 3, _grouped(s, np.zeros(n, int), rng))
        assert np.float64(got).tobytes() == np.float64(want).tobytes()
    s = np.array([0.9, 0.8, 0.1])
    t = np.array([True, False, True])
    assert best_f1_grouped(s, t, ~t, 2, np.array([0, 1])) == best_f1_threshold(s, t, ~t, 2)
    assert best_f1_grouped(s, t, ~t, 0, np.array([0, 1, 2])) is None
