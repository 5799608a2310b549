"""The CLI on VOC and YOLO inputs, mixed with COCO: stdout, stderr and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run

ROOT = Path(__file__).parents[2]
V100 = ROOT / "tests" / "data" / "peers_voc" / "voc100"
YOLO_DETS = ["--pred-format", "yolo-darknet", "--pred-names", str(V100 / "voc.names")]
# independent derived value (see tests/oracle/test_voc_peers.py): VOC all-point mAP@0.5,
# difficult ignored, on review_object_detection_metrics data/database
MAP_DIFFICULT_IGNORED = 0.6138747922842811


@pytest.mark.parametrize(
    "pred, extra",
    [
        (V100 / "dets" / "rel_xywh", YOLO_DETS),  # YOLO darknet txt vs VOC XML
        (V100 / "dets" / "coco_format" / "coco_dets.json", []),  # COCO vs VOC XML
    ],
)
def test_mixed_formats_voc_protocol_json(
    capsys: pytest.CaptureFixture[str], pred: Path, extra: list[str]
) -> None:
    code, out, err = run(
        [
            str(pred),
            str(V100 / "gts" / "pascalvoc_format"),
            "--protocol",
            "voc",
            "-o",
            "json",
            *extra,
        ],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["summary"]["mAP"] == pytest.approx(MAP_DIFFICULT_IGNORED, abs=1e-12)
    assert doc["params"]["protocol"] == "voc"
    assert len(doc["per_class"]) == 20 and doc["per_class"][0]["name"] == "aeroplane"
    assert "273 boxes" in err and "452 boxes" in err


def test_located_error_for_a_bad_yolo_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "pr").mkdir()
    (tmp_path / "pr" / "2007_000027.txt").write_text("14 0.9 0.5 0.5 0.2 0.2\n14 0.9 0.5 0.5\n")
    code, out, err = run(
        [str(tmp_path / "pr"), str(V100 / "gts" / "pascalvoc_format"), *YOLO_DETS], capsys
    )
    assert code == 2 and out == ""
    assert err.strip().splitlines()[-1] == (
        f"iou-eval: error: {tmp_path / 'pr' / '2007_000027.txt'}:2: "
        "expected 6 columns (class conf cx cy w h), got 4"
    )
    assert "Traceback" not in err


def test_sample_demo_yolo_vs_voc(capsys: pytest.CaptureFixture[str]) -> None:
    s = ROOT / "sample_data"
    code, out, err = run(
        [
            str(s / "yolo" / "preds"),
            str(s / "voc" / "annotations"),
            "--protocol",
            "voc07",
            "-o",
            "json",
        ],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["params"]["protocol"] == "voc07"
    assert {r["name"] for r in doc["per_class"]} == {"cat", "dog", "person"}
    # the difficult person does not count in the ground-truth total
    assert sum(r["n_gt"] for r in doc["per_class"]) == 20


def test_classes_joined_by_index_with_names_on_one_side_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # predictions with their own names file, ground truth without one: the only possible
    # join is by class index, which is wrong when the orders differ; it is said on stderr
    import shutil

    root = Path(__file__).resolve().parents[2] / "sample_data" / "yolo"
    shutil.copytree(root / "preds", tmp_path / "a" / "preds")
    shutil.copytree(root / "labels", tmp_path / "b" / "labels")
    code, _, err = run(
        [str(tmp_path / "a" / "preds"), str(tmp_path / "b" / "labels"), "-o", "json"], capsys
    )
    assert code == 0
    line = next(x for x in err.splitlines() if "classes joined by index" in x)
    assert "ground truth" in line and "--gt-names" in line and str(tmp_path / "b") in line
