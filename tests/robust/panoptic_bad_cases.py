"""A table of broken COCO panoptic inputs: each case edits a valid generated pair of sets
and names the file and the located part of the one error line it must give."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

from tests.oracle.panoptic_gen import to_rgb, write_set


def valid(root: Path) -> tuple[Path, Path]:
    """Two images; ground truth and prediction (pred ids differ from the GT's)."""
    g1 = np.zeros((6, 8), dtype=np.uint32)
    g1[:, :4], g1[:, 4:] = 3, 4
    g2 = np.zeros((6, 8), dtype=np.uint32)
    g2[1:5, 1:7] = 9
    p1 = np.zeros((6, 8), dtype=np.uint32)
    p1[:, :5], p1[:, 5:] = 30, 40
    p2 = np.zeros((6, 8), dtype=np.uint32)
    p2[1:5, 1:6] = 90
    gt = write_set(
        root,
        "gt",
        [
            (1, g1, [seg(3, 1, 24), seg(4, 7, 24)]),
            (2, g2, [seg(9, 2, 24)]),
        ],
    )
    pred = write_set(
        root,
        "pred",
        [
            (1, p1, [seg(30, 1, 30), seg(40, 7, 18)]),
            (2, p2, [seg(90, 2, 20)]),
        ],
    )
    return pred, gt


def seg(sid: int, cat: int, area: int, crowd: int = 0) -> dict:
    return {"id": sid, "category_id": cat, "area": area, "bbox": [0, 0, 1, 1], "iscrowd": crowd}


def _edit_json(path: Path, fn: Callable[[dict], None]) -> None:
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


def _png(path: Path, ids: np.ndarray | None = None, mode: str = "RGB") -> None:
    if ids is None:
        ids = np.zeros((6, 8), dtype=np.uint32)
    im = Image.fromarray(to_rgb(ids), mode="RGB")
    if mode != "RGB":
        im = im.convert(mode)
    im.save(path)


def _ids_with(*parts: tuple[slice, slice, int], shape: tuple[int, int] = (6, 8)) -> np.ndarray:
    a = np.zeros(shape, dtype=np.uint32)
    for ys, xs, v in parts:
        a[ys, xs] = v
    return a


def pred_png_extra_id(pred: Path, gt: Path) -> None:
    _png(
        pred.with_suffix("") / "1.png",
        _ids_with(
            (slice(None), slice(0, 5), 30),
            (slice(None), slice(5, 8), 40),
            (slice(0, 1), slice(0, 1), 555),
        ),
    )


def gt_png_extra_id(pred: Path, gt: Path) -> None:
    _png(
        gt.with_suffix("") / "2.png",
        _ids_with((slice(1, 5), slice(1, 7), 9), (slice(5, 6), slice(7, 8), 666)),
    )


def pred_json_extra_segment(pred: Path, gt: Path) -> None:
    _edit_json(pred, lambda d: d["annotations"][1]["segments_info"].append(seg(91, 2, 3)))


def gt_json_extra_segment(pred: Path, gt: Path) -> None:
    _edit_json(gt, lambda d: d["annotations"][0]["segments_info"].append(seg(5, 2, 3)))


def pred_duplicate_id(pred: Path, gt: Path) -> None:
    _edit_json(pred, lambda d: d["annotations"][0]["segments_info"].append(seg(30, 2, 3)))


def gt_duplicate_id(pred: Path, gt: Path) -> None:
    _edit_json(gt, lambda d: d["annotations"][1]["segments_info"].append(seg(9, 1, 3)))


def pred_png_size(pred: Path, gt: Path) -> None:
    _png(pred.with_suffix("") / "2.png", _ids_with((slice(1, 5), slice(1, 6), 90), shape=(6, 9)))


def gt_png_size_vs_images(pred: Path, gt: Path) -> None:
    _edit_json(gt, lambda d: d["images"][0].update(width=9))


def pred_png_missing(pred: Path, gt: Path) -> None:
    (pred.with_suffix("") / "2.png").unlink()


def gt_png_truncated(pred: Path, gt: Path) -> None:
    p = gt.with_suffix("") / "1.png"
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def pred_png_corrupt(pred: Path, gt: Path) -> None:
    """One byte of the compressed pixels flipped (CRC left as it was): the fast reader
    refuses it and Pillow words the error."""
    p = pred.with_suffix("") / "2.png"
    data = bytearray(p.read_bytes())
    data[data.index(b"IDAT") + 6] ^= 0xFF
    p.write_bytes(bytes(data))


def pred_unknown_category(pred: Path, gt: Path) -> None:
    _edit_json(pred, lambda d: d["annotations"][1]["segments_info"][0].update(category_id=99))


def gt_unknown_category(pred: Path, gt: Path) -> None:
    _edit_json(gt, lambda d: d["annotations"][0]["segments_info"][1].update(category_id=98))


def pred_png_grey(pred: Path, gt: Path) -> None:
    _png(pred.with_suffix("") / "1.png", _ids_with((slice(None), slice(0, 5), 30)), mode="L")


def pred_png_rgba(pred: Path, gt: Path) -> None:
    _png(pred.with_suffix("") / "1.png", _ids_with((slice(None), slice(0, 5), 30)), mode="RGBA")


def pred_no_record(pred: Path, gt: Path) -> None:
    _edit_json(pred, lambda d: d["annotations"].pop(1))


def pred_unknown_image(pred: Path, gt: Path) -> None:
    _edit_json(
        pred,
        lambda d: d["annotations"].append(
            {"image_id": 77, "file_name": "2.png", "segments_info": []}
        ),
    )


def gt_duplicate_image(pred: Path, gt: Path) -> None:
    _edit_json(gt, lambda d: d["annotations"].append(dict(d["annotations"][0])))


def gt_no_isthing(pred: Path, gt: Path) -> None:
    _edit_json(gt, lambda d: d["categories"][1].pop("isthing"))


def pred_not_panoptic(pred: Path, gt: Path) -> None:
    pred.write_text(json.dumps([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}]))


def pred_no_folder(pred: Path, gt: Path) -> None:
    import shutil

    shutil.rmtree(pred.with_suffix(""))


def pred_file_name_escapes(pred: Path, gt: Path) -> None:
    _edit_json(pred, lambda d: d["annotations"][0].update(file_name="../gt/1.png"))


# (case, file named by the error: "pred.json", "gt.json", "pred/1.png"..., where, words)
CASES: list[tuple[Callable[[Path, Path], None], str, str | None, str]] = [
    (
        pred_png_extra_id,
        "pred/1.png",
        "pixel (x=0, y=0)",
        "segment id 555 is in the PNG but not in segments_info",
    ),
    (gt_png_extra_id, "gt/2.png", "pixel (x=7, y=5)", "segment id 666 is in the PNG"),
    (
        pred_json_extra_segment,
        "pred.json",
        "annotations[1].segments_info[1]",
        "has no pixel in the PNG",
    ),
    (
        gt_json_extra_segment,
        "gt.json",
        "annotations[0].segments_info[2]",
        "has no pixel in the PNG",
    ),
    (
        pred_duplicate_id,
        "pred.json",
        "annotations[0].segments_info[2].id",
        "duplicate segment id 30",
    ),
    (gt_duplicate_id, "gt.json", "annotations[1].segments_info[1].id", "duplicate segment id 9"),
    (pred_png_size, "pred/2.png", None, "size 9 x 6 differs from the ground truth's 8 x 6"),
    (gt_png_size_vs_images, "gt/1.png", None, "differs from the image's 9 x 6"),
    (pred_png_missing, "pred/2.png", None, "no such file"),
    (gt_png_truncated, "gt/1.png", None, "not a readable PNG"),
    (pred_png_corrupt, "pred/2.png", None, "not a readable PNG"),
    (
        pred_unknown_category,
        "pred.json",
        "annotations[1].segments_info[0].category_id",
        "category_id 99 is not in the ground truth's categories",
    ),
    (
        gt_unknown_category,
        "gt.json",
        "annotations[0].segments_info[1].category_id",
        "category_id 98",
    ),
    (pred_png_grey, "pred/1.png", None, "expected an RGB PNG"),
    (pred_png_rgba, "pred/1.png", None, "got mode RGBA"),
    (pred_no_record, "gt.json", "annotations[1].image_id", "no prediction record for image_id 2"),
    (
        pred_unknown_image,
        "pred.json",
        "annotations[2].image_id",
        "image_id 77 is not in the ground truth",
    ),
    (gt_duplicate_image, "gt.json", "annotations[2].image_id", "duplicate image_id 1"),
    (gt_no_isthing, "gt.json", "categories[1].isthing", "expected 0 or 1"),
    (pred_not_panoptic, "pred.json", None, "expected a COCO panoptic JSON object"),
    (pred_no_folder, "pred", None, "no such folder"),
    (
        pred_file_name_escapes,
        "pred.json",
        "annotations[0].file_name",
        "expected a name inside the folder",
    ),
]
