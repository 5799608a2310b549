"""probiou (Ultralytics' OBB similarity) by hand, its blind spots, the smallest enclosing
rectangle, and ``--protocol ultralytics --iou-type obb`` from the command line. (The package
itself pins the numbers: tests/oracle/test_ultralytics_obb_oracle.py.)"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from iou_cli.geometry.obb import obb_iou, xywhr_to_corners
from iou_cli.geometry.probiou import min_area_rect, probiou

from ..helpers import assert_one_error_line, run_cli

EPS = 1e-7


def _hand(bd: float) -> float:
    return 1 - math.sqrt(1 - math.exp(-min(max(bd, EPS), 100.0)) + EPS)


def test_probiou_by_hand() -> None:
    # two axis-aligned w x h boxes dx apart: covariances diag(a, b), a = w²/12, b = h²/12;
    # t1 = (2b dx²) / (4ab + eps) / 4, t2 = 0, t3 = log(4ab / (4ab + eps) + eps) / 2
    w, h, dx = 10.0, 4.0, 2.0
    a, b = w * w / 12, h * h / 12
    t1 = (2 * b * dx * dx) / (4 * a * b + EPS) * 0.25
    t3 = math.log(4 * a * b / (4 * math.sqrt(a * b * a * b) + EPS) + EPS) * 0.5
    got = probiou([[0, 0, w, h, 0]], [[dx, 0, w, h, 0]], np.float64)[0, 0]
    assert abs(got - _hand(t1 + t3)) < 1e-12
    # identical boxes: the distance is clamped to eps, so even they score below 1
    same = probiou([[5, 5, 3, 2, 0.4]], [[5, 5, 3, 2, 0.4]], np.float64)[0, 0]
    assert abs(same - _hand(0.0)) < 1e-12 and same < 0.99956
    far = probiou([[0, 0, 2, 2, 0]], [[1000, 0, 2, 2, 0]], np.float64)[0, 0]
    assert abs(far - _hand(100.0)) < 1e-12


def test_probiou_is_not_polygon_iou() -> None:
    square = [50.0, 50.0, 20.0, 20.0, 0.0]
    turned = [50.0, 50.0, 20.0, 20.0, math.pi / 4]  # same Gaussian, another polygon
    swapped = [50.0, 50.0, 20.0, 10.0, 0.3]
    quarter = [50.0, 50.0, 10.0, 20.0, 0.3 + math.pi / 2]  # the same box, written otherwise
    p = probiou([square, swapped], [turned, quarter], np.float64)
    assert p[0, 0] == pytest.approx(_hand(0.0), abs=1e-12)
    assert p[1, 1] == pytest.approx(_hand(0.0), abs=1e-12)
    poly = obb_iou([square], [turned])[0, 0]
    # their overlap is a regular octagon of area 2(sqrt2 - 1) s², so IoU = 1/sqrt2 (0.707)
    assert poly == pytest.approx(1 / math.sqrt(2), abs=1e-12)
    # boxes that do not touch still have a probiou above 0
    apart = probiou([[0, 0, 10, 10, 0]], [[11, 0, 10, 10, 0]], np.float64)[0, 0]
    assert obb_iou([[0, 0, 10, 10, 0]], [[11, 0, 10, 10, 0]])[0, 0] == 0
    assert apart == pytest.approx(_hand(1.5 * 11**2 / 10**2), abs=1e-6)  # 0.085 (t3 ~ 1e-9)


def test_min_area_rect() -> None:
    rng = np.random.default_rng(0)
    boxes = np.column_stack(
        [rng.uniform(0, 100, (50, 2)), rng.uniform(1, 30, (50, 2)), rng.uniform(-4, 4, 50)]
    )
    rect = min_area_rect(xywhr_to_corners(boxes))
    np.testing.assert_allclose(rect[:, :2], boxes[:, :2], atol=1e-9)
    np.testing.assert_allclose(rect[:, 2] * rect[:, 3], boxes[:, 2] * boxes[:, 3], rtol=1e-12)
    same = probiou(rect, boxes, np.float64).diagonal()
    np.testing.assert_allclose(same, _hand(0.0), atol=1e-9)  # the same box, however written
    # a quadrilateral: no rectangle at any of 7200 angles is smaller, and it holds the corners
    quads = rng.uniform(0, 50, (30, 8))
    r = min_area_rect(quads)
    th = np.linspace(0, math.pi, 7200)
    for q, (cx, cy, w, h, ang) in zip(quads.reshape(-1, 4, 2), r, strict=True):
        pu = q[:, 0, None] * np.cos(th) + q[:, 1, None] * np.sin(th)
        pv = -q[:, 0, None] * np.sin(th) + q[:, 1, None] * np.cos(th)
        brute = ((pu.max(0) - pu.min(0)) * (pv.max(0) - pv.min(0))).min()
        assert w * h <= brute + 1e-9
        u = np.array([math.cos(ang), math.sin(ang)])
        v = np.array([-u[1], u[0]])
        d = q - [cx, cy]
        assert (np.abs(d @ u) <= w / 2 + 1e-9).all() and (np.abs(d @ v) <= h / 2 + 1e-9).all()


def _yolo_obb(tmp_path: Path) -> tuple[Path, Path]:
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    # 0.1 x 0.05 boxes on a 1000 x 1000 image; a prediction turned 45 degrees about the centre
    (gt / "a.txt").write_text(
        "0 0.2 0.2 0.3 0.2 0.3 0.25 0.2 0.25\n1 0.5 0.5 0.6 0.5 0.6 0.6 0.5 0.6\n"
    )
    c = np.asarray([0.55, 0.55])
    s = 0.05 * math.sqrt(2)
    sq = [
        c + s * np.array([math.cos(t), math.sin(t)])
        for t in (0, math.pi / 2, math.pi, 1.5 * math.pi)
    ]
    sq_txt = " ".join(f"{v:.6f}" for p in sq for v in p)
    (pred / "a.txt").write_text(f"0 0.2 0.2 0.3 0.2 0.3 0.25 0.2 0.25 0.9\n1 {sq_txt} 0.8\n")
    return gt, pred


def test_cli_ultralytics_obb(tmp_path: Path) -> None:
    gt, pred = _yolo_obb(tmp_path)
    args = [str(pred), str(gt), "--protocol", "ultralytics", "--iou-type", "obb", "-o", "json"]
    line = assert_one_error_line(*run_cli(args))
    assert "--image-size" in line and "normalised" in line
    code, out, err = run_cli([*args, "--image-size", "1000,1000"])
    assert code == 0, err
    summary = json.loads(out)["summary"]
    # both predictions match at every threshold under probiou (the turned square has the
    # same Gaussian as the labelled one) though the square's polygon IoU is 0.707; 0.995 is
    # Ultralytics' AP of a perfect class (the trapezoid's last step goes down to 0 at recall 1)
    assert summary["metrics/mAP50-95(B)"] == pytest.approx(0.995, abs=1e-12)
    code, out, err = run_cli([*args[:3], "coco", *args[4:], "--image-size", "1000,1000"])
    assert code == 0, err
    # polygon IoU: class 0 matched at every threshold, class 1 (IoU 0.707) at 0.5 ... 0.7
    assert json.loads(out)["summary"]["AP"] == pytest.approx(0.75, abs=1e-12)


def test_cli_explain_obb(tmp_path: Path) -> None:
    gt, pred = _yolo_obb(tmp_path)
    args = ["explain", str(pred), str(gt), "--iou-type", "obb", "--image-size", "1000,1000"]
    code, out, err = run_cli([*args, "-o", "json"])
    assert code == 0, err
    assert "rotated boxes" in err
    steps = {s["step"]: s for s in json.loads(out)["steps"]}
    # the turned square: polygon IoU 0.707 (matched at 0.5 ... 0.7), probiou ~1 (all ten):
    # its class's AP goes from 0.5 to 1, the mean over two classes by 0.25
    assert steps["IoU"]["before"] == "polygon IoU"
    assert steps["IoU"]["effect"]["AP"] == pytest.approx(0.25, abs=1e-12)
    line = assert_one_error_line(*run_cli([*args, "--iou-type", "segm"]))
    assert "--iou-type bbox or obb" in line
