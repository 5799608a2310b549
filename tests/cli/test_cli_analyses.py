"""The analyses and subsets from the command line: every output format, the CSV rule
(one stream, one table), option errors (exit 2), and names from inputs escaped."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run
from tests.oracle.cocogen import random_scene
from tests.oracle.pycoco import STAT_KEYS
from tests.oracle.test_subset_pycoco import _pycoco

PRED = "sample_data/coco/preds.json"
GT = "sample_data/coco/gt.json"


def _json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = run([PRED, GT, "-q", "-o", "json", *args], capsys)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_json_sections_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(["--tide", "--confusion", "--per-image", "--calibration"], capsys)
    assert list(doc)[:3] == ["summary", "per_class", "params"]
    assert [
        k for k in doc if k in ("tide", "confusion", "per_image", "label_errors", "calibration")
    ] == ["tide", "confusion", "per_image", "label_errors", "calibration"]
    tide = doc["tide"]
    assert tide["baseline"] == doc["summary"]["AP50"]
    assert set(tide["dAP"]) == {"Cls", "Loc", "Both", "Dupe", "Bkg", "Miss", "FalsePos", "FalseNeg"}
    assert doc["confusion"]["labels"] == ["person", "car", "dog", "background"]
    assert sum(r["tp"] for r in doc["per_image"]) == doc["summary"]["tp"]


def test_csv_is_the_one_analysis_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([PRED, GT, "-q", "-o", "csv", "--confusion"], capsys)
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    labels = ["person", "car", "dog", "background"]
    assert rows[0] == [""] + labels
    assert [r[0] for r in rows[1:]] == labels
    assert all(len(r) == 5 for r in rows)
    doc = _json(["--confusion"], capsys)
    assert [[int(x) for x in r[1:]] for r in rows[1:]] == doc["confusion"]["matrix"]
    code, out, err = run([PRED, GT, "-q", "-o", "csv", "--tide", "--per-image"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("iou-eval: error: -o csv prints one table") and err.count("\n") == 1


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_readable_outputs(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [PRED, GT, "-q", "-o", fmt, "--tide", "--confusion", "--per-image", "--calibration"], capsys
    )
    assert code == 0
    for word in ("TIDE", "confusions", "images", "Calibration", "FalsePos", "background"):
        assert word in out


def test_option_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([PRED, GT, "-q", "--tide", "--tide-pos-thr", "0.3"], capsys)
    assert code == 2 and "--tide-pos-thr 0.3 is not a matching threshold" in err
    code, _, err = run([PRED, GT, "-q", "--tide", "--tide-bg-thr", "0.7"], capsys)
    assert code == 2 and "--tide-bg-thr" in err
    code, _, err = run(
        ["sample_data/yolo/preds", "sample_data/voc/annotations", "--protocol", "voc", "--tide"],
        capsys,
    )
    assert code == 2 and "--protocol coco" in err
    code, _, err = run([PRED, GT, "-q", "--classes", "person,unicorn"], capsys)
    assert code == 2 and "unicorn" in err
    # an extra threshold makes it available
    doc = _json(["--tide", "--tide-pos-thr", "0.3", "--iou-thr", "0.3"], capsys)
    assert doc["tide"]["pos_thr"] == 0.3


def test_voc_confusion_and_per_image(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        [
            "sample_data/yolo/preds",
            "sample_data/voc/annotations",
            "--protocol",
            "voc",
            "-q",
            "-o",
            "json",
            "--confusion",
            "--per-image",
            "--calibration",
        ],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(out)
    m = doc["confusion"]["matrix"]
    assert [sum(r) for r in m[:-1]] == [r["n_gt"] for r in doc["per_class"]]
    assert sum(r["fp"] for r in doc["per_image"]) == doc["summary"]["fp"]


def test_matches_error_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "m.csv"
    code, _, _ = run([PRED, GT, "-q", "--score-thr", "0.5", "--matches", str(target)], capsys)
    assert code == 0
    rows = list(csv.DictReader(target.open()))
    assert list(rows[0]) == [
        "image",
        "category",
        "pred_id",
        "gt_id",
        "score",
        "iou",
        "outcome",
        "error",
        "best_gt_id",
        "best_gt_class",
        "best_gt_iou",
    ]
    fps = [r for r in rows if r["outcome"] == "FP"]
    assert fps and all(r["error"] in ("cls", "loc", "both", "dupe", "bkg") for r in fps)
    assert all(r["error"] == "" for r in rows if r["outcome"] != "FP")
    both = [r for r in fps if r["error"] == "both"]
    assert both and all(r["best_gt_id"] and 0.1 < float(r["best_gt_iou"]) < 0.5 for r in both)


def test_names_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = json.loads(Path(GT).read_text())
    gt["categories"][0]["name"] = "=HYPERLINK(1)"
    gt["categories"][1]["name"] = "[bold]car\x1b[31m"
    g = tmp_path / "gt.json"
    g.write_text(json.dumps(gt))
    preds = json.loads(Path(PRED).read_text())
    p = tmp_path / "p.json"
    p.write_text(json.dumps(preds))
    code, out, _ = run([str(p), str(g), "-q", "-o", "csv", "--confusion"], capsys)
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][1] == "'=HYPERLINK(1)" and rows[1][0] == "'=HYPERLINK(1)"
    code, out, _ = run(
        [str(p), str(g), "-q", "-o", "table", "--confusion", "--calibration"], capsys
    )
    assert "[bold]car\\x1b[31m" in out and "\x1b" not in out
    code, out, _ = run([str(p), str(g), "-q", "-o", "markdown", "--calibration"], capsys)
    assert "\\=HYPERLINK\\(1\\)" in out or "=HYPERLINK\\(1\\)" in out
    assert "\\[bold\\]car" in out


@pytest.mark.parametrize("seed", range(3))
def test_subset_options_equal_pycocotools(
    tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, dets = random_scene(seed)
    g = tmp_path / "gt.json"
    d = tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    ids = [im["id"] for im in gt["images"]][:6]
    (tmp_path / "ids.txt").write_text("\n".join(str(i) for i in ids) + "\n")
    cats = [c["id"] for c in gt["categories"]][:3]
    code, out, err = run(
        [
            str(d),
            str(g),
            "-q",
            "-o",
            "json",
            "--class-agnostic",
            "--image-ids",
            str(tmp_path / "ids.txt"),
            "--classes",
            ",".join(str(c) for c in cats),
        ],
        capsys,
    )
    assert code == 0, err
    ev = _pycoco(gt, dets, useCats=0, imgIds=sorted(ids), catIds=cats)
    ours = [json.loads(out)["summary"][k] for k in STAT_KEYS]
    assert ours == [None if s == -1 else float(s) for s in ev.stats]


def test_subset_option_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([PRED, GT, "-q", "--classes", " , "], capsys)
    assert code == 2 and "--classes: expected" in err
    ids = tmp_path / "ids.txt"
    ids.write_text("1\n2\n")
    code, _, err = run([PRED, GT, "-q", "--image-ids", str(ids), "--matches", str(ids)], capsys)
    assert code == 2 and ids.read_text() == "1\n2\n"
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    code, _, err = run([PRED, GT, "-q", "--image-ids", str(empty)], capsys)
    assert code == 2 and "lists no image id" in err


def test_markdown_tables_keep_their_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a class name with a pipe must not add a cell (GitHub splits rows on unescaped pipes)
    gt = json.loads(Path(GT).read_text())
    gt["categories"][1]["name"] = "car|truck"
    g = tmp_path / "gt.json"
    g.write_text(json.dumps(gt))
    code, out, _ = run(
        [
            PRED,
            str(g),
            "-q",
            "-o",
            "markdown",
            "--tide",
            "--confusion",
            "--per-image",
            "--calibration",
        ],
        capsys,
    )
    assert code == 0
    tables: list[list[str]] = []
    for line in out.splitlines():
        if line.startswith("|"):
            if not tables or not tables[-1]:
                tables.append([])
            tables[-1].append(line)
        elif tables and tables[-1]:
            tables.append([])
    for t in (t for t in tables if t):
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in t}
        assert len(widths) == 1, t
    assert "car\\|truck" in out


def test_per_image_worst_first(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(["--per-image"], capsys)
    keys = [(-(r["fp"] + r["fn"]), -r["fn"]) for r in doc["per_image"]]
    assert keys == sorted(keys)
    assert len(doc["per_image"]) == 8  # every image, in JSON
