"""Loaders: files -> :class:`iou_cli.data.Side`, behind one registry.

``REGISTRY`` maps a format name to its module; each format module offers
``read_side(path, *, role, fmt, opts, detected) -> Side`` (its own ``--images`` rule
included). Which format a path holds is ``detect.detect_format``; :func:`load_side` reads
one side (detecting the format unless forced); ``join.load_dataset`` reads both sides and
joins them into a Dataset. A new format is one module plus one registry line (and its
detection rule in ``detect.py``).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..options import LoadOptions

if TYPE_CHECKING:  # pragma: no cover
    from ..data import Side


@dataclass(frozen=True)
class Format:
    """One input format: the module under ``loaders/`` holding its ``read_side``, and what
    it can hold (instance masks for ``--iou-type segm``; rotated boxes for ``--iou-type obb``;
    a stream: stdin or a pipe)."""

    name: str
    module: str
    segm: bool = False
    stream: bool = False
    obb: bool = False


REGISTRY: dict[str, Format] = {
    f.name: f
    for f in (
        Format("coco", "coco", segm=True, stream=True, obb=True),
        Format("voc", "voc"),
        Format("yolo", "yolo", segm=True, obb=True),
        Format("yolo-obb", "yolo_obb", obb=True),
        Format("dota", "dota", obb=True),
        Format("yolo-darknet", "yolo"),
        Format("cvat", "cvat"),
        Format("labelme", "labelme"),
        Format("openimages", "openimages"),
    )
}
FORMATS = tuple(REGISTRY)

__all__ = ["FORMATS", "REGISTRY", "Format", "LoadOptions", "load_side"]


def load_side(path: Any, *, role: str, fmt: str | None, opts: LoadOptions) -> Side:
    """Read one side; ``fmt`` None means detect. ``role`` is ``pred`` or ``gt``. ``path``
    may also be an in-memory COCO object (a results list or a dataset dict)."""
    from .classnames import nfc_names

    if isinstance(path, (list, dict)):
        if fmt not in (None, "coco"):
            raise InputError(None, None, f"an in-memory object is COCO, not {fmt}")
        from .coco import load_coco

        name = "<predictions>" if role == "pred" else "<ground truth>"
        return nfc_names(load_coco(name, role=role, iou_type=opts.iou_type, data=path))
    from .detect import split_root

    path, note = split_root(path, opts.split)
    side = _load_side(path, role=role, fmt=fmt, opts=opts)
    if note:
        side.notes.setdefault("info", []).insert(0, note)
    return nfc_names(side)  # one Unicode form for class names (classnames.py)


def _load_side(path: str, *, role: str, fmt: str | None, opts: LoadOptions) -> Side:
    if fmt is not None and fmt not in REGISTRY:
        raise InputError(
            path, None, f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}"
        )
    detected = fmt is None
    if fmt is None:
        from .detect import detect_format

        fmt = detect_format(path)
    elif path != "-" and not os.path.exists(path):  # a forced format skips detection
        raise InputError(path, None, "no such file or folder")
    spec = REGISTRY[fmt]
    if opts.iou_type == "obb" and fmt == "yolo":
        spec = REGISTRY["yolo-obb"]  # the same layouts, rows of four corners
    if not spec.stream:
        from .files import is_stream, shown

        if is_stream(path):
            raise InputError(
                shown(path),
                None,
                f"--{'pred' if role == 'pred' else 'gt'}-format {fmt}: only COCO JSON can be "
                "read from stdin or a pipe (VOC and YOLO are folders of files: pass the folder)",
            )
    if opts.iou_type == "segm" and not spec.segm:
        raise InputError(
            path, None, f"{fmt} files hold boxes only; --iou-type segm needs COCO JSON or YOLO-seg"
        )
    if opts.iou_type == "obb" and not spec.obb:
        raise InputError(
            path,
            None,
            f"{fmt} files hold axis-aligned boxes; --iou-type obb needs DOTA txt, YOLO-OBB txt "
            "or COCO JSON with 'obb' fields",
        )
    reader = importlib.import_module(f".{spec.module}", __name__).read_side
    side: Side = reader(path, role=role, fmt=fmt, opts=opts, detected=detected)
    return side
