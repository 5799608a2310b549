"""The CLI on rotated boxes: DOTA txt and Task1 folders, YOLO-OBB txt; stdout, stderr and
exit codes (bad input: one located error line, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import run

# ship: GT A (counts), B (counts), D (difficult); visited by score 0.9 on A (TP), 0.8 on A
# (duplicate: FP), 0.7 on D (neither), 0.6 far away (FP): VOC07 AP = 6/11 (hand calculation in
# tests/oracle/test_dota_devkit.py); plane: its one GT found exactly (AP 1).
GT = {
    "P0001.txt": "imagesource:GoogleEarth\ngsd:0.146\n"
    "40 40 60 40 60 60 40 60 ship 0\n"
    "140 40 160 40 160 60 140 60 ship 0\n"
    "40 140 60 140 60 160 40 160 ship 1\n",
    "P0002.txt": "10 10 50 10 50 30 10 30 plane 0\n",
    "P0003.txt": "",
}
TASK1 = {
    "Task1_ship.txt": "P0001 0.6 300 300 320 300 320 320 300 320\n"
    "P0001 0.9 40 40 60 40 60 60 40 60\n"
    "P0001 0.7 40 140 60 140 60 160 40 160\n"
    "P0001 0.8 41 40 61 40 61 60 41 60\n",
    "Task1_plane.txt": "P0002 0.95 10 10 50 10 50 30 10 30\n",
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


@pytest.fixture
def dota(tmp_path: Path) -> tuple[Path, Path]:
    gt = write_tree(tmp_path / "val" / "labelTxt", GT)
    pred = write_tree(tmp_path / "results", TASK1)
    return pred, gt


def test_dota_protocol_json(capsys: pytest.CaptureFixture[str], dota: tuple[Path, Path]) -> None:
    pred, gt = dota
    code, out, err = run([str(pred), str(gt), "--protocol", "dota", "-o", "json"], capsys)
    assert code == 0, err
    rep = json.loads(out)
    per = {r["name"]: r for r in rep["per_class"]}
    assert abs(per["ship"]["AP"] - 6 / 11) <= 1e-12
    assert per["plane"]["AP"] == pytest.approx(1.0, abs=1e-12)
    assert abs(rep["summary"]["mAP"] - (6 / 11 + 1.0) / 2) <= 1e-12
    for key in ("AP", "precision", "recall"):
        assert key in per["ship"]
    assert "rotated boxes" in err


def test_dota_all_point_and_csv(
    capsys: pytest.CaptureFixture[str], dota: tuple[Path, Path]
) -> None:
    pred, gt = dota
    code, out, err = run(
        [str(pred), str(gt), "--protocol", "dota", "--all-point", "-o", "csv", "--per-class"],
        capsys,
    )
    assert code == 0, err
    header = out.splitlines()[0].split(",")
    for key in ("AP", "precision", "recall"):
        assert key in header
    assert "0.5" in out  # ship all-point AP = 0.5


def test_dota_files_default_to_rotated_coco(
    capsys: pytest.CaptureFixture[str], dota: tuple[Path, Path]
) -> None:
    pred, gt = dota
    code, out, err = run([str(pred), str(gt), "-o", "json"], capsys)
    assert code == 0, err
    assert "scored by polygon IoU" in err
    assert json.loads(out)["summary"]["AP50"] is not None


def test_yolo_obb(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    gt = write_tree(
        tmp_path / "gt",
        {"classes.txt": "plane\nship\n", "a.txt": "1 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3\n"},
    )
    pred = write_tree(tmp_path / "pred", {"a.txt": "1 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3 0.9\n"})
    code, out, err = run([str(pred), str(gt), "--iou-type", "obb", "-o", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["summary"]["AP"] == pytest.approx(1.0)


def _one_error(code: int, err: str, where: str, what: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2
    assert len(lines) == 1, err
    assert lines[0].startswith("iou-eval: error: ") and where in lines[0] and what in lines[0], err


@pytest.mark.parametrize(
    ("gt_line", "where", "what"),
    [
        ("1 2 3 4 5 6 7 ship 0", "P0001.txt:6", "7 numbers before the category"),
        ("1 2 3 4 5 6 7 8 9 ship 0", "P0001.txt:6", "9 numbers before the category"),
        ("1 2 3 nan 5 6 7 8 ship 0", "P0001.txt:6", "corner 4: expected a finite number"),
        ("1 2 3 4 5 6 7 8 ship 3", "P0001.txt:6", "difficult: expected 0 or 1, got '3'"),
        ("1 2 3 4 ship 0", "P0001.txt:6", "4 numbers before the category"),
    ],
)
def test_bad_dota_ground_truth(
    capsys: pytest.CaptureFixture[str], dota: tuple[Path, Path], gt_line: str, where: str, what: str
) -> None:
    pred, gt = dota
    with open(gt / "P0001.txt", "a") as f:
        f.write(gt_line + "\n")
    code, _, err = run([str(pred), str(gt), "--protocol", "dota"], capsys)
    _one_error(code, err, where, what)


def test_task1_class_not_in_ground_truth(
    capsys: pytest.CaptureFixture[str], dota: tuple[Path, Path]
) -> None:
    pred, gt = dota
    (pred / "Task1_harbor.txt").write_text("P0001 0.5 1 1 9 1 9 9 1 9\n")
    code, _, err = run([str(pred), str(gt), "--protocol", "dota"], capsys)
    _one_error(code, err, "Task1_harbor.txt", "harbor")


def test_bad_task1_line(capsys: pytest.CaptureFixture[str], dota: tuple[Path, Path]) -> None:
    pred, gt = dota
    with open(pred / "Task1_ship.txt", "a") as f:
        f.write("P0001 0.5 1 1 9 1 9 9 1\n")
    code, _, err = run([str(pred), str(gt), "--protocol", "dota"], capsys)
    _one_error(code, err, "Task1_ship.txt:5", "(10 fields), got 9")


@pytest.mark.parametrize(
    ("row", "what"),
    [
        ("0 0.1 0.1 0.5 0.1 0.5 0.3 0.1", "expected 9 columns"),  # 7 corner numbers
        ("0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3 0.4", "expected 9 columns"),  # 9 corner numbers
        ("0 0.5 0.5 0.2 0.2", "axis-aligned YOLO row"),  # mixed rows in one side
        ("0 0.1 NaN 0.5 0.1 0.5 0.3 0.1 0.3", "expected a finite number"),
    ],
)
def test_bad_yolo_obb_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, row: str, what: str
) -> None:
    good = "0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3"
    gt = write_tree(tmp_path / "gt", {"a.txt": f"{good}\n{row}\n"})
    pred = write_tree(tmp_path / "pred", {"a.txt": f"{good} 0.9\n"})
    code, _, err = run([str(pred), str(gt), "--iou-type", "obb"], capsys)
    _one_error(code, err, "a.txt:2", what)


def test_rotated_against_axis_aligned_is_refused(
    capsys: pytest.CaptureFixture[str], dota: tuple[Path, Path], tmp_path: Path
) -> None:
    _, gt = dota
    preds = tmp_path / "boxes.json"
    preds.write_text(
        json.dumps([{"image_id": "P0001", "category_id": 0, "bbox": [1, 1, 5, 5], "score": 0.5}])
    )
    names = tmp_path / "names.txt"
    names.write_text("ship\n")
    code, _, err = run([str(preds), str(gt), "--pred-names", str(names)], capsys)
    _one_error(code, err, str(gt), "rotated boxes but the predictions are axis-aligned")


def test_voc_folder_with_iou_type_obb_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    gt = write_tree(
        tmp_path / "voc", {"a.xml": "<annotation><filename>a.png</filename></annotation>"}
    )
    pred = write_tree(tmp_path / "pred", {"a.txt": "0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3 0.9\n"})
    code, _, err = run([str(pred), str(gt), "--iou-type", "obb"], capsys)
    _one_error(code, err, "voc", "--iou-type obb needs DOTA txt")


def test_iou_verb_rotated_boxes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shapely = pytest.importorskip("shapely")
    from shapely.geometry import Polygon

    from iou_cli.geometry.obb import xywhr_to_corners

    a, b = [100.0, 100.0, 40.0, 20.0, 0.5], [110.0, 100.0, 40.0, 20.0, 0.0]
    code, out, err = run(
        ["iou", ",".join(map(str, a)), ",".join(map(str, b)), "--box-format", "xywhr"], capsys
    )
    assert code == 0, err
    pa, pb = (Polygon(xywhr_to_corners([v])[0].reshape(4, 2)) for v in (a, b))
    ref = pa.intersection(pb).area / pa.union(pb).area
    assert abs(float(out) - ref) <= 1e-9
    assert shapely is not None
    bad = tmp_path / "a.csv"
    bad.write_text("x1,y1,x2,y2,x3,y3,x4,y4\n0,0,1,0,1,1,0,1\n0,0,1,0,1,1,0\n")
    code, _, err = run(["iou", str(bad), str(bad), "--box-format", "corners"], capsys)
    _one_error(code, err, "a.csv:3", "expected 8 finite numbers")


def test_non_convex_quadrilateral_warns_with_count(
    capsys: pytest.CaptureFixture[str], dota: tuple[Path, Path]
) -> None:
    pred, gt = dota
    with open(gt / "P0002.txt", "a") as f:
        f.write("0 0 10 10 10 0 0 10 plane 0\n40 40 50 40 45 42 50 50 plane 0\n")  # bow tie, dent
    code, out, err = run([str(pred), str(gt), "--protocol", "dota", "-o", "json"], capsys)
    assert code == 0, err
    assert "2 quadrilateral(s) are not convex" in err
    assert "convex hull" in json.dumps(json.loads(out)["meta"]["warnings"])
