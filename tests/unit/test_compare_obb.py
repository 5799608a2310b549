"""``compare`` takes the rotated-box options of the default verb (``--iou-type obb``,
``--angle-unit``, ``--all-point``): each side's numbers are the default verb's own."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.obbgen import rotated_scene

from ..helpers import assert_one_error_line, run_cli


def _summary(args: list[str]) -> dict[str, Any]:
    code, out, err = run_cli([*args, "-o", "json"])
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def _rows(doc: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {k: (v["a"], v["b"]) for k, v in doc["metrics"].items()}


def _coco_obb(tmp_path: Path, degrees: bool) -> list[str]:
    gt, dets = rotated_scene(4)
    b = [d for i, d in enumerate(dets) if i % 3]  # B misses a third of A's predictions
    files = []
    docs: list[tuple[str, Any]] = [("a", dets), ("b", b), ("gt", gt)]
    for name, shared in docs:
        doc = copy.deepcopy(shared)  # B's records are A's: convert each file's own copy
        recs: list[dict[str, Any]] = doc["annotations"] if name == "gt" else doc
        if degrees:
            for r in recs:
                r["obb"][4] = math.degrees(r["obb"][4])
        p = tmp_path / f"{name}{'_deg' if degrees else ''}.json"
        p.write_text(json.dumps(doc))
        files.append(str(p))
    return files


def test_compare_coco_obb_angle_unit(tmp_path: Path) -> None:
    rad = _coco_obb(tmp_path, degrees=False)
    deg = _coco_obb(tmp_path, degrees=True)
    a_alone = _summary([rad[0], rad[2], "--iou-type", "obb"])["summary"]
    b_alone = _summary([rad[1], rad[2], "--iou-type", "obb"])["summary"]
    in_rad = _rows(_summary(["compare", *rad, "--iou-type", "obb"]))
    in_deg = _rows(_summary(["compare", *deg, "--iou-type", "obb", "--angle-unit", "deg"]))
    assert in_rad["AP"] == (a_alone["AP"], b_alone["AP"]) and a_alone["AP"] != b_alone["AP"]
    for key in ("AP", "AP50", "AP75"):
        assert in_deg[key] == pytest.approx(in_rad[key], abs=1e-12)
    misread = _rows(_summary(["compare", *deg, "--iou-type", "obb"]))  # degrees as radians
    assert misread["AP"] != pytest.approx(in_rad["AP"], abs=1e-6)
    line = assert_one_error_line(*run_cli(["compare", *deg, "--angle-unit", "grad"]))
    assert "--angle-unit" in line


def _dota(tmp_path: Path) -> list[str]:
    label = tmp_path / "labelTxt"
    label.mkdir()
    (label / "P1.txt").write_text(
        "gsd:0.1\n0 0 10 0 10 10 0 10 plane 0\n20 20 40 20 40 30 20 30 plane 0\n"
        "50 50 60 50 60 60 50 60 ship 0\n70 70 80 70 80 80 70 80 ship 1\n"
    )
    (label / "P2.txt").write_text("5 5 15 5 15 15 5 15 plane 0\n")
    rows_a = {
        "plane": ["P1 0.9 0 0 10 0 10 10 0 10", "P1 0.8 21 20 40 20 40 30 21 30",
                  "P2 0.7 90 90 99 90 99 99 90 99", "P2 0.6 5 5 15 5 15 15 5 15"],
        "ship": ["P1 0.9 50 50 60 50 60 60 50 60", "P1 0.5 0 50 5 50 5 55 0 55"],
    }  # fmt: skip
    out = []
    for name, keep in (("a", 4), ("b", 2)):
        d = tmp_path / name
        d.mkdir()
        for cls, rows in rows_a.items():
            (d / f"Task1_{cls}.txt").write_text("\n".join(rows[:keep]) + "\n")
        out.append(str(d))
    return [*out, str(tmp_path)]


def test_compare_dota_all_point(tmp_path: Path) -> None:
    files = _dota(tmp_path)
    for extra in ([], ["--all-point"]):
        a = _summary([files[0], files[2], "--protocol", "dota", *extra])["summary"]
        b = _summary([files[1], files[2], "--protocol", "dota", *extra])["summary"]
        both = _rows(_summary(["compare", *files, "--protocol", "dota", *extra]))
        assert both["mAP"] == (a["mAP"], b["mAP"])
    eleven = _rows(_summary(["compare", *files, "--protocol", "dota"]))["mAP"]
    area = _rows(_summary(["compare", *files, "--protocol", "dota", "--all-point"]))["mAP"]
    assert eleven != area
    line = assert_one_error_line(*run_cli(["compare", *files, "--all-point"]))
    assert "--all-point does not apply to --protocol coco" in line


def test_voc_bootstrap_scores_rotated_boxes(tmp_path: Path) -> None:
    """The VOC bootstrap re-runs the matching on the geometry the evaluation used: all
    multiplicities 1 give the single run's mAP on polygon IoU (it had measured the
    axis-aligned hulls of rotated boxes)."""
    import numpy as np

    from iou_cli.analysis.scorers import scorer_for
    from iou_cli.api import evaluate
    from iou_cli.options import RunOptions

    gt, dets = rotated_scene(5)
    res = evaluate(dets, gt, protocol="voc", iou_type="obb")
    assert res.evaluation is not None
    ds = res.evaluation.dataset
    sc = scorer_for("voc", ds, res, RunOptions(protocol="voc", iou_type="obb"))
    stats, _ = sc.score(np.ones((1, len(ds.images)), dtype=np.int32))
    assert stats["mAP"][0] == pytest.approx(res.summary["mAP"], abs=1e-12)
