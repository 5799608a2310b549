"""The accumulation's score order (iou_cli/matching/accumulate.py): read off the global
score order where that is the same as sorting the kept rows anew."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("seed", range(12))
def test_score_order_read_off_the_global_order_equals_a_stable_sort(seed: int) -> None:
    # by_score_from must give by_score's order (descending score, ties by position) for
    # any subset of rows in any position order: read off the global order where ties
    # already fall in position order, sorted anew where they do not
    from iou_cli.matching import accumulate as acc

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    score = np.round(rng.random(n), int(rng.integers(0, 3)))  # many ties
    if seed % 3 == 0:
        score[rng.random(n) < 0.3] = -0.0  # signed zeros tie with 0.0
    keep = rng.random(n) < 0.7
    rows = np.flatnonzero(keep)
    if seed % 2:  # positions not in row order: ties across them must be re-sorted
        rows = rows[rng.permutation(rows.shape[0])]
    order = acc.by_score(score)
    got = acc.by_score_from(order, rows, score[rows], n)
    assert np.array_equal(got, acc.by_score(score[rows]))
