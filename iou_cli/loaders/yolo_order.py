"""The column order of YOLO predictions: Ultralytics ``class cx cy w h conf`` or darknet /
globox ``class conf cx cy w h``, told from the numbers (``--pred-format`` forces it)."""

from __future__ import annotations

import numpy as np

from ..errors import UsageError

# how far a box may reach past the image border and still be plausible (rounding, clipping)
_TOLERANCE = 0.02


def _fit(cols: np.ndarray) -> np.ndarray:
    """Rows whose four columns (cx, cy, w, h) make a box inside the unit image."""
    cx, cy, w, h = cols[:, 0], cols[:, 1], cols[:, 2], cols[:, 3]
    t = _TOLERANCE
    inside = (cols >= 0.0).all(axis=1) & (cols <= 1.0).all(axis=1)
    inside &= (
        (cx - w / 2 >= -t) & (cx + w / 2 <= 1 + t) & (cy - h / 2 >= -t) & (cy + h / 2 <= 1 + t)
    )
    return inside


def column_order(
    raw: np.ndarray, fmt: str, *, detect: bool, groups: np.ndarray | None = None
) -> tuple[str, str | None, str | None]:
    """The predictions' column order, a warning (or None) and the evidence of a close call
    (or None).

    ``raw`` holds the five numbers after the class of every row (``groups``: the file of each
    row). The confidence is the column that is not a plausible box coordinate across the
    file: read as Ultralytics (``cx cy w h conf``) and as darknet (``conf cx cy w h``), the
    right order gives boxes that lie inside the image; the wrong one mixes the confidence into
    the box. The order whose boxes fit more often wins. When both fit equally often, the
    order whose confidence column descends within every file (detectors write their boxes by
    descending confidence) while the other's does not wins, and the evidence is returned;
    otherwise the order cannot be told: a :class:`UsageError` naming ``--pred-format``. When
    the order was forced (``detect`` False) and the other one fits clearly better, a warning
    says so.
    """
    if not len(raw):
        return fmt, None, None
    fits = {
        "yolo": float(_fit(raw[:, 0:4]).mean()),
        "yolo-darknet": float(_fit(raw[:, 1:5]).mean()),
    }
    other = "yolo-darknet" if fmt == "yolo" else "yolo"
    layouts = {"yolo": "class cx cy w h conf", "yolo-darknet": "class conf cx cy w h"}
    if detect:
        if fits[other] != fits[fmt]:
            return (other if fits[other] > fits[fmt] else fmt), None, None
        g = np.zeros(len(raw), dtype=np.int64) if groups is None else groups
        descends = {
            "yolo": _descends(raw[:, 4], g),
            "yolo-darknet": _descends(raw[:, 0], g),
        }
        share = f"{fits['yolo']:.0%} of {len(raw)} boxes fit their image either way"
        if descends["yolo"] != descends["yolo-darknet"]:
            won = "yolo" if descends["yolo"] else "yolo-darknet"
            return (
                won,
                None,
                f"YOLO predictions read as {layouts[won]}: {share}, and only that reading's "
                "confidence descends within every file, as detectors write it (force with "
                "--pred-format)",
            )
        raise UsageError(
            f"the column order of these YOLO predictions cannot be told: {share} and the "
            "confidence column would descend within every file either way; give --pred-format "
            "yolo (Ultralytics: class cx cy w h conf) or --pred-format yolo-darknet "
            "(class conf cx cy w h)"
        )
    if fits[other] >= 0.99 and fits[fmt] < 0.9:
        bad = len(raw) - int(round(fits[fmt] * len(raw)))
        return (
            fmt,
            (
                f"--pred-format {fmt} reads the columns as {layouts[fmt]}, but then {bad} of "
                f"{len(raw)} predicted boxes do not fit in their image, while every box fits as "
                f"{layouts[other]}: the file looks like --pred-format {other}"
            ),
            None,
        )
    return fmt, None, None


def _descends(conf: np.ndarray, groups: np.ndarray) -> bool:
    """Non-increasing within every group (rows in file order)."""
    if len(conf) < 2:
        return True
    same = groups[1:] == groups[:-1]
    return bool(np.all(conf[1:][same] <= conf[:-1][same]))
