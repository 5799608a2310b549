"""The OKS kernel's row sums are NumPy's own (pairwise) sums of each row's kept values, bit
for bit, for every K (the pycocotools oracle covers K = 1..26; this covers up to 140,
past NumPy's 128-value block)."""

from __future__ import annotations

import numpy as np
import pytest

from iou_cli.geometry.oks import row_sums


@pytest.mark.parametrize("k", [1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 25, 68, 127, 128, 129, 133])
def test_row_sums_equal_numpy_sum(k: int) -> None:
    rng = np.random.default_rng(k)
    a = np.exp(-rng.random((400, k)) * rng.choice([1e-3, 1.0, 30.0, 300.0], size=(400, 1)))
    kept = rng.random((400, k)) < rng.uniform(0.05, 1.0, size=(400, 1))
    kept[:50] = True
    kept[kept.sum(axis=1) == 0, 0] = True
    n = kept.sum(axis=1)
    ours = row_sums(a, kept, n)
    ref = np.array([np.sum(a[i][kept[i]]) for i in range(a.shape[0])])
    assert np.array_equal(ours, ref)
