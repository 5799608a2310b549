"""Open Images CSV (``ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,...``).

Boxes are normalised to [0, 1] (note the column order XMin, XMax, YMin, YMax); pixel sizes
come from ``--images``, ``--image-size`` or the other side. ``ImageID`` is the image key
(an extension, as some converters write, is dropped). ``Confidence`` (or ``Score``) is the
prediction score. Values written with a decimal comma by a spreadsheet ("0,394" in a quoted
field) are read as decimals. ``IsGroupOf`` boxes are read as ordinary boxes (Open Images'
own group-of rule is not COCO's crowd rule). Class names are ``LabelName`` as written
(MIDs such as ``/m/01g317`` stay MIDs).
"""

from __future__ import annotations

import csv
import io
import math
import os
from typing import TYPE_CHECKING

from ..data import Side
from ..errors import InputError
from .files import read_input
from .records import Records

if TYPE_CHECKING:  # pragma: no cover
    from ..options import LoadOptions

_NEEDED = ("ImageID", "LabelName", "XMin", "XMax", "YMin", "YMax")


def is_openimages_header(header: list[str]) -> bool:
    return all(h in header for h in _NEEDED)


def _num(text: str, path: str, where: str, what: str) -> float:
    t = text.strip()
    if "," in t and "." not in t:
        t = t.replace(",", ".")  # a spreadsheet's decimal comma
    try:
        v = float(t)
    except ValueError:
        raise InputError(path, where, f"{what}: expected a number, got {text[:20]!r}") from None
    if not math.isfinite(v):
        raise InputError(path, where, f"{what}: expected a finite number, got {text!r}")
    return v


def load_openimages(
    path: str,
    *,
    role: str,
    sizes: dict[str, tuple[float, float]] | None = None,
    image_size: tuple[float, float] | None = None,
    extra_stems: list[str] | None = None,
) -> Side:
    rec = Records(path, "openimages", role, normalized=True)
    try:
        text = read_input(path, expected="a CSV file").decode("utf-8-sig")  # files.py checks
        with io.StringIO(text, newline="") as f:
            reader = csv.reader(f, strict=True)
            header = next(reader, None)
            if header is None or not is_openimages_header(header):
                raise InputError(
                    path,
                    1,
                    "not an Open Images CSV: the header needs " + ", ".join(_NEEDED),
                )
            twice = sorted({h for h in header if header.count(h) > 1})
            if twice:  # which of the two would be read? never a guess
                raise InputError(path, 1, f"column {twice[0]!r} appears twice in the header")
            col = {h: i for i, h in enumerate(header)}
            ids: dict[str, str] = {}
            conf_col = col.get("Confidence", col.get("Score"))
            for ln, row in enumerate(reader, 2):
                if not row or not any(c.strip() for c in row):
                    continue
                where = str(ln)
                if len(row) < len(header):
                    row = row + [""] * (len(header) - len(row))
                img_id = row[col["ImageID"]].strip()
                if not img_id:
                    raise InputError(path, where, "ImageID is empty")
                stem = os.path.splitext(img_id)[0] if "." in img_id else img_id
                if ids.setdefault(stem, img_id) != img_id:
                    raise InputError(
                        path,
                        where,
                        f"ImageID {img_id!r} and {ids[stem]!r} are one image once the "
                        "extension is dropped: rename one",
                    )
                k = rec.image_of(stem)
                if k is None:
                    w, h = (sizes or {}).get(stem, image_size or (math.nan, math.nan))
                    k = rec.add_image(stem, w, h, where)
                x1, x2, y1, y2 = (
                    _num(row[col[c]], path, where, c) for c in ("XMin", "XMax", "YMin", "YMax")
                )
                for v, c in ((x1, "XMin"), (x2, "XMax"), (y1, "YMin"), (y2, "YMax")):
                    if not 0.0 <= v <= 1.0:
                        raise InputError(path, where, f"{c} = {v:g} is outside [0, 1] (normalised)")
                score = math.nan
                if conf_col is not None and row[conf_col].strip():
                    score = _num(row[conf_col], path, where, header[conf_col])
                label = row[col["LabelName"]].strip()
                if not label:
                    raise InputError(path, where, "LabelName is empty (expected a class)")
                rec.add_box(k, label, [x1, y1, x2, y2], score, where)
    except UnicodeDecodeError as e:
        raise InputError(path, None, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    except csv.Error as e:
        raise InputError(path, None, f"not valid CSV: {e}") from None
    n_empty = 0
    for stem in extra_stems or []:
        if rec.image_of(stem) is None:
            w, h = (sizes or {}).get(stem, image_size or (math.nan, math.nan))
            rec.add_image(stem, w, h, "")
            n_empty += 1
    if n_empty:
        rec.info.append(f"--images: {n_empty} images without a row: images without objects")
    side = rec.side()
    import numpy as np

    from .yolo import to_pixels

    im = side.images
    sized = np.isfinite(im.width) & np.isfinite(im.height)
    if len(side.boxes) and bool(sized[side.boxes.image].all()):
        side = to_pixels(side, im.width, im.height)
    return side


def read_side(path: str, *, role: str, fmt: str, opts: LoadOptions, detected: bool) -> Side:
    """The registry's reader: an Open Images CSV; ``--images``: image sizes, and (ground
    truth) images without a row are images without objects."""
    sizes = None
    if opts.images:
        from .sizes import scan_sizes

        sizes = {k: (float(w), float(h)) for k, (w, h) in scan_sizes(opts.images).items()}
    return load_openimages(
        path,
        role=role,
        sizes=sizes,
        image_size=opts.image_size,
        # --images shows which images exist: those without a row have no objects
        extra_stems=sorted(sizes) if sizes is not None and role == "gt" else None,
    )
