"""YOLO txt loader: layouts, names files, line errors, sizes and joining with pixel sides."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from iou_cli.errors import InputError
from iou_cli.loaders.detect import detect_format
from iou_cli.loaders.join import load_dataset
from iou_cli.loaders.sizes import image_size
from iou_cli.loaders.yolo import load_yolo, read_names
from iou_cli.options import LoadOptions

DATUMARO = Path(__file__).parents[1] / "data" / "peers_voc" / "datumaro" / "yolo_dataset"


@pytest.mark.parametrize("layout, n_img", [("strict", 1), ("annotations", 1)])
def test_datumaro_layouts(layout: str, n_img: int) -> None:
    s = load_yolo(str(DATUMARO / layout), role="gt")
    assert len(s.images) == n_img and len(s.boxes) == 2
    assert s.categories.names == [f"label_{i}" for i in range(10)]  # obj.names: 10 classes
    assert [s.categories.names[c] for c in s.boxes.category] == ["label_2", "label_4"]
    assert s.boxes.normalized and detect_format(str(DATUMARO / layout)) == "yolo"
    # 2 0.133333 0.300000 0.266667 0.200000 -> x1 = 0.133333 - 0.266667/2
    exp = [0.133333 - 0.266667 / 2, 0.3 - 0.2 / 2, 0.133333 + 0.266667 / 2, 0.3 + 0.2 / 2]
    np.testing.assert_allclose(s.boxes.xyxy[0], exp, rtol=0, atol=1e-15)


def test_datumaro_labels_layout_two_splits_same_stem_is_an_error() -> None:
    # labels/labels/train/1.txt and labels/labels/val/1.txt: one image stem twice
    with pytest.raises(InputError, match="two label files for image '1'"):
        load_yolo(str(DATUMARO / "labels"), role="gt")


def _w(p: Path, text: str | bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


def test_blank_lines_crlf_empty_file_and_names(tmp_path: Path) -> None:
    _w(tmp_path / "l/a.txt", b"0 0.5 0.5 0.2 0.2\r\n\r\n1 0.5 0.5 1 1\r\n")
    _w(tmp_path / "l/b.txt", "")
    _w(tmp_path / "l/classes.txt", "x\ny\n\n")
    s = load_yolo(str(tmp_path / "l"), role="gt")
    assert s.images.keys == ["a", "b"] and len(s.boxes) == 2
    assert s.categories.names == ["x", "y"] and s.locator and s.locator(1) == "a.txt:3"


@pytest.mark.parametrize(
    "yaml, names",
    [
        ("names: [cat, 'dog']\n", ["cat", "dog"]),
        ("path: x\nnames:\n  0: cat\n  1: dog\nnc: 2\n", ["cat", "dog"]),
        ("names:\n  - cat\n  - dog\n", ["cat", "dog"]),
    ],
)
def test_data_yaml_forms(tmp_path: Path, yaml: str, names: list[str]) -> None:
    assert read_names(str(_w(tmp_path / "data.yaml", yaml))) == names


@pytest.mark.parametrize(
    "role, fmt, line, where, error",
    [
        ("gt", "yolo", "0 0.5 0.5 0.2", "2", "expected 5 columns (class cx cy w h), got 4"),
        ("gt", "yolo", "0 0.5 1.5 0.2 0.2", "2", "cy = 1.5 is outside [0, 1]"),
        ("gt", "yolo", "0.5 0.5 0.5 0.2 0.2", "2", "class: expected a non-negative integer"),
        ("gt", "yolo", "0 0.5 abc 0.2 0.2", "2", "expected numbers, got 'abc'"),
        ("gt", "yolo", "7 0.5 0.5 0.2 0.2", "2", "class 7 is out of range"),
        ("pred", "yolo", "0 0.5 0.5 0.2 0.2", "2", "this looks like ground truth"),
        ("pred", "yolo-darknet", "0 0.9 0.5 0.5 0.2 1.2", "2", "h = 1.2 is outside"),
    ],
)
def test_line_errors(
    tmp_path: Path, role: str, fmt: str, line: str, where: str, error: str
) -> None:
    first = "0 0.5 0.5 0.1 0.1" + (" 0.9" if role == "pred" else "")
    f = _w(tmp_path / "l/img.txt", f"{first}\n{line}\n")
    _w(tmp_path / "l/obj.names", "a\nb\n")
    with pytest.raises(InputError) as e:
        load_yolo(str(tmp_path / "l"), role=role, fmt=fmt)
    assert e.value.path == str(f) and e.value.where == where and error in e.value.reason


def test_prediction_column_orders(tmp_path: Path) -> None:
    _w(tmp_path / "u/i.txt", "0 0.5 0.5 0.2 0.4 0.9\n")
    _w(tmp_path / "d/i.txt", "0 0.9 0.5 0.5 0.2 0.4\n")
    u = load_yolo(str(tmp_path / "u"), role="pred", fmt="yolo")
    d = load_yolo(str(tmp_path / "d"), role="pred", fmt="yolo-darknet")
    assert u.boxes.score.tolist() == d.boxes.score.tolist() == [0.9]
    np.testing.assert_array_equal(u.boxes.xyxy, d.boxes.xyxy)


def _png(w: int, h: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )


def test_image_headers(tmp_path: Path) -> None:
    from PIL import Image  # test-only: an independent writer of the formats we parse

    for ext, fmt in (
        ("jpg", "JPEG"),
        ("png", "PNG"),
        ("bmp", "BMP"),
        ("gif", "GIF"),
        ("webp", "WEBP"),
    ):
        p = tmp_path / f"a.{ext}"
        Image.new("RGB", (37, 23)).save(p, fmt)
        assert image_size(str(p)) == (37, 23), ext
    with pytest.raises(InputError, match="not a PNG"):
        image_size(str(_w(tmp_path / "x.jpg", "hello")))


def _pixel_gt(tmp_path: Path, size: bool) -> Path:
    sz = "<size><width>200</width><height>100</height></size>" if size else ""
    return _w(
        tmp_path / "gt/img.xml",
        f"<annotation>{sz}<object><name>cat</name><bndbox><xmin>50</xmin><ymin>25</ymin>"
        "<xmax>150</xmax><ymax>75</ymax></bndbox></object></annotation>",
    ).parent


def test_yolo_preds_meet_voc_pixels(tmp_path: Path) -> None:
    gt = _pixel_gt(tmp_path, size=True)
    _w(tmp_path / "pr/img.txt", "0 0.5 0.5 0.5 0.5 0.8\n")
    _w(tmp_path / "pr/classes.txt", "cat\n")
    ds = load_dataset(str(tmp_path / "pr"), str(gt), LoadOptions(pred_format="yolo"))
    assert ds.pixel_units
    # (0.5 +- 0.25) * 200 and (0.5 +- 0.25) * 100: exactly the GT box
    assert ds.pred.xyxy.tolist() == [[50.0, 25.0, 150.0, 75.0]]
    assert ds.pred.box_area.tolist() == [5000.0]


def test_missing_size_is_located_and_can_be_given(tmp_path: Path) -> None:
    gt = _pixel_gt(tmp_path, size=False)
    _w(tmp_path / "pr/img.txt", "0 0.5 0.5 0.5 0.5 0.8\n")
    _w(tmp_path / "pr/classes.txt", "cat\n")
    with pytest.raises(InputError) as e:
        load_dataset(str(tmp_path / "pr"), str(gt), LoadOptions(pred_format="yolo"))
    assert e.value.where == "img.txt:1" and "image size unknown" in e.value.reason
    ds = load_dataset(
        str(tmp_path / "pr"), str(gt), LoadOptions(pred_format="yolo", image_size=(200.0, 100.0))
    )
    assert ds.pred.xyxy.tolist() == [[50.0, 25.0, 150.0, 75.0]]
    _w(tmp_path / "images/sub/img.png", _png(200, 100))
    ds = load_dataset(
        str(tmp_path / "pr"),
        str(gt),
        LoadOptions(pred_format="yolo", images=str(tmp_path / "images")),
    )
    assert ds.pred.xyxy.tolist() == [[50.0, 25.0, 150.0, 75.0]]


def test_yolo_vs_yolo_match_classes_by_name(tmp_path: Path) -> None:
    _w(tmp_path / "gt/i.txt", "0 0.5 0.5 0.2 0.2\n1 0.2 0.2 0.1 0.1\n")
    _w(tmp_path / "gt/classes.txt", "cat\ndog\n")
    _w(tmp_path / "pr/i.txt", "1 0.5 0.5 0.2 0.2 0.9\n")
    _w(tmp_path / "pr/classes.txt", "dog\ncat\n")
    ds = load_dataset(str(tmp_path / "pr"), str(tmp_path / "gt"), LoadOptions(pred_format="yolo"))
    assert not ds.pixel_units
    assert [ds.categories.names[c] for c in ds.pred.category] == ["cat"]


def test_yolo_without_names_against_voc_is_an_error(tmp_path: Path) -> None:
    gt = _pixel_gt(tmp_path, size=True)
    _w(tmp_path / "pr/img.txt", "0 0.5 0.5 0.5 0.5 0.8\n")
    with pytest.raises(InputError, match="YOLO class names are needed"):
        load_dataset(str(tmp_path / "pr"), str(gt), LoadOptions(pred_format="yolo"))
