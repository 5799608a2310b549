"""COCO panoptic format: one JSON (``annotations`` with ``segments_info``, ``categories``
with ``isthing``) plus a folder of RGB PNGs whose pixels encode segment ids as
``R + 256 G + 256^2 B`` (id 0 is VOID).

The JSON is read and checked whole up front (every record located, as ``annotations[3].
segments_info[5].id``): by the typed read of :mod:`.panoptic_json` where it vouches for the
file (the usual case, about 4x faster), else by the generic reader (:mod:`.jsonio`), which
then words whatever is off; the values are the same either way. The PNGs are read one image
at a time by :func:`read_rgb`. The folder defaults to the JSON's path without ``.json``, as
panopticapi assumes.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, kind_of

IntArray = npt.NDArray[np.int64]
MAX_ID = (1 << 24) - 1  # three 8-bit channels


@dataclass
class PanopticImage:
    """One ``annotations`` record: its segments as aligned columns (JSON order)."""

    image_id: int | str
    file_name: str
    where: str  # "annotations[i]", for messages
    ids: IntArray  # segment ids (1 .. 2^24 - 1)
    category: IntArray  # category ids as written
    iscrowd: npt.NDArray[np.bool_]
    area: npt.NDArray[np.float64]  # the JSON ``area`` values (NaN where absent)


@dataclass
class PanopticSet:
    """One side (ground truth or predictions) of a COCO panoptic evaluation."""

    path: str
    folder: str
    images: list[PanopticImage]
    by_id: dict[int | str, int]  # image_id -> index into images
    # ground truth only: category id -> (name, isthing), in the file's order
    categories: dict[int, tuple[str, bool]] = field(default_factory=dict)
    sizes: dict[int | str, tuple[int, int]] = field(default_factory=dict)  # id -> (w, h)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as a few flat columns (a forked reader sends a side back): one array per
        field instead of four per image, about 3x quicker to load."""
        ims = self.images
        cols = [
            np.concatenate([getattr(im, f) for im in ims] or [np.empty(0, dtype)])
            for f, dtype in (("ids", np.int64), ("category", np.int64), ("iscrowd", bool))
        ]
        cols.append(np.concatenate([im.area for im in ims] or [np.empty(0)]))
        heads = [(im.image_id, im.file_name, im.where, len(im.ids)) for im in ims]
        rest = (self.by_id, self.categories, self.sizes)
        return (_unpickle_set, (self.path, self.folder, heads, cols, *rest))


def _unpickle_set(
    path: str,
    folder: str,
    heads: list[tuple[int | str, str, str, int]],
    cols: list[npt.NDArray[Any]],
    by_id: dict[int | str, int],
    categories: dict[int, tuple[str, bool]],
    sizes: dict[int | str, tuple[int, int]],
) -> PanopticSet:
    ids, cats, crowd, area = cols
    ends = np.cumsum([h[3] for h in heads], dtype=np.int64).tolist()
    images = []
    a = 0
    for (iid, name, where, _), b in zip(heads, ends, strict=True):
        images.append(PanopticImage(iid, name, where, ids[a:b], cats[a:b], crowd[a:b], area[a:b]))
        a = b
    return PanopticSet(path, folder, images, by_id, categories, sizes)


def looks_panoptic(path: str) -> bool:
    """Cheap sniff: a JSON file whose first 64 KiB mention ``segments_info``."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return False
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") and b'"segments_info"' in head


def default_folder(path: str) -> str:
    """panopticapi's rule: the JSON's path without ``.json``."""
    for ext in (".json.gz", ".json"):
        if path.lower().endswith(ext):
            return path[: -len(ext)]
    return path


def _int(value: Any, path: str, where: str, what: str, lo: int = 0, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(path, where, f"expected an integer {what}, got {kind_of(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            raise InputError(path, where, f"expected an integer {what}, got {value!r}")
        value = int(value)
    if value < lo or (hi is not None and value > hi):
        top = f"..{hi}" if hi is not None else " or more"
        raise InputError(path, where, f"{what} {value} is out of range ({lo}{top})")
    return int(value)


def _image_id(value: Any, path: str, where: str) -> int | str:
    if isinstance(value, str):
        return value
    return _int(value, path, where, "image_id", lo=-(1 << 62), hi=1 << 62)


def _categories(doc: dict[str, Any], path: str) -> dict[int, tuple[str, bool]]:
    cats = doc.get("categories")
    if not isinstance(cats, list) or not cats:
        raise InputError(
            path,
            "categories",
            "expected a non-empty list of categories with id, name and isthing "
            f"(the ground truth's categories are scored), got {kind_of(cats)}",
        )
    out: dict[int, tuple[str, bool]] = {}
    for i, cat in enumerate(cats):
        where = f"categories[{i}]"
        if not isinstance(cat, dict):
            raise InputError(path, where, f"expected an object, got {kind_of(cat)}")
        cid = _int(cat.get("id"), path, f"{where}.id", "category id", lo=-(1 << 62), hi=1 << 62)
        if cid in out:
            raise InputError(path, f"{where}.id", f"duplicate category id {cid}")
        isthing = cat.get("isthing")
        if isthing not in (0, 1) or isinstance(isthing, float):
            raise InputError(
                path,
                f"{where}.isthing",
                f"expected 0 or 1 (stuff or thing, for the Things/Stuff split), got {kind_of(isthing)}",
            )
        name = cat.get("name", cid)
        out[cid] = (str(name), bool(isthing))
    return out


def _sizes(doc: dict[str, Any], path: str) -> dict[int | str, tuple[int, int]]:
    images = doc.get("images")
    if images is None:
        return {}
    if not isinstance(images, list):
        raise InputError(path, "images", f"expected a list, got {kind_of(images)}")
    fast = _sizes_fast(images)
    if fast is not None:
        return fast
    out: dict[int | str, tuple[int, int]] = {}
    for i, img in enumerate(images):
        where = f"images[{i}]"
        if not isinstance(img, dict):
            raise InputError(path, where, f"expected an object, got {kind_of(img)}")
        iid = _image_id(img.get("id"), path, f"{where}.id")
        if iid in out:
            raise InputError(path, f"{where}.id", f"duplicate image id {iid!r}")
        if "width" in img or "height" in img:
            w = _int(img.get("width"), path, f"{where}.width", "width", lo=1, hi=1 << 31)
            h = _int(img.get("height"), path, f"{where}.height", "height", lo=1, hi=1 << 31)
            out[iid] = (w, h)
    return out


Columns = tuple[IntArray, IntArray, npt.NDArray[np.bool_], npt.NDArray[np.float64]]
_INT = {int}
_AREA = {int, float, type(None)}


def _sizes_fast(images: list[Any]) -> dict[int | str, tuple[int, int]] | None:
    """:func:`_sizes` of entries that all have an integer or string id (each once) and an
    integer width and height in range, in a few passes; None otherwise (then the loop in
    :func:`_sizes` words the first entry that is off)."""
    try:
        ids = [img["id"] for img in images]
        ws = [img["width"] for img in images]
        hs = [img["height"] for img in images]
    except (TypeError, KeyError):
        return None
    if not (
        set(map(type, ids)) <= {int, str}
        and set(map(type, ws)) <= _INT
        and set(map(type, hs)) <= _INT
        and len(set(ids)) == len(ids)
    ):
        return None
    ints = [i for i in ids if type(i) is int]
    if ints and (min(ints) < -(1 << 62) or max(ints) > 1 << 62):
        return None
    if ws and (min(ws) < 1 or max(ws) > 1 << 31 or min(hs) < 1 or max(hs) > 1 << 31):
        return None
    return dict(zip(ids, zip(ws, hs, strict=True), strict=True))


def _segments_fast(
    infos: list[Any], *, check_duplicates: bool = True
) -> tuple[IntArray, IntArray, npt.NDArray[np.bool_], npt.NDArray[np.float64]] | None:
    """The columns of well-formed ``segments_info`` in a few passes; None when anything is
    off (then the record-by-record check below names the first bad field)."""
    try:
        ids = [s["id"] for s in infos]
        cats = [s["category_id"] for s in infos]
        crowd = [s.get("iscrowd", 0) for s in infos]
        area = [s.get("area") for s in infos]
    except (TypeError, KeyError, AttributeError):
        return None
    return _columns(ids, cats, crowd, area, check_duplicates)


def _columns(
    ids: list[Any], cats: list[Any], crowd: list[Any], area: list[Any], check_duplicates: bool
) -> Columns | None:
    """The four columns from the values as read (None: something is off)."""
    if not (
        set(map(type, ids)) <= _INT
        and set(map(type, cats)) <= _INT
        and set(map(type, crowd)) <= _INT
        and set(map(type, area)) <= _AREA
        and (not check_duplicates or len(set(ids)) == len(ids))
    ):
        return None
    try:
        a_ids = np.array(ids, dtype=np.int64).reshape(-1)
        a_cats = np.array(cats, dtype=np.int64).reshape(-1)
        a_crowd = np.array(crowd, dtype=np.int64).reshape(-1)
        a_area = np.array([np.nan if v is None else v for v in area], dtype=np.float64)
    except (OverflowError, ValueError):
        return None
    if (
        ((a_ids < 1) | (a_ids > MAX_ID)).any()
        or ((a_crowd != 0) & (a_crowd != 1)).any()
        or (np.abs(a_cats) > (1 << 62)).any()
        or (a_area < 0).any()
        or np.isinf(a_area).any()
    ):
        return None
    return a_ids, a_cats, a_crowd.astype(bool), a_area.reshape(-1)


def _all_segments_fast(anns: list[Any]) -> list[Columns] | None:
    """:func:`_segments_fast` for every annotation at once (one set of arrays, sliced per
    image): None when any record is off, and then each is checked on its own."""
    try:
        infos = [a["segments_info"] for a in anns]
        if set(map(type, infos)) - {list}:
            return None
        flat = [s for i in infos for s in i]
    except (TypeError, KeyError):
        return None
    return _split(_segments_fast(flat, check_duplicates=False), [len(i) for i in infos])


def _split(cols: Columns | None, counts: list[int]) -> list[Columns] | None:
    """Flat columns cut into images of ``counts`` segments; None where ``cols`` is None or
    an image has a segment id twice (then each image is checked on its own)."""
    if cols is None:
        return None
    ids, cats, crowd, area = cols
    ends = np.cumsum(counts, dtype=np.int64)
    starts = ends - np.array(counts, dtype=np.int64)
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), ends - starts)
    key = np.sort(owner << 24 | ids)
    if len(key) > 1 and (key[1:] == key[:-1]).any():
        return None  # a duplicate id in one image: located record by record
    out: list[Columns] = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        out.append((ids[a:b], cats[a:b], crowd[a:b], area[a:b]))
    return out


def _segments(ann: dict[str, Any], path: str, where: str, fast: Columns | None = None) -> Columns:
    if fast is not None:
        return fast
    infos = ann.get("segments_info")
    if not isinstance(infos, list):
        raise InputError(path, f"{where}.segments_info", f"expected a list, got {kind_of(infos)}")
    fast = _segments_fast(infos)
    if fast is not None:
        return fast
    n = len(infos)
    ids = np.empty(n, dtype=np.int64)
    cats = np.empty(n, dtype=np.int64)
    crowd = np.zeros(n, dtype=bool)
    areas = np.full(n, np.nan)
    seen: dict[int, int] = {}
    for j, seg in enumerate(infos):
        w = f"{where}.segments_info[{j}]"
        if not isinstance(seg, dict):
            raise InputError(path, w, f"expected an object, got {kind_of(seg)}")
        sid = _int(seg.get("id"), path, f"{w}.id", "segment id", lo=1, hi=MAX_ID)
        if sid in seen:
            raise InputError(
                path,
                f"{w}.id",
                f"duplicate segment id {sid} in this image (also segments_info[{seen[sid]}])",
            )
        seen[sid] = j
        ids[j] = sid
        cats[j] = _int(
            seg.get("category_id"),
            path,
            f"{w}.category_id",
            "category_id",
            lo=-(1 << 62),
            hi=1 << 62,
        )
        c = seg.get("iscrowd", 0)
        if c not in (0, 1) or isinstance(c, float):
            raise InputError(path, f"{w}.iscrowd", f"expected 0 or 1, got {kind_of(c)}")
        crowd[j] = bool(c)
        a = seg.get("area")
        if a is not None:
            if isinstance(a, bool) or not isinstance(a, (int, float)) or not a >= 0:
                raise InputError(path, f"{w}.area", f"expected a pixel count, got {kind_of(a)}")
            areas[j] = a
    return ids, cats, crowd, areas


def _read(path: str) -> tuple[Any, list[Columns] | None]:
    """The document (the typed read's raw parts and its annotations' records, or the
    generic reader's whole document) and, from the typed read, every image's columns."""
    from .jsonio import load_json, parse_json, read_bytes
    from .panoptic_json import read_typed

    if path != "-" and os.path.isdir(path):
        return load_json(path), None  # its error
    data = read_bytes(path)
    typed = read_typed(path, data)
    if typed is not None:
        flat = _columns(typed.ids, typed.category_ids, typed.iscrowd, typed.area, False)
        batch = _split(flat, typed.counts)
        if batch is not None:
            doc = dict(typed.rest)
            doc["annotations"] = _Records(typed.image_ids, typed.file_names)
            return doc, batch
    return parse_json(path, data), None  # anything off: the generic reader locates it


@dataclass
class _Records:
    """The typed read's annotations (``image_id`` and ``file_name``; the segments are in
    the batch of columns), made into records only when one must be looked at one by one."""

    image_ids: list[int | str]
    names: list[str]

    def dicts(self) -> list[dict[str, Any]]:
        return [
            {"image_id": i, "file_name": f} for i, f in zip(self.image_ids, self.names, strict=True)
        ]

    def plain(self) -> bool:
        """Every image_id once and every file name a relative path inside the folder (the
        checks of :func:`load_panoptic`'s loop, which words the first that fails)."""
        ids, names = self.image_ids, self.names
        return (
            len(set(ids)) == len(ids)
            and all(names)
            and not any(map(os.path.isabs, names))
            and not any(".." in n for n in names)
        )


def load_panoptic(
    path: str, *, folder: str | None = None, ground_truth: bool, role: str
) -> PanopticSet:
    """Read and check a COCO panoptic JSON (``role``: "ground truth" or "predictions")."""
    doc, batch = _read(path)
    if not isinstance(doc, dict):
        raise InputError(
            path,
            None,
            f"expected a COCO panoptic JSON object with annotations (segments_info) and "
            f"categories ({role}), got {kind_of(doc)}",
        )
    anns = doc.get("annotations")
    records = anns if isinstance(anns, _Records) else None
    if records is not None:
        anns = records.dicts() if not records.plain() else records.image_ids
    if not isinstance(anns, list):
        raise InputError(
            path,
            "annotations",
            f"expected a list of per-image records with segments_info ({role}), got "
            f"{kind_of(anns)}",
        )
    if folder is None:
        if path == "-":
            raise InputError(
                path, None, f"standard input has no PNG folder: give the {role} folder"
            )
        folder = default_folder(path)
    if not os.path.isdir(folder):
        flag = "--gt-folder" if ground_truth else "--pred-folder"
        raise InputError(
            folder,
            None,
            f"no such folder: the {role} PNGs are looked for beside the JSON, in the folder "
            f"named like it (or give {flag})",
        )
    if records is not None and anns is records.image_ids and batch is not None:  # all plain
        names = records.names
        images = [
            PanopticImage(iid, names[i], f"annotations[{i}]", *batch[i])
            for i, iid in enumerate(anns)
        ]
        by_id = {iid: i for i, iid in enumerate(anns)}
        return _finish(PanopticSet(path, folder, images, by_id), doc, ground_truth)
    images = []
    by_id = {}
    if batch is None:
        batch = _all_segments_fast(anns)
    for i, ann in enumerate(anns):
        where = f"annotations[{i}]"
        if not isinstance(ann, dict):
            raise InputError(path, where, f"expected an object, got {kind_of(ann)}")
        iid = _image_id(ann.get("image_id"), path, f"{where}.image_id")
        if iid in by_id:
            raise InputError(
                path,
                f"{where}.image_id",
                f"duplicate image_id {iid!r} (also annotations[{by_id[iid]}])",
            )
        name = ann.get("file_name")
        if not isinstance(name, str) or not name:
            raise InputError(
                path, f"{where}.file_name", f"expected a PNG file name, got {kind_of(name)}"
            )
        if os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
            raise InputError(
                path, f"{where}.file_name", f"expected a name inside the folder, got {name!r}"
            )
        ids, cats, crowd, areas = _segments(ann, path, where, batch[i] if batch else None)
        by_id[iid] = len(images)
        images.append(PanopticImage(iid, name, where, ids, cats, crowd, areas))
    return _finish(PanopticSet(path, folder, images, by_id), doc, ground_truth)


def _finish(out: PanopticSet, doc: dict[str, Any], ground_truth: bool) -> PanopticSet:
    if ground_truth:
        out.categories = _categories(doc, out.path)
        out.sizes = _sizes(doc, out.path)
    return out


def read_rgb(path: str) -> npt.NDArray[np.uint8]:
    """An RGB panoptic PNG's pixels as a C-contiguous (H, W, 3) uint8 array (segment id
    ``R + 256 G + 256^2 B``; :func:`rgb_to_ids` turns it into ids).

    Plain 8-bit RGB files take :mod:`.png`'s fast path (the same pixels); anything else,
    and every error, is Pillow's."""
    import warnings

    from PIL import Image, UnidentifiedImageError

    from .files import read_input
    from .png import fast_rgb

    data = read_input(path, member=True, expected="an RGB panoptic PNG")
    fast = fast_rgb(data, Image.MAX_IMAGE_PIXELS)
    if fast is not None:
        return fast
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data))
        with im:
            if im.format != "PNG":
                raise InputError(path, None, f"expected an RGB PNG, got {im.format}")
            if im.mode != "RGB":
                raise InputError(
                    path,
                    None,
                    f"expected an RGB PNG (segment id = R + 256 G + 256^2 B), got mode {im.mode}",
                )
            im.load()
            rgb: npt.NDArray[np.uint8] = np.ascontiguousarray(np.asarray(im))
    except Image.DecompressionBombError:
        raise InputError(
            path, None, f"refused: more than {2 * (Image.MAX_IMAGE_PIXELS or 0):,} pixels"
        ) from None
    except UnidentifiedImageError:  # Pillow's message names its buffer object
        raise InputError(path, None, "not a readable PNG: not an image file") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(path, None, f"not a readable PNG: {exc}") from None
    return rgb


def read_id_map(path: str) -> npt.NDArray[np.uint32]:
    """An RGB panoptic PNG as an (H, W) array of segment ids ``R + 256 G + 256^2 B``
    (:func:`read_rgb`, then :func:`rgb_to_ids`)."""
    return rgb_to_ids(read_rgb(path))


def rgb_to_ids(rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint32]:
    """(H, W, 3) uint8 -> (H, W) ids ``R + 256 G + 256^2 B``: each pixel's 4-byte
    little-endian window (its 3 bytes and the next pixel's R) masked to 24 bits, one pass
    (the last pixel, whose window would run past the buffer, on its own)."""
    h, w = rgb.shape[:2]
    n = h * w
    out = np.empty(n, dtype=np.uint32)
    if n == 0:
        return out.reshape(h, w)
    flat = np.ascontiguousarray(rgb).reshape(-1)
    if n > 1:
        windows: npt.NDArray[np.uint32] = np.ndarray(
            shape=(n - 1,), dtype="<u4", buffer=flat, offset=0, strides=(3,)
        )
        np.bitwise_and(windows, np.uint32(0xFFFFFF), out=out[:-1])
    r, g, b = (int(v) for v in flat[-3:])
    out[-1] = r | g << 8 | b << 16
    return out.reshape(h, w)


__all__ = [
    "PanopticImage",
    "PanopticSet",
    "default_folder",
    "load_panoptic",
    "looks_panoptic",
    "read_id_map",
    "read_rgb",
    "rgb_to_ids",
]
