"""LabelMe JSON: a folder of one ``.json`` per image (or one file).

Each file holds ``shapes`` (``label``, ``points``, ``shape_type``), ``imageWidth`` and
``imageHeight``. A ``rectangle`` is its two corner points (in either order), a ``polygon``
the box of its extent; other shape types (point, line, circle, ...) are not boxes and are
skipped with a warning. Predictions carry a ``score`` per shape (X-AnyLabeling writes one).
Coordinates are continuous pixels. The image key is the JSON file's stem.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..data import Side
from ..errors import InputError, kind_of
from ..text import term
from .files import is_readable_member, note_folder
from .jsonio import load_json
from .records import Records

if TYPE_CHECKING:  # pragma: no cover
    from ..options import LoadOptions


def labelme_files(path: str) -> tuple[str, list[str]]:
    if os.path.isfile(path):
        return os.path.dirname(path) or ".", [os.path.basename(path)]
    note_folder(path)
    # a FIFO or a device named *.json is refused by name, never opened; a folder is skipped
    names = sorted(
        n
        for n in os.listdir(path)
        if n.lower().endswith(".json") and is_readable_member(os.path.join(path, n))
    )
    if not names:
        raise InputError(path, None, "no .json files in this folder (expected LabelMe JSON)")
    return path, names


def is_labelme(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("shapes"), list)
        and ("imagePath" in data or "imageHeight" in data)
    )


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _size(data: dict[str, Any], key: str, file: str) -> float:
    v = data.get(key)
    if v is None:
        return math.nan
    if not _is_num(v):
        raise InputError(file, key, f"expected a number of pixels, got {kind_of(v)}")
    return float(v)


def load_labelme(
    path: str, *, role: str, progress: Callable[[str, int, int], None] | None = None
) -> Side:
    folder, names = labelme_files(path)
    rec = Records(path, "labelme", role)
    skipped: dict[str, int] = {}
    for fi, name in enumerate(names):
        file = os.path.join(folder, name)
        shown = os.path.relpath(file, path) if os.path.isdir(path) else name
        data = load_json(file, member=os.path.isdir(path))
        if not is_labelme(data):
            raise InputError(file, None, "not a LabelMe file (expected 'shapes' and 'imagePath')")
        k = rec.add_image(
            os.path.splitext(name)[0],
            _size(data, "imageWidth", file),
            _size(data, "imageHeight", file),
            name,
        )
        for i, sh in enumerate(data["shapes"]):
            where = f"{shown}:shapes[{i}]" if os.path.isdir(path) else f"shapes[{i}]"
            if not isinstance(sh, dict):
                raise InputError(path, where, f"expected an object, got {kind_of(sh)}")
            kind = sh.get("shape_type") or "polygon"
            if kind not in ("rectangle", "polygon"):
                skipped[str(kind)] = skipped.get(str(kind), 0) + 1
                continue
            label = sh.get("label")
            if not isinstance(label, str) or not label:
                raise InputError(path, f"{where}.label", "expected a class name")
            pts = sh.get("points")
            # numbers only: [true, 10] and ["12", "34"] are not points
            if (
                not isinstance(pts, list)
                or len(pts) < 2
                or not all(
                    isinstance(p, list) and len(p) == 2 and _is_num(p[0]) and _is_num(p[1])
                    for p in pts
                )
            ):
                raise InputError(
                    path, f"{where}.points", "expected [[x, y], ...] of finite numbers"
                )
            xs, ys = [float(p[0]) for p in pts], [float(p[1]) for p in pts]
            s = sh.get("score")
            if s is not None and not _is_num(s):  # never read as "no score"
                raise InputError(
                    path, f"{where}.score", f"expected a finite number, got {kind_of(s)}"
                )
            score = math.nan if s is None else float(s)
            rec.add_box(k, label, [min(xs), min(ys), max(xs), max(ys)], score, where)
        if progress is not None:
            progress(role, fi + 1, len(names))
    for kind, n in sorted(skipped.items()):
        rec.warnings.append(
            f"{term(path)}: {n} LabelMe '{term(kind)}' shape(s) are not boxes and were skipped"
        )
    return rec.side()


def read_side(path: str, *, role: str, fmt: str, opts: LoadOptions, detected: bool) -> Side:
    """The registry's reader: a LabelMe JSON file or a folder of them."""
    return load_labelme(path, role=role, progress=opts.progress)
