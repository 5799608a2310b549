"""Ranges of option values, checked up front (a usage error, exit 2) before any work.

Every numeric option that sizes an array or a loop is bounded here, so that a typo such as
``--max-dets 1,9223372036854775807`` or ``--num-classes 4611686018427387904`` is a one-line
usage error rather than an overflow, a traceback or memory exhaustion half-way through.
The bounds are far above any real dataset and far below what breaks:

* ``MAX_DETS``: maxDets per image (COCO uses 100, LVIS 300); 10**9 keeps ``int64`` sums and
  the ``AR@N`` key readable.
* ``MAX_IOU_THRS``: IoU thresholds (COCO uses 10); the match table holds one row per
  threshold and candidate pair.
* ``MAX_CLASSES``: classes of a label map (``segment``); its confusion matrix is
  ``K x (K + 1)`` int64: 8,192 classes (ADE20K-full has 3,688) is 512 MiB.
* ``MIN_IMAGE_SIDE`` / ``MAX_IMAGE_SIDE``: ``--image-size`` in pixels (1 to 1e9); beyond them a
  normalised box times the size overflows or underflows the area (1e300**2 is inf,
  1e-300**2 is 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .errors import UsageError

MAX_DETS = 10**9
MAX_IOU_THRS = 1000
MAX_CLASSES = 8192
MAX_IMAGE_SIDE = 1e9
MIN_IMAGE_SIDE = 1.0
MIN_CONSOLE_WIDTH = 40


def check_ranges(
    *,
    max_dets: Sequence[int] | None = None,
    iou_thrs: Sequence[float] | None = None,
    image_size: tuple[float, float] | None = None,
) -> None:
    """Raise :class:`UsageError` for option values outside the ranges above."""
    if max_dets is not None:
        big = [m for m in max_dets if m > MAX_DETS]
        if big:
            raise UsageError(
                f"--max-dets: {big[0]} is too large (at most {MAX_DETS:,} detections per image)"
            )
    if iou_thrs is not None and len(iou_thrs) > MAX_IOU_THRS:
        raise UsageError(
            f"--iou-thrs: {len(iou_thrs):,} thresholds, at most {MAX_IOU_THRS} are allowed"
        )
    if image_size is not None:
        for v in image_size:
            if not (math.isfinite(v) and MIN_IMAGE_SIDE <= v <= MAX_IMAGE_SIDE):
                raise UsageError(
                    f"--image-size: {v:g} pixels is out of range "
                    f"({MIN_IMAGE_SIDE:g} to {MAX_IMAGE_SIDE:g})"
                )


def check_num_classes(k: int) -> None:
    """``segment --num-classes``: 1 to ``MAX_CLASSES``."""
    if not (1 <= k <= MAX_CLASSES):
        raise UsageError(f"--num-classes: expected 1 to {MAX_CLASSES:,} classes, got {k}")


def parse_int(text: str, option: str) -> int:
    """An integer option value written as digits (``1e23`` is a number, not a count)."""
    s = text.strip()
    digits = s[1:] if s[:1] in "+-" else s
    if not digits.isascii() or not digits.isdigit() or len(digits) > 30:
        raise UsageError(f"{option}: expected an integer, got {text!r}")
    return int(s)


def console_width(columns: str | None) -> int | None:
    """The width for rich: ``None`` (rich's own choice) unless ``COLUMNS`` is a number too
    small to show a table (``COLUMNS=0`` makes rich print nothing): then the minimum."""
    if columns is None or not columns.strip().isdigit():
        return None
    n = int(columns.strip())
    return n if n >= MIN_CONSOLE_WIDTH else MIN_CONSOLE_WIDTH


# --------------------------------------------------------------------------- API values


def as_number(value: object, option: str) -> float:
    """A number option from the Python API: int, float, a NumPy scalar or 0-d array (never a
    bool or a string), finite."""
    import numpy as np

    v = value
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise UsageError(f"{option}: expected a number, got {type(value).__name__} {value!r:.40}")
    f = float(v)
    if not math.isfinite(f):
        raise UsageError(f"{option}: expected a finite number, got {value!r}")
    return f


def as_count(value: object, option: str) -> int:
    """A whole-number option (``max_dets`` items): 1.5 is refused, never truncated."""
    f = as_number(value, option)
    if not f.is_integer():
        raise UsageError(f"{option}: expected a whole number, got {value!r}")
    return int(f)


def as_list(value: object, option: str) -> list[object]:
    """A list option: any sequence or 1-d array (a lone string or number is one item)."""
    import numpy as np

    if isinstance(value, (str, bytes, int, float, np.generic)):
        return [value]
    if isinstance(value, np.ndarray):
        return list(value.reshape(-1).tolist())
    try:
        return list(value)  # type: ignore[call-overload]
    except TypeError:
        raise UsageError(f"{option}: expected a list, got {type(value).__name__}") from None


def as_keys(value: object, option: str) -> list[str]:
    """Ids or names (``image_ids``, ``classes``): strings or integers, as strings."""
    import numpy as np

    out: list[str] = []
    for v in as_list(value, option):
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise UsageError(f"{option}: expected ids or names, got {v!r:.40}")
        out.append(str(v))
    return out


def as_image_size(value: object) -> tuple[float, float]:
    """``image_size`` (W, H) from the API, range-checked as ``--image-size``."""
    items = as_list(value, "image_size")
    if len(items) != 2:
        raise UsageError(f"image_size: expected (width, height), got {value!r:.40}")
    size = (as_number(items[0], "image_size"), as_number(items[1], "image_size"))
    check_ranges(image_size=size)
    return size
