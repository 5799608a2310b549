"""Deep equality of loaded sides, for the tests that compare two ways of reading the same
file (the typed and the generic panoptic JSON reader, one process and the forked reader)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


def same(a: Any, b: Any) -> bool:
    """Dataclasses field by field, arrays (values, NaN where NaN, dtype, shape), containers
    (dict keys in order), and the type of every value (1 is not "1", nor 1.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        nan = a.dtype.kind == "f"
        return (
            a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=nan))
        )
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
