"""COCO JSON: dataset files (``images``/``annotations``/``categories``) and results lists.

Records become columns in one pass of list comprehensions and NumPy conversions (the fast
path). Only when that fails does a slow pass walk the records to say exactly which one is
wrong and why (``preds.json: [17].bbox: expected 4 numbers, got 3``).
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data import Boxes, Categories, Images, Side, norm_id, norm_ids
from ..errors import InputError, kind_of
from . import keypoints as kpt
from .coco_images import finite, images_table, is_id, is_num, stem, stem_problem, table_key
from .coco_obb import obb_arrays, obb_columns
from .coco_typed import AnnTable, read_keypoint_gt
from .fastcoco import read_path
from .ids import id_columns
from .jsonio import load_json, parse_json, read_bytes
from .lvis import federated_columns

if TYPE_CHECKING:  # pragma: no cover
    from ..options import LoadOptions

_FAST = ("bbox", "obb", "keypoints", "segm")  # results lists read by fastcoco


# complexity: one table of per-field checks of a record, each with its own located message
def _check_record(  # noqa: C901
    rec: object, where: str, path: str, *, need_score: bool, need_bbox: bool, need_segm: bool
) -> None:
    """Raise a located InputError describing what is wrong with one record."""
    if not isinstance(rec, dict):
        raise InputError(path, where, f"expected an object, got {kind_of(rec)}")
    for key in ("image_id", "category_id"):
        if key not in rec:
            raise InputError(path, where, f"missing key '{key}'")
        if not is_id(rec[key]):
            raise InputError(
                path, f"{where}.{key}", f"expected an integer id, got {kind_of(rec[key])}"
            )
    if need_bbox or "bbox" in rec:
        if "bbox" not in rec:
            hint = (
                " (this record has a 'segmentation': evaluate masks with --iou-type segm)"
                if "segmentation" in rec
                else " (this record has 'keypoints': evaluate poses with --iou-type keypoints)"
                if "keypoints" in rec
                else ""
            )
            raise InputError(path, where, f"missing key 'bbox'{hint}")
        bbox = rec["bbox"]
        if not isinstance(bbox, list):
            raise InputError(path, f"{where}.bbox", f"expected 4 numbers, got {kind_of(bbox)}")
        if len(bbox) != 4:
            raise InputError(path, f"{where}.bbox", f"expected 4 numbers, got {len(bbox)}")
        for j, v in enumerate(bbox):
            if not is_num(v):
                raise InputError(path, f"{where}.bbox[{j}]", f"expected a number, got {kind_of(v)}")
            if not finite(v):
                raise InputError(path, f"{where}.bbox[{j}]", f"expected a finite number, got {v}")
        if bbox[2] < 0 or bbox[3] < 0:
            raise InputError(
                path,
                f"{where}.bbox",
                f"negative width or height: {bbox} (COCO bbox is [x, y, w, h])",
            )
    if need_segm and "segmentation" not in rec:
        raise InputError(path, where, "missing key 'segmentation'")
    if need_score:
        if "score" not in rec:
            raise InputError(path, where, "missing key 'score' (predictions need a confidence)")
        s = rec["score"]
        if not is_num(s) or not finite(s):
            raise InputError(path, f"{where}.score", f"expected a finite number, got {kind_of(s)}")
    for key in ("area",):
        if key in rec and (not is_num(rec[key]) or not finite(rec[key])):
            raise InputError(
                path, f"{where}.{key}", f"expected a finite number, got {kind_of(rec[key])}"
            )
    for key in ("iscrowd", "ignore", "difficult"):
        if key in rec and not (
            rec[key] in (0, 1) or isinstance(rec[key], bool) or rec[key] is None
        ):
            raise InputError(path, f"{where}.{key}", f"expected 0 or 1, got {kind_of(rec[key])}")


def _locate(recs: list[Any], path: str, prefix: str, **need: bool) -> None:
    for i, rec in enumerate(recs):
        _check_record(rec, f"{prefix}[{i}]", path, **need)


def _flag_column(values: list[Any]) -> np.ndarray:
    """Flags checked to be 0, 1, True, False or None, as booleans (None: False)."""
    return np.array(values, dtype=bool).reshape(len(values))


def _records_to_columns(
    recs: list[Any],
    path: str,
    prefix: str,
    *,
    need_score: bool,
    iou_type: str,
    angle_unit: str = "rad",
) -> dict[str, Any]:
    need = {
        "need_score": need_score,
        "need_bbox": iou_type == "bbox" or (iou_type == "keypoints" and not need_score),
        "need_segm": iou_type == "segm",
    }
    n = len(recs)
    try:
        if not all(type(r) is dict for r in recs):
            raise TypeError
        img = [r["image_id"] for r in recs]
        cat = [r["category_id"] for r in recs]
        if iou_type == "obb":
            bbox = np.zeros((n, 4))  # from the obb fields below
        elif need["need_bbox"] or (n and "bbox" in recs[0]):
            bbox = np.array([r["bbox"] for r in recs]) if n else np.zeros((0, 4))
            if bbox.dtype.kind not in "iuf" or bbox.shape != (n, 4):
                raise TypeError
            bbox = bbox.astype(np.float64)
            if not np.isfinite(bbox).all() or (bbox[:, 2:] < 0).any():
                raise TypeError
        else:
            bbox = np.full((n, 4), np.nan)
        if need_score:
            score = np.array([r["score"] for r in recs], dtype=object) if n else np.zeros(0)
            if n:
                if any(not is_num(s) for s in score):
                    raise TypeError
                score = score.astype(np.float64)
                if not np.isfinite(score).all():
                    raise TypeError
        else:
            score = np.full(n, np.nan)
        ids = id_columns(img, cat)
        for u in ids["img_uniq"] + ids["cat_uniq"]:
            if not is_id(u):
                raise TypeError
        segm = [r["segmentation"] for r in recs] if iou_type == "segm" else None
    except (KeyError, TypeError, ValueError, OverflowError):
        _locate(recs, path, prefix, **need)
        raise InputError(path, prefix, "malformed records") from None  # pragma: no cover
    cols: dict[str, Any] = {**ids, "bbox": bbox, "score": score}
    if segm is not None:
        cols["segm"] = segm
    cols.update(kpt.keypoint_record_columns(recs, path, prefix, iou_type, gt=not need_score))
    if iou_type == "obb":
        cols["obb"], cols["bbox"], cols["obb_area"] = obb_columns(
            recs, path, prefix, angle_unit=angle_unit
        )
    return cols


def _xywh_columns(bbox: np.ndarray, path: str, prefix: str) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(over="ignore", invalid="ignore"):
        xyxy = np.array(bbox, dtype=np.float64)  # one copy, then x2 = w + x (= x + w)
        xyxy[:, 2:] += xyxy[:, :2]
        area = bbox[:, 2] * bbox[:, 3]
    if np.isfinite(xyxy[:, 2:]).all() and np.isfinite(area).all():
        return xyxy, area
    fine = np.isfinite(xyxy[:, 2:]).all(axis=1) & np.isfinite(area)  # a row without a bbox
    bad = np.isfinite(bbox).all(axis=1) & ~fine  # (segm, NaN) is no overflow
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            path,
            f"{prefix}[{i}].bbox",
            f"box too large: {bbox[i].tolist()} overflows (x + w or w * h is not a finite number)",
        )
    return xyxy, area


def load_coco(
    path: str,
    *,
    role: str,
    iou_type: str = "bbox",
    data: Any = None,
    angle_unit: str = "rad",
    jobs: int = 1,
) -> Side:
    """Read a COCO dataset or results file (``role`` ``"pred"``/``"gt"``; ``jobs``: processes)."""
    if data is None and role == "pred" and iou_type in _FAST and not os.path.isdir(path):
        raw, cols = read_path(path, jobs, iou_type)  # a plain results list, else None
        if cols is not None:
            side = _results_side(path, _fast_columns(cols, angle_unit), len(cols["score"]))
            if b'"file_name"' in raw:  # Ultralytics predictions.json: file_name on every row
                _attach_file_names(side, parse_json(path, raw))
            return side
        data = parse_json(path, raw)
    if data is None and role == "gt" and iou_type == "keypoints" and _plain_file(path):
        raw = read_bytes(path)
        typed = read_keypoint_gt(path, raw)  # a plain keypoint ground truth, else None
        if typed is not None:
            doc, table = typed
            return _load_dataset(path, doc, role=role, iou_type=iou_type, typed=table)
        data = parse_json(path, raw)
    if data is None:
        data = load_json(path)
    if isinstance(data, list):
        if role == "gt":
            raise InputError(
                path,
                None,
                "this is a COCO results list (predictions); the ground truth must be a COCO "
                "dataset with 'images', 'annotations' and 'categories' "
                "(predictions come first: iou-eval PREDICTIONS GROUND_TRUTH)",
            )
        side = _load_results(path, data, iou_type, angle_unit)
        _attach_file_names(side, data)
        return side
    if isinstance(data, dict):
        if role == "pred" and _annotations_only(data):
            # {"annotations": [...]}: a results list wrapped in a dataset's key
            side = _load_results_prefixed(path, data["annotations"], iou_type, angle_unit)
            _attach_file_names(side, data["annotations"])
            side.notes.setdefault("info", []).append(
                "read {'annotations': [...]} without images/categories as a results list"
            )
            return side
        return _load_dataset(path, data, role=role, iou_type=iou_type, angle_unit=angle_unit)
    raise InputError(
        path,
        None,
        f"expected a COCO dataset object or a results list, got {kind_of(data)}",
    )


def _plain_file(path: str) -> bool:
    return path != "-" and not os.path.isdir(path)


def _fast_columns(cols: dict[str, np.ndarray], angle_unit: str = "rad") -> dict[str, Any]:
    """The columns ``_records_to_columns`` makes, from :func:`fastcoco.read_results`'s."""
    out: dict[str, Any] = {}
    if "obb" in cols:  # rotated boxes: corners, their axis-aligned hull, w*h
        out["obb"], out["bbox"], out["obb_area"] = obb_arrays(cols["obb"], angle_unit=angle_unit)
    out.update(kpt.fast_keypoint_columns(cols))
    return {
        **id_columns(cols["image_id"], cols["category_id"]),
        "bbox": cols.get("bbox"),
        "score": cols["score"],
        **({"segm": cols["segm"]} if "segm" in cols else {}),
        **out,
    }


def _load_results(path: str, recs: list[Any], iou_type: str, angle_unit: str = "rad") -> Side:
    cols = _records_to_columns(
        recs, path, "", need_score=True, iou_type=iou_type, angle_unit=angle_unit
    )
    return _results_side(path, cols, len(recs))


def _annotations_only(data: dict[str, Any]) -> bool:
    return (
        isinstance(data.get("annotations"), list)
        and "images" not in data
        and "categories" not in data
    )


def _load_results_prefixed(
    path: str, recs: list[Any], iou_type: str, angle_unit: str = "rad"
) -> Side:
    cols = _records_to_columns(
        recs, path, "annotations", need_score=True, iou_type=iou_type, angle_unit=angle_unit
    )
    return _results_side(path, cols, len(recs))


def _attach_file_names(side: Side, recs: Any) -> None:
    """``notes["file_stems"]``: per image of ``side``, the stem of the rows' ``file_name``
    (Ultralytics writes it on every row), when every row of the image names one file."""
    if not isinstance(recs, list):
        return
    found: dict[Hashable, str | None] = {}
    for r in recs:
        if not isinstance(r, dict) or "file_name" not in r:
            continue
        k = norm_id(r.get("image_id"))
        st = stem(r.get("file_name"))
        if found.setdefault(k, st) != st:
            found[k] = None  # one id, two files: no file name for this image
    if not found:
        return
    side.notes["file_stems"] = [found.get(norm_id(k)) for k in side.images.keys]


def _results_side(path: str, cols: dict[str, Any], n: int) -> Side:
    xyxy, box_area = _xywh_columns(cols["bbox"], path, "")
    box_area = cols.get("obb_area", box_area)
    boxes = Boxes.build(
        xyxy,
        image=cols["img_codes"],
        category=cols["cat_codes"],
        box_area=box_area,
        area=box_area,
        score=cols["score"],
        ids=np.arange(1, n + 1, dtype=np.int64),
        masks=cols.get("segm"),
        **kpt.kpt_box_columns(cols, "pred"),
        obb=cols.get("obb"),
    )
    ni = len(cols["img_uniq"])
    images = Images(list(cols["img_uniq"]), [None] * ni, np.full(ni, np.nan), np.full(ni, np.nan))
    categories = Categories(list(cols["cat_uniq"]), [None] * len(cols["cat_uniq"]))
    return Side(path, "coco-results", images, categories, boxes, has_scores=True)


def _table(data: dict[str, Any], key: str, path: str) -> list[Any]:
    if key not in data:
        if key == "annotations" and ("images" in data or "categories" in data):
            return []
        raise InputError(
            path,
            None,
            f"missing '{key}': expected a COCO dataset with 'images', 'annotations' and "
            "'categories', or a results list",
        )
    value = data[key]
    if not isinstance(value, list):
        raise InputError(path, key, f"expected a list, got {kind_of(value)}")
    return value


# complexity: the dataset reader: one pass per COCO table, each check located; split along tables later
def _load_dataset(  # noqa: C901
    path: str,
    data: dict[str, Any],
    *,
    role: str,
    iou_type: str,
    angle_unit: str = "rad",
    typed: AnnTable | None = None,
) -> Side:
    """A COCO dataset's side; ``typed``: its annotations' table, read by
    :func:`.coco_typed.read_keypoint_gt` (otherwise made from ``data["annotations"]``)."""
    images_l = _table(data, "images", path)
    anns = _table(data, "annotations", path)
    cats_l = _table(data, "categories", path)

    # images
    keys, img_index, stems, widths, heights = images_table(path, images_l)
    stem_note: str | None = None
    if any(s is None for s in stems) or len(set(stems)) != len(stems):
        stem_note = stem_problem(images_l, stems)
        stems = [None] * len(stems)  # file names missing or ambiguous: match by id only

    # categories
    cat_index: dict[Hashable, int] = {}
    cat_ids: list[Hashable | None] = []
    names: list[str | None] = []
    for i, c in enumerate(cats_l):
        key = table_key(path, "categories", "category", i, c, cat_index)
        cat_index[key] = i
        cat_ids.append(key)
        nm = c.get("name")
        if isinstance(nm, str) and not nm.strip():
            raise InputError(path, f"categories[{i}].name", "empty class name")
        names.append(str(nm) if isinstance(nm, (str, int)) and not isinstance(nm, bool) else None)
    if len({n for n in names if n is not None}) != len(names):
        names = [None] * len(names) if any(n is None for n in names) else names
    # sort categories by id (pycocotools: p.catIds = sorted(getCatIds()))
    corder = sorted(range(len(cat_ids)), key=lambda k: _id_sort_key(cat_ids[k]))
    cat_ids = [cat_ids[k] for k in corder]
    names = [names[k] for k in corder]
    cat_index = {cid: j for j, cid in enumerate(cat_ids)}
    federated = federated_columns(path, images_l, cats_l, cat_index) if role == "gt" else None

    table = typed or _ann_table(anns, path, role=role, iou_type=iou_type, angle_unit=angle_unit)
    cols, has_scores = table.cols, table.has_scores
    n = len(cols["score"])
    img_get, cat_get = img_index.get, cat_index.get
    img_lookup = np.array([img_get(u, -1) for u in norm_ids(cols["img_uniq"])], dtype=np.int64)
    cat_lookup = np.array([cat_get(u, -1) for u in norm_ids(cols["cat_uniq"])], dtype=np.int64)
    image = img_lookup[cols["img_codes"]] if n else np.zeros(0, dtype=np.int64)
    category = cat_lookup[cols["cat_codes"]] if n else np.zeros(0, dtype=np.int64)
    if (image < 0).any():
        i = int(np.flatnonzero(image < 0)[0])
        raise InputError(
            path,
            f"annotations[{i}].image_id",
            f"image id {cols['img_uniq'][cols['img_codes'][i]]!r} is not in 'images'",
        )
    if (category < 0).any():
        i = int(np.flatnonzero(category < 0)[0])
        raise InputError(
            path,
            f"annotations[{i}].category_id",
            f"category id {cols['cat_uniq'][cols['cat_codes'][i]]!r} is not in 'categories'",
        )
    xyxy, box_area = _xywh_columns(cols["bbox"], path, "annotations")
    box_area = cols.get("obb_area", box_area)
    # annotation ids (optional; row + 1 where absent), unique
    ann_ids = table.ids
    try:
        ids_arr = np.asarray(ann_ids) if n else np.zeros(0, dtype=np.int64)
    except ValueError:  # ragged: some id is a list
        ids_arr = np.zeros(0, dtype=object)
    if ids_arr.dtype.kind != "i" or ids_arr.ndim != 1:  # ("u": some id is >= 2**63)
        bad = next(
            (
                i
                for i, v in enumerate(ann_ids)
                if not (isinstance(v, int) and not isinstance(v, bool))
            ),
            None,
        )
        if bad is None:  # integers, but too large for 64 bits
            bad = next(i for i, v in enumerate(ann_ids) if not -(2**63) <= v < 2**63)
            raise InputError(
                path, f"annotations[{bad}].id", f"id {ann_ids[bad]} does not fit in 64 bits"
            )
        raise InputError(
            path, f"annotations[{bad}].id", f"expected an integer id, got {kind_of(ann_ids[bad])}"
        )
    if role == "gt" and n:
        uniq, first, counts = np.unique(ids_arr, return_index=True, return_counts=True)
        if (counts > 1).any():
            dup = uniq[counts > 1][0]
            rows = np.flatnonzero(ids_arr == dup)
            raise InputError(
                path,
                f"annotations[{int(rows[1])}].id",
                f"duplicate annotation id {int(dup)} (also annotations[{int(rows[0])}])",
            )
    area = box_area.copy()
    # area: the annotation's own field (COCO area ranges); w*h where absent. Checked in bulk,
    # record by record only to locate a bad value.
    vals = table.areas
    bad_area: bool = True
    if {type(v) for v in vals} <= {int, float, type(None)}:
        try:
            arr = np.array(vals, dtype=np.float64) if n else np.zeros(0)
        except OverflowError:  # a 400-digit integer: located below
            arr = np.full(n, np.inf)
        bad_area = bool(np.isinf(arr).any())
        area = np.where(np.isnan(arr), box_area, arr) if not bad_area else area
    if bad_area:
        for i, v in enumerate(vals):
            if v is not None and not (is_num(v) and finite(v)):
                raise InputError(
                    path, f"annotations[{i}].area", f"expected a finite number, got {kind_of(v)}"
                )
    flag_values = table.flags
    for key in ("iscrowd", "ignore"):
        fv = flag_values[key]
        try:
            plain = set(fv) <= {0, 1, None}  # True/False compare equal to 1/0
        except TypeError:  # an unhashable value such as a list
            plain = False
        if not plain:
            for i, v in enumerate(fv):
                if v is not None and not (v in (0, 1) or isinstance(v, bool)):
                    raise InputError(
                        path, f"annotations[{i}].{key}", f"expected 0 or 1, got {kind_of(v)}"
                    )
    boxes = Boxes.build(
        xyxy,
        image=image,
        category=category,
        box_area=box_area,
        area=area if role == "gt" else box_area,
        score=cols["score"],
        iscrowd=_flag_column(flag_values["iscrowd"]) if role == "gt" else None,
        ignore=_flag_column(flag_values["ignore"]) if role == "gt" else None,
        ids=ids_arr.astype(np.int64),
        masks=cols.get("segm"),
        **kpt.kpt_box_columns(cols, role),
        obb=cols.get("obb"),
    )
    images = Images(keys, stems, widths, heights)
    categories = Categories(cat_ids, names)
    notes: dict[str, Any] = {"stems": stem_note} if stem_note else {}
    skeleton = kpt.kpt_side_notes(iou_type, cols, cats_l, corder, path, vals, notes, role)
    return Side(
        path,
        "coco",
        images,
        categories,
        boxes,
        has_scores=has_scores,
        notes=notes,
        federated=federated,
        skeleton=skeleton,
    )


def _ann_table(
    anns: list[Any], path: str, *, role: str, iou_type: str, angle_unit: str
) -> AnnTable:
    """The annotations' table from their records (dicts; each check located)."""
    has_scores = bool(anns) and all(isinstance(a, dict) and "score" in a for a in anns)
    if role == "pred" and anns and not has_scores:
        raise InputError(
            path,
            None,
            "predictions have no 'score': this looks like ground truth "
            "(predictions come first: iou-eval PREDICTIONS GROUND_TRUTH)",
        )
    cols = _records_to_columns(
        anns,
        path,
        "annotations",
        need_score=role == "pred",
        iou_type=iou_type,
        angle_unit=angle_unit,
    )
    return AnnTable(
        cols,
        ids=[a.get("id", i + 1) for i, a in enumerate(anns)],
        areas=[a.get("area") for a in anns],
        flags={key: [a.get(key) for a in anns] for key in ("iscrowd", "ignore")},
        has_scores=has_scores,
    )


def _id_sort_key(key: Hashable | None) -> tuple[int, int, str]:
    """Integer ids in numeric order, then string ids (pycocotools sorts the ids)."""
    if isinstance(key, int):
        return (0, key, "")
    return (1, 0, str(key))


def read_side(path: str, *, role: str, fmt: str, opts: LoadOptions, detected: bool) -> Side:
    """The registry's reader: a COCO JSON file (dataset or results list; ``-``: stdin)."""
    if path != "-" and os.path.isdir(path):
        raise InputError(path, None, "COCO input is a JSON file, not a folder")
    side = load_coco(
        path, role=role, iou_type=opts.iou_type, angle_unit=opts.angle_unit, jobs=opts.jobs
    )
    side.read_paths = [path]
    return side
