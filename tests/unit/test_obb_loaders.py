"""Rotated-box readers: DOTA labelTxt and Task1 folders, YOLO-OBB txt, COCO ``obb`` fields;
good files read as written, bad ones stop at one located line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from iou_cli.errors import InputError
from iou_cli.loaders.coco import load_coco
from iou_cli.loaders.dota import load_dota_gt, load_dota_task1
from iou_cli.loaders.yolo_obb import load_yolo_obb


def write(p: Path, text: str) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_dota_ground_truth(tmp_path: Path) -> None:
    d = tmp_path / "labelTxt"
    write(
        d / "P0001.txt",
        "imagesource:GoogleEarth\ngsd:0.146\n"
        "10 10 50 10 50 30 10 30 plane 0\n"
        "60 60 80 60 80 90 60 90 ship 1\n"
        "0 0 10 0 5 2 10 10 ship\n",  # no flag: 0; a dent: hull
    )
    write(d / "P0002.txt", "")  # an image without objects
    side = load_dota_gt(str(tmp_path))
    assert side.images.keys == ["P0001", "P0002"]
    assert side.categories.names == ["plane", "ship"]
    b = side.boxes
    assert b.obb is not None
    np.testing.assert_array_equal(b.obb[0], [10, 10, 50, 10, 50, 30, 10, 30])
    assert b.difficult.tolist() == [False, True, False]
    np.testing.assert_array_equal(b.xyxy[1], [60, 60, 80, 90])
    assert b.box_area[0] == 800.0
    assert any("1 quadrilateral(s) are not convex" in w for w in side.notes["warnings"])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1 2 3 4 5 6 7 plane 0", "got 7 numbers before the category"),
        ("1 2 3 4 5 6 7 8 9 plane 0", "got 9 numbers before the category"),
        ("1 2 3 4 5 6 7 8 9 plane", "got 9 numbers before the category"),
        ("1 2 3 4 5 6 7 8 plane 0 extra", "got 2 fields after the category"),
        ("1 2 nan 4 5 6 7 8 plane 0", "corner 3: expected a finite number"),
        ("1 2 3 4 5 6 7 8 plane 2", "difficult: expected 0 or 1, got '2'"),
        ("1 2 3 4 5 6 7 8 plane hard", "difficult: expected 0 or 1, got 'hard'"),
        ("10 20 30 40 plane 0", "got 4 numbers before the category"),  # axis-aligned
    ],
)
def test_dota_ground_truth_bad_lines(tmp_path: Path, line: str, message: str) -> None:
    f = write(tmp_path / "gt" / "P1.txt", f"gsd:0.1\n1 1 9 1 9 9 1 9 plane 0\n{line}\n")
    with pytest.raises(InputError) as e:
        load_dota_gt(str(tmp_path / "gt"))
    assert e.value.path == str(f) and e.value.where == "3"
    assert message in e.value.reason


def test_task1_folder(tmp_path: Path) -> None:
    write(
        tmp_path / "Task1_plane.txt",
        "P0001 0.9 10 10 50 10 50 30 10 30\nP0002 0.5 1 1 2 1 2 2 1 2\n",
    )
    write(tmp_path / "Task1_small-vehicle.txt", "P0001 0.3 1 1 2 1 2 2 1 2\n")
    write(tmp_path / "notes.txt", "not a result file\n")
    side = load_dota_task1(str(tmp_path))
    assert side.categories.names == ["plane", "small-vehicle"]
    assert side.images.keys == ["P0001", "P0002"]
    assert side.boxes.score.tolist() == [0.9, 0.5, 0.3]
    assert side.boxes.category.tolist() == [0, 0, 1]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("P1 0.9 1 2 3 4 5 6 7", "(10 fields), got 9"),
        ("P1 0.9 1 2 3 4 5 6 7 8 9", "(10 fields), got 11"),
        ("P1 nan 1 2 3 4 5 6 7 8", "score: expected a finite number"),
        ("P1 0.9 1 2 3 4 NaN 6 7 8", "corner 5: expected a finite number"),
    ],
)
def test_task1_bad_lines(tmp_path: Path, line: str, message: str) -> None:
    f = write(tmp_path / "Task1_ship.txt", f"P0 0.5 1 1 9 1 9 9 1 9\n{line}\n")
    with pytest.raises(InputError) as e:
        load_dota_task1(str(tmp_path))
    assert e.value.path == str(f) and e.value.where == "2"
    assert message in e.value.reason


def test_yolo_obb_ground_truth_and_predictions(tmp_path: Path) -> None:
    write(tmp_path / "gt" / "classes.txt", "plane\nship\n")
    write(tmp_path / "gt" / "a.txt", "1 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3\n")
    write(tmp_path / "pred" / "a.txt", "1 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3 0.75\n")
    gt = load_yolo_obb(str(tmp_path / "gt"), role="gt")
    assert gt.categories.names == ["plane", "ship"]
    assert gt.boxes.normalized and gt.boxes.obb is not None
    pr = load_yolo_obb(str(tmp_path / "pred"), role="pred", image_size=(1000.0, 500.0))
    assert not pr.boxes.normalized and pr.boxes.obb is not None
    np.testing.assert_allclose(pr.boxes.obb[0], [100, 50, 500, 50, 500, 150, 100, 150])
    assert pr.boxes.score.tolist() == [0.75]
    assert math.isclose(pr.boxes.box_area[0], 400 * 100)


@pytest.mark.parametrize(
    ("role", "line", "message"),
    [
        ("gt", "0 0.1 0.1 0.5 0.1 0.5 0.3 0.1", "expected 9 columns"),  # 7 corner numbers
        ("gt", "0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3 0.2", "expected 9 columns"),  # 9 numbers
        ("gt", "0 0.5 0.5 0.2 0.2", "an axis-aligned YOLO row"),  # mixed rows
        ("pred", "0 0.5 0.5 0.2 0.2 0.9", "an axis-aligned YOLO row"),
        ("gt", "0 0.1 nan 0.5 0.1 0.5 0.3 0.1 0.3", "column 3: expected a finite number"),
        ("pred", "0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3", "no confidence"),
    ],
)
def test_yolo_obb_bad_rows(tmp_path: Path, role: str, line: str, message: str) -> None:
    good = "0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3" + (" 0.5" if role == "pred" else "")
    f = write(tmp_path / "d" / "a.txt", f"{good}\n{line}\n")
    with pytest.raises(InputError) as e:
        load_yolo_obb(str(tmp_path / "d"), role=role)
    assert e.value.path == str(f) and e.value.where == "2"
    assert message in e.value.reason


def _coco(tmp_path: Path, anns: list[dict]) -> Path:
    data = {
        "images": [{"id": 1, "width": 100, "height": 100, "file_name": "a.png"}],
        "categories": [{"id": 1, "name": "plane"}],
        "annotations": anns,
    }
    return write(tmp_path / "gt.json", json.dumps(data))


def test_coco_obb_field(tmp_path: Path) -> None:
    f = _coco(tmp_path, [{"id": 1, "image_id": 1, "category_id": 1, "obb": [50, 50, 20, 10, 0]}])
    side = load_coco(str(f), role="gt", iou_type="obb")
    assert side.boxes.obb is not None
    np.testing.assert_allclose(side.boxes.obb[0], [40, 45, 60, 45, 60, 55, 40, 55])
    assert side.boxes.box_area[0] == 200.0 and side.boxes.area[0] == 200.0
    deg = _coco(tmp_path, [{"id": 1, "image_id": 1, "category_id": 1, "obb": [50, 50, 20, 10, 90]}])
    s2 = load_coco(str(deg), role="gt", iou_type="obb", angle_unit="deg")
    assert s2.boxes.obb is not None
    np.testing.assert_allclose(s2.boxes.obb[0], [55, 40, 55, 60, 45, 60, 45, 40], atol=1e-12)


@pytest.mark.parametrize(
    ("ann", "where", "message"),
    [
        (
            {"obb": [50, 50, 20, 10]},
            "annotations[1].obb",
            "expected 5 numbers [cx, cy, w, h, angle], got 4",
        ),
        ({"obb": [50, 50, 20, 10, 0, 1]}, "annotations[1].obb", "got 6 numbers"),
        ({"obb": [50, "7", 20, 10, 0]}, "annotations[1].obb[1]", "expected a finite number"),
        ({"obb": [50, 50, -2, 10, 0]}, "annotations[1].obb", "negative width or height"),
        (
            {"bbox": [1, 1, 5, 5]},
            "annotations[1]",
            "rotated and axis-aligned records cannot be mixed",
        ),
    ],
)
def test_coco_obb_bad_records(tmp_path: Path, ann: dict, where: str, message: str) -> None:
    good = {"id": 1, "image_id": 1, "category_id": 1, "obb": [50, 50, 20, 10, 0]}
    f = _coco(tmp_path, [good, {"id": 2, "image_id": 1, "category_id": 1, **ann}])
    with pytest.raises(InputError) as e:
        load_coco(str(f), role="gt", iou_type="obb")
    assert e.value.where == where
    assert message in e.value.reason


def test_task1_bulk_and_line_readers_agree(tmp_path: Path) -> None:
    """The bulk reader (pandas, round-trip floats) and the line reader (a blank line sends a
    file there) give the same numbers, each equal to float() of the text."""
    rows = [
        "P1 0.1000000000000000055511151231257827 1e2 -0 3.25 4 5 6 7 8",
        "0042 0.3 1.0000000000000002 2 3 4 5 6 7 8.000000000000001",
        "P1 1 1 2 3 4 5 6 7 8",
    ]
    write(tmp_path / "a" / "Task1_ship.txt", "\n".join(rows) + "\n")
    write(tmp_path / "b" / "Task1_ship.txt", "\n".join(rows[:2]) + "\n\n" + rows[2] + "\n")
    a = load_dota_task1(str(tmp_path / "a"))
    b = load_dota_task1(str(tmp_path / "b"))
    ref = np.array([[float(v) for v in r.split()[1:]] for r in rows])
    for side in (a, b):
        assert side.boxes.obb is not None
        np.testing.assert_array_equal(np.column_stack([side.boxes.score, side.boxes.obb]), ref)
        assert side.images.keys == ["P1", "0042"]
    assert b.locator is not None and b.locator(2) == "Task1_ship.txt:4"
    assert a.locator is not None and a.locator(2) == "Task1_ship.txt:3"
