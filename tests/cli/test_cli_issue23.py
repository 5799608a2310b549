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
