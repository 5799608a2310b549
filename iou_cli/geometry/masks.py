"""Segmentation IoU through ``pycocotools.mask``: RLE and polygons, never dense whole-set arrays.

Three entry points:

* :func:`prepare_masks` turns the raw ``segmentation`` values a COCO loader kept
  (``Boxes.masks``) into compressed RLE dicts exactly as ``pycocotools.coco.COCO.annToRLE``
  does (polygons -> ``frPyObjects`` + ``merge``; uncompressed RLE -> ``frPyObjects``;
  compressed RLE as is), after checking each one: a bad mask is a located
  :class:`~iou_cli.errors.InputError`, never a crash or a silently wrong number.
* :func:`group_iou` is the mask kernel the COCO protocol calls once per (image, category)
  group: ``pycocotools.mask.iou`` with the crowd rule (crowd: intersection over the
  detection's area), empty-safe.
* :func:`mask_iou` is the public API: dense binary masks or RLE dicts, (N, M) IoU.

RLE values are checked by :mod:`iou_cli.loaders.rle` (size, uncompressed counts, and the
vectorised check of compressed strings) before pycocotools decodes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Boxes, Dataset
from ..errors import InputError, UsageError, kind_of
from .rle import check_counts_list, check_strings, explain_string, rle_size, strings_ok

FloatArray = npt.NDArray[np.float64]
RLE = dict[str, Any]  # {"size": [h, w], "counts": bytes}

# --------------------------------------------------------------------------------------
# one raw segmentation value -> a checked, normalised form


_PLAIN = {int, float}


def _is_num(v: object) -> bool:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer beyond any float
        return False


def _check_polygons(segm: list[Any], h: int = 0, w: int = 0) -> str | None:
    """None when ``segm`` is a valid list of polygons [[x1, y1, x2, y2, ...], ...].

    Coordinates far outside the image are refused: pycocotools rasterises in int32 at 5x
    scale and crashes (segfault) or allocates without bound on, say, 1e12.
    """
    reach = 2 * max(h, w, 1) + 1024
    for j, poly in enumerate(segm):
        if not isinstance(poly, list):
            return f"[{j}]: expected a polygon (a list of x, y numbers), got {kind_of(poly)}"
        if len(poly) % 2:
            return f"[{j}]: polygon with an odd number of coordinates ({len(poly)})"
        if len(poly) < 6:
            return f"[{j}]: polygon with {len(poly) // 2} points, expected >= 3"
        try:
            fine = (
                set(map(type, poly)) <= _PLAIN
                and all(map(math.isfinite, poly))
                and -reach <= min(poly)
                and max(poly) <= reach
            )
        except OverflowError:  # an integer beyond any float (in-memory input)
            fine = False
        if fine:
            continue  # the common case, checked at C speed
        if not all(_is_num(v) for v in poly):
            bad = next(i for i, v in enumerate(poly) if not _is_num(v))
            return f"[{j}][{bad}]: expected a finite number, got {kind_of(poly[bad])}"
        far = [i for i, v in enumerate(poly) if not -reach <= v <= reach]
        if far:
            return (
                f"[{j}][{far[0]}]: coordinate {poly[far[0]]} lies far outside the {w} x {h} "
                f"image (at most {reach} pixels away)"
            )
    return None


def _polygons_ok(
    raw: list[Any],
    rows: list[int],
    image: npt.NDArray[np.int64],
    hs: npt.NDArray[np.int64],
    ws: npt.NDArray[np.int64],
) -> bool:
    """Whether every mask of ``rows`` (lists) passes :func:`_check_polygons` for its image,
    judged for all of them at once; ``False`` sends them through the per-mask check (which
    locates the first problem), as does an empty list or an image of unknown size."""
    masks = [raw[i] for i in rows]
    if not all(masks):
        return False
    polys = list(chain.from_iterable(masks))
    if set(map(type, polys)) != {list}:
        return False
    lens = np.fromiter(map(len, polys), np.int64, len(polys))
    if (lens % 2).any() or (lens < 6).any():
        return False
    coords = list(chain.from_iterable(polys))
    if not set(map(type, coords)) <= _PLAIN:
        return False
    img = image[np.asarray(rows, dtype=np.int64)]
    h, w = hs[img], ws[img]
    if (h < 0).any():
        return False
    try:
        xy = np.array(coords, dtype=np.float64)
    except OverflowError:  # an integer beyond any float
        return False
    reach = 2 * np.maximum(np.maximum(h, w), 1) + 1024
    per_poly = np.repeat(reach, np.fromiter(map(len, masks), np.int64, len(masks)))
    return bool((np.abs(xy) <= np.repeat(per_poly, lens)).all())


# --------------------------------------------------------------------------------------
# prepare_masks: raw segmentations of a Dataset -> compressed RLE


class _Side:
    """One side's masks being converted; ``where(i)`` locates row ``i`` for messages."""

    def __init__(self, boxes: Boxes, path: str, prefix: str) -> None:
        self.boxes = boxes
        self.path = path
        self.prefix = prefix
        self.areas: FloatArray | None = None  # every mask's area, when found on the way

    def where(self, row: int, suffix: str = "") -> str:
        origin = int(self.boxes.origin[row])
        return f"{self.prefix}[{origin}].segmentation{suffix}"

    def fail(self, row: int, reason: str, suffix: str = "") -> InputError:
        return InputError(self.path, self.where(row, suffix), reason)


def _image_sizes(ds: Dataset) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Image heights and widths as integers, -1 where the ground truth does not say."""
    hs = np.full(len(ds.images), -1, dtype=np.int64)
    ws = np.full(len(ds.images), -1, dtype=np.int64)
    # (a size beyond 2**31 pixels is no image: treated as unknown, not cast to garbage)
    known = (
        np.isfinite(ds.images.height)
        & np.isfinite(ds.images.width)
        & (ds.images.height < 2**31)
        & (ds.images.width < 2**31)
    )
    hs[known] = ds.images.height[known].astype(np.int64)
    ws[known] = ds.images.width[known].astype(np.int64)
    return hs, ws


# complexity: one pass over a side's segmentations, each kind (RLE, polygon, box) located in place
def _convert_side(  # noqa: C901
    side: _Side, hs: npt.NDArray[np.int64], ws: npt.NDArray[np.int64], keys: Sequence[Any]
) -> list[RLE]:
    """Check and convert every raw segmentation of one side to a compressed RLE dict."""
    from pycocotools import mask as mask_utils

    boxes = side.boxes
    raw = boxes.masks
    n = len(boxes)
    if raw is None:
        raise InputError(side.path, None, "no 'segmentation' in the records (--iou-type segm)")
    fast = _compressed_rles(side, raw, hs, ws)
    if fast is not None:
        side.areas = fast[1]
        return fast[0]
    out: list[RLE | None] = [None] * n
    polygons: dict[tuple[int, int], list[int]] = {}  # image size -> rows of checked polygons
    compressed: list[int] = []
    comp_strings: list[bytes] = []
    images = boxes.image.tolist()
    hs_l, ws_l = hs.tolist(), ws.tolist()
    rows: Sequence[int] = range(n)
    listed = [i for i, m in enumerate(raw) if type(m) is list]
    if listed and _polygons_ok(raw, listed, boxes.image, hs, ws):
        for i in listed:  # checked all at once: only grouped by image size here
            img = images[i]
            polygons.setdefault((hs_l[img], ws_l[img]), []).append(i)
        rows = [i for i, m in enumerate(raw) if type(m) is not list]
    for i in rows:
        segm = raw[i]
        img = images[i]
        h, w = hs_l[img], ws_l[img]
        if type(segm) is dict:  # fast path: compressed RLE of the image's known size
            size, counts = segm.get("size"), segm.get("counts")
            if (
                type(counts) is str
                and type(size) is list
                and len(size) == 2
                and size[0] == h
                and size[1] == w
                and h >= 0
                and type(size[0]) is int
                and type(size[1]) is int
            ):
                b = counts.encode("utf-8")
                compressed.append(i)
                comp_strings.append(b)
                out[i] = {"size": [h, w], "counts": b}
                continue
        if isinstance(segm, list):
            if h < 0:
                raise side.fail(
                    i,
                    f"image {keys[img]!r} has no width/height in the ground truth "
                    "(needed to rasterise polygons)",
                )
            if not segm:  # no polygon: an empty mask (pycocotools would crash)
                out[i] = _empty_rle(h, w)
                continue
            problem = _check_polygons(segm, h, w)
            if problem is not None:
                suffix, _, reason = problem.partition(": ")
                raise side.fail(i, reason, suffix)
            polygons.setdefault((h, w), []).append(i)
            continue
        if not isinstance(segm, dict):
            raise side.fail(i, f"expected a list of polygons or an RLE object, got {kind_of(segm)}")
        size = rle_size(segm)
        if isinstance(size, str):
            raise side.fail(i, size, ".size")
        if h < 0:  # size unknown: the first RLE of the image decides, the others must agree
            hs[img], ws[img] = size
            hs_l[img], ws_l[img] = size
            h, w = size
        if size != (h, w):
            raise side.fail(
                i,
                f"mask size {size[0]} x {size[1]} (height x width) does not match image "
                f"{keys[img]!r}: {h} x {w}",
                ".size",
            )
        counts = segm.get("counts")
        if isinstance(counts, list):
            problem = check_counts_list(counts, h, w)
            if problem is not None:
                raise side.fail(i, problem, ".counts")
            out[i] = mask_utils.frPyObjects({"size": [h, w], "counts": counts}, h, w)
        elif isinstance(counts, (str, bytes)):
            # non-ASCII characters become bytes >= 128, which the check rejects
            b = counts.encode("utf-8") if isinstance(counts, str) else bytes(counts)
            compressed.append(i)
            comp_strings.append(b)
            out[i] = {"size": [h, w], "counts": b}
        else:
            raise side.fail(
                i,
                f"expected RLE counts as a string or a list of run lengths, got {kind_of(counts)}",
                ".counts",
            )
    if compressed:
        _check_strings(side, np.asarray(compressed, dtype=np.int64), comp_strings, hs, ws)
    for (h, w), same_size in polygons.items():
        _rasterise(out, raw, same_size, h, w)
    return out  # type: ignore[return-value]


def _rasterise(out: list[RLE | None], raw: list[Any], rows: list[int], h: int, w: int) -> None:
    """``COCO.annToRLE`` of the polygon masks ``rows`` of images of one size: all their
    polygons in one ``frPyObjects`` call (each polygon is rasterised on its own: the same
    RLEs as one call per mask), then ``merge`` per mask of several polygons (of one: its RLE
    as is, which is what ``merge`` of one returns)."""
    from pycocotools import mask as mask_utils

    flat = [poly for r in rows for poly in raw[r]]
    rles = mask_utils.frPyObjects(flat, h, w)
    k = 0
    for r in rows:
        c = len(raw[r])
        out[r] = rles[k] if c == 1 else mask_utils.merge(rles[k : k + c])
        k += c


def _check_strings(
    side: _Side,
    rows: npt.NDArray[np.int64],
    strings: list[bytes],
    hs: npt.NDArray[np.int64],
    ws: npt.NDArray[np.int64],
) -> FloatArray:
    """Every compressed string of ``rows`` decodes to runs covering its image (vectorised);
    returns their mask areas."""
    imgs = side.boxes.image[rows]
    ok, area = check_strings(strings, hs[imgs] * ws[imgs])
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        reason = explain_string(strings[k], int(hs[imgs[k]]), int(ws[imgs[k]]))
        raise side.fail(int(rows[k]), reason, ".counts")
    return area.astype(np.float64)


def _compressed_rles(
    side: _Side, raw: list[Any], hs: npt.NDArray[np.int64], ws: npt.NDArray[np.int64]
) -> tuple[list[RLE], FloatArray] | None:
    """The whole side at once when every mask is a compressed RLE (``counts`` a string or
    bytes, ``size`` ``[h, w]`` or ``(h, w)`` integers equal to its image's known size), else ``None``
    (the per-mask path then converts and locates). Dicts whose counts are bytes already are
    used as they are (never modified); the others are copied with their counts as bytes."""
    n = len(raw)
    if n == 0 or set(map(type, raw)) != {dict}:
        return None
    try:
        counts = list(map(itemgetter("counts"), raw))
        sizes = list(map(itemgetter("size"), raw))
    except KeyError:
        return None
    kinds = set(map(type, counts))
    if not kinds <= {str, bytes} or not set(map(type, sizes)) <= {list, tuple}:
        return None
    if set(map(len, sizes)) != {2}:
        return None
    flat = list(chain.from_iterable(sizes))
    if set(map(type, flat)) != {int}:
        return None
    try:
        hw = np.array(flat, dtype=np.int64).reshape(n, 2)
    except OverflowError:  # beyond 64 bits: the per-mask path says so
        return None
    img = side.boxes.image
    h, w = hs[img], ws[img]
    if not ((h >= 0).all() and (hw[:, 0] == h).all() and (hw[:, 1] == w).all()):
        return None
    if kinds == {bytes}:
        strings: list[bytes] = counts
        rles: list[RLE] = raw
    else:
        strings = [c.encode("utf-8") if type(c) is str else c for c in counts]
        rles = [{"size": s, "counts": c} for s, c in zip(sizes, strings, strict=True)]
    return rles, _check_strings(side, np.arange(n, dtype=np.int64), strings, hs, ws)


def _empty_rle(h: int, w: int) -> RLE:
    from pycocotools import mask as mask_utils

    rle: RLE = mask_utils.encode(np.zeros((h, w, 1), dtype=np.uint8, order="F"))[0]
    return rle


def mask_boxes(rles: Sequence[RLE]) -> FloatArray:
    """``pycocotools.mask.toBbox`` of compressed RLE masks as corners (x, y, x + w, y + h)."""
    if not rles:
        return np.zeros((0, 4), dtype=np.float64)
    from pycocotools import mask as mask_utils

    bb = np.asarray(mask_utils.toBbox(list(rles)), dtype=np.float64).reshape(-1, 4)
    return np.stack([bb[:, 0], bb[:, 1], bb[:, 0] + bb[:, 2], bb[:, 1] + bb[:, 3]], axis=1)


def _fill_boxes(boxes: Boxes, rles: list[RLE], area: FloatArray, pixels: FloatArray) -> Boxes:
    """Masks, areas, mask boxes and mask areas (``pixels``) set; corners taken from the
    masks where the records had no bbox."""
    xyxy, box_area = boxes.xyxy, boxes.box_area
    mb = mask_boxes(rles)
    missing = ~np.isfinite(xyxy).all(axis=1)
    if missing.any() and rles:
        rows = np.flatnonzero(missing)
        xyxy = xyxy.copy()
        box_area = box_area.copy()
        xyxy[rows] = mb[rows]
        # w * h as toBbox's w and h (the corners' differences are exact: integers)
        box_area[rows] = (mb[rows, 2] - mb[rows, 0]) * (mb[rows, 3] - mb[rows, 1])
    return replace(
        boxes,
        masks=rles,
        area=area,
        xyxy=xyxy,
        box_area=box_area,
        mask_box=mb,
        mask_area=np.asarray(pixels, dtype=np.float64),
    )


def mask_areas(rles: Sequence[RLE]) -> FloatArray:
    """Pixel counts of compressed RLE masks (``pycocotools.mask.area``), float64."""
    if not rles:
        return np.zeros(0, dtype=np.float64)
    from pycocotools import mask as mask_utils

    # pycocotools 2.0.x with NumPy 2 overflows on more than 255 masks per call (it sizes a
    # uint8 array by the count): ask in chunks
    items = list(rles)
    parts = [
        np.asarray(mask_utils.area(items[i : i + 255]), dtype=np.float64).reshape(-1)
        for i in range(0, len(items), 255)
    ]
    return np.concatenate(parts)


def _record_prefix(fmt: str) -> str:
    """Where a side's records live: a results list is the top level, a dataset's under
    ``annotations``."""
    return "" if fmt == "coco-results" else "annotations"


def prepare_masks(ds: Dataset) -> Dataset:
    """Convert both sides' raw ``segmentation`` values to compressed RLE, as pycocotools does.

    Returns a copy of ``ds`` whose ``gt.masks`` and ``pred.masks`` are lists of
    ``{"size": [h, w], "counts": bytes}`` dicts aligned with the rows, sized by the ground
    truth's images (``ds.images.height/width``; an image without them takes the size of its
    first RLE; polygons then cannot be rasterised and are an error).

    Areas follow ``pycocotools``: ground-truth ``area`` stays the annotation's ``area``
    field (the mask area where the field is absent); a prediction's area is its bbox
    ``w * h`` when the records carry a bbox (``COCO.loadRes`` takes its bbox branch then)
    and the mask area otherwise (``loadRes``: ``area = maskUtils.area(segm)``). Corners
    missing from the records are filled from the masks (``maskUtils.toBbox``).

    Messages locate a record by its side's format (``ds.pred_format``, ``ds.gt_format``):
    ``[i].segmentation`` in a results list, ``annotations[i].segmentation`` in a dataset.

    Raises :class:`InputError` located at the record: polygons with fewer than 3 points or
    non-numbers, RLE of a size other than the image's, malformed or short/long counts.
    """
    hs, ws = _image_sizes(ds)
    keys = ds.images.keys
    gt_side = _Side(ds.gt, ds.gt_path, _record_prefix(ds.gt_format))
    pred_side = _Side(ds.pred, ds.pred_path, _record_prefix(ds.pred_format))
    gt_rles = _convert_side(gt_side, hs, ws, keys)
    pred_rles = _convert_side(pred_side, hs, ws, keys)

    gt_pixels = gt_side.areas if gt_side.areas is not None else mask_areas(gt_rles)
    pred_pixels = pred_side.areas if pred_side.areas is not None else mask_areas(pred_rles)
    gt_area = ds.gt.area.copy()
    if len(gt_area) and not np.isfinite(gt_area).all():
        rows = np.flatnonzero(~np.isfinite(gt_area))
        gt_area[rows] = gt_pixels[rows]
    pred_has_bbox = len(ds.pred) > 0 and bool(np.isfinite(ds.pred.xyxy).all())
    pred_area = ds.pred.box_area.copy() if pred_has_bbox else pred_pixels.copy()
    gt = _fill_boxes(ds.gt, gt_rles, gt_area, gt_pixels)
    pred = _fill_boxes(ds.pred, pred_rles, pred_area, pred_pixels)
    return replace(ds, gt=gt, pred=pred)


# --------------------------------------------------------------------------------------
# IoU


def group_iou(dt_rles: Sequence[RLE], gt_rles: Sequence[RLE], iscrowd: npt.ArrayLike) -> FloatArray:
    """IoU of every detection mask against every ground-truth mask of one group -> (D, G).

    ``pycocotools.mask.iou`` exactly: where ``iscrowd[g]`` the union is the detection's area.
    Masks of different sizes give -1 (pycocotools' own marker); an empty side gives a (D, 0)
    or (0, G) array.
    """
    nd, ng = len(dt_rles), len(gt_rles)
    if nd == 0 or ng == 0:
        return np.zeros((nd, ng), dtype=np.float64)
    from pycocotools import mask as mask_utils

    crowd = np.asarray(iscrowd, dtype=np.uint8).reshape(-1)
    if crowd.shape[0] != ng:
        raise UsageError(f"iscrowd has {crowd.shape[0]} flags for {ng} ground-truth masks")
    out = mask_utils.iou(list(dt_rles), list(gt_rles), crowd)
    return np.asarray(out, dtype=np.float64).reshape(nd, ng)


def _as_rles(x: Any, name: str) -> tuple[list[RLE], tuple[int, int] | None]:
    """Dense (N, H, W) / (H, W) binary masks or RLE dict(s) -> compressed RLEs and size."""
    from pycocotools import mask as mask_utils

    if isinstance(x, dict) or (
        isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(v, dict) for v in x)
    ):
        items: list[dict[str, Any]] = [x] if isinstance(x, dict) else list(x)
        rles: list[RLE] = []
        strings: list[bytes] = []
        sizes: list[tuple[int, int]] = []
        for i, r in enumerate(items):
            size = rle_size(r)
            if isinstance(size, str):
                raise UsageError(f"{name}[{i}]: {size}")
            h, w = size
            counts = r.get("counts")
            if isinstance(counts, list):
                problem = check_counts_list(counts, h, w)
                if problem is not None:
                    raise UsageError(f"{name}[{i}]: {problem}")
                rles.append(mask_utils.frPyObjects({"size": [h, w], "counts": counts}, h, w))
            elif isinstance(counts, (str, bytes)):
                b = counts.encode("utf-8") if isinstance(counts, str) else bytes(counts)
                strings.append(b)
                rles.append({"size": [h, w], "counts": b})
            else:
                raise UsageError(
                    f"{name}[{i}]: expected RLE counts as a string or a list, got {kind_of(counts)}"
                )
            sizes.append(size)
        comp = [i for i, r in enumerate(rles) if isinstance(items[i].get("counts"), (str, bytes))]
        if comp:
            ok = strings_ok(strings, [sizes[i][0] * sizes[i][1] for i in comp])
            if not ok.all():
                k = int(np.flatnonzero(~ok)[0])
                h, w = sizes[comp[k]]
                raise UsageError(f"{name}[{comp[k]}]: {explain_string(strings[k], h, w)}")
        if len(set(sizes)) > 1:
            raise UsageError(f"{name}: masks of different sizes {sorted(set(sizes))}")
        return rles, sizes[0]
    arr = np.asarray(x)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3:
        raise UsageError(
            f"{name}: expected binary masks of shape (N, H, W) or RLE dicts, got shape {arr.shape}"
        )
    if arr.dtype != bool and (
        arr.dtype.kind not in "iuf" or (arr.size and not np.isin(arr, (0, 1)).all())
    ):
        raise UsageError(f"{name}: expected binary masks (0/1 or bool values)")
    n, h, w = arr.shape
    if n == 0:
        return [], (h, w)
    dense = np.asfortranarray(np.moveaxis(arr.astype(np.uint8), 0, -1))
    return list(mask_utils.encode(dense)), (h, w)


def mask_iou(a: Any, b: Any, *, iscrowd: npt.ArrayLike | None = None) -> FloatArray:
    """Pairwise mask IoU: every mask of ``a`` against every mask of ``b`` -> (N, M).

    ``a`` and ``b`` are binary masks of shape (N, H, W) and (M, H, W) (bool or 0/1; one
    (H, W) mask counts as N = 1), or COCO RLE dicts (``{"size": [h, w], "counts": ...}``,
    compressed string/bytes or uncompressed list), one or a list. IoU is
    ``TP / (TP + FP + FN)`` over pixels, computed by ``pycocotools.mask.iou`` on RLE (no
    dense pairwise arrays). ``iscrowd`` (M,) flags masks of ``b`` as crowd regions: there
    the union is the area of ``a``'s mask. Two empty masks give 0.0 (as pycocotools).

    >>> import numpy as np
    >>> gt = np.zeros((1, 10, 20), bool); gt[0, :, :15] = True           # 150 pixels
    >>> pred = np.zeros((1, 10, 20), bool); pred[0, :, 5:15] = True      # TP 100
    >>> pred[0, :5, 15:20] = True                                        # FP 25, FN 50
    >>> round(float(mask_iou(pred, gt)[0, 0]), 6)  # 100 / 175
    0.571429
    """
    ra, sa = _as_rles(a, "a")
    rb, sb = _as_rles(b, "b")
    if sa is not None and sb is not None and sa != sb and ra and rb:
        raise UsageError(
            f"masks of different sizes: a is {sa[0]} x {sa[1]}, b is {sb[0]} x {sb[1]}"
        )
    crowd = np.zeros(len(rb), dtype=np.uint8) if iscrowd is None else np.asarray(iscrowd)
    if crowd.reshape(-1).shape[0] != len(rb):
        raise UsageError(f"iscrowd has {crowd.reshape(-1).shape[0]} flags for {len(rb)} masks in b")
    return group_iou(ra, rb, crowd.astype(bool))


__all__ = ["group_iou", "mask_areas", "mask_boxes", "mask_iou", "prepare_masks"]
