"""LVIS ground truth: the federated labels a COCO-like LVIS file adds.

An LVIS file (v0.5, v1) is a COCO dataset without ``iscrowd`` whose images carry
``neg_category_ids`` (categories verified absent from the image) and
``not_exhaustive_category_ids`` (categories whose instances may be only partly annotated),
and whose categories carry ``frequency`` (``"r"`` rare, ``"c"`` common, ``"f"`` frequent).
LVIS v1's images name their file by ``coco_url`` instead of ``file_name`` (the COCO loader
takes the stem from either). The COCO loader calls :func:`federated_columns` with the raw
tables; the result travels with the ground truth as :class:`iou_cli.data.Federated`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from ..data import Federated, norm_id
from ..errors import InputError, kind_of

NEG = "neg_category_ids"
NOT_EXHAUSTIVE = "not_exhaustive_category_ids"
FREQUENCY = "frequency"
FREQUENCY_GROUPS = ("r", "c", "f")  # codes 0, 1, 2 (lvis-api's Params.img_count_lbl)


def federated_columns(
    path: str,
    images: list[Any],
    categories: list[Any],
    cat_index: dict[Hashable, int],
) -> Federated | None:
    """The LVIS fields of a COCO-like dataset's ``images`` and ``categories`` tables.

    ``cat_index`` maps a (normalised) category id to its row in the loader's sorted category
    table. Returns ``None`` when the file has none of the LVIS fields (a plain COCO file).
    Ids in the lists that are not categories of the file are dropped (lvis-api only ever
    asks whether a known category is in a list). A malformed field is an :class:`InputError`
    located at it; a missing one is recorded in ``Federated.missing``.
    """
    is_lvis = any(
        isinstance(im, dict) and (NEG in im or NOT_EXHAUSTIVE in im) for im in images
    ) or any(isinstance(c, dict) and FREQUENCY in c for c in categories)
    if not is_lvis:
        return None
    missing: list[str] = []
    neg_ptr, neg_cat = _lists(path, images, NEG, cat_index, missing)
    nel_ptr, nel_cat = _lists(path, images, NOT_EXHAUSTIVE, cat_index, missing)
    frequency = np.full(len(categories), -1, dtype=np.int64)
    for i, c in enumerate(categories):
        if FREQUENCY not in c:
            missing.append(f"categories[{i}].{FREQUENCY}")
            continue
        value = c[FREQUENCY]
        if not isinstance(value, str) or value not in FREQUENCY_GROUPS:
            shown = repr(value) if isinstance(value, str) else kind_of(value)
            raise InputError(
                path, f"categories[{i}].{FREQUENCY}", f"expected 'r', 'c' or 'f', got {shown}"
            )
        frequency[cat_index[norm_id(c["id"])]] = FREQUENCY_GROUPS.index(value)
    return Federated(
        neg_ptr=neg_ptr,
        neg_cat=neg_cat,
        nel_ptr=nel_ptr,
        nel_cat=nel_cat,
        frequency=frequency,
        missing=min(missing, key=_where_order) if missing else None,
    )


def _where_order(where: str) -> tuple[int, int]:
    """Images before categories, then by row: the first missing field a reader meets."""
    table, _, rest = where.partition("[")
    return (0 if table == "images" else 1, int(rest.partition("]")[0]))


def _lists(
    path: str,
    images: list[Any],
    key: str,
    cat_index: dict[Hashable, int],
    missing: list[str],
) -> tuple[np.ndarray, np.ndarray]:
    """CSR (ptr, sorted unique category rows) of one per-image list of category ids."""
    absent = [i for i, im in enumerate(images) if key not in im]
    if absent:
        missing.append(f"images[{absent[0]}].{key}")
    img: list[int] = []
    cat: list[int] = []
    for i, im in enumerate(images):
        ids = im.get(key)
        if ids is None and key not in im:
            continue
        if not isinstance(ids, list):
            raise InputError(
                path, f"images[{i}].{key}", f"expected a list of category ids, got {kind_of(ids)}"
            )
        try:
            rows = [cat_index.get(v if type(v) is int else _checked_id(v), -1) for v in ids]
        except TypeError:
            j = next(j for j, v in enumerate(ids) if not _is_id(v))
            raise InputError(
                path, f"images[{i}].{key}[{j}]", f"expected a category id, got {kind_of(ids[j])}"
            ) from None
        img += [i] * len(rows)
        cat += rows
    n_cats = max(len(cat_index), 1)
    keys = np.asarray(img, dtype=np.int64) * n_cats + np.asarray(cat, dtype=np.int64)
    keys = np.unique(keys[np.asarray(cat, dtype=np.int64) >= 0])
    ptr = np.searchsorted(keys, np.arange(len(images) + 1, dtype=np.int64) * n_cats)
    return ptr.astype(np.int64), (keys % n_cats).astype(np.int64)


def _is_id(v: object) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, str)


def _checked_id(v: object) -> Hashable:
    """A category id from a list (an integer or a string of one), normalised."""
    if not _is_id(v):
        raise TypeError
    return norm_id(v)
