"""Format detection and the one entry point that turns two paths into a Dataset.

Detection (``--pred-format`` / ``--gt-format`` override it):

* a ``.json`` file: COCO (dataset or results list);
* a ``.xml`` file, or a folder holding ``.xml`` files (directly or in ``Annotations/``): VOC;
* a ``.txt`` file, or a folder holding ``obj.data``, ``labels/``, ``obj_train_data/`` or
  ``.txt`` files: YOLO (predictions: Ultralytics ``class cx cy w h conf`` order; the darknet
  ``class conf cx cy w h`` order needs ``--pred-format yolo-darknet``).

Joining: images match by file stem and categories by name across formats (COCO ``images`` /
``categories``, VOC file names / ``<name>``, YOLO file names / names file). Normalised YOLO
boxes meet pixel boxes only after scaling with image sizes, taken from the YOLO side's own
sizes (``--images``, ``--image-size``) or else from the other side (COCO ``width``/``height``,
VOC ``<size>``). YOLO against YOLO stays normalised (IoU is invariant to per-axis scaling).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..data import Dataset, Side, align, locator
from ..errors import InputError
from . import FORMATS, LoadOptions


def detect_format(path: str) -> str:
    """``coco``, ``voc`` or ``yolo`` for a file or folder (or ``-``, a pipe: COCO JSON)."""
    from . import streams

    if streams.is_stream(path):
        return streams.sniff(path)
    if not os.path.exists(path):
        raise InputError(path, None, "no such file or folder")
    if os.path.isfile(path):
        low = path.lower()
        if low.endswith(".xml"):
            return "voc"
        if low.endswith(".txt"):
            return "yolo"
        if low.endswith((".json", ".json.gz")):
            return "coco"
        with open(path, "rb") as f:
            head = f.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")
        if head[:1] in (b"{", b"["):
            return "coco"
        if head[:1] == b"<":
            return "voc"
        return "coco"  # the COCO reader says what is wrong
    try:
        entries = os.listdir(path)
    except OSError as e:
        raise InputError(path, None, f"cannot list folder: {e.strerror or e}") from None
    lowered = {e.lower() for e in entries}
    if any(e.endswith(".xml") for e in lowered):
        return "voc"
    if "annotations" in lowered and os.path.isdir(os.path.join(path, "Annotations")):
        sub = os.path.join(path, "Annotations")
        if any(n.lower().endswith(".xml") for n in os.listdir(sub)):
            return "voc"
    if {"obj.data", "labels", "obj_train_data", "data.yaml", "dataset.yaml"} & lowered or any(
        e.endswith((".txt", ".names")) for e in lowered
    ):
        return "yolo"
    jsons = sorted(e for e in entries if e.lower().endswith(".json"))
    if jsons:
        raise InputError(
            path,
            None,
            f"a folder of JSON files ({', '.join(jsons[:3])}): pass the COCO JSON file itself",
        )
    raise InputError(
        path, None, "cannot tell the format: no .xml (VOC), .txt (YOLO) or .json (COCO) files here"
    )


def _names_for(role: str, opts: LoadOptions) -> str | None:
    own = opts.pred_names if role == "pred" else opts.gt_names
    return own or opts.names


def load_side(path: Any, *, role: str, fmt: str | None, opts: LoadOptions) -> Side:
    """Read one side; ``fmt`` None means detect. ``role`` is ``pred`` or ``gt``. ``path``
    may also be an in-memory COCO object (a results list or a dataset dict)."""
    if isinstance(path, (list, dict)):
        if fmt not in (None, "coco"):
            raise InputError(None, None, f"an in-memory object is COCO, not {fmt}")
        from .coco import load_coco

        name = "<predictions>" if role == "pred" else "<ground truth>"
        return load_coco(name, role=role, iou_type=opts.iou_type, data=path)
    if fmt is not None and fmt not in FORMATS:
        raise InputError(
            path, None, f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}"
        )
    detected = fmt is None
    if fmt is None:
        fmt = detect_format(path)
    elif path != "-" and not os.path.exists(path):  # a forced format skips detection
        raise InputError(path, None, "no such file or folder")
    if fmt != "coco":
        from . import streams

        if streams.is_stream(path):
            raise InputError(
                streams.shown(path),
                None,
                f"--{'pred' if role == 'pred' else 'gt'}-format {fmt}: only COCO JSON can be "
                "read from stdin or a pipe (VOC and YOLO are folders of files: pass the folder)",
            )
    if fmt == "coco":
        if path != "-" and os.path.isdir(path):
            raise InputError(path, None, "COCO input is a JSON file, not a folder")
        from .coco import load_coco

        return load_coco(path, role=role, iou_type=opts.iou_type)
    if opts.iou_type != "bbox":
        raise InputError(
            path, None, f"{fmt} files hold boxes only; --iou-type segm needs COCO JSON"
        )
    if fmt == "voc":
        from .voc import load_voc

        return load_voc(path, role=role, progress=opts.progress)
    from .yolo import label_files, load_yolo

    sizes = None
    if opts.images:
        from .sizes import scan_sizes

        _, files = label_files(path)
        stems = {os.path.splitext(os.path.basename(f))[0] for f in files}
        sizes = {k: (float(w), float(h)) for k, (w, h) in scan_sizes(opts.images, stems).items()}
    return load_yolo(
        path,
        role=role,
        fmt=fmt,
        names_file=_names_for(role, opts),
        sizes=sizes,
        image_size=opts.image_size,
        progress=opts.progress,
        detect_order=detected and role == "pred",
    )


def _sizes_from(other: Side) -> dict[str, tuple[float, float]]:
    im = other.images
    out: dict[str, tuple[float, float]] = {}
    for stem, w, h in zip(im.stems, im.width, im.height, strict=True):
        if stem is not None and np.isfinite(w) and np.isfinite(h):
            out[stem] = (float(w), float(h))
    return out


def _scale(side: Side, other: Side) -> Side:
    """Scale a normalised side to pixels: own sizes first, then the other side's by stem."""
    from .yolo import to_pixels

    theirs = _sizes_from(other)
    im = side.images
    width = im.width.copy()
    height = im.height.copy()
    for i, stem in enumerate(im.stems):
        if not (np.isfinite(width[i]) and np.isfinite(height[i])) and stem in theirs:
            width[i], height[i] = theirs[str(stem)]
    b = side.boxes
    unknown = ~(np.isfinite(width[b.image]) & np.isfinite(height[b.image]))
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
            f"({shown}): normalised YOLO boxes need pixel sizes to meet {other.path}; "
            "give --images DIR or --image-size W,H",
        )
    return to_pixels(side, width, height)


def _check_categories(pred: Side, gt: Side) -> None:
    """Category matching needs names unless both sides use the same id space."""
    p_named = all(n is not None for n in pred.categories.names)
    g_named = all(n is not None for n in gt.categories.names)
    if p_named and g_named:
        return
    p_ids = all(i is not None for i in pred.categories.ids)
    g_ids = all(i is not None for i in gt.categories.ids)
    same_space = (pred.format == gt.format == "yolo") or (
        pred.format.startswith("coco") and gt.format.startswith("coco")
    )
    if p_ids and g_ids and same_space:
        return
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
        raise InputError(
            side.path,
            None,
            "categories have no names, so they cannot be matched by name with "
            f"{(gt if side is pred else pred).path} ({(gt if side is pred else pred).format}); "
            "use a COCO dataset file with 'categories'",
        )


def _check_images(pred: Side, gt: Side) -> None:
    if pred.format == gt.format or (
        pred.format.startswith("coco") and gt.format.startswith("coco")
    ):
        return
    for side in (pred, gt):
        if any(s is None for s in side.images.stems):
            raise InputError(
                side.path,
                None,
                "images have no (unique) file names, so they cannot be matched by file stem "
                f"with {(gt if side is pred else pred).path}; use a COCO dataset file whose "
                "'images' carry 'file_name'",
            )


def load_dataset(pred_path: Any, gt_path: Any, opts: LoadOptions) -> Dataset:
    """Read both sides and join predictions onto the ground truth's images and categories."""
    gt = load_side(gt_path, role="gt", fmt=opts.gt_format, opts=opts)
    pred = load_side(pred_path, role="pred", fmt=opts.pred_format, opts=opts)
    _check_images(pred, gt)
    _check_categories(pred, gt)
    if pred.boxes.normalized and not gt.boxes.normalized:
        pred = _scale(pred, gt)
    elif gt.boxes.normalized and not pred.boxes.normalized:
        gt = _scale(gt, pred)
    ds = align(pred, gt, unknown=opts.unknown)
    ds.locate = locator(pred, gt, ds)
    for side in (pred, gt):  # what the loaders noticed, for the report
        ds.warnings.extend(side.notes.get("warnings", ()))
        ds.info.extend(side.notes.get("info", ()))
    return ds
