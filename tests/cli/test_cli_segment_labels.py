"""CLI contract for `--iou-type segm`, `segment` and `labels`: stdout, stderr, exit code."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.helpers import run

DATA = Path(__file__).resolve().parents[1] / "data"
SEG = DATA / "segment"
SEG_ARGS = [str(SEG / "pred"), str(SEG / "gt"), "--num-classes", "3", "--ignore-index", "255"]
MIOU = 35 / 54  # hand count in tests/unit/test_segment.py

GT100 = str(DATA / "coco" / "instances_val2014_100.json")
SEGM100 = str(DATA / "segm" / "instances_val2014_fakesegm100_results.json")
SEGM_AP = 0.3195452758576433  # faster_coco_eval / pycocotools (tests/oracle/test_segm_parity.py)


def labels_files(tmp: Path) -> tuple[str, str]:
    # the seed's example (001): per-class 1/3, 1, 0; macro 4/9; micro 3/7
    gt = tmp / "gt.csv"
    gt.write_text("id,Airplane,Boat,Car\ns1,1,1,1\ns2,1,0,0\ns3,0,1,1\n")
    pred = tmp / "pred.csv"
    pred.write_text("id,labels\ns1,Boat\ns2,Airplane\ns3,Airplane;Boat\n")
    return str(pred), str(gt)


# ------------------------------------------------------------------ --iou-type segm


def test_segm_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([SEGM100, GT100, "--iou-type", "segm", "-o", "json", "-q"], capsys)
    # one warning: the fake results predict 6 classes these 100 images lack (iou_cli/checks.py)
    assert code == 0 and err.startswith("iou-eval: warning: 6 classes have predictions but no")
    assert err.count("\n") == 1
    doc = json.loads(out)
    assert doc["summary"]["AP"] == pytest.approx(SEGM_AP, abs=1e-12)


def test_segm_bad_mask_is_exit_2_with_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = {
        "images": [{"id": 1, "width": 4, "height": 3}],
        "categories": [{"id": 1, "name": "thing"}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "area": 4,
                "iscrowd": 0,
                "segmentation": [[0, 0, 2, 0, 2, 2]],
            }
        ],
    }
    preds = [
        {"image_id": 1, "category_id": 1, "score": 0.5, "segmentation": [[0, 0, 2, 0, 2, 2]]},
        {"image_id": 1, "category_id": 1, "score": 0.5, "segmentation": [[0, 0, 2, 2]]},
    ]
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "preds.json").write_text(json.dumps(preds))
    code, out, err = run(
        [str(tmp_path / "preds.json"), str(tmp_path / "gt.json"), "--iou-type", "segm"], capsys
    )
    assert code == 2 and out == ""
    assert err == (
        f"iou-eval: error: {tmp_path / 'preds.json'}:[1].segmentation[0]: "
        "polygon with 2 points, expected >= 3\n"
    )


# ------------------------------------------------------------------ segment


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "markdown"])
def test_segment_every_output(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["segment", *SEG_ARGS, "--per-class", "-o", fmt, "-q"], capsys)
    assert code == 0 and err == ""
    if fmt == "json":
        doc = json.loads(out)
        assert doc["summary"]["mIoU"] == pytest.approx(MIOU, abs=1e-15)
        assert [c["category_id"] for c in doc["per_class"]] == [0, 1, 2]
        assert doc["params"]["num_classes"] == 3
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert [r["name"] for r in rows] == ["all", "0", "1", "2"]
        assert float(rows[0]["mIoU"]) == pytest.approx(MIOU, abs=1e-15)
        assert float(rows[2]["IoU"]) == 7 / 9
    elif fmt == "markdown":
        assert "| mIoU | 0.6481 |" in out and "| class |" in out
    else:
        assert "mIoU" in out and "0.6481" in out


def test_segment_info_line_and_names(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["segment", *SEG_ARGS, "--names", str(SEG / "names.txt"), "--per-class", "-o", "csv"],
        capsys,
    )
    assert code == 0
    assert err == "iou-eval: read 2 image pairs, 3 classes, 18 labelled pixels\n"
    assert [r["name"] for r in csv.DictReader(io.StringIO(out))] == [
        "all",
        "background",
        "road",
        "car",
    ]


def test_segment_fail_under(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["segment", *SEG_ARGS, "-o", "csv", "-q", "--fail-under", "mIoU=0.7"], capsys
    )
    assert code == 1 and out.startswith("category_id,name,mIoU")
    assert "mIoU = 0.648148 < 0.7" in err
    code, _, _ = run(["segment", *SEG_ARGS, "-o", "csv", "-q", "--fail-under", "mIoU=0.6"], capsys)
    assert code == 0


def test_segment_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["segment", str(SEG / "pred"), str(SEG / "gt"), "--num-classes", "2"], capsys
    )
    assert code == 2 and out == ""
    assert err.startswith(
        f"iou-eval: error: {SEG / 'gt' / 'a.png'}:pixel (x=0, y=2): ground-truth class 2"
    )
    code, out, err = run(["segment", str(SEG / "pred"), str(SEG / "gt")], capsys)
    assert code == 2 and "--num-classes" in err
    code, out, err = run(
        ["segment", str(SEG / "pred"), str(tmp_path / "nope"), "--num-classes", "3"], capsys
    )
    assert code == 2 and err.startswith(
        f"iou-eval: error: {tmp_path / 'nope'}: no such file or folder"
    )


# ------------------------------------------------------------------ labels


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "markdown"])
def test_labels_every_output(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gt = labels_files(tmp_path)
    code, out, err = run(["labels", pred, gt, "--per-class", "-o", fmt, "-q"], capsys)
    assert code == 0 and err == ""
    if fmt == "json":
        doc = json.loads(out)
        assert doc["summary"]["IoU"] == pytest.approx(4 / 9, abs=1e-15)
        assert doc["summary"]["IoU_micro"] == 3 / 7
        assert [c["IoU"] for c in doc["per_class"]] == [1 / 3, 1.0, 0.0]
        assert doc["params"]["average"] == "macro"
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert [r["name"] for r in rows] == ["all", "Airplane", "Boat", "Car"]
        assert float(rows[0]["IoU"]) == pytest.approx(4 / 9, abs=1e-15)
    elif fmt == "markdown":
        assert "| IoU | 0.4444 |" in out and "| Airplane |" in out
    else:
        assert "IoU_macro" in out and "0.4444" in out


def test_labels_average_and_fail_under(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gt = labels_files(tmp_path)
    code, out, err = run(
        ["labels", pred, gt, "--average", "micro", "-o", "json", "-q", "--fail-under", "IoU=0.5"],
        capsys,
    )
    assert code == 1
    assert json.loads(out)["summary"]["IoU"] == 3 / 7
    assert "IoU = 0.428571 < 0.5" in err
    code, _, err = run(["labels", pred, gt, "--average", "binary", "-o", "csv"], capsys)
    assert code == 2 and err.startswith("iou-eval: error: --average: expected macro")


def test_labels_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gt = labels_files(tmp_path)
    Path(pred).write_text("id,Airplane,Boat,Car\ns1,1,0,0\ns2,1,yes,0\ns3,0,0,0\n")
    code, out, err = run(["labels", pred, gt, "-o", "csv"], capsys)
    assert code == 2 and out == ""
    assert err == f"iou-eval: error: {pred}:3: column 'Boat': expected 0 or 1, got 'yes'\n"
