"""CLI contract of `iou-eval panoptic` (and `compare` on panoptic inputs): stdout, stderr,
exit code; bad input is one located line, exit 2, nothing written."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.cli.helpers import run
from tests.panoptic.bad_cases import CASES, valid
from tests.panoptic.gen import random_sets

PQ_VALID = (0.8 + 0.75 + 20 / 24) / 3  # hand count in tests/panoptic/test_bad_input.py


def test_json_summary_per_class_and_meta(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred, gt = valid(tmp_path)
    code, out, err = run(["panoptic", str(pred), str(gt), "-o", "json", "-q"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["summary"]["PQ"] == pytest.approx(PQ_VALID, abs=1e-15)
    assert list(doc["summary"])[:4] == ["PQ", "SQ", "RQ", "N"]
    assert {r["name"] for r in doc["per_class"]} >= {"person", "car", "sky"}
    assert doc["params"]["task"] == "panoptic" and doc["meta"]["protocol"] == "panoptic"


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_text_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    pred, gt = valid(tmp_path)
    code, out, _ = run(["panoptic", str(pred), str(gt), "-o", fmt, "--per-class", "-q"], capsys)
    assert code == 0 and "person" in out and "PQ" in out
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert float(rows[0]["PQ"]) == pytest.approx(PQ_VALID, abs=1e-15)
        assert [r["name"] for r in rows[1:4]] == ["person", "car", "dog"]


def test_gates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gt = valid(tmp_path)
    base = ["panoptic", str(pred), str(gt), "-o", "json", "-q"]
    assert run([*base, "--fail-under", "PQ=0.5"], capsys)[0] == 0
    code, out, err = run([*base, "--fail-under", "PQ=0.9", "--fail-under", "SQ_th=0.1"], capsys)
    assert code == 1 and json.loads(out)["summary"]["PQ"] < 0.9
    assert err.strip() == f"iou-eval: fail-under: PQ = {PQ_VALID:.6g} < 0.9"
    code, _, err = run([*base, "--fail-under", "fp=3"], capsys)
    assert code == 2 and "use --fail-over fp=3" in err
    code, _, err = run([*base, "--fail-under", "PQ_things=0.3"], capsys)
    assert code == 2 and "unknown summary key 'PQ_things'" in err


@pytest.mark.parametrize(
    ("case", "named", "where", "words"), CASES, ids=[c[0].__name__ for c in CASES]
)
def test_bad_input_exit_2_one_located_line_nothing_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: object,
    named: str,
    where: str | None,
    words: str,
) -> None:
    pred, gt = valid(tmp_path)
    case(pred, gt)  # type: ignore[operator]
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    code, out, err = run(
        ["panoptic", str(pred), str(gt), "-o", "json", "--report", str(target)], capsys
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("iou-eval: error: "), err
    head = str(tmp_path / named) + (f":{where}" if where else "")
    assert err.startswith(f"iou-eval: error: {head}: "), err
    assert words in err and "Traceback" not in err
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_report_has_bars_and_worst_images(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred, gt = random_sets(tmp_path, 11, n_images=6)
    page = tmp_path / "pq.html"
    code, out, _ = run(
        ["panoptic", str(pred), str(gt), "-o", "json", "-q", "--report", str(page)], capsys
    )
    assert code == 0 and "per_image" not in json.loads(out)  # rows only with --per-image
    html = page.read_text()
    assert html.count('class="bar"') >= 3 and "Worst images" in html and "PQ_th" in html
    assert "<script src" not in html and "http" not in html.split("<footer>")[0].lower()


def test_report_escapes_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gt = valid(tmp_path)
    doc = json.loads(gt.read_text())
    doc["categories"][0]["name"] = "<img src=x onerror=alert(1)>"
    gt.write_text(json.dumps(doc))
    page = tmp_path / "pq.html"
    assert (
        run(["panoptic", str(pred), str(gt), "-q", "-o", "json", "--report", str(page)], capsys)[0]
        == 0
    )
    html = page.read_text()
    assert "<img src=x" not in html and "&lt;img src=x" in html


def test_per_image_and_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gt = random_sets(tmp_path, 12, n_images=40)
    base = ["panoptic", str(pred), str(gt), "-o", "json", "-q", "--per-image"]
    one = json.loads(run(base, capsys)[1])
    two = json.loads(run([*base, "--jobs", "2"], capsys)[1])
    assert one["summary"] == two["summary"] and one["per_image"] == two["per_image"]
    pqs = [r["PQ"] for r in one["per_image"] if r["PQ"] is not None]
    assert pqs == sorted(pqs) and len(one["per_image"]) == 40


def test_folders_by_option_and_report_never_into_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred, gt = valid(tmp_path)
    moved = tmp_path / "elsewhere.json"
    pred.rename(moved)  # its PNG folder is no longer named like it
    code, _, err = run(["panoptic", str(moved), str(gt), "-q", "-o", "json"], capsys)
    assert code == 2 and "--pred-folder" in err
    folder = str(tmp_path / "pred")
    code, out, _ = run(
        ["panoptic", str(moved), str(gt), "--pred-folder", folder, "-o", "json"], capsys
    )
    assert code == 0 and json.loads(out)["summary"]["PQ"] == pytest.approx(PQ_VALID, abs=1e-15)
    code, _, err = run(
        ["panoptic", str(moved), str(gt), "--pred-folder", folder, "--report", str(gt)], capsys
    )
    assert code == 2 and gt.read_text().startswith("{")
    inside = tmp_path / "gt" / "report.html"  # the default PNG folder is an input folder too
    code, _, err = run(
        ["panoptic", str(moved), str(gt), "--pred-folder", folder, "--report", str(inside)], capsys
    )
    assert code == 2 and "refusing to write into the input folder" in err
    assert not inside.exists()


def test_compare_two_panoptic_predictions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred, gt = valid(tmp_path)
    doc = json.loads(pred.read_text())
    doc["annotations"][1]["segments_info"][0]["category_id"] = 1  # B: the car called a person
    pred_b = tmp_path / "pred_b.json"
    pred_b.write_text(json.dumps(doc))
    (tmp_path / "pred_b").symlink_to(tmp_path / "pred")
    code, out, _ = run(
        ["compare", str(pred), str(pred_b), str(gt), "-o", "json", "-q", "--bootstrap", "20"],
        capsys,
    )
    assert code == 0
    m = json.loads(out)["metrics"]["PQ"]
    # B: person FP (image 2) -> PQ_person 0.8/1.5; car FN -> 0; sky 0.75
    assert m["a"] == pytest.approx(PQ_VALID, abs=1e-15)
    assert m["b"] == pytest.approx((0.8 / 1.5 + 0.75 + 0) / 3, abs=1e-15)
    code, _, err = run(
        [
            "compare",
            str(pred),
            str(pred_b),
            str(gt),
            "-q",
            "--fail-if-worse",
            "PQ=0.01",
            "-o",
            "json",
        ],
        capsys,
    )
    assert code == 1 and "PQ dropped" in err
    page = tmp_path / "cmp.html"
    code, _, _ = run(
        [
            "compare",
            str(pred),
            str(pred_b),
            str(gt),
            "-q",
            "--bootstrap",
            "10",
            "--report",
            str(page),
        ],
        capsys,
    )
    assert code == 0 and "PQ" in page.read_text()
