"""The CLI contract on COCO inputs: stdout, stderr and exit code for every output and error."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iou_cli.cli import main
from tests.conftest import DATA
from tests.helpers import run
from tests.oracle.pycoco import STAT_KEYS

GT = str(DATA / "coco" / "instances_val2014_100.json")
DT = str(DATA / "coco" / "instances_val2014_fakebbox100_results.json")
AP = 0.5045806987249628  # pycocotools on this set (see tests/oracle/test_coco_real.py)
WARN_LONELY = "iou-eval: warning: 6 classes have predictions but no ground truth"


def write(tmp_path: Path, name: str, obj: object) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
    return str(p)


def small_gt() -> dict:
    return {
        "images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [0, 0, 10, 10],
                "area": 100,
                "iscrowd": 0,
            }
        ],
        "categories": [{"id": 1, "name": "cat"}],
    }


# ------------------------------------------------------------------ outputs


def test_default_is_csv_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([DT, GT, "-q"], capsys)
    # -q drops info lines; the one warning (6 predicted classes absent from these 100 images)
    # stays: the fake results do predict 'fire hydrant', 'donut', ... which the subset lacks
    assert code == 0 and err.startswith(WARN_LONELY) and err.count("\n") == 1
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1 and rows[0]["name"] == "all"
    assert float(rows[0]["AP"]) == AP


def test_json_has_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["evaluate", DT, GT, "-o", "json", "-q"], capsys)
    doc = json.loads(out)
    assert code == 0
    assert list(doc) == ["summary", "per_class", "params", "meta"]  # meta: issue 15
    assert list(doc["summary"])[:12] == STAT_KEYS
    for key in ("iou_thr", "score_thr", "tp", "fp", "fn", "precision", "recall", "f1", "mean_iou"):
        assert key in doc["summary"]
    assert doc["summary"]["AP"] == AP
    assert len(doc["per_class"]) == 80
    assert {"category_id", "name", "AP", "AP50", "AP75", "AR100", "n_gt", "n_det"} <= set(
        doc["per_class"][0]
    )
    # a class without ground truth has undefined AP: null, never -1
    assert any(row["AP"] is None for row in doc["per_class"])


def test_operating_point_is_consistent(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run([DT, GT, "-o", "json", "-q", "--score-thr", "0.5"], capsys)
    s = json.loads(out)["summary"]
    assert s["score_thr"] == 0.5
    # hand identities: precision = tp/(tp+fp), recall = tp/(tp+fn), f1 = 2pr/(p+r)
    assert s["precision"] == s["tp"] / (s["tp"] + s["fp"])
    assert s["recall"] == s["tp"] / (s["tp"] + s["fn"])
    assert s["f1"] == pytest.approx(
        2 * s["precision"] * s["recall"] / (s["precision"] + s["recall"])
    )
    assert s["tp"] + s["fn"] == 830  # 839 annotations minus 9 crowd regions


def test_per_class_csv_and_markdown_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run([DT, GT, "-o", "csv", "--per-class", "-q"], capsys)
    assert len(list(csv.DictReader(io.StringIO(out)))) == 81
    _, out, _ = run([DT, GT, "-o", "markdown", "--per-class", "-q"], capsys)
    assert out.startswith("| metric | value |") and "| person |" in out
    _, out, _ = run([DT, GT, "-o", "table", "--per-class", "-q"], capsys)
    assert "0.5046" in out and "person" in out and "\x1b[" not in out


def test_table_piped_uses_its_full_width(tmp_path: Path) -> None:
    # piped, -o table is not cut to 80 columns (issue 15): every column, full headers;
    # the 80-column terminal is tested in test_cli_first_run.py through a real pty
    env = dict(os.environ, COLUMNS="80", TERM="dumb")
    p = subprocess.run(
        [sys.executable, "-m", "iou_cli", DT, GT, "-o", "table", "--per-class", "-q"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    assert "precision" in p.stdout and "n_det" in p.stdout
    assert "…" not in p.stdout


def test_info_line_on_stderr_unless_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run([DT, GT, "-o", "json"], capsys)
    assert "839 boxes" in err and "734 boxes" in err


# ------------------------------------------------------------------ gate


def test_fail_under_exits_1_after_printing(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([DT, GT, "-o", "json", "-q", "--fail-under", "AP=0.6"], capsys)
    assert code == 1
    assert json.loads(out)["summary"]["AP"] == AP
    assert "AP" in err and "< 0.6" in err


def test_fail_under_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run([DT, GT, "-q", "--fail-under", "AP=0.5", "--fail-under", "AR100=0.59"], capsys)
    assert code == 0


@pytest.mark.parametrize("gate", ["APX=0.5", "AP", "AP=abc"])
def test_fail_under_bad_key_is_usage_error(gate: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([DT, GT, "-q", "--fail-under", gate], capsys)
    assert code == 2 and out == ""
    assert err.startswith("iou-eval: error: --fail-under") and err.count("\n") == 1


# ------------------------------------------------------------------ matches


def test_matches_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out" / "m.csv"
    target.parent.mkdir()
    code, _, _ = run([DT, GT, "-q", "--matches", str(target), "--score-thr", "0.5"], capsys)
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
        # issue 11: a false positive's TIDE error and best-overlapping ground truth
        "error",
        "best_gt_id",
        "best_gt_class",
        "best_gt_iou",
    ]
    outcomes = [r["outcome"] for r in rows]
    _, out, _ = run([DT, GT, "-q", "-o", "json", "--score-thr", "0.5"], capsys)
    s = json.loads(out)["summary"]
    assert outcomes.count("TP") == s["tp"] and outcomes.count("FP") == s["fp"]
    assert outcomes.count("FN") == s["fn"]
    assert os.listdir(target.parent) == ["m.csv"]  # no temporary files left


def test_matches_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    # stdout then carries only the matches CSV (issue 15: one stream, one table)
    code, out, _ = run([DT, GT, "-q", "--matches", "-"], capsys)
    assert code == 0 and out.startswith("image,category,pred_id,gt_id,score,iou,outcome")
    assert "summary" not in out and "\nAP," not in out  # no report mixed in
    code, out, err = run([DT, GT, "-q", "-o", "json", "--matches", "-"], capsys)
    assert code == 2 and out == "" and "--matches -" in err


def test_matches_refuses_to_overwrite_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = write(tmp_path, "gt.json", small_gt())
    dt = write(
        tmp_path, "dt.json", [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 1}]
    )
    before = Path(gt).read_text()
    code, out, err = run([dt, gt, "--matches", gt], capsys)
    assert code == 2 and out == "" and "refusing to overwrite the input file" in err
    assert Path(gt).read_text() == before


# ------------------------------------------------------------------ valid edge cases


def test_empty_prediction_list_gives_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = write(tmp_path, "gt.json", small_gt())
    dt = write(tmp_path, "dt.json", [])
    code, out, _ = run([dt, gt, "-o", "json", "-q"], capsys)
    s = json.loads(out)["summary"]
    assert code == 0 and s["AP"] == 0.0 and s["AR100"] == 0.0 and s["fn"] == 1 and s["tp"] == 0


def test_perfect_prediction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = write(tmp_path, "gt.json", small_gt())
    dt = write(
        tmp_path,
        "dt.json",
        [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}],
    )
    _, out, _ = run([dt, gt, "-o", "json", "-q"], capsys)
    s = json.loads(out)["summary"]
    # pycocotools' precision is tp / (tp + fp + eps) = 1 / (1 + 2**-52) = 0.9999999999999998
    # at every recall point (pycocotools prints the same); recall is exactly 1.
    # Area 100 < 32^2: a small object; medium and large have no ground truth -> null.
    one = 1 / (1 + 2**-52)
    assert s["AP"] == one and s["APs"] == one and s["APm"] is None and s["APl"] is None
    assert s["AR100"] == 1.0
    assert s["mean_iou"] == 1.0 and s["f1"] == 1.0


# ------------------------------------------------------------------ errors


BAD_DETS = [
    ([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10], "score": 1}], "[0].bbox: expected 4 numbers, got 3"),
    ([{"image_id": 1, "category_id": 1, "bbox": [0, 0, -1, 5], "score": 1}], "[0].bbox: negative width or height"),
    ([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 5]}], "[0]: missing key 'score'"),
    ([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, "5"], "score": 1}], "[0].bbox[3]: expected a number"),
    ([{"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, 5], "score": 1}], "[0].image_id: 1 image not in the ground truth"),
    ([{"image_id": 1, "category_id": 9, "bbox": [0, 0, 1, 5], "score": 1}], "[0].category_id: 1 category not in the ground truth"),
    ('[{"image_id": 1, "category_id": 1, "bbox": [0, 0, NaN, 5], "score": 1}]', "NaN is not valid JSON"),
    ("[{", "not valid JSON"),
    ("", "empty file"),
    ("42", "expected a COCO dataset object or a results list"),
]  # fmt: skip


@pytest.mark.parametrize(("dets", "message"), BAD_DETS)
def test_bad_predictions_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dets: object, message: str
) -> None:
    gt = write(tmp_path, "gt.json", small_gt())
    dt = write(tmp_path, "dt.json", dets)
    code, out, err = run([dt, gt], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"iou-eval: error: {dt}:") and err.count("\n") == 1, err
    assert message in err, err
    assert "Traceback" not in err


def test_swapped_arguments_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([GT, DT], capsys)
    assert code == 2 and "predictions come first" in err and err.count("\n") == 1


def test_missing_file_and_missing_argument(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["nope.json", GT], capsys)
    assert code == 2 and err == "iou-eval: error: nope.json: no such file or folder\n"
    code, _, err = run([DT], capsys)
    assert code == 2 and err.startswith("iou-eval: error:") and err.count("\n") == 1


def test_bad_option_values(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["-o", "xml"], ["--protocol", "x"], ["--max-dets", "10,1"], ["--iou-thr", "2"]):
        code, out, err = run([DT, GT, *args], capsys)
        assert code == 2 and out == "" and err.startswith("iou-eval: error:"), args


def test_debug_shows_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    from iou_cli.errors import InputError

    with pytest.raises(InputError):
        main(["nope.json", GT, "--debug"])


def test_custom_max_dets_keep_an_honest_summary(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run([DT, GT, "-o", "json", "-q", "--max-dets", "1,10,300"], capsys)
    s = json.loads(out)["summary"]
    assert "AR300" in s and "AR100" not in s
    # this set has < 100 detections per image and class: maxDets 300 changes nothing
    assert s["AP"] == AP


# ------------------------------------------------------------------ iou verb


def test_iou_two_boxes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["iou", "50,100,150,150", "105,120,185,160", "--box-format", "xyxy"], capsys)
    assert code == 0 and float(out) == 1350 / 6850
    _, out, _ = run(["iou", "50,100,150,150", "105,120,185,160", "--crowd"], capsys)
    assert float(out) == 1350 / 5000
    _, out, _ = run(["iou", "0,0,10,10", "5,5,10,10", "--box-format", "xywh"], capsys)
    assert float(out) == 25 / 175


def test_iou_csv_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text("x1,y1,x2,y2\n0,0,10,10\n5,5,15,15\n")
    b.write_text("0,0,10,10\n100,100,110,110\n5,5,15,15\n")
    code, out, _ = run(["iou", str(a), str(b), "-o", "json"], capsys)
    assert code == 0
    assert json.loads(out)["iou"] == [[1.0, 0.0, 25 / 175], [25 / 175, 0.0, 1.0]]
    _, out, _ = run(["iou", str(a), str(b)], capsys)
    assert out.splitlines()[0] == ",b0,b1,b2"


def test_iou_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["iou", "1,2,3", "0,0,1,1"], capsys)
    assert code == 2 and "expected 4 numbers" in err
    code, _, err = run(["iou", "5,0,1,1", "0,0,1,1"], capsys)
    assert code == 2 and "inverted" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("0,0,1,1\n0,0,1\n")
    code, _, err = run(["iou", str(bad), "0,0,1,1"], capsys)
    assert code == 2 and err == f"iou-eval: error: {bad}:2: expected 4 numbers, got 3\n"


def test_iou_csv_errors_are_located_at_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    boxes = tmp_path / "boxes.csv"
    # header, a box, a blank line, then an inverted box on line 4
    boxes.write_text("x1,y1,x2,y2\n0,0,1,1\n\n5,0,1,1\n")
    code, out, err = run(["iou", str(boxes), "0,0,1,1"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"iou-eval: error: {boxes}:4: inverted box (x2 < x1 or y2 < y1): [5.0, 0.0, 1.0, 1.0]\n"
    )
    boxes.write_text("0,0,1,1\n0,0,nan,1\n")
    code, _, err = run(["iou", "0,0,1,1", str(boxes)], capsys)
    assert code == 2 and err.startswith(f"iou-eval: error: {boxes}:2: expected finite numbers")
    # a negative width is inverted in xywh, not in xyxy
    boxes.write_text("0,0,1,1\n0,0,-1,1\n")
    code, _, err = run(["iou", str(boxes), "0,0,1,1", "--box-format", "xywh"], capsys)
    assert code == 2 and err.startswith(f"iou-eval: error: {boxes}:2: inverted box (negative")
    # a cell that is not a number after the header line; quoted newlines count as lines
    boxes.write_text('x1,y1,x2,y2\n"0\n",0,1,1\n0,0,one,1\n')
    code, _, err = run(["iou", str(boxes), "0,0,1,1"], capsys)
    assert code == 2 and err.startswith(f"iou-eval: error: {boxes}:4: expected 4 numbers, got ")
    assert "row" not in err


def test_iou_negative_box_is_an_argument_not_an_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A = [-5, 5] x [0, 5], B = [0, 5] x [0, 5]: intersection 25, union 50
    code, out, err = run(["iou", "-5,0,5,5", "0,0,5,5"], capsys)
    assert (code, out, err) == (0, "0.5\n", "")
    # options before, between and after; an option value that is negative stays its value
    code, out, _ = run(
        ["iou", "--box-format", "xywh", "-5,0,10,5", "-o", "json", "0,0,5,5"], capsys
    )
    assert code == 0 and json.loads(out) == {"iou": 0.5, "box_format": "xywh", "crowd": False}
    code, out, _ = run(["iou", "0,0,5,5", "-5;-5;10;10", "--crowd"], capsys)
    assert code == 0 and float(out) == 1.0  # all of A inside the crowd region B
    code, out, _ = run(["iou", "--", "-5,0,5,5", "-5,0,5,5"], capsys)
    assert code == 0 and float(out) == 1.0
    # still an error when it is not a box, and unknown options are still unknown
    code, _, err = run(["iou", "-5,0,5", "0,0,5,5"], capsys)
    assert code == 2 and err == "iou-eval: error: BOX_A: expected 4 numbers, got 3 in '-5,0,5'\n"
    code, _, err = run(["iou", "-5,0,5,5", "0,0,5,5", "--crowed"], capsys)
    assert code == 2 and "--crowed" in err


def test_iou_matrix_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.csv"
    a.write_text("0,0,10,10\n5,5,15,15\n")
    code, out, _ = run(["iou", str(a), "0,0,10,10", "-o", "markdown"], capsys)
    assert code == 0
    assert out == "|  | b0 |\n|---|---:|\n| a0 | 1.000000 |\n| a1 | 0.142857 |\n"  # 25 / 175
    code, out, _ = run(["iou", str(a), "0,0,10,10", "-o", "csv"], capsys)
    assert out == f",b0\na0,1.0\na1,{25 / 175!r}\n"
    code, out, _ = run(["iou", "0,0,10,10", "5,5,15,15", "-o", "table"], capsys)
    assert code == 0 and "IoU (xyxy)" in out and "0.142857" in out
    code, _, err = run(["iou", "0,0,10,10", "5,5,15,15", "-o", "yaml"], capsys)
    assert code == 2 and "-o/--output" in err


def test_debug_shows_the_traceback_of_every_verb(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("0,0,1\n")
    missing = str(tmp_path / "missing.csv")
    for args in (["iou", str(bad), "0,0,1,1"], ["labels", missing, missing]):
        p = subprocess.run(
            [sys.executable, "-m", "iou_cli", *args, "--debug"], capture_output=True, text=True
        )
        assert p.returncode == 1 and "Traceback" in p.stderr, args
        p = subprocess.run([sys.executable, "-m", "iou_cli", *args], capture_output=True, text=True)
        assert p.returncode == 2 and "Traceback" not in p.stderr, args


def test_version_and_module_entry_point() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "iou_cli", "--version"], capture_output=True, text=True
    )
    assert p.returncode == 0 and p.stdout.startswith("iou-eval ")
    p = subprocess.run(
        [sys.executable, "-m", "iou_cli", DT, GT, "-q"], capture_output=True, text=True
    )
    assert p.returncode == 0 and p.stderr.startswith(WARN_LONELY)
    assert p.stdout.startswith("category_id,name,AP,")


def test_fail_under_typo_fails_before_reading_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    # the inputs do not exist: the gate key is checked first, so the error names the key
    code, _, err = run(["nope.json", "nope2.json", "--fail-under", "APx=0.5"], capsys)
    assert code == 2 and "unknown summary key 'APx'" in err
    code, _, err = run(
        ["nope.json", "nope2.json", "--protocol", "voc", "--fail-under", "mAP=0.5"], capsys
    )
    assert code == 2 and "nope" in err  # mAP is a VOC key: now the missing file is reported
    # mAP under COCO is COCO's AP (issue 15): accepted, so the missing file is reported
    code, _, err = run(["nope.json", "nope2.json", "--fail-under", "mAP=0.5"], capsys)
    assert code == 2 and "nope" in err and "summary key" not in err


def test_duplicate_category_names_cannot_be_matched_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt_doc = small_gt()
    gt_doc["categories"].append({"id": 2, "name": "cat"})
    gt = write(tmp_path, "gt.json", gt_doc)
    pred_doc = small_gt()
    pred_doc["annotations"][0]["score"] = 0.9
    dt = write(tmp_path, "dt.json", pred_doc)  # a COCO dataset: matched by file name and name
    code, out, err = run([dt, gt], capsys)
    assert code == 2 and out == ""
    assert (
        err
        == f"iou-eval: error: {gt}:categories: duplicate category name 'cat': categories cannot be matched by name\n"
    )
