"""Issue 23 at the command line: --protocol ultralytics, --pred-ids, the explain verb."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.robust._cli import assert_one_error_line, run_cli

ROOT = Path(__file__).resolve().parents[2]
PRED = str(ROOT / "sample_data" / "coco" / "preds.json")
GT = str(ROOT / "sample_data" / "coco" / "gt.json")
UL_KEYS = ["metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)"]


def test_protocol_ultralytics_json_keys_and_gates() -> None:
    code, out, _ = run_cli([PRED, GT, "--protocol", "ultralytics", "-o", "json", "-q"])
    assert code == 0
    summary = json.loads(out)["summary"]
    assert list(summary)[:4] == UL_KEYS
    # the README's figures on the sample data
    assert round(summary["metrics/mAP50-95(B)"], 6) == 0.458852
    assert round(summary["metrics/mAP50(B)"], 6) == 0.835332
    for key, value in (("mAP50-95", 0.4588), ("metrics/mAP50(B)", 0.8353), ("mp", 0.728)):
        assert (
            run_cli(
                [PRED, GT, "--protocol", "ultralytics", "-q", "--fail-under", f"{key}={value}"]
            )[0]
            == 0
        )
        assert run_cli([PRED, GT, "--protocol", "ultralytics", "-q", "--fail-under", f"{key}={value + 0.01}"])[0] == 1  # fmt: skip
    line = assert_one_error_line(*run_cli([PRED, GT, "-q", "--fail-under", "mAP50=0.5"]))
    assert "--protocol ultralytics" in line


def test_pred_ids_is_checked() -> None:
    line = assert_one_error_line(*run_cli([PRED, GT, "--pred-ids", "index+2"]))
    assert "--pred-ids: expected one of auto, index, index+1" in line


@pytest.mark.parametrize("fmt", ["csv", "json", "markdown"])
def test_explain_sample(fmt: str) -> None:
    code, out, err = run_cli(["explain", PRED, GT, "--to", "ultralytics", "-o", fmt])
    assert code == 0, err
    assert "read ground truth" in err
    if fmt == "json":
        doc = json.loads(out)
        total = doc["total"]["AP"]
        assert abs(sum(s["effect"]["AP"] for s in doc["steps"]) - total) <= 1e-12
        assert doc["end"]["AP"] == pytest.approx(0.458851924001924, abs=1e-15)
        assert [s["step"] for s in doc["steps"]] == [
            "crowd and ignore", "maxDets", "matching rule", "IoU precision", "tie order",
            "AP integration",
        ]  # fmt: skip
        assert "biggest step is crowd and ignore" in doc["reading"]
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert rows[0]["step"] == "coco (start)" and rows[-1]["step"] == "total"
        assert float(rows[0]["AP"]) == 0.4861250337487961
    else:
        assert out.startswith("| step | change |") and "biggest step" in out


def test_explain_errors() -> None:
    line = assert_one_error_line(*run_cli(["explain", PRED, GT, "--to", "lvis"]))
    assert "--to: expected one of ultralytics, voc, voc07" in line
    line = assert_one_error_line(*run_cli(["explain", PRED, "nope.json"]))
    assert "nope.json" in line


def test_explain_to_voc07_markdown() -> None:
    code, out, _ = run_cli(["explain", PRED, GT, "--to", "voc07", "-o", "markdown", "-q"])
    assert code == 0 and "11 points" in out


def test_newcomer_traps() -> None:
    line = assert_one_error_line(*run_cli([PRED, GT, "--fail-under", "AP=50"]))
    assert "AP is a fraction from 0 to 1, not a percentage (did you mean 0.50?)" in line
    line = assert_one_error_line(*run_cli([PRED, GT, "--classes", "Person,dgo"]))
    assert "did you mean 'Person' -> 'person', 'dgo' -> 'dog'?" in line
    from iou_cli.api import evaluate

    r = evaluate(PRED, GT, matches=True)
    text = repr(r)
    assert text.startswith("Result(protocol='coco', AP=0.4861, AP50=0.8764") and len(text) < 200


def test_hints_name_the_option_that_gives_the_right_number(tmp_path: Path) -> None:
    from PIL import Image

    labels, images, preds = tmp_path / "gt", tmp_path / "pics", tmp_path / "preds"
    for d in (labels, images, preds):
        d.mkdir()
    (labels / "a.txt").write_text("0 0.5 0.5 0.5 0.5\n")  # b.png has no objects: no file
    for stem in ("a", "b"):
        Image.new("RGB", (64, 64)).save(images / f"{stem}.png")
    (preds / "a.txt").write_text("0 0.5 0.5 0.5 0.5 0.9\n0 0.5 0.5 0.4 0.4 0.8\n")
    (preds / "b.txt").write_text("0 0.5 0.5 0.5 0.5 0.95\n")  # a false positive on b
    args = [str(preds), str(labels), "--pred-format", "yolo", "-q"]
    line = assert_one_error_line(*run_cli(args))
    assert "give --images DIR" in line and "skip-images" not in line
    code, out, _ = run_cli([*args, "--images", str(images), "-o", "json"])
    assert code == 0
    # by hand: b's 0.95 false positive ranks first, so AP50 is not 1 (skip-images would say 1)
    ap50 = json.loads(out)["summary"]["AP50"]
    code, out, _ = run_cli([*args, "--unknown", "skip-images", "-o", "json"])
    assert json.loads(out)["summary"]["AP50"] > ap50
    # a class the labels never use, without a class list: the hint is --names
    (preds / "a.txt").write_text("0 0.5 0.5 0.5 0.5 0.9\n3 0.5 0.5 0.4 0.4 0.8\n")
    line = assert_one_error_line(*run_cli([*args, "--images", str(images)]))
    assert "--names FILE" in line and "skip-classes" not in line
