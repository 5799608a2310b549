"""``--protocol lvis`` through the CLI: each federated rule on a hand-counted scene, the output
keys, the frequency on per-class rows, and refusals (exit 2, one located line).

The scene: one image, ground truth one box of class A (frequent). Class B (common) is listed
in ``neg_category_ids``; class C (rare) neither has ground truth nor is listed.

* A's predictions: a false positive scored 0.9, then the exact box scored 0.8. Precision at
  the true positive is 1/2 and recall reaches 1 there, so every IoU threshold's 101 recall
  points read 1/2: AP = APf = 0.5, AR300 = 1.
* A in ``not_exhaustive_category_ids``: the unmatched 0.9 is ignored, not a false positive:
  AP = 1 / (1 + eps) (precision is tp / (tp + fp + eps) there, eps = 2**-52; 1 / (2 + eps)
  rounds to 1/2 exactly).
* 300 predictions of C scored 0.95 in the same image: C is not evaluated, but they take the
  image's 300 places first (lvis-api limits the results per image before anything else), so
  A's predictions are gone: AP = 0 (recall 0 of one ground truth), AR300 = 0.
* B's prediction is evaluated (B is verified absent) but B has no ground truth, so its AP is
  undefined and APc (B is the only common class) is null; APr is null (C has no ground truth).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run

KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf", "AR300", "ARs", "ARm"]
KEYS += ["ARl"]


def scene(*, not_exhaustive: bool = False, crowd_out: bool = False) -> tuple[Any, Any]:
    gt = {
        "images": [
            {
                "id": 1,
                "width": 100,
                "height": 100,
                "coco_url": "http://images.cocodataset.org/val2017/000000000001.jpg",
                "neg_category_ids": [2],
                "not_exhaustive_category_ids": [1] if not_exhaustive else [],
            }
        ],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 40, 40], "area": 1600}
        ],
        "categories": [
            {"id": 1, "name": "apple", "frequency": "f"},
            {"id": 2, "name": "banana", "frequency": "c"},
            {"id": 3, "name": "cherry", "frequency": "r"},
        ],
    }
    preds = [
        {"image_id": 1, "category_id": 1, "bbox": [60, 60, 30, 30], "score": 0.9},
        {"image_id": 1, "category_id": 1, "bbox": [10, 10, 40, 40], "score": 0.8},
        {"image_id": 1, "category_id": 2, "bbox": [10, 10, 40, 40], "score": 0.7},
    ]
    if crowd_out:
        preds += [{"image_id": 1, "category_id": 3, "bbox": [0, 0, 5, 5], "score": 0.95}] * 300
    return gt, preds


def _run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gt: Any, preds: Any, *extra: str
) -> tuple[int, str, str]:
    g = tmp_path / "gt.json"
    p = tmp_path / "preds.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(preds))
    return run([str(p), str(g), "--protocol", "lvis", "-o", "json", "-q", *extra], capsys)


@pytest.mark.parametrize(
    "kw, ap, ar",
    [
        ({}, 0.5, 1.0),
        ({"not_exhaustive": True}, 1 / (1 + 2**-52), 1.0),
        ({"crowd_out": True}, 0.0, 0.0),
    ],
)
def test_federated_rules_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kw: dict[str, bool], ap: float, ar: float
) -> None:
    code, out, _ = _run(tmp_path, capsys, *scene(**kw))
    assert code == 0
    data = json.loads(out)
    s = data["summary"]
    assert list(s)[: len(KEYS)] == KEYS
    # (means of 101 or 1010 equal values may round in the last bit: 1e-15)
    got = [s["AP"], s["AP50"], s["AP75"], s["APf"], s["AR300"]]
    assert got == pytest.approx([ap, ap, ap, ap, ar], abs=1e-15)
    assert s["APr"] is None and s["APc"] is None
    assert s["APs"] is None and s["APl"] is None  # the one ground truth is medium
    rows = {r["name"]: r for r in data["per_class"]}
    assert [rows[n]["frequency"] for n in ("apple", "banana", "cherry")] == ["f", "c", "r"]
    assert rows["apple"]["AP"] == pytest.approx(ap, abs=1e-15) and rows["banana"]["AP"] is None


def test_plain_coco_ground_truth_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, preds = scene()
    for im in gt["images"]:
        del im["neg_category_ids"], im["not_exhaustive_category_ids"]
    for c in gt["categories"]:
        del c["frequency"]
    code, out, err = _run(tmp_path, capsys, gt, preds)
    assert code == 2 and out == ""
    assert err.startswith("iou-eval: error: ") and "needs an LVIS ground truth" in err
    assert err.count("\n") == 1


def test_missing_field_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt, preds = scene()
    del gt["categories"][1]["frequency"]
    code, out, err = _run(tmp_path, capsys, gt, preds)
    assert code == 2 and out == ""
    assert f"{tmp_path / 'gt.json'}:categories[1].frequency: missing" in err
