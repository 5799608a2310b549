"""CVAT for images 1.1 XML (``annotations.xml`` of a CVAT task or project export).

``<image name= width= height= [subset=]>`` lists every image, also those without objects;
``<box label= xtl= ytl= xbr= ybr= [rotation=]>`` are continuous 0-based pixel corners (a
rotated box counts as the axis-aligned extent of its corners); ``<polygon
points="x,y;x,y;...">`` counts as the box of its extent. The class list is ``<meta>``'s
``<labels>``. A project export marks each image's ``subset``: the split is ``--split``
(default val). Predictions carry ``<attribute name="score">`` (or ``confidence``) in each
shape. Parsed with defusedxml, as VOC.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

from ..data import Side
from ..errors import InputError
from ..text import term
from .layout import choose_split
from .records import Records
from .voc import _parse

if TYPE_CHECKING:  # pragma: no cover
    from ..options import LoadOptions


def _num(el: Any, attr: str, path: str, where: str) -> float:
    raw = el.get(attr)
    if raw is None:
        raise InputError(path, where, f"<{el.tag}> without {attr}=")
    try:
        v = float(raw)
    except ValueError:
        raise InputError(path, where, f"{attr}: expected a number, got {raw[:20]!r}") from None
    if not math.isfinite(v):
        raise InputError(path, where, f"{attr}: expected a finite number, got {raw!r}")
    return v


def _score(shape: Any, path: str, where: str) -> float:
    for a in shape.findall("attribute"):
        if (a.get("name") or "").lower() in ("score", "confidence"):
            t = (a.text or "").strip()
            try:
                v = float(t)
            except ValueError:
                raise InputError(path, where, f"score: expected a number, got {t[:20]!r}") from None
            if not math.isfinite(v):  # "nan" would silently read as "no score"
                raise InputError(path, where, f"score: expected a finite number, got {t[:20]!r}")
            return v
    return math.nan


def _rotated_extent(c: list[float], degrees: float) -> list[float]:
    """The axis-aligned extent of a box rotated by ``degrees`` (CVAT: clockwise, about its
    centre), as the polygon path takes a polygon's extent."""
    cx, cy = (c[0] + c[2]) / 2, (c[1] + c[3]) / 2
    hw, hh = (c[2] - c[0]) / 2, (c[3] - c[1]) / 2
    t = math.radians(degrees)
    cos, sin = abs(math.cos(t)), abs(math.sin(t))
    ex, ey = hw * cos + hh * sin, hw * sin + hh * cos
    return [cx - ex, cy - ey, cx + ex, cy + ey]


SHAPES = ("box", "polygon", "polyline", "points", "ellipse", "mask", "tag", "cuboid", "skeleton")


def load_cvat(path: str, *, role: str, split: str | None = None) -> Side:
    root, lines = _parse(path)
    if root.tag != "annotations":
        raise InputError(path, lines.get(id(root)), f"expected <annotations>, got <{root.tag}>")
    if root.find("track") is not None:
        raise InputError(
            path,
            lines.get(id(root.find("track"))),
            "CVAT for video (<track>) is not read: export 'CVAT for images 1.1'",
        )
    rec = Records(path, "cvat", role)
    labels = [
        (lab.findtext("name") or "").strip()
        for lab in root.iter("label")
        if (lab.findtext("name") or "").strip()
    ]
    rec.labels = list(dict.fromkeys(labels)) or None
    images = root.findall("image")
    subsets = sorted({im.get("subset") for im in images if im.get("subset")})
    chosen = choose_split(path, subsets, split, "subsets") if subsets else None
    if split is not None and not subsets:
        raise InputError(path, None, f"--split {term(split)}: this file has no subsets")
    no_subset = 0
    for im in images:
        where = str(lines.get(id(im), 0))
        if chosen is not None and im.get("subset") != chosen:
            no_subset += not im.get("subset")
            continue
        name = im.get("name")
        if not name:
            raise InputError(path, where, "<image> without name=")
        stem = os.path.splitext(os.path.basename(name.replace("\\", "/")))[0]
        w = _num(im, "width", path, where) if im.get("width") else math.nan
        h = _num(im, "height", path, where) if im.get("height") else math.nan
        k = rec.add_image(stem, w, h, where)
        for shape in im:
            where = str(lines.get(id(shape), 0))
            label = shape.get("label")
            if shape.tag not in SHAPES:
                rec.warnings.append(
                    f"{term(path)}: <{term(shape.tag)}> elements are not shapes iou-eval knows "
                    "and are not read"
                )
                continue
            if label is None:
                raise InputError(path, where, f"<{shape.tag}> without label=")
            if shape.tag == "box":
                c = [_num(shape, a, path, where) for a in ("xtl", "ytl", "xbr", "ybr")]
                if shape.get("rotation") is not None:
                    rot = _num(shape, "rotation", path, where)
                    if rot % 360:
                        c = _rotated_extent(c, rot)
            elif shape.tag == "polygon":
                try:
                    pts = [
                        tuple(float(v) for v in p.split(","))
                        for p in (shape.get("points") or "").split(";")
                    ]
                    if len(pts) < 3 or any(len(p) != 2 for p in pts):
                        raise ValueError
                    if not all(math.isfinite(v) for p in pts for v in p):
                        raise ValueError
                except ValueError:
                    raise InputError(path, where, "points: expected 'x,y;x,y;...'") from None
                xs, ys = [p[0] for p in pts], [p[1] for p in pts]
                c = [min(xs), min(ys), max(xs), max(ys)]
            else:
                rec.warnings.append(
                    f"{term(path)}: <{shape.tag}> shapes are not boxes and are not read"
                )
                continue
            rec.add_box(k, label, c, _score(shape, path, where), where)
    if chosen is not None:
        rec.info.append(f"CVAT XML: subset {term(chosen)}, {len(rec.keys)} images")
    if no_subset:
        rec.warnings.append(
            f"{term(path)}: {no_subset} image(s) without a subset are not in subset "
            f"{term(chosen or '')} and are not read"
        )
    rec.warnings = sorted(set(rec.warnings))
    return rec.side()


def read_side(path: str, *, role: str, fmt: str, opts: LoadOptions, detected: bool) -> Side:
    """The registry's reader: CVAT's ``annotations.xml`` (or the folder holding it)."""
    if os.path.isdir(path):
        cand = os.path.join(path, "annotations.xml")
        if not os.path.isfile(cand):
            raise InputError(path, None, "CVAT input is annotations.xml, not a folder")
        path = cand
    return load_cvat(path, role=role, split=opts.split)
