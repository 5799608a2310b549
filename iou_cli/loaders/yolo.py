"""YOLO txt: one ``.txt`` per image, one box per line, coordinates normalised to [0, 1].

Line layouts:

* ground truth: ``class cx cy w h``
* predictions, ``yolo`` (Ultralytics ``save_conf``): ``class cx cy w h conf``
* predictions, ``yolo-darknet``: ``class conf cx cy w h``

Folder layouts: flat (txt files in the folder), ``labels/`` (searched recursively), and the
darknet ``obj.data`` + ``obj_train_data/`` layout. Class names come from ``obj.names``,
``classes.txt``, a ``*.names`` file or ``data.yaml`` found with the labels, or an explicit
names file. An empty txt file is an image without objects; blank lines and CRLF are fine.

Boxes stay normalised (``Boxes.normalized``) unless every image's size is known; then they
are scaled to pixels here. ``join.load_dataset`` scales them later with sizes taken from
the other side when that side is in pixels.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data import Boxes, Categories, Images, Side
from ..errors import InputError, UsageError
from .files import is_readable_member, read_text
from .layout import Listing, find_names, read_names, split_lines
from .yolo_order import column_order
from .yolo_pixels import to_pixels
from .yolo_pose import PoseRows, pose_columns

if TYPE_CHECKING:  # pragma: no cover
    from ..options import LoadOptions

# txt files that are never label files
_META_TXT = {"classes.txt", "readme.txt", "train.txt", "val.txt", "valid.txt", "test.txt"}


def _read_text(file: str, member: bool = False) -> str:  # UTF-8, LF line ends
    return read_text(file, member=member)


def label_files(path: str) -> tuple[str, list[str]]:
    """``(label folder, sorted relative txt paths)`` of a YOLO layout.

    ``obj.data`` + ``obj_train_data/`` (darknet), ``labels/`` (recursive), else the txt files
    of the folder itself (and of its subfolders when it has none).
    """
    if not os.path.isdir(path):
        return os.path.dirname(path) or ".", [os.path.basename(path)]
    base = path
    for sub in ("obj_train_data", "obj_valid_data", "obj_test_data", "labels"):
        cand = os.path.join(path, sub)
        if os.path.isdir(cand) and not _flat(path):
            base = cand
            break
    files = _flat(base)
    if not files:
        files = _walk(base)
    if not files:
        raise InputError(path, None, "no .txt label files in this folder (expected YOLO txt)")
    return base, files


def _flat(folder: str) -> list[str]:
    return sorted(
        n
        for n in os.listdir(folder)
        if n.lower().endswith(".txt")
        and n.lower() not in _META_TXT
        and is_readable_member(os.path.join(folder, n))  # a FIFO is refused, not skipped
    )


def _walk(folder: str) -> list[str]:
    out: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for n in sorted(files):
            if (
                n.lower().endswith(".txt")
                and n.lower() not in _META_TXT
                and is_readable_member(os.path.join(root, n))
            ):
                out.append(os.path.relpath(os.path.join(root, n), folder))
    return out


# complexity: the per-line hot loop: boxes, polygons, column order and located errors in one pass
def load_yolo(  # noqa: C901
    path: str,
    *,
    role: str,
    fmt: str = "yolo",
    names_file: str | None = None,
    sizes: dict[str, tuple[float, float]] | None = None,
    image_size: tuple[float, float] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    listing: Listing | None = None,
    iou_type: str = "bbox",
    detect_order: bool = False,
) -> Side:
    """Read a YOLO txt folder (or one txt file). ``fmt`` is ``yolo`` or ``yolo-darknet``
    (the column order of predictions; ground truth is always ``class cx cy w h``).
    ``detect_order``: the predictions' column order was not forced, so it is detected from
    the file (:func:`column_order`); when forced, a warning says if it looks wrong.

    ``sizes`` (stem -> W, H, e.g. from ``--images``) or ``image_size`` (every image) give
    pixel sizes; with a size for every image the boxes are scaled to pixels.
    """
    base, files, names_path, names, single = label_inputs(path, names_file, listing)
    read_paths = [names_path] if names_path else []

    pred = role == "pred"
    ncol = 6 if pred else 5
    texts: dict[str, str] = {}
    order_notes: dict[str, list[str]] = {"warnings": [], "info": []}
    if pred:
        fmt, found, evidence = _prescan_order(base, files, fmt, detect_order, texts, path)
        if evidence is not None:
            order_notes["info"].append(f"{path}: {evidence}")
        elif detect_order and fmt == "yolo-darknet":
            order_notes["info"].append(
                f"{path}: YOLO predictions read in darknet order (class conf cx cy w h)"
            )
        if found is not None:
            order_notes["warnings"].append(found)
    layout = (
        "class cx cy w h"
        if not pred
        else ("class conf cx cy w h" if fmt == "yolo-darknet" else "class cx cy w h conf")
    )
    keys: list[str] = []
    rows: list[list[float]] = []
    cls: list[int] = []
    img: list[int] = []
    loc_file: list[int] = []
    loc_line: list[int] = []
    seen_stems: dict[str, str] = {}
    found_names: dict[str, int] = {}  # class names in column 1 without a names list
    polys: list[list[float]] = []  # --iou-type segm: normalised polygon of each row
    kpts: list[list[float]] = []  # --iou-type keypoints: [x, y, v] * K of each row
    # pose rows (a data.yaml with kpt_shape): their keypoints are read, or skipped for boxes
    pose_rows = PoseRows(names_path, pred=pred, boxes_only=iou_type != "keypoints")
    pose = pose_rows if iou_type == "keypoints" or pose_rows.shape is not None else None
    centre_outside = 0
    total = len(files)
    for fi, rel in enumerate(files):
        file = path if single else os.path.join(base, rel)
        read_paths.append(file)
        stem = os.path.splitext(os.path.basename(rel))[0]
        if stem in seen_stems:
            raise InputError(
                file, None, f"two label files for image {stem!r} (also {seen_stems[stem]})"
            )
        seen_stems[stem] = rel
        k = len(keys)
        keys.append(stem)
        text = texts.pop(file, None)
        if text is None:
            text = _read_text(file, member=not single)
        for ln, line in enumerate(split_lines(text), 1):
            parts = line.split()
            if not parts:
                continue
            parts = _named_class(parts, names, found_names, file, ln)
            poly: list[float] | None = None
            if pose is not None:
                parts, kp = pose.split(parts, file, ln)
                kpts.append(kp)
            if len(parts) != ncol:
                seg = _polygon_row(parts, pred, fmt)
                if seg is not None:
                    parts, poly = seg
            if len(parts) != ncol:
                hint = ""
                if pred and len(parts) == 5:
                    hint = " (no confidence: this looks like ground truth; predictions come first)"
                elif not pred and len(parts) == 6:
                    hint = (
                        " (a confidence column: this looks like predictions; "
                        "predictions come first, ground truth second)"
                    )
                raise InputError(
                    file, ln, f"expected {ncol} columns ({layout}), got {len(parts)}{hint}"
                )
            try:
                vals = [_float(p) for p in parts]
            except ValueError:
                bad = next(p for p in parts if not _is_float(p))
                raise InputError(file, ln, f"expected numbers, got {bad[:20]!r}") from None
            c = vals[0]
            # a class index is written as digits ("3", or "3.0" by some exporters); "1e30"
            # is a number but no class index
            whole, _, frac = parts[0].partition(".")
            if not (
                whole.isascii() and whole.isdigit() and frac.strip("0") == "" and math.isfinite(c)
            ):
                raise InputError(
                    file, ln, f"class: expected a non-negative integer, got {parts[0]!r}"
                )
            if names is not None and int(c) >= len(names):
                raise InputError(
                    file,
                    ln,
                    f"class {int(c)} is out of range: {os.path.basename(str(names_path))} "
                    f"has {len(names)} names",
                )
            if pred and fmt == "yolo-darknet":
                conf, box = vals[1], vals[2:6]
            elif pred:
                conf, box = vals[5], vals[1:5]
            else:
                conf, box = math.nan, vals[1:5]
            outside = pred and _centre_outside(box, file, ln)
            centre_outside += outside  # a prediction's centre may lie outside (a warning)
            for v, what in zip(box if not outside else [], ("cx", "cy", "w", "h"), strict=False):
                if not (0.0 <= v <= 1.0):
                    raise InputError(
                        file,
                        ln,
                        f"{what} = {v:g} is outside [0, 1] (YOLO coordinates are normalised)",
                    )
            if pred and not math.isfinite(conf):
                raise InputError(file, ln, f"confidence: expected a finite number, got {conf}")
            rows.append([*box, conf])
            if iou_type == "segm":
                polys.append(poly if poly is not None else _rectangle(box))
            cls.append(int(c))
            img.append(k)
            loc_file.append(fi)
            loc_line.append(ln)
        if progress is not None:
            progress(role, fi + 1, total)

    if listing is not None and listing.stems is not None:
        keys.extend(_empty_images(keys, listing.stems))
    if names is None and found_names:
        names = list(found_names)
    n = len(rows)
    arr = np.asarray(rows, dtype=np.float64).reshape(n, 5)
    cx, cy, w, h = arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]
    xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    if names is not None:
        cat_ids: list[Hashable | None] = list(range(len(names)))
        cat_names: list[str | None] = list(names)
        cat_col = np.asarray(cls, dtype=np.int64)
    else:
        uniq = sorted(set(cls))
        index = {c: i for i, c in enumerate(uniq)}
        cat_ids = list(uniq)
        cat_names = [None] * len(uniq)
        cat_col = np.asarray([index[c] for c in cls], dtype=np.int64)
    width = np.full(len(keys), np.nan)
    height = np.full(len(keys), np.nan)
    for i, stem in enumerate(keys):
        if sizes and stem in sizes:
            width[i], height[i] = sizes[stem]
        elif image_size is not None:
            width[i], height[i] = image_size
    boxes = Boxes.build(
        xyxy,
        image=np.asarray(img, dtype=np.int64),
        category=cat_col,
        box_area=w * h,
        area=np.full(n, np.nan),
        score=arr[:, 4],
        ids=np.arange(1, n + 1, dtype=np.int64),
        origin=np.arange(n, dtype=np.int64),
        normalized=True,
        masks=[[p] for p in polys] if iou_type == "segm" else None,
        **(pose_columns(kpts, pose, w, h, pred) if iou_type == "keypoints" and pose else {}),
    )
    rel_paths = [
        os.path.relpath(os.path.join(base, r), path) if os.path.isdir(path) else r for r in files
    ]

    def locator(origin: int) -> str:
        if single:  # the side's path is the file: the line number is the whole location
            return str(loc_line[origin])
        return f"{rel_paths[loc_file[origin]]}:{loc_line[origin]}"

    side = Side(
        path,
        "yolo",
        Images(list(keys), list(keys), width, height),
        Categories(cat_ids, cat_names),
        boxes,
        has_scores=pred,
        notes={
            "files": total,
            "names": names_path,
            # every image is known (a layout's image list, --images), not only labelled ones
            "image_list": listing is not None and listing.stems is not None,
            "warnings": [
                *order_notes["warnings"],
                *_outside_note(centre_outside).get("warnings", []),
            ],
            "info": order_notes["info"],
        },
        locator=locator,
        read_paths=read_paths,
        skeleton=pose.skeleton() if iou_type == "keypoints" and pose else None,
    )
    if pose is not None:
        side.notes["info"].extend(pose.info)
    # an empty side stays normalised unless every size is known: it then meets a YOLO
    # side (normalised) as well as a pixel side (scaled, there is nothing to scale)
    sized = np.isfinite(width) & np.isfinite(height)
    if bool(sized[boxes.image].all()) and (n > 0 or bool(sized.all())):
        side = to_pixels(side, width, height)
    return side


def _prescan_order(
    base: str, files: list[str], fmt: str, detect: bool, texts: dict[str, str], path: str
) -> tuple[str, str | None, str | None]:
    """The predictions' column order from every plain six-column row of the folder
    (:func:`column_order`); the texts read are kept in ``texts`` for the loader."""
    raw: list[list[float]] = []
    group: list[int] = []
    for g, rel in enumerate(files):
        file = os.path.join(base, rel)
        text = texts[file] = _read_text(file)
        for line in text.splitlines():
            parts = line.split()
            if len(parts) != 6:
                continue  # blank, ground-truth-like or polygon rows: the loader judges them
            try:
                raw.append([_float(x) for x in parts[1:]])
            except ValueError:
                continue
            group.append(g)
    values = np.asarray(raw, dtype=np.float64).reshape(len(raw), 5)
    ok = np.isfinite(values).all(axis=1)
    try:
        return column_order(
            values[ok], fmt, detect=detect, groups=np.asarray(group, dtype=np.int64)[ok]
        )
    except UsageError as exc:
        raise InputError(path, None, str(exc)) from None


def _named_class(
    parts: list[str], names: list[str] | None, found: dict[str, int], file: str, ln: int
) -> list[str]:
    """A class written as its name (globox's default): the index through the names list,
    or (without one) in order of first appearance. Digits stay as they are."""
    tok = parts[0]
    if _is_float(tok):
        if found and names is None:
            raise InputError(
                file, ln, f"class {tok!r} is a number, but earlier rows name their classes"
            )
        return parts
    if names is not None:
        if tok not in names:
            raise InputError(file, ln, f"class {tok!r} is not in the names list")
        return [str(names.index(tok)), *parts[1:]]
    return [str(found.setdefault(tok, len(found))), *parts[1:]]


def _polygon_row(parts: list[str], pred: bool, fmt: str) -> tuple[list[str], list[float]] | None:
    """A YOLO-seg row ``class x1 y1 ... xn yn [conf]`` (n >= 3): the row of the box of its
    extent, and the polygon's points (for ``--iou-type segm``)."""
    if fmt == "yolo-darknet":
        return None
    coords = parts[1:-1] if pred else parts[1:]
    if len(coords) < 6 or len(coords) % 2:
        return None
    try:
        v = [_float(x) for x in coords]
    except ValueError:
        return None
    if not all(0.0 <= x <= 1.0 for x in v):  # polygon points are normalised image points
        return None
    xs, ys = v[0::2], v[1::2]
    x1, x2, y1, y2 = min(xs), max(xs), min(ys), max(ys)
    box = [(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1]
    return [parts[0], *(repr(b) for b in box), *(parts[-1:] if pred else [])], v


def _rectangle(box: list[float]) -> list[float]:
    """A plain box row as a polygon (under ``--iou-type segm``): its four corners."""
    cx, cy, w, h = box
    x1, y1, x2, y2 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
    return [x1, y1, x2, y1, x2, y2, x1, y2]


def _centre_outside(box: list[float], file: str, ln: int) -> bool:
    """A predicted box whose centre lies outside the image: legal (a warning, as for COCO
    boxes outside their image); its width and height must still be sizes."""
    cx, cy, w, h = box
    if 0.0 <= cx <= 1.0 and 0.0 <= cy <= 1.0:
        return False
    for v, what in ((cx, "cx"), (cy, "cy"), (w, "w"), (h, "h")):
        if not math.isfinite(v):
            raise InputError(file, ln, f"{what}: expected a finite number, got {v}")
    for v, what in ((w, "w"), (h, "h")):
        if v < 0:
            raise InputError(file, ln, f"{what} = {v:g} is negative")
    return True


def _outside_note(n: int) -> dict[str, list[str]]:
    if not n:
        return {}
    return {
        "warnings": [
            f"{n} predicted YOLO box{'es' if n > 1 else ''} with the centre outside the image "
            "(kept: check the box format)"
        ]
    }


def label_inputs(
    path: str, names_file: str | None, listing: Listing | None
) -> tuple[str, list[str], str | None, list[str] | None, bool]:
    """The label files of a YOLO path (a folder, one file, or a layout's ``listing``) and its
    class names: ``(base folder, files under it, names file, names, single)``; ``single``: one
    label file named on the command line (a data.yaml or obj.data path lists others). The
    names file is ``names_file`` (``--names``), else the layout's, else one found nearby."""
    if listing is not None:
        base, files = listing.base, listing.files
        names_path = names_file or listing.names or find_names(_listing_dir(listing, path), path)
    else:
        base, files = label_files(path)
        names_path = names_file or find_names(base, path)
    names = read_names(names_path) if names_path else None
    single = listing is None and not os.path.isdir(path)
    return base, files, names_path, names, single


def _listing_dir(listing: Listing, path: str) -> str:
    """Where to look for a names file next to the labels of a layout."""
    if listing.base != os.sep:
        return listing.base
    return path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))


def _empty_images(keys: list[str], stems: list[str]) -> list[str]:
    """Images of the layout without a label file: images without objects."""
    have = set(keys)
    return [s for s in stems if s not in have]


def _float(s: str) -> float:  # Python reads "0.2_0" as 0.2; no C or NumPy reader does
    return float(s.replace("_", "!"))  # so an underscore is a ValueError here


def _is_float(s: str) -> bool:
    try:
        _float(s)
    except ValueError:
        return False
    return True


def read_side(path: str, *, role: str, fmt: str, opts: LoadOptions, detected: bool) -> Side:
    """The registry's reader: a YOLO folder, file, data.yaml or obj.data. ``--images``: image
    sizes from their headers, and (ground truth) images without a label file are images
    without objects; YOLO-seg masks need pixel sizes (the layout's own images)."""
    listing, sizes = yolo_inputs(path, role=role, opts=opts)
    side = load_yolo(
        path,
        role=role,
        fmt=fmt,
        names_file=opts.names_for(role),
        sizes=sizes,
        image_size=opts.image_size,
        progress=opts.progress,
        detect_order=detected and role == "pred",
        listing=listing,
        iou_type=opts.iou_type,
    )
    if opts.iou_type in ("segm", "keypoints") and side.boxes.normalized:
        side = _seg_sizes(side, listing)
    return with_listing(side, listing)


def with_listing(side: Side, listing: Listing | None) -> Side:
    """The layout's info lines and image paths on the side."""
    if listing is not None:
        side.notes.setdefault("info", []).extend(listing.info)
        if listing.image_paths:
            side.notes["image_paths"] = listing.image_paths
    return side


def yolo_inputs(
    path: str, *, role: str, opts: LoadOptions
) -> tuple[Listing | None, dict[str, tuple[float, float]] | None]:
    """A YOLO layout's label listing and, with ``--images``, the images' sizes (ground
    truth: images without a label file become images without objects)."""
    from .layout import yolo_listing

    listing = yolo_listing(path, opts.split)
    sizes = None
    if opts.images:
        from .layout import image_stems
        from .sizes import scan_sizes

        if listing is None:
            base, files = label_files(path)
            listing = Listing(base, files)
        if role == "gt" and listing.stems is None:
            # --images shows which images exist: those without a label file have no objects
            have = {os.path.splitext(os.path.basename(f))[0] for f in listing.files}
            listed = image_stems(opts.images)
            listing.stems = sorted(have) + [s for s in listed if s not in have]
            n_empty = len(listing.stems) - len(have)
            if n_empty:
                listing.info.append(
                    f"--images: {n_empty} images without a label file: images without objects"
                )
        wanted = (
            set(listing.stems)
            if listing.stems is not None
            else {os.path.splitext(os.path.basename(f))[0] for f in listing.files}
        )
        sizes = {k: (float(w), float(h)) for k, (w, h) in scan_sizes(opts.images, wanted).items()}
    return listing, sizes


def _seg_sizes(side: Side, listing: Any) -> Side:
    """YOLO-seg masks are rasterised at the image's pixel size: read the layout's image
    headers where no size is known yet (``--images``/``--image-size`` come first)."""
    from .sizes import image_size

    own: dict[str, str] = listing.image_paths if listing is not None else {}
    im = side.images
    width, height = im.width.copy(), im.height.copy()
    for i, stem in enumerate(im.stems):
        if not np.isfinite(width[i]) and stem in own:
            width[i], height[i] = image_size(own[str(stem)])
    if np.isfinite(width).all() and np.isfinite(height).all():
        return to_pixels(side, width, height)
    return replace(side, images=replace(im, width=width, height=height))
