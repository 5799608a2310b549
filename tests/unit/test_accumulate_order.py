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


# --- by_score made ahead, in a thread (matching.accumulate.sort_later) ------------------


def _stable(score: np.ndarray) -> np.ndarray:
    return np.argsort(-score, kind="stable")


def test_an_order_made_ahead_is_taken_by_the_same_array_only() -> None:
    from iou_cli.matching import accumulate as acc

    rng = np.random.default_rng(5)
    score = np.round(rng.random(5000), 2)  # many ties
    acc.sort_later(score)
    view = score.reshape(-1)  # (a view of the same memory, as Boxes.build makes)
    assert view is not score
    taken = acc._LATER[0][2]
    got = acc.by_score(view)
    assert acc._LATER == [] and np.array_equal(got, _stable(score))
    assert taken and got is taken[0]  # the thread's order, not a new sort
    acc.sort_later(score)
    other = score.copy()  # the same values elsewhere: sorted anew, the waiting order dropped
    got = acc.by_score(other)
    assert acc._LATER == [] and np.array_equal(got, _stable(other))


@pytest.mark.parametrize("change", ["value", "nan", "reversed view"])
def test_an_order_made_ahead_is_checked(change: str) -> None:
    """An array changed in place after the sort started, NaN scores, a view with other
    strides: the order taken is by_score's of the values as they are now."""
    from iou_cli.matching import accumulate as acc

    rng = np.random.default_rng(6)
    score = np.round(rng.random(3000), 2)
    acc.sort_later(score)
    acc._LATER[0][1].join()
    if change == "value":
        score[10] = 5.0
        arr = score
    elif change == "nan":
        score[::7] = np.nan
        arr = score
    else:
        arr = score[::-1]
    got = acc.by_score(arr)
    assert acc._LATER == []
    assert np.array_equal(got, _stable(arr))


def test_order_check_refuses_what_is_not_the_order() -> None:
    from iou_cli.matching.accumulate import _is_by_score

    score = np.array([0.5, 0.9, 0.5, 0.1])
    assert _is_by_score(score, np.array([1, 0, 2, 3]))
    assert not _is_by_score(score, np.array([1, 2, 0, 3]))  # a tie out of index order
    assert not _is_by_score(score, np.array([1, 0, 0, 3]))  # not a permutation
    assert not _is_by_score(score, np.array([0, 1, 2, 3]))  # a rise
    assert not _is_by_score(score, np.array([1, 0, 2]))
    assert not _is_by_score(score, np.array([1, 0, 2, 4]))
