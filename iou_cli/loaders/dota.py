"""DOTA txt: rotated ground truth (``labelTxt``) and Task1 result folders.

Ground truth, one ``.txt`` per image (the file stem is the image)::

    imagesource:GoogleEarth          (optional header lines, any of the two, first)
    gsd:0.146343590398
    x1 y1 x2 y2 x3 y3 x4 y4 category difficult

``difficult`` is ``0`` or ``1`` (absent: 0, as the devkit reads it). Predictions are a folder
of ``Task1_<class>.txt`` files, one per class, each line ``image score x1 y1 ... x4 y4``; the
line order is kept (the DOTA protocol sorts by score as the devkit does, over that order).
Corners stay as written (``Boxes.obb``); quadrilaterals that are not convex are counted in a
warning (IoU uses their convex hull).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Hashable

import numpy as np

from ..data import Boxes, Categories, Images, Side
from ..errors import InputError
from ..geometry.obb import convex_quads, signed_area
from .files import is_readable_member, read_text

_HEADER = re.compile(r"^(imagesource|gsd)\s*:", re.IGNORECASE)
TASK1 = re.compile(r"^Task1_(.+)\.txt$")


def _lines(file: str, member: bool) -> list[str]:
    lines = read_text(file, member=member).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _corners(parts: list[str], file: str, ln: int) -> list[float]:
    out = []
    for k, p in enumerate(parts):
        try:
            v = float(p)
        except ValueError:
            raise InputError(
                file, ln, f"corner {k + 1}: expected a number, got {p[:20]!r}"
            ) from None
        if not math.isfinite(v):
            raise InputError(file, ln, f"corner {k + 1}: expected a finite number, got {p!r}")
        out.append(v)
    return out


def _txt_files(path: str, what: str) -> tuple[str, list[str]]:
    if not os.path.isdir(path):
        return os.path.dirname(path) or ".", [os.path.basename(path)]
    base = path
    sub = os.path.join(path, "labelTxt")
    if os.path.isdir(sub):
        base = sub
    files = sorted(
        n
        for n in os.listdir(base)
        if n.lower().endswith(".txt") and is_readable_member(os.path.join(base, n))
    )
    if not files:
        raise InputError(path, None, f"no .txt files in this folder (expected {what})")
    return base, files


def is_dota_gt_line(line: str) -> bool:
    """A DOTA ground-truth object line: 8 numbers, a category, an optional flag."""
    parts = line.split()
    if len(parts) not in (9, 10):
        return False
    try:
        [float(p) for p in parts[:8]]
    except ValueError:
        return False
    return not _is_number(parts[8])


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _quad_notes(corners: np.ndarray, path: str) -> tuple[np.ndarray, list[str]]:
    q, bad = convex_quads(corners.reshape(-1, 4, 2))
    notes = []
    if bad.any():
        notes.append(
            f"{path}: {int(bad.sum())} quadrilateral(s) are not convex (a dent or crossed "
            "edges); IoU uses their convex hull"
        )
    return signed_area(q), notes


def _side(
    path: str,
    fmt: str,
    keys: list[str],
    names: list[str],
    corners: list[list[float]],
    img: list[int],
    cat: list[int],
    *,
    score: list[float] | None,
    difficult: list[bool] | None,
    loc: list[tuple[str, int]],
    read_paths: list[str],
) -> Side:
    n = len(corners)
    c = np.asarray(corners, dtype=np.float64).reshape(n, 8)
    area, warnings = _quad_notes(c, path)
    xs, ys = c[:, 0::2], c[:, 1::2]
    xyxy = np.stack([xs.min(1), ys.min(1), xs.max(1), ys.max(1)], axis=1) if n else np.zeros((0, 4))
    boxes = Boxes.build(
        xyxy,
        image=np.asarray(img, dtype=np.int64),
        category=np.asarray(cat, dtype=np.int64),
        box_area=area,
        area=area,
        score=score,
        difficult=difficult,
        obb=c,
    )
    nk = len(keys)
    ids: list[Hashable | None] = list(names)
    return Side(
        path,
        fmt,
        Images(list(keys), list(keys), np.full(nk, np.nan), np.full(nk, np.nan)),
        Categories(ids, list(names)),
        boxes,
        has_scores=score is not None,
        notes={"warnings": warnings, "info": []},
        locator=lambda r: f"{loc[r][0]}:{loc[r][1]}",
        read_paths=read_paths,
    )


def load_dota_gt(path: str) -> Side:
    """A DOTA ``labelTxt`` folder (or one file) as a ground-truth side."""
    base, files = _txt_files(path, "DOTA labelTxt files")
    single = not os.path.isdir(path)
    keys: list[str] = []
    cat_index: dict[str, int] = {}
    corners: list[list[float]] = []
    img: list[int] = []
    cat: list[int] = []
    diff: list[bool] = []
    loc: list[tuple[str, int]] = []
    read_paths = []
    for rel in files:
        file = path if single else os.path.join(base, rel)
        read_paths.append(file)
        k = len(keys)
        keys.append(os.path.splitext(rel)[0])
        header = True
        for ln, line in enumerate(_lines(file, not single), 1):
            parts = line.split()
            if not parts:
                continue
            if header and _HEADER.match(line.strip()):
                continue
            header = False
            lead = next((k for k, p in enumerate(parts) if not _is_number(p)), len(parts))
            if lead != 8 or len(parts) not in (9, 10):
                got = (
                    f"{lead} numbers and no category"
                    if lead == len(parts)
                    else f"{lead} numbers before the category"
                    if lead != 8
                    else f"{len(parts) - 9} fields after the category"
                )
                raise InputError(
                    file,
                    ln,
                    "expected 'x1 y1 x2 y2 x3 y3 x4 y4 category difficult' (8 corner numbers), "
                    f"got {got}",
                )
            flag = parts[9] if len(parts) == 10 else "0"
            if flag not in ("0", "1"):
                raise InputError(file, ln, f"difficult: expected 0 or 1, got {flag[:20]!r}")
            corners.append(_corners(parts[:8], file, ln))
            cat.append(cat_index.setdefault(parts[8], len(cat_index)))
            img.append(k)
            diff.append(flag == "1")
            loc.append((rel, ln))
    return _side(
        path,
        "dota",
        keys,
        list(cat_index),
        corners,
        img,
        cat,
        score=None,
        difficult=diff,
        loc=loc,
        read_paths=read_paths,
    )


def task1_files(path: str) -> list[tuple[str, str]]:
    """``(class name, file name)`` of the ``Task1_<class>.txt`` files of a folder."""
    if not os.path.isdir(path):
        m = TASK1.match(os.path.basename(path))
        return [(m.group(1), os.path.basename(path))] if m else []
    out = []
    for n in sorted(os.listdir(path)):
        m = TASK1.match(n)
        if m and is_readable_member(os.path.join(path, n)):
            out.append((m.group(1), n))
    return out


def load_dota_task1(path: str) -> Side:
    """A folder of DOTA ``Task1_<class>.txt`` result files (or one file) as predictions."""
    files = task1_files(path)
    if not files:
        raise InputError(path, None, "no Task1_<class>.txt files (expected DOTA task-1 results)")
    single = not os.path.isdir(path)
    base = os.path.dirname(path) if single else path
    key_index: dict[str, int] = {}
    names: list[str] = []
    corners: list[list[float]] = []
    img: list[int] = []
    cat: list[int] = []
    score: list[float] = []
    loc: list[tuple[str, int]] = []
    read_paths = []
    for cname, name in files:
        file = os.path.join(base, name)
        read_paths.append(file)
        c = len(names)
        names.append(cname)
        for ln, line in enumerate(_lines(file, not single), 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 10:
                raise InputError(
                    file,
                    ln,
                    f"expected 'image score x1 y1 x2 y2 x3 y3 x4 y4' (10 fields), got {len(parts)}",
                )
            try:
                s = float(parts[1])
            except ValueError:
                raise InputError(
                    file, ln, f"score: expected a number, got {parts[1][:20]!r}"
                ) from None
            if not math.isfinite(s):
                raise InputError(file, ln, f"score: expected a finite number, got {parts[1]!r}")
            corners.append(_corners(parts[2:], file, ln))
            img.append(key_index.setdefault(parts[0], len(key_index)))
            cat.append(c)
            score.append(s)
            loc.append((name, ln))
    return _side(
        path,
        "dota-task1",
        list(key_index),
        names,
        corners,
        img,
        cat,
        score=score,
        difficult=None,
        loc=loc,
        read_paths=read_paths,
    )
