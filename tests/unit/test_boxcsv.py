"""The ``iou`` verb's box CSV files, written as spreadsheets and Python's csv module write them;
every problem located at file:line."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from iou_cli.errors import InputError, UsageError
from iou_cli.loaders.boxcsv import parse_box, read_box_arg, read_box_csv
from iou_cli.tasks.pairwise import box_iou_matrix


def test_excel_style_file_with_bom_crlf_quotes_and_empty_cells(tmp_path: Path) -> None:
    p = tmp_path / "boxes.csv"
    with open(p, "w", encoding="utf-8-sig", newline="") as fh:  # Excel's "CSV UTF-8"
        w = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
        w.writerow(["x1", "y1", "x2", "y2", ""])
        w.writerow(["0", "0", "10", "10", ""])
        w.writerow(["", "", "", "", ""])  # an empty spreadsheet row
        w.writerow([" 5", "5 ", "15", "15", ""])
    got = read_box_csv(str(p))
    assert got.boxes.tolist() == [[0, 0, 10, 10], [5, 5, 15, 15]]
    assert got.lines.tolist() == [2, 4] and got.path == str(p)


@pytest.mark.parametrize(
    ("text", "fmt", "line", "reason"),
    [
        ("0,0,1,1\n0,0,1\n", "xyxy", 2, "expected 4 numbers, got 3"),
        ("h1,h2,h3,h4\n0,0,1,1\nx,0,1,1\n", "xyxy", 3, "expected 4 numbers, got 'x,0,1,1'"),
        (
            "0,0,1,1\n2,2,1,1\n",
            "xyxy",
            2,
            "inverted box (x2 < x1 or y2 < y1): [2.0, 2.0, 1.0, 1.0]",
        ),
        ("2,2,1,1\n0,0,-1,1\n", "xywh", 2, "inverted box (negative width or height)"),
        ("0,0,1,1\n\n\n0,0,inf,1\n", "cxcywh", 4, "expected finite numbers"),
        ('"0\n",0,1,1\n0,0\n', "xyxy", 3, "expected 4 numbers, got 2"),  # quoted newline
    ],
)
def test_errors_name_the_line(tmp_path: Path, text: str, fmt: str, line: int, reason: str) -> None:
    p = tmp_path / "boxes.csv"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        read_box_csv(str(p), box_format=fmt)
    assert exc.value.message().startswith(f"{p}:{line}: {reason}")


def test_a_header_is_only_the_first_line(tmp_path: Path) -> None:
    p = tmp_path / "boxes.csv"
    p.write_text("0,0,1,1\nx1,y1,x2,y2\n")
    with pytest.raises(InputError, match=r":2: expected 4 numbers"):
        read_box_csv(str(p))
    p.write_text("x1,y1,x2,y2\n")
    assert read_box_csv(str(p)).boxes.shape == (0, 4)


def test_unreadable_inputs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a folder"):
        read_box_csv(str(tmp_path))
    p = tmp_path / "latin1.csv"
    p.write_bytes("x1,y1,x2,y2,\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        read_box_csv(str(p))


def test_literal_boxes() -> None:
    assert parse_box("-5;0;5;5", "BOX_A").boxes.tolist() == [[-5, 0, 5, 5]]
    with pytest.raises(UsageError, match=r"^BOX_B: inverted box \(negative width"):
        read_box_arg("0,0,-1,1", "BOX_B", box_format="xywh")
    with pytest.raises(UsageError, match=r"^BOX_A: expected finite numbers"):
        parse_box("nan,0,1,1", "BOX_A")


def test_matrix_values_by_hand(tmp_path: Path) -> None:
    p = tmp_path / "a.csv"
    p.write_text("0,0,10,10\n5,5,10,10\n")  # xywh: [0,10]^2 and [5,15]^2
    m = box_iou_matrix(str(p), "0,0,10,10", box_format="xywh")
    assert not m.single and m.values.tolist() == [[1.0], [25 / 175]]
    m = box_iou_matrix("5,5,10,10", "0,0,10,10", box_format="xywh", crowd=True)
    assert m.single and m.values.tolist() == [[25 / 100]]  # crowd: |A ∩ B| / |A|
    with pytest.raises(UsageError, match="--box-format: expected one of xyxy, xywh, cxcywh"):
        box_iou_matrix("0,0,1,1", "0,0,1,1", box_format="ltrb")
