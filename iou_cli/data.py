"""The columnar data model shared by loaders, protocols and reporters.

Columns, not objects: one NumPy array per field, one row per box. A loader reads one file or
folder into a :class:`Side` (its own image and category tables); :func:`align` joins a
predictions side with a ground-truth side into a :class:`Dataset` whose images and
categories are the ground truth's, matched by id (COCO with COCO results) or by file stem and
category name (any mix of formats).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import InputError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass
class Images:
    """Image table: ``keys`` identify images inside one side (COCO id or file stem)."""

    keys: list[Hashable]
    stems: list[str | None]
    width: FloatArray  # NaN where unknown
    height: FloatArray

    def __len__(self) -> int:
        return len(self.keys)


@dataclass
class Categories:
    """Category table: ``ids`` (COCO ids, YOLO class indices) and/or ``names``."""

    ids: list[Hashable | None]
    names: list[str | None]

    def __len__(self) -> int:
        return len(self.names)

    def label(self, k: int) -> str:
        name = self.names[k]
        return name if name is not None else str(self.ids[k])


@dataclass
class Boxes:
    """Aligned columns, one row per box.

    ``xyxy`` are corners in the source's units; ``box_area`` is the area the IoU kernel uses
    (``w * h`` as the source gives them, for bit-exact agreement with pycocotools); ``area``
    is the annotation's area used for COCO area ranges (NaN when unknown).
    ``normalized`` marks YOLO coordinates in [0, 1] units. ``obb`` holds rotated boxes as
    ``(N, 8)`` corners ``x0 y0 ... x3 y3`` (``geometry.obb``'s convention; ``xyxy`` is then
    their axis-aligned hull), None for axis-aligned boxes.
    """

    xyxy: FloatArray
    box_area: FloatArray
    area: FloatArray
    image: IntArray
    category: IntArray
    score: FloatArray
    iscrowd: BoolArray
    ignore: BoolArray
    difficult: BoolArray
    ids: IntArray
    origin: IntArray
    masks: list[Any] | None = None
    normalized: bool = False
    # keypoint tasks: (N, K, 3) x, y, v (v: visibility flag of a ground truth, anything of a
    # prediction) and each ground truth's ``num_keypoints`` (0: ignored, as pycocotools)
    keypoints: FloatArray | None = None
    num_keypoints: IntArray | None = None
    # the source's own x, y, w, h (keypoints: pycocotools' enlarged-box rule uses them;
    # x2 - x1 of ``xyxy`` may differ from w in the last bit)
    xywh: FloatArray | None = None
    obb: FloatArray | None = None
    # segm: each mask's bounding box as pycocotools.mask.toBbox gives it, as corners
    # (x, y, x + w, y + h); set by geometry.masks.prepare_masks (pairs whose mask boxes do
    # not overlap have IoU 0 and are never given to the mask kernel)
    mask_box: FloatArray | None = None
    mask_area: FloatArray | None = None  # segm: each mask's pixel count (pycocotools' area)
    # keypoint results: each row's keypoint extent, corners x0, y0, x1, y1 over all K (the
    # fast reader makes them while decoding; geometry.oks.kpt_corners otherwise). Derived
    # from ``keypoints``: whoever replaces those must drop it (None)
    kpt_box: FloatArray | None = None

    def __post_init__(self) -> None:
        """Every column (and ``masks``) has one row per box: checked here, once."""
        n = int(self.xyxy.shape[0])
        sizes = {name: int(col.shape[0]) for name, col in self.columns().items()}
        if self.masks is not None:
            sizes["masks"] = len(self.masks)
        if any(size != n for size in sizes.values()):
            raise ValueError(f"Boxes columns differ in length: {sizes}")

    def __len__(self) -> int:
        return int(self.image.shape[0])

    @classmethod
    def build(
        cls,
        xyxy: npt.ArrayLike,
        *,
        image: npt.ArrayLike,
        category: npt.ArrayLike,
        box_area: npt.ArrayLike | None = None,
        area: npt.ArrayLike | None = None,
        score: npt.ArrayLike | None = None,
        iscrowd: npt.ArrayLike | None = None,
        ignore: npt.ArrayLike | None = None,
        difficult: npt.ArrayLike | None = None,
        ids: npt.ArrayLike | None = None,
        origin: npt.ArrayLike | None = None,
        masks: list[Any] | None = None,
        normalized: bool = False,
        keypoints: FloatArray | None = None,
        num_keypoints: IntArray | None = None,
        xywh: FloatArray | None = None,
        obb: npt.ArrayLike | None = None,
        kpt_box: FloatArray | None = None,
    ) -> Boxes:
        xy = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
        n = xy.shape[0]

        def col(v: npt.ArrayLike | None, dtype: Any, default: Any) -> Any:
            if v is None:
                return np.full(n, default, dtype=dtype)
            return np.asarray(v, dtype=dtype).reshape(n)

        if box_area is None:
            # an overflow (xmin=-1e308, xmax=1e308) gives inf here: the loaders' geometry
            # check (join.check_geometry) says where, so no NumPy warning on stderr
            with np.errstate(over="ignore", invalid="ignore"):
                box_area = (xy[:, 2] - xy[:, 0]) * (xy[:, 3] - xy[:, 1])
        ba = col(box_area, np.float64, np.nan)
        return cls(
            xyxy=xy,
            box_area=ba,
            area=col(area, np.float64, np.nan) if area is not None else ba.copy(),
            image=col(image, np.int64, 0),
            category=col(category, np.int64, 0),
            score=col(score, np.float64, np.nan),
            iscrowd=col(iscrowd, bool, False),
            ignore=col(ignore, bool, False),
            difficult=col(difficult, bool, False),
            ids=col(ids, np.int64, 0) if ids is not None else np.arange(1, n + 1, dtype=np.int64),
            origin=col(origin, np.int64, 0) if origin is not None else np.arange(n, dtype=np.int64),
            masks=masks,
            normalized=normalized,
            keypoints=keypoints,
            num_keypoints=num_keypoints,
            xywh=xywh,
            obb=None if obb is None else np.asarray(obb, dtype=np.float64).reshape(n, 8),
            kpt_box=kpt_box,
        )

    def take(self, index: npt.ArrayLike) -> Boxes:
        """Rows ``index`` (an integer or boolean index array) of every column."""
        idx = np.asarray(index)
        masks = None
        if self.masks is not None:
            pos = np.flatnonzero(idx) if idx.dtype == bool else idx
            masks = [self.masks[int(i)] for i in pos]
        rows = {name: col[idx] for name, col in self.columns().items()}
        return Boxes(**rows, masks=masks, normalized=self.normalized)

    def columns(self) -> dict[str, np.ndarray]:
        """The per-box columns by name: every array field, ``obb`` when the boxes are rotated
        (not ``masks``, a list, nor ``normalized``, a flag)."""
        cols = {name: getattr(self, name) for name in _BOX_COLUMNS}
        for name in _OPTIONAL_COLUMNS:  # rotated boxes, keypoints: only when present
            if getattr(self, name) is not None:
                cols[name] = getattr(self, name)
        return cols


_OPTIONAL_COLUMNS = (
    "obb",
    "keypoints",
    "num_keypoints",
    "xywh",
    "mask_box",
    "mask_area",
    "kpt_box",
)
_BOX_COLUMNS = tuple(
    f.name for f in fields(Boxes) if f.name not in ("masks", "normalized", *_OPTIONAL_COLUMNS)
)


@dataclass
class Federated:
    """LVIS's federated labels as columns (CSR rows over the image table, never images x classes).

    Image ``i``'s categories verified absent are ``neg_cat[neg_ptr[i]:neg_ptr[i + 1]]``, those
    not exhaustively annotated ``nel_cat[nel_ptr[i]:nel_ptr[i + 1]]`` (category indices into
    the side's category table, sorted, unique; ids the table does not know are dropped: the
    evaluation only ever asks about known categories). ``frequency`` is each category's group:
    0 rare, 1 common, 2 frequent, -1 not given. ``missing`` locates the first LVIS field the
    file lacks (e.g. ``images[3].neg_category_ids``); the LVIS protocol refuses such a file.
    """

    neg_ptr: IntArray  # (n_images + 1,)
    neg_cat: IntArray  # (n_neg,)
    nel_ptr: IntArray  # (n_images + 1,)
    nel_cat: IntArray  # (n_nel,)
    frequency: IntArray  # (n_categories,)
    missing: str | None = None

    def take_images(self, order: IntArray) -> Federated:
        """The rows of images ``order`` (a permutation), in that order."""
        neg_ptr, neg_cat = _csr_take(self.neg_ptr, self.neg_cat, order)
        nel_ptr, nel_cat = _csr_take(self.nel_ptr, self.nel_cat, order)
        return replace(self, neg_ptr=neg_ptr, neg_cat=neg_cat, nel_ptr=nel_ptr, nel_cat=nel_cat)

    @staticmethod
    def pair_keys(ptr: IntArray, cat: IntArray, n_categories: int) -> IntArray:
        """``image * n_categories + category`` of every (image, category) entry, sorted."""
        image = np.repeat(np.arange(ptr.shape[0] - 1, dtype=np.int64), np.diff(ptr))
        return image * n_categories + cat


def _csr_take(ptr: IntArray, col: IntArray, order: IntArray) -> tuple[IntArray, IntArray]:
    lengths = np.diff(ptr)[order]
    new_ptr = np.zeros(order.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_ptr[1:])
    starts = np.repeat(ptr[:-1][order] - new_ptr[:-1], lengths)
    return new_ptr, col[np.arange(new_ptr[-1], dtype=np.int64) + starts]


@dataclass
class Skeleton:
    """What a keypoint file says about its keypoints (one K for the whole file).

    ``names``/``edges`` (0-based pairs) from the COCO categories' ``keypoints``/``skeleton``
    (or none); ``sigmas`` the OKS sigmas the file gives, (C, K) per category of its
    category table (a category without any: NaN row), or None; ``source`` says where they
    came from (for the info line).
    """

    k: int
    names: list[str] | None = None
    edges: list[tuple[int, int]] = field(default_factory=list)
    sigmas: FloatArray | None = None
    source: str = ""
    resolved: bool = False  # sigmas final: (1, K) or (C, K), no NaN (prepare_keypoints)
    dims: int = 3  # values per keypoint in the labels (YOLO-pose kpt_shape [K, 2] says 2)


@dataclass
class Side:
    """What one loader read: a predictions or ground-truth side in its own id space."""

    path: str
    format: str  # "coco", "coco-results", "voc", "yolo"
    images: Images
    categories: Categories
    boxes: Boxes
    has_scores: bool = True
    # what the loader learnt besides the boxes: "info"/"warnings" lines for the run, the
    # layout's "image_paths", the rows' "file_stems" (results lists), ...
    notes: dict[str, Any] = field(default_factory=dict)
    # row of ``boxes`` -> "<where>" for messages (e.g. "2007_000027.xml:14"); default: origin
    locator: Callable[[int], str] | None = None
    # every file this side was read from, including ones the loader found by itself (a
    # YOLO names file): outputs are never written over any of them
    read_paths: list[str] = field(default_factory=list)
    federated: Federated | None = None  # LVIS ground truth only
    skeleton: Skeleton | None = None  # keypoint files only


@dataclass
class Dataset:
    """Ground truth and predictions in one id space (the ground truth's tables)."""

    images: Images
    categories: Categories
    gt: Boxes
    pred: Boxes
    gt_path: str = ""
    pred_path: str = ""
    # each side's Side.format ("coco", "coco-results", "voc", "yolo"): how its records are
    # located in messages (e.g. masks: ``[i].segmentation`` or ``annotations[i]...``)
    gt_format: str = ""
    pred_format: str = ""
    skipped: dict[str, int] = field(default_factory=dict)
    read_paths: list[str] = field(default_factory=list)  # both sides' Side.read_paths
    # how the files were read and joined (split, join key, ...): info lines for stderr
    info: list[str] = field(default_factory=list)
    # what the loaders noticed and kept (e.g. a YOLO prediction centred outside its image)
    warnings: list[str] = field(default_factory=list)
    federated: Federated | None = None  # the ground truth's LVIS labels, when it has them
    # locate(role, row) -> "file:where" of a box (role "pred" or "gt"), for messages
    locate: Callable[[str, int], str] | None = None
    skeleton: Skeleton | None = None  # keypoints: the ground truth's (else the predictions')

    @property
    def pixel_units(self) -> bool:
        return not (self.gt.normalized or self.pred.normalized)


def _image_sort_key(key: Hashable) -> tuple[int, Any]:
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return (0, int(key))
    return (1, str(key))


def order_images(side: Side) -> Side:
    """Sort a side's image table the way pycocotools does (``sorted(imgIds)``)."""
    order = _int_order(side.images.keys)
    if order is None:
        order = sorted(range(len(side.images)), key=lambda i: _image_sort_key(side.images.keys[i]))
    if order == list(range(len(order))):
        return side
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    im = side.images
    images = Images(
        [im.keys[i] for i in order],
        [im.stems[i] for i in order],
        im.width[order],
        im.height[order],
    )
    boxes = replace(side.boxes, image=inverse[side.boxes.image])
    fed = side.federated
    if fed is not None:
        fed = fed.take_images(np.asarray(order, dtype=np.int64))
    return replace(side, images=images, boxes=boxes, federated=fed)


def _int_order(keys: Sequence[Hashable]) -> list[int] | None:
    """:func:`order_images`' order of keys that are all plain integers within 64 bits, in
    array steps (~0.3 ms for 5k images where the key function took ~4 ms); None for any
    other table (an id that is a string, a bool, a NumPy integer, a huge integer)."""
    if not all(type(k) is int for k in keys):
        return None
    try:
        arr = np.fromiter(keys, dtype=np.int64, count=len(keys))
    except OverflowError:
        return None
    if arr.shape[0] < 2 or bool((arr[1:] > arr[:-1]).all()):
        return list(range(arr.shape[0]))
    return np.argsort(arr, kind="stable").tolist()


def first_few(names: Sequence[object], n: int = 5) -> str:
    shown = ", ".join(str(x) for x in list(names)[:n])
    more = len(names) - n
    return shown + (f" (and {more} more)" if more > 0 else "")


def align(pred: Side, gt: Side, *, unknown: str = "error") -> Dataset:
    """Join predictions to the ground truth's image and category tables.

    Images match by file stem when both sides know stems, else by id; categories by name
    when both sides know names, else by id. A prediction whose image or category the ground
    truth does not know is an error, or dropped (counted in ``Dataset.skipped``) when
    ``unknown == "skip"``.
    """
    gt = order_images(gt)
    by_stem = all(s is not None for s in gt.images.stems) and all(
        s is not None for s in pred.images.stems
    )
    gt_img: dict[Hashable, int]
    pred_img_keys: list[Hashable]
    if by_stem:
        gt_img = {s: i for i, s in enumerate(gt.images.stems)}
        pred_img_keys = list(pred.images.stems)
    else:
        gt_img = {k: i for i, k in enumerate(norm_ids(gt.images.keys))}
        pred_img_keys = norm_ids(pred.images.keys)
    img_map = np.array([gt_img.get(k, -1) for k in pred_img_keys], dtype=np.int64)

    by_name = all(n is not None for n in gt.categories.names) and all(
        n is not None for n in pred.categories.names
    )
    gt_cat: dict[Hashable, int]
    pred_cat_keys: list[Hashable]
    if by_name:
        seen: set[str | None] = set()
        for name in gt.categories.names:
            if name in seen:
                raise InputError(
                    gt.path,
                    "categories",
                    f"duplicate category name {name!r}: categories cannot be matched by name",
                )
            seen.add(name)
        gt_cat = {n: i for i, n in enumerate(gt.categories.names)}
        pred_cat_keys = list(pred.categories.names)
    else:
        gt_cat = {norm_id(k): i for i, k in enumerate(gt.categories.ids)}
        pred_cat_keys = [norm_id(k) for k in pred.categories.ids]
    cat_map = np.array([gt_cat.get(k, -1) for k in pred_cat_keys], dtype=np.int64)
    if by_name and gt.format in OPEN_CLASSES and (cat_map < 0).any():
        gt, cat_map = _open_classes(gt, pred_cat_keys, cat_map)

    boxes = pred.boxes
    p_img = img_map[boxes.image] if len(boxes) else np.zeros(0, dtype=np.int64)
    p_cat = cat_map[boxes.category] if len(boxes) else np.zeros(0, dtype=np.int64)
    skipped: dict[str, int] = {}
    bad_img = p_img < 0
    bad_cat = p_cat < 0
    skip_img = unknown in ("skip", "skip-images")
    skip_cat = unknown in ("skip", "skip-classes")
    if (bad_img.any() and not skip_img) or (bad_cat.any() and not skip_cat):
        if bad_img.any() and not skip_img:
            missing = sorted({str(pred_img_keys[int(i)]) for i in boxes.image[bad_img]}, key=str)
            what = "image" + ("s" if len(missing) > 1 else "")
            kind = "file stem" if by_stem else "image_id"
            first = int(np.flatnonzero(bad_img)[0])
            hint = "use --unknown skip-images to drop them"
            if gt.format == "yolo" and not gt.notes.get("image_list"):
                # images without objects have no label file: dropping their predictions
                # would drop false positives and raise the AP
                hint = (
                    "the ground truth knows only the images that have a label file; give "
                    "--images DIR (its images) so that images without objects count"
                )
            raise InputError(
                pred.path,
                _where(pred, boxes, first, "image_id"),
                f"{len(missing)} {what} not in the ground truth ({kind}): "
                f"{first_few(missing)} ({hint})",
            )
        missing = sorted({str(pred_cat_keys[int(i)]) for i in boxes.category[bad_cat]})
        kind = "name" if by_name else "category_id"
        first = int(np.flatnonzero(bad_cat)[0])
        hint = "use --unknown skip-classes to drop them"
        if gt.format == "yolo" and not all(n is not None for n in gt.categories.names):
            # no class list: a class without labels is unknown, not absent
            hint = (
                "the ground truth has no class list, only the classes its labels use; give "
                "--names FILE (the data.yaml or classes.txt the model was trained with)"
            )
        raise InputError(
            pred.path,
            _where(pred, boxes, first, "category_id"),
            f"{len(missing)} categor{'ies' if len(missing) > 1 else 'y'} not in the ground "
            f"truth ({kind}): {first_few(missing)} ({hint})",
        )
    if bad_img.any() or bad_cat.any():
        skipped = {"unknown_image": int(bad_img.sum()), "unknown_category": int(bad_cat.sum())}
        keep = ~(bad_img | bad_cat)
        if not keep.any():
            raise InputError(
                pred.path,
                None,
                f"--unknown {unknown} dropped every prediction ({int(bad_img.sum())} for unknown "
                f"images, {int(bad_cat.sum())} for unknown classes): the files do not describe "
                "the same images and classes (check the join, --split and --image-map)",
            )
        boxes = boxes.take(keep)
        p_img, p_cat = p_img[keep], p_cat[keep]
    pred_boxes = replace(boxes, image=p_img, category=p_cat)
    return Dataset(
        images=gt.images,
        categories=gt.categories,
        gt=gt.boxes,
        pred=pred_boxes,
        gt_path=gt.path,
        pred_path=pred.path,
        gt_format=gt.format,
        pred_format=pred.format,
        skipped=skipped,
        read_paths=[*gt.read_paths, *pred.read_paths],
        federated=gt.federated,
        skeleton=_join_skeleton(pred, gt),
    )


def _join_skeleton(pred: Side, gt: Side) -> Skeleton | None:
    """The ground truth's skeleton; sigmas only the predictions give (a data.yaml beside
    them) come along when the categories line up one to one."""
    sk = gt.skeleton or pred.skeleton
    if sk is None or gt.skeleton is None or pred.skeleton is None:
        return sk
    if sk.sigmas is None and pred.skeleton.sigmas is not None:
        ps = pred.skeleton.sigmas
        if ps.shape[0] == len(gt.categories) or ps.shape[0] == 1:
            sk = replace(sk, sigmas=ps, source=pred.skeleton.source)
    return sk


# formats without a class list: a class they never name is a class without ground truth
OPEN_CLASSES = ("voc", "labelme", "openimages")


def _open_classes(
    gt: Side, pred_keys: list[Hashable], cat_map: npt.NDArray[np.int64]
) -> tuple[Side, npt.NDArray[np.int64]]:
    """A VOC ground truth has no class list: a predicted class it never names is a class
    without ground truth (AP undefined, warned about), not an unknown class."""
    names = [str(n) for n in gt.categories.names]
    extra = sorted({str(pred_keys[i]) for i in np.flatnonzero(cat_map < 0)})
    merged = sorted(set(names) | set(extra))
    pos = {n: i for i, n in enumerate(merged)}
    remap = np.array([pos[n] for n in names], dtype=np.int64)
    boxes = replace(
        gt.boxes, category=remap[gt.boxes.category] if len(gt.boxes) else gt.boxes.category
    )
    cats = Categories([None] * len(merged), list(merged))
    new_map = np.array([pos.get(str(k), -1) for k in pred_keys], dtype=np.int64)
    return replace(gt, boxes=boxes, categories=cats), new_map


def norm_ids(keys: Iterable[Hashable]) -> list[Hashable]:
    """``[norm_id(k) for k in keys]``; plain ints (the usual ids) are already normal."""
    keys = list(keys)
    if all(type(k) is int for k in keys):
        return keys
    return [norm_id(k) for k in keys]


def norm_id(key: Hashable) -> Hashable:
    """Image/category ids compare by value: ``"2299"`` and ``2299`` are one image."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return int(key)
    if isinstance(key, str):
        s = key.strip()
        digits = s[1:] if s[:1] == "-" else s
        # ASCII digits only: "²" and "٣" pass str.isdigit() but are no id int() reads,
        # and "--1" is a name, not -(-1)
        if digits.isascii() and digits.isdigit():
            return int(s)
    return key


def locator(pred: Side, gt: Side, ds: Dataset) -> Callable[[str, int], str]:
    """``locate(role, row)`` for a joined dataset: where box ``row`` of ``ds.pred`` or
    ``ds.gt`` came from, as ``file:where`` (the first few offenders of a warning)."""

    def locate(role: str, row: int) -> str:
        side, boxes = (pred, ds.pred) if role == "pred" else (gt, ds.gt)
        where = _where(side, boxes, row, "bbox").removesuffix(".bbox")
        if side.locator is not None:  # folders: the locator names the file inside
            return f"{side.path.rstrip('/')}/{where}"
        return f"{side.path}:{where}"

    return locate


def _where(side: Side, boxes: Boxes, row: int, key: str) -> str:
    origin = int(boxes.origin[row])
    if side.locator is not None:
        return side.locator(origin)
    if side.format == "coco-results":
        return f"[{origin}].{key}"
    if side.format == "coco":
        return f"annotations[{origin}].{key}"
    return str(origin)


def _raw(arr: Any) -> Any:
    """What hashes as ``arr.tobytes()`` (its bytes in C order), without a copy where it is
    contiguous already."""
    return np.ascontiguousarray(arr)


def fingerprint(ds: Dataset) -> str:
    """A digest of the ground truth as evaluated (boxes, flags, image and category tables,
    LVIS's federated lists): two reports or partial files with different fingerprints were
    not scored against the same ground truth (``compare`` warns, ``merge`` refuses)."""
    import hashlib

    h = hashlib.sha256()
    g = ds.gt
    # (each array's bytes hashed where they lie: a copy of each, ~5 MB of fresh pages at
    # COCO val keypoints' size, cost ~6 ms)
    for arr in (g.xyxy, g.box_area, g.area, g.image, g.category, g.iscrowd, g.ignore):
        h.update(_raw(arr))
        h.update(b"|")
    h.update(_raw(g.difficult))
    if g.obb is not None:  # rotated boxes: their corners decide the IoU
        h.update(_raw(g.obb))
    if g.keypoints is not None:  # keypoints: OKS reads them, their flags and the sigmas
        h.update(b"kpt|")
        h.update(_raw(g.keypoints))
        if g.num_keypoints is not None:
            h.update(_raw(g.num_keypoints))
        if ds.skeleton is not None and ds.skeleton.sigmas is not None:
            h.update(_raw(ds.skeleton.sigmas))
    h.update(repr([str(k) for k in ds.images.keys]).encode("utf-8", "replace"))
    pairs = [(str(i), n) for i, n in zip(ds.categories.ids, ds.categories.names, strict=True)]
    h.update(repr(pairs).encode("utf-8", "replace"))
    fed = ds.federated
    if fed is not None:
        for arr in (fed.neg_ptr, fed.neg_cat, fed.nel_ptr, fed.nel_cat, fed.frequency):
            h.update(_raw(arr))
    return "sha256:" + h.hexdigest()
