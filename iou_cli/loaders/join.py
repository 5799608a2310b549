"""Two sides -> one Dataset: the one entry point that turns two paths into a Dataset.

Joining: images match by file stem and categories by name across formats (COCO ``images`` /
``categories``, VOC file names / ``<name>``, YOLO file names / names file); results lists
join through ``--image-map`` or by numeric stem. Normalised YOLO boxes meet pixel boxes only
after scaling with image sizes, taken from the YOLO side's own sizes (``--images``,
``--image-size``) or else from the other side (COCO ``width``/``height``, VOC ``<size>``).
YOLO against YOLO stays normalised (IoU is invariant to per-axis scaling). Then the VOC
origin, the geometry checks and the alignment onto the ground truth's images and classes.
Which format a path holds is ``detect.py``; reading one side is ``loaders.load_side``.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

import numpy as np

from ..data import Categories, Dataset, Images, Side, align, locator, norm_id, norm_ids
from ..errors import InputError, UsageError
from ..options import LoadOptions
from . import load_side


def _sizes_from(other: Side) -> dict[str, tuple[float, float]]:
    im = other.images
    out: dict[str, tuple[float, float]] = {}
    for stem, w, h in zip(im.stems, im.width, im.height, strict=True):
        if stem is not None and np.isfinite(w) and np.isfinite(h):
            out[stem] = (float(w), float(h))
    return out


def _scale(side: Side, other: Side, *, lenient: bool = False) -> Side:
    """Scale a normalised side to pixels: own sizes first, then the other side's by stem.

    ``lenient`` (protocols with ``unscaled_boxes``, VOC): boxes in an image without a size are left unscaled (NaN)
    when the other side has no box on that image: they can only be unmatched ground truths
    or false positives, whatever their coordinates."""
    from .yolo import to_pixels

    theirs = _sizes_from(other)
    im = side.images
    width = im.width.copy()
    height = im.height.copy()
    own: dict[str, str] = side.notes.get("image_paths", {})
    needed = np.zeros(len(im), dtype=bool)
    needed[side.boxes.image] = True
    for i, stem in enumerate(im.stems):
        if not (np.isfinite(width[i]) and np.isfinite(height[i])) and stem in theirs:
            width[i], height[i] = theirs[str(stem)]
        elif needed[i] and not np.isfinite(width[i]) and stem in own:
            # the layout's own image file (images/ beside labels/): its header, read now
            from .sizes import image_size

            width[i], height[i] = image_size(own[str(stem)])
    b = side.boxes
    unknown = ~(np.isfinite(width[b.image]) & np.isfinite(height[b.image]))
    if unknown.any() and lenient and all(st is not None for st in other.images.stems):
        busy = {other.images.stems[int(i)] for i in np.unique(other.boxes.image)}
        loose = np.array([st not in busy for st in im.stems], dtype=bool)
        if not unknown[~loose[b.image]].any():
            return _scale_known(side, width, height)
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        missing = sorted({str(im.stems[int(i)]) for i in b.image[unknown]})
        where = side.locator(int(b.origin[row])) if side.locator else None
        shown = ", ".join(missing[:5]) + (
            f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        )
        raise InputError(
            side.path,
            where,
            f"image size unknown for {len(missing)} image{'s' if len(missing) > 1 else ''} "
            f"({shown}): normalised YOLO boxes need pixel sizes to meet {other.path}"
            + (
                ""
                if lenient or not _only_lonely(side, other, unknown)
                else " (COCO area ranges need every ground-truth area; --protocol voc does not)"
            )
            + "; give --images DIR or --image-size W,H",
        )
    return to_pixels(side, width, height)


def _only_lonely(side: Side, other: Side, unknown: np.ndarray) -> bool:
    """Whether every box without a size lies on an image where the other side has none."""
    if any(st is None for st in other.images.stems):
        return False
    busy = {other.images.stems[int(i)] for i in np.unique(other.boxes.image)}
    stems = side.images.stems
    return all(stems[int(i)] not in busy for i in side.boxes.image[unknown])


def _scale_known(side: Side, width: np.ndarray, height: np.ndarray) -> Side:
    """:func:`to_pixels` where the size is known; NaN corners (and area) elsewhere."""
    from .yolo import to_pixels

    w = np.where(np.isfinite(width), width, np.nan)
    h = np.where(np.isfinite(height), height, np.nan)
    return to_pixels(side, w, h)


def _check_categories(pred: Side, gt: Side) -> str | None:
    """Category matching needs names unless both sides use the same id space. Returns the
    note to show when classes are joined by index although one side names them (the other
    side's order is then assumed, which a user must be able to see)."""
    p_named = all(n is not None for n in pred.categories.names)
    g_named = all(n is not None for n in gt.categories.names)
    if p_named and g_named:
        return None
    p_ids = all(i is not None for i in pred.categories.ids)
    g_ids = all(i is not None for i in gt.categories.ids)
    same_space = (
        (pred.format == gt.format == "yolo")
        or (pred.format.startswith("coco") and gt.format.startswith("coco"))
        # Ultralytics (custom datasets): a results list's category_id is the class index
        or (pred.format == "coco-results" and gt.format == "yolo")
    )
    if p_ids and g_ids and same_space:
        if p_named == g_named or not len(pred.categories) or not len(gt.categories):
            return None
        named, bare = (pred, gt) if p_named else (gt, pred)
        role = "ground truth" if bare is gt else "predictions"
        opt = "--gt-names" if bare is gt else "--pred-names"
        return (
            f"classes joined by index: the {role}, {bare.path}, name no classes, so their "
            f"indices are read with the names of {named.path}; if their order differs, "
            f"give {opt}"
        )
    for side in (pred, gt):
        if all(n is not None for n in side.categories.names):
            continue
        if side.format == "yolo":
            opt = "--pred-names" if side is pred else "--gt-names"
            raise InputError(
                side.path,
                None,
                "YOLO class names are needed to match categories by name with "
                f"{(gt if side is pred else pred).path}: put obj.names, classes.txt or "
                f"data.yaml next to the labels, or give --names / {opt}",
            )
        if side.format == "coco-results":
            raise InputError(
                side.path,
                None,
                "a results list's category ids have no names, so they cannot meet the classes "
                f"of {(gt if side is pred else pred).path} ({(gt if side is pred else pred).format}); "
                "give --image-map COCO.json (its categories name the ids) or --pred-names FILE "
                "(line k names id k)",
            )
        raise InputError(
            side.path,
            None,
            "categories have no names, so they cannot be matched by name with "
            f"{(gt if side is pred else pred).path} ({(gt if side is pred else pred).format}); "
            "use a COCO dataset file with 'categories'",
        )
    return None


def _check_images(pred: Side, gt: Side) -> None:
    if pred.format == gt.format or (
        pred.format.startswith("coco") and gt.format.startswith("coco")
    ):
        return
    for side in (pred, gt):
        if any(s is None for s in side.images.stems):
            why = side.notes.get("stems")
            raise InputError(
                side.path,
                None,
                "images have no (unique) file names, so they cannot be matched by file stem "
                f"with {(gt if side is pred else pred).path}"
                + (f" ({why})" if why else "")
                + "; use a COCO dataset file whose 'images' carry 'file_name'",
            )


def load_dataset(
    pred_path: Any, gt_path: Any, opts: LoadOptions, *, gt_side: Side | None = None
) -> Dataset:
    """Read both sides and join predictions onto the ground truth's images and categories.
    ``gt_side``: the ground truth read before (``gt_path`` is then only its name); it is
    not changed, so one read serves many prediction sets."""
    from ..workers import cores
    from .fastcoco import cancel_prefetch, prefetch

    if gt_side is None and isinstance(pred_path, str) and opts.pred_format in (None, "coco"):
        # --jobs: forked workers decode a big results list while this process reads the
        # ground truth (both errors keep their order: the ground truth's first)
        # (the ground truth's size: how much of a keypoint list this process reads itself)
        gt_file = isinstance(gt_path, str) and os.path.isfile(gt_path)
        gt_bytes = os.path.getsize(gt_path) if gt_file else 0
        prefetch(pred_path, cores(opts.jobs), opts.iou_type, gt_bytes)
    try:
        gt = gt_side if gt_side is not None else load_gt(gt_path, opts)
        pred = load_side(pred_path, role="pred", fmt=opts.pred_format, opts=opts)
    finally:
        cancel_prefetch()
    info: list[str] = [*gt.notes.get("info", []), *pred.notes.get("info", [])]
    pred = join_results(pred, gt, opts, info)
    _check_images(pred, gt)
    own_names = _class_reading_names(pred, gt, opts)
    pending = own_names is not None or _needs_reading(pred, gt)
    if not pending:
        note = _check_categories(pred, gt)
        if note:
            info.append(note)
    pred, gt = apply_voc_origin(pred, gt, opts.voc_origin, info)
    lenient = opts.unscaled_boxes
    if pred.boxes.normalized and not gt.boxes.normalized:
        pred = _scale(pred, gt, lenient=lenient)
    elif gt.boxes.normalized and not pred.boxes.normalized:
        gt = _scale(gt, pred, lenient=lenient)
    if pending:
        pred = _read_class_ids(pred, gt, opts, own_names, info)
        note = _check_categories(pred, gt)
        if note and not any("read as class" in line for line in info):
            info.append(note)
    if opts.iou_type in ("segm", "keypoints"):
        what = "YOLO-seg masks are rasterised" if opts.iou_type == "segm" else "OKS is measured"
        for side in (gt, pred):
            if side.boxes.normalized and len(side.boxes):
                raise InputError(
                    side.path,
                    None,
                    f"{what} at the image's pixel size: give --images DIR "
                    "or --image-size W,H (or an images/ folder beside labels/)",
                )
    check_geometry(gt)
    check_geometry(pred)
    ds = align(pred, gt, unknown=opts.unknown)
    ds.locate = locator(pred, gt, ds)
    ds.info[:0] = info
    ds.warnings.extend([*gt.notes.get("warnings", []), *pred.notes.get("warnings", [])])
    return ds


def load_gt(gt_path: Any, opts: LoadOptions) -> Side:
    """Read the ground-truth side (the format detected unless ``--gt-format``)."""
    return load_side(gt_path, role="gt", fmt=opts.gt_format, opts=opts)


# ------------------------------------------------- a results list's category ids (issue 23)


def _needs_reading(pred: Side, gt: Side) -> bool:
    """A results list without class names meeting class indices (YOLO) or COCO ids."""
    return (
        pred.format == "coco-results"
        and not all(n is not None for n in pred.categories.names)
        and gt.format in ("yolo", "coco")
        and all(i is not None for i in gt.categories.ids)
    )


def _class_reading_names(pred: Side, gt: Side, opts: LoadOptions) -> list[str] | None:
    """The predictions' names file for a results list (``--pred-names``, else ``--names``),
    read; refused when the ground truth has no names to meet them."""
    if pred.format != "coco-results" or all(n is not None for n in pred.categories.names):
        return None
    path = opts.pred_names or opts.names
    if not path:
        return None
    if not all(n is not None for n in gt.categories.names):
        raise UsageError(
            f"--pred-names names the classes of the results list, but the ground truth "
            f"{gt.path} ({gt.format}) has no class names to meet them by; give --gt-names FILE "
            "(or --names FILE for both sides)"
        )
    from .yolo import read_names

    return list(read_names(path))


def _read_class_ids(
    pred: Side, gt: Side, opts: LoadOptions, names: list[str] | None, info: list[str]
) -> Side:
    from .class_ids import resolve

    def join(side: Side) -> Dataset:
        return align(side, gt, unknown="skip")

    return resolve(pred, gt, mode=opts.pred_ids, names=names, join=join, info=info)


# --------------------------------------------------------------------------- joins (issue 17)


def _numeric_alias(stems: list[str | None]) -> dict[int, int]:
    """``int(stem) -> row`` for numeric stems (``000000001000`` -> 1000), unique ones only."""
    out: dict[int, int] = {}
    dup: set[int] = set()
    for i, st in enumerate(stems):
        if st is not None and st.isdigit():
            v = int(st)
            if v in out:
                dup.add(v)
            out[v] = i
    for v in dup:
        del out[v]
    return out


def _image_map(path: str) -> tuple[dict[Hashable, str], dict[Hashable, str]]:
    """``(image id -> file stem, category id -> name)`` of a COCO dataset (``--image-map``)."""
    from .coco import load_coco

    side = load_coco(path, role="gt")
    if side.format != "coco":
        raise InputError(path, None, "--image-map: expected a COCO dataset with 'images'")
    if any(st is None for st in side.images.stems):
        raise InputError(path, "images", "--image-map: every image needs a unique 'file_name'")
    ids = {norm_id(k): str(st) for k, st in zip(side.images.keys, side.images.stems, strict=True)}
    cats = {
        norm_id(k): str(n)
        for k, n in zip(side.categories.ids, side.categories.names, strict=True)
        if n is not None
    }
    return ids, cats


# complexity: the results-list join: each way to find stems is one branch with its own info line
def join_results(pred: Side, gt: Side, opts: LoadOptions, info: list[str]) -> Side:  # noqa: C901
    """Give a COCO results list file stems (and category names) so that it can meet any
    ground truth: by image id when every id is a ground-truth id, else by file stem (the
    rows' ``file_name``, ``--image-map``, or the id itself as Ultralytics writes it)."""
    if pred.format != "coco-results":
        return pred
    im = pred.images
    pred_ids = norm_ids(im.keys)
    cat_names: dict[Hashable, str] = {}
    map_stems: dict[Hashable, str] = {}
    if opts.image_map:
        map_stems, cat_names = _image_map(opts.image_map)
    if cat_names and all(n is not None for n in gt.categories.names):
        names = [cat_names.get(norm_id(k)) for k in pred.categories.ids]
        pred = replace(pred, categories=Categories(list(pred.categories.ids), list(names)))
        info.append("joined categories by name (--image-map)")

    gt_ids = set(norm_ids(gt.images.keys)) if gt.format.startswith("coco") else set()
    file_stems: list[str | None] | None = pred.notes.get("file_stems")
    gt_stems = gt.images.stems
    have_stems = all(st is not None for st in gt_stems)
    by_id_ok = bool(gt_ids) and all(k in gt_ids for k in pred_ids)
    stems: list[str | None] | None = None
    how = ""
    if map_stems:
        stems = [map_stems.get(k) for k in pred_ids]
        how = "file stem (--image-map)"
    elif file_stems is not None and have_stems and all(st is not None for st in file_stems):
        stems = list(file_stems)
        how = "file stem (file_name of the results rows)"
    elif not by_id_ok and have_stems:
        alias = _numeric_alias(list(gt_stems))
        gt_set = set(gt_stems)
        stems = []
        for raw, k in zip(im.keys, pred_ids, strict=True):
            # the id as written first: "01" meets 01.txt, never 1.txt through int("01")
            key = raw.strip() if isinstance(raw, str) else str(k)
            if key in gt_set:
                stems.append(key)
            elif str(k) in gt_set:
                stems.append(str(k))
            elif isinstance(k, int) and k in alias:
                stems.append(gt_stems[alias[k]])
            else:
                stems.append(key)
        how = "file stem (image_id as the image's file stem, as Ultralytics writes it)"
    if stems is None:
        if gt_ids:
            info.append("joined images by image id")
            return pred
        raise InputError(
            pred.path,
            None,
            "a COCO results list has image ids only, and the ground truth "
            f"({gt.format}) has no ids; give --image-map COCO.json (images with id and "
            "file_name)",
        )
    if have_stems and gt_ids:
        gt_set = set(gt_stems)
        hit = sum(1 for st in stems if st in gt_set)
        id_hit = sum(1 for k in pred_ids if k in gt_ids)
        if (by_id_ok and hit < len(stems)) or (not by_id_ok and hit <= id_hit):
            # the ids meet the ground truth at least as well as the stems: ids are the join
            info.append("joined images by image id")
            return pred
    info.append(f"joined images by {how}")
    label = [st if st is not None else str(k) for st, k in zip(stems, pred_ids, strict=True)]
    images = Images(list(im.keys), list(label), im.width, im.height)
    return replace(pred, images=images, notes={**pred.notes, "joined_by_stem": True})


def apply_voc_origin(pred: Side, gt: Side, origin: int, info: list[str]) -> tuple[Side, Side]:
    """``--voc-origin 1``: VOC corners are 1-based pixel indices (the devkit's, hotcoco's,
    supervision's files): the continuous box is ``xmin - 1 .. xmax``. Only where a VOC side
    meets another format; VOC against VOC keeps the file's numbers (and ``--plus-one``)."""
    if origin == 0 or (pred.format == "voc") == (gt.format == "voc"):
        return pred, gt

    def shift(side: Side) -> Side:
        b = side.boxes
        xyxy = b.xyxy.copy()
        xyxy[:, 0] -= 1.0
        xyxy[:, 1] -= 1.0
        area = (xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1])
        return replace(side, boxes=replace(b, xyxy=xyxy, box_area=area, area=area.copy()))

    info.append("VOC corners read as 1-based pixel indices (--voc-origin 1)")
    return (shift(pred), gt) if pred.format == "voc" else (pred, shift(gt))


def check_geometry(side: Side) -> None:
    """Every box in finite numbers, with a non-zero area when it has extent.

    ``xmin=-1e308 xmax=1e308`` is two finite numbers whose width is ``inf``; a normalised
    box scaled by an image size of 1e300 overflows, by 1e-300 underflows to area 0. Either
    would give a silent AP of 0 or null: a located error instead.
    """
    from ..data import _where

    b = side.boxes
    if not len(b) or b.masks is not None:
        return  # masks: boxes are derived later (masks.prepare_masks checks polygons)
    with np.errstate(over="ignore", invalid="ignore"):
        w = b.xyxy[:, 2] - b.xyxy[:, 0]
        h = b.xyxy[:, 3] - b.xyxy[:, 1]
        # inf, not NaN: a NaN box is one the VOC protocols left unscaled on purpose (an
        # image without a size, ``_scale(lenient=True)``); loaders refuse NaN inputs
        overflow = (
            np.isinf(b.xyxy).any(axis=1)
            | np.isinf(w)
            | np.isinf(h)
            | np.isinf(b.box_area)
            | np.isinf(w * h)
        )
    if overflow.any():
        row = int(np.flatnonzero(overflow)[0])
        raise InputError(
            side.path,
            _where(side, b, row, "bbox"),
            f"box {_corners(b.xyxy[row])} overflows: its width, height or area is not a finite "
            "number",
        )
    collapsed = (w > 0) & (h > 0) & (b.box_area <= 0)
    if collapsed.any():
        row = int(np.flatnonzero(collapsed)[0])
        raise InputError(
            side.path,
            _where(side, b, row, "bbox"),
            f"box {_corners(b.xyxy[row])} underflows: it has extent but its area is 0 "
            "(coordinates too small to multiply)",
        )


def _corners(xyxy: np.ndarray) -> str:
    return "[" + ", ".join(f"{float(v):g}" for v in xyxy) + "]"
