"""The image table in pycocotools' order (``sorted(imgIds)``): integer ids are ordered in
array steps, every other table by the key function; the same order either way."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from iou_cli.data import _image_sort_key, _int_order


def _by_key(keys: list[Any]) -> list[int]:
    return sorted(range(len(keys)), key=lambda i: _image_sort_key(keys[i]))


@pytest.mark.parametrize("seed", range(6))
def test_integer_ids_in_the_order_of_the_key_function(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(0, 400)
    keys = rng.sample(range(-(10**12), 10**12), n)
    for table in (keys, sorted(keys), sorted(keys, reverse=True)):
        assert _int_order(table) == _by_key(table)


@pytest.mark.parametrize(
    "keys",
    [
        [3, "2", 1],  # a string id
        [2, True, 1],  # a bool is no image id here
        [np.int64(2), 1],  # a NumPy integer
        [2**70, 1],  # beyond 64 bits
    ],
)
def test_other_tables_are_left_to_the_key_function(keys: list[Any]) -> None:
    assert _int_order(keys) is None
