"""The tables of a COCO dataset file other than the annotations: the images (ids, file
stems, sizes) and the checks each table's ids share (:func:`table_key`), with the small value
tests the annotation reader in :mod:`.coco` uses too."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np

from ..data import norm_id
from ..errors import InputError, kind_of

_NUM = (int, float)


def is_num(v: object) -> bool:
    return isinstance(v, _NUM) and not isinstance(v, bool)


def finite(v: object) -> bool:
    """``math.isfinite`` that says False (not OverflowError) for a 400-digit integer."""
    try:
        return math.isfinite(v)  # type: ignore[arg-type]
    except OverflowError:
        return False


def is_id(v: object) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, str) and v != "")


def stem(name: object) -> str | None:
    """The file name without folders (``/`` or ``\\``) and extension:
    ``os.path.splitext(os.path.basename(...))[0]`` in string steps (5k images: 17 ms
    there, 3 ms here). Like ``splitext``, a name whose part before its last ``.`` is only
    dots (``.hidden``, ``..x``) keeps it (``tests/unit/test_coco_images.py``)."""
    if not isinstance(name, str) or not name:
        return None
    base = name.replace("\\", "/").rpartition("/")[2]
    dot = base.rfind(".")
    return base[:dot] if dot > 0 and base[:dot].lstrip(".") else base


def images_table(
    path: str, images_l: list[Any]
) -> tuple[list[Hashable], dict[Hashable, int], list[str | None], np.ndarray, np.ndarray]:
    """Keys (normalised ids), their index, file stems, widths and heights of the images
    table. A table of plain records (integer or string ids, all distinct; sizes numbers or
    absent) is read in whole-column steps; any other is read record by record, which says
    what is wrong with the first bad one (the same result either way)."""
    n = len(images_l)
    if all(type(im) is dict for im in images_l):
        ids = [im.get("id") for im in images_l]
        if {type(v) for v in ids} <= {int, str}:
            keys = [v if type(v) is int else norm_id(v) for v in ids]
            img_index = {k: i for i, k in enumerate(keys)}
            if len(img_index) == n and "" not in img_index:
                # LVIS v1 names the file only by its COCO url (".../val2017/000000397133.jpg")
                names = [im.get("file_name") or im.get("coco_url") for im in images_l]
                stems = [stem(v) for v in names]
                sizes = [_size_column([im.get(k) for im in images_l]) for k in _SIZE_KEYS]
                if sizes[0] is not None and sizes[1] is not None:
                    return keys, img_index, stems, sizes[0], sizes[1]
    return read_images(path, images_l)


def read_images(
    path: str, images_l: list[Any]
) -> tuple[list[Hashable], dict[Hashable, int], list[str | None], np.ndarray, np.ndarray]:
    """:func:`images_table` record by record (the first bad record raises, located)."""
    n = len(images_l)
    img_index: dict[Hashable, int] = {}
    keys = []
    stems = []
    widths = np.full(n, np.nan)
    heights = np.full(n, np.nan)
    for i, im in enumerate(images_l):
        key = table_key(path, "images", "image", i, im, img_index)
        img_index[key] = i
        keys.append(key)
        stems.append(stem(im.get("file_name") or im.get("coco_url")))
        for col, name in ((widths, "width"), (heights, "height")):
            v = im.get(name)
            if v is not None and is_num(v) and finite(v) and v > 0:
                col[i] = float(v)
    return keys, img_index, stems, widths, heights


_SIZE_KEYS = ("width", "height")


def _size_column(values: list[Any]) -> np.ndarray | None:
    """An image size column: each number > 0 and finite as a float, NaN for anything else
    (absent, null, zero, negative); ``None`` when a value is no plain number (a bool, a
    string, a huge integer): then the record-by-record reader decides."""
    if not {type(v) for v in values} <= {int, float, type(None)}:
        return None
    try:
        col = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    except OverflowError:
        return None
    with np.errstate(invalid="ignore"):
        col[~(np.isfinite(col) & (col > 0))] = np.nan
    return col


def stem_problem(images_l: list[Any], stems: list[str | None]) -> str:
    """Why images cannot be matched by file stem, naming the first culprit."""
    first: dict[str, int] = {}
    for i, st in enumerate(stems):
        if st is None:
            return f"images[{i}] has no 'file_name'"
        if st in first:
            j = first[st]
            a, b = images_l[j].get("file_name"), images_l[i].get("file_name")
            if a == b:
                return f"images[{j}] and images[{i}] have one file_name {a!r}"
            return f"images[{j}] {a!r} and images[{i}] {b!r} have one stem {st!r}"
        first[st] = i
    return "file names are ambiguous"


def table_key(
    path: str, table: str, what: str, i: int, entry: Any, seen: dict[Hashable, int]
) -> Hashable:
    """The checked, normalised id of ``table[i]`` (an image or a category), new in ``seen``."""
    if not isinstance(entry, dict):
        raise InputError(path, f"{table}[{i}]", f"expected an object, got {kind_of(entry)}")
    if "id" not in entry or not is_id(entry["id"]):
        raise InputError(
            path, f"{table}[{i}].id", f"expected an integer id, got {kind_of(entry.get('id'))}"
        )
    key = norm_id(entry["id"])
    if key in seen:
        raise InputError(path, f"{table}[{i}].id", f"duplicate {what} id {entry['id']!r}")
    return key
