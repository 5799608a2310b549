"""YOLO-OBB txt (Ultralytics): one ``.txt`` per image, one rotated box per line, its four
corners normalised to the image.

* ground truth: ``class x1 y1 x2 y2 x3 y3 x4 y4``
* predictions (``save_txt(save_conf=True)``): ``class x1 y1 x2 y2 x3 y3 x4 y4 conf``

Folder layouts and class names as for YOLO boxes (:mod:`.yolo`: ``labels/``, data.yaml,
classes.txt ...). Corners stay normalised unless every image's size is known (then they are
scaled to pixels); polygon IoU does not depend on it (an affine map keeps area ratios), but
probiou (``--protocol ultralytics``) does, and needs the pixels.
"""

from __future__ import annotations

import math
import os
from collections.abc import Hashable

import numpy as np

from ..data import Boxes, Categories, Images, Side
from ..errors import InputError
from ..geometry.obb import convex_quads, signed_area
from ..options import LoadOptions
from .files import read_text
from .layout import Listing
from .yolo import label_inputs, to_pixels, with_listing, yolo_inputs

_TOL = 0.02  # corners may reach this far past the image border (rounding, clipping)


def _row(parts: list[str], pred: bool, file: str, ln: int) -> tuple[int, list[float], float]:
    ncol = 10 if pred else 9
    layout = "class x1 y1 x2 y2 x3 y3 x4 y4" + (" conf" if pred else "")
    if len(parts) != ncol:
        hint = ""
        if len(parts) in (5, 6):
            hint = " (an axis-aligned YOLO row: rotated and axis-aligned rows cannot be mixed)"
        elif pred and len(parts) == 9:
            hint = " (no confidence: this looks like ground truth; predictions come first)"
        raise InputError(file, ln, f"expected {ncol} columns ({layout}), got {len(parts)}{hint}")
    whole, _, frac = parts[0].partition(".")
    if not (whole.isascii() and whole.isdigit() and frac.strip("0") == ""):
        raise InputError(file, ln, f"class: expected a non-negative integer, got {parts[0][:20]!r}")
    vals = []
    for k, p in enumerate(parts[1:], 1):
        try:
            v = float(p)
        except ValueError:
            raise InputError(
                file, ln, f"column {k + 1}: expected a number, got {p[:20]!r}"
            ) from None
        if not math.isfinite(v):
            raise InputError(file, ln, f"column {k + 1}: expected a finite number, got {p!r}")
        vals.append(v)
    corners = vals[:8]
    if any(not (-_TOL <= v <= 1 + _TOL) for v in corners):
        bad = next(v for v in corners if not (-_TOL <= v <= 1 + _TOL))
        raise InputError(
            file, ln, f"corner {bad:g} is outside [0, 1] (YOLO-OBB corners are normalised)"
        )
    return int(whole), corners, (vals[8] if pred else math.nan)


def load_yolo_obb(
    path: str,
    *,
    role: str,
    names_file: str | None = None,
    sizes: dict[str, tuple[float, float]] | None = None,
    image_size: tuple[float, float] | None = None,
    listing: Listing | None = None,
) -> Side:
    """Read a YOLO-OBB txt folder (or one txt file) as a side (see the module docstring)."""
    base, files, names_path, names, single = label_inputs(path, names_file, listing)
    read_paths = [names_path] if names_path else []
    pred = role == "pred"
    keys: list[str] = []
    corners: list[list[float]] = []
    cls: list[int] = []
    img: list[int] = []
    score: list[float] = []
    loc: list[tuple[str, int]] = []
    for rel in files:
        file = path if single else os.path.join(base, rel)
        read_paths.append(file)
        k = len(keys)
        keys.append(os.path.splitext(os.path.basename(rel))[0])
        text = read_text(file, member=not single)
        for ln, line in enumerate(text.split("\n"), 1):
            parts = line.split()
            if not parts:
                continue
            c, quad, s = _row(parts, pred, file, ln)
            if names is not None and c >= len(names):
                raise InputError(
                    file,
                    ln,
                    f"class {c} is out of range: {os.path.basename(str(names_path))} "
                    f"has {len(names)} names",
                )
            corners.append(quad)
            cls.append(c)
            img.append(k)
            score.append(s)
            loc.append((rel, ln))
    if listing is not None and listing.stems is not None:
        known = set(keys)
        keys.extend(s for s in listing.stems if s not in known)
    n = len(corners)
    c8 = np.asarray(corners, dtype=np.float64).reshape(n, 8)
    quads, bad = convex_quads(c8.reshape(-1, 4, 2))
    area = signed_area(quads)
    if names is not None:
        cat_ids: list[Hashable | None] = list(range(len(names)))
        cat_names: list[str | None] = list(names)
        cat_col = np.asarray(cls, dtype=np.int64)
    else:
        uniq = sorted(set(cls))
        index = {v: i for i, v in enumerate(uniq)}
        cat_ids, cat_names = list(uniq), [None] * len(uniq)
        cat_col = np.asarray([index[v] for v in cls], dtype=np.int64)
    xs, ys = c8[:, 0::2], c8[:, 1::2]
    xyxy = np.stack([xs.min(1), ys.min(1), xs.max(1), ys.max(1)], axis=1) if n else np.zeros((0, 4))
    boxes = Boxes.build(
        xyxy,
        image=np.asarray(img, dtype=np.int64),
        category=cat_col,
        box_area=area,
        area=area,
        score=np.asarray(score, dtype=np.float64),
        normalized=True,
        obb=c8,
    )
    width = np.full(len(keys), np.nan)
    height = np.full(len(keys), np.nan)
    for i, stem in enumerate(keys):
        if sizes and stem in sizes:
            width[i], height[i] = sizes[stem]
        elif image_size is not None:
            width[i], height[i] = image_size
    warnings = []
    if bad.any():
        warnings.append(
            f"{path}: {int(bad.sum())} quadrilateral(s) are not convex (a dent or crossed "
            "edges); IoU uses their convex hull"
        )
    side = Side(
        path,
        "yolo",  # a YOLO layout (joined by class index as YOLO boxes are)
        Images(list(keys), list(keys), width, height),
        Categories(cat_ids, cat_names),
        boxes,
        has_scores=pred,
        notes={"files": len(files), "names": names_path, "warnings": warnings, "info": []},
        locator=lambda r: str(loc[r][1]) if single else f"{loc[r][0]}:{loc[r][1]}",
        read_paths=read_paths,
    )
    sized = np.isfinite(width) & np.isfinite(height)
    if n and bool(sized[boxes.image].all()):
        side = to_pixels(side, width, height)
    return side


def read_side(path: str, *, role: str, fmt: str, opts: LoadOptions, detected: bool) -> Side:
    """The registry's reader (``--iou-type obb`` on a YOLO layout, or ``--pred-format`` /
    ``--gt-format yolo-obb``): YOLO layouts and ``--images`` as for boxes."""
    listing, sizes = yolo_inputs(path, role=role, opts=opts)
    side = load_yolo_obb(
        path,
        role=role,
        names_file=opts.names_for(role),
        sizes=sizes,
        image_size=opts.image_size,
        listing=listing,
    )
    return with_listing(side, listing)
