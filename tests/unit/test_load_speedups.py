"""Loading shortcuts that must not change a bit: the id factorisation by a presence table
equals ``np.unique(..., return_inverse=True)``; the translated prefilter of the JSON reader's
big-number check says what its regex says."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iou_cli.loaders.ids import factorize
from iou_cli.loaders.jsonio import _NUM, _suspicious_number


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint64, np.uint16])
@pytest.mark.parametrize("spread", [1, 3, 1000, 10**7, 2**40])
def test_factorize_equals_unique(dtype: type, spread: int) -> None:
    rng = np.random.default_rng(spread % 97)
    for n in (1, 2, 17, 500):
        info = np.iinfo(dtype)
        hi = min(spread, int(info.max))
        arr: np.ndarray = rng.integers(0, hi, n, endpoint=True).astype(dtype)
        if info.min < 0:
            arr = (arr - np.asarray(hi // 2).astype(dtype)).astype(dtype)
        codes, uniq = factorize(arr)
        uniq_ref, codes_ref = np.unique(arr, return_inverse=True)
        assert np.array_equal(uniq, uniq_ref) and uniq.dtype == uniq_ref.dtype
        assert np.array_equal(codes, codes_ref) and codes.dtype == np.int64


def test_factorize_extremes() -> None:
    arr = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0, 0], dtype=np.int64)
    codes, uniq = factorize(arr)  # a span beyond the table: the sort
    assert codes.tolist() == [2, 0, 1, 1] and uniq.tolist() == sorted(set(arr.tolist()))
    codes, uniq = factorize(np.array([5, 3, 5, 4], dtype=np.int64))  # the table
    assert codes.tolist() == [2, 0, 2, 1] and uniq.tolist() == [3, 4, 5]


TOKENS = ["1", "0", "12345678", "1234567890123456", "12345678901234567", ".", "e", "E",
          "e+", "E-", "123", "999", " ", '"', "x", ",", "-", "1.5e300", "0.1234567890123456"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=12))
def test_prefilter_says_what_the_regex_says(parts: list[str]) -> None:
    data = "".join(parts).encode()
    assert _suspicious_number(data) == (_NUM.search(data) is not None)


def test_table_order_equals_lexsort() -> None:
    from iou_cli.state.reduce import table_order

    rng = np.random.default_rng(3)
    for n, hi in ((0, 1), (1, 1), (50, 3), (5000, 40)):
        image, cat, rank = (rng.integers(0, hi, n).astype(np.int64) for _ in range(3))
        want = np.lexsort((rank, cat, image))
        assert np.array_equal(table_order(image, cat, rank), want)  # ties included
        big = image + 2**40  # keys beyond 63 bits: the lexsort itself
        assert np.array_equal(table_order(big, cat * 2**30, rank), np.lexsort((rank, cat, big)))
