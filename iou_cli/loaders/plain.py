"""In-memory COCO objects as JSON would give them: the Python API accepts what a notebook
holds (``OrderedDict`` records, NumPy scalars such as ``np.float32`` scores, 0-d and 1-d
arrays for a bbox, tuples) by turning it into plain dicts, lists and numbers first.
Booleans stay booleans (refused where a number is expected, as in a JSON file)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UsageError

MAX_DEPTH = 100


def is_plain(obj: Any) -> bool:
    """True when ``obj`` holds only dict, list, str, int, float, bool and None."""
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        v, d = stack.pop()
        t = type(v)
        if t is dict:
            if d >= MAX_DEPTH:
                return False
            stack.extend((x, d + 1) for x in v.values())
        elif t is list:
            if d >= MAX_DEPTH:
                return False
            stack.extend((x, d + 1) for x in v if type(x) in (dict, list))
            if not all(type(x) in _SCALARS or type(x) in (dict, list) for x in v):
                return False
        elif t not in _SCALARS:
            return False
    return True


_SCALARS = (str, int, float, bool, type(None))


def plain(obj: Any, depth: int = 0) -> Any:
    """``obj`` with mappings as dicts, sequences and arrays as lists, NumPy scalars as
    Python numbers (a ``UsageError`` for what has no JSON form)."""
    if depth > MAX_DEPTH:
        raise UsageError(f"in-memory COCO object nested more than {MAX_DEPTH} deep")
    if isinstance(obj, (str, bool, int, float)) or obj is None:
        return obj
    if isinstance(obj, Mapping):
        return {
            str(k) if not isinstance(k, str) else k: plain(v, depth + 1) for k, v in obj.items()
        }
    if isinstance(obj, (list, tuple)):
        return [plain(v, depth + 1) for v in obj]
    import numpy as np

    if isinstance(obj, np.ndarray):
        return plain(obj.tolist(), depth + 1) if obj.ndim else plain(obj.item(), depth + 1)
    if isinstance(obj, np.generic):
        return obj.item()
    return obj  # left for the loader to refuse, located
