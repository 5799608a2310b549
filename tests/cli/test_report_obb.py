"""The HTML report draws the worst images' boxes at the operating point: rotated boxes by
their four corners, axis-aligned boxes as rectangles, input text escaped; and it renders."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from iou_cli import evaluate
from iou_cli.report import html as report_html
from tests.browser import find_chromium, judge, screenshot

EVIL = "<svg&onload=alert(1)>"  # a file name: no slash
ROOT = Path(__file__).resolve().parents[2]


def _dota(tmp_path: Path) -> tuple[Path, Path]:
    label, task1 = tmp_path / "labelTxt", tmp_path / "task1"
    label.mkdir()
    task1.mkdir()
    # a diamond (a square turned 45 degrees) found, a rotated box missed, a false positive;
    # the second image's key and a class name are markup
    (label / "P1.txt").write_text(
        "gsd:0.1\n50 10 90 50 50 90 10 50 plane 0\n200 200 260 230 245 260 185 230 ship 0\n"
    )
    (label / "x&<b>.txt").write_text(f"0 0 10 0 10 10 0 10 {EVIL} 0\n")
    (task1 / "Task1_plane.txt").write_text(
        "P1 0.9 50 12 88 50 50 88 12 50\nP1 0.8 400 400 420 400 420 420 400 420\n"
    )
    (task1 / f"Task1_{EVIL}.txt").write_text("x&<b> 0.7 300 300 310 300 310 310 300 310\n")
    return task1, tmp_path


def _polygons(html: str) -> list[tuple[str, np.ndarray]]:
    """``(stroke colour, (4, 2) points)`` of each drawn outline."""
    found = re.findall(r'<polygon points="([^"]+)" fill="none" stroke="(#\w+)"', html)
    return [
        (colour, np.array([[float(v) for v in p.split(",")] for p in points.split()]))
        for points, colour in found
    ]


def test_rotated_boxes_are_drawn_by_their_corners(tmp_path: Path) -> None:
    pred, gt = _dota(tmp_path)
    html = report_html.evaluation_report(
        evaluate(str(pred), str(gt), protocol="dota", score_thr=0.5), None
    )
    assert "<h2>Worst images, drawn</h2>" in html and "rotated boxes by their four corners" in html
    shapes = _polygons(html)
    colours = {c for c, _ in shapes}
    assert {"#1f6feb", "#d1242f", "#bf8700"} <= colours  # TP, FP, missed
    diamond = np.array([[50, 10], [90, 50], [50, 90], [10, 50]], dtype=float)
    assert any(np.array_equal(p, diamond) for _, p in shapes)  # not its axis-aligned hull
    missed = np.array([[200, 200], [260, 230], [245, 260], [185, 230]], dtype=float)
    assert any(c == "#bf8700" and np.array_equal(p, missed) for c, p in shapes)
    # input text is text: the image key and the class name, escaped
    assert EVIL not in html and "x&<b>" not in html
    assert "x&amp;&lt;b&gt;: 0 TP, 1 FP, 1 missed" in html
    assert "false positive: &lt;svg&amp;onload=alert(1)&gt;" in html


def test_axis_aligned_boxes_are_rectangles() -> None:
    sample = ROOT / "sample_data" / "coco"
    result = evaluate(str(sample / "preds.json"), str(sample / "gt.json"))
    html = report_html.evaluation_report(result, None, figures=False)
    shapes = _polygons(html)
    assert shapes and "rotated" not in html.split("Worst images, drawn")[1][:2000]
    for _, p in shapes:  # four corners, two x values and two y values
        assert p.shape == (4, 2) and len(set(p[:, 0])) <= 2 and len(set(p[:, 1])) <= 2


@pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (make report-check)")
def test_obb_report_renders_in_chromium(tmp_path: Path) -> None:
    pred, gt = _dota(tmp_path)
    html = tmp_path / "report.html"
    html.write_text(report_html.evaluation_report(evaluate(str(pred), str(gt)), None))
    png = tmp_path / "report.png"
    screenshot(html, png, height=1400)
    assert judge(png) == []
