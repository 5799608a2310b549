"""A results list's category ids as Ultralytics writes them (issue 23), against pycocotools.

Ultralytics 8.4 (since PR #18140, Dec 2024) writes ``category_id = class index + 1`` for
non-COCO data; older releases wrote the class index. Each kind of ``predictions.json``
(rows as ``DetectionValidator.pred_to_json`` writes them: stem as ``image_id``, ``file_name``,
``category_id``) is scored against a data.yaml, a YOLO labels folder with its images, and a
COCO ground truth (ids = class + 1, as Ultralytics' ``convert_coco`` reads them), and must
give the AP pycocotools gives on the corrected input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from iou_cli.api import evaluate
from iou_cli.errors import UsageError
from tests.oracle.test_layouts import (
    CLASSES,
    VAL,
    _expected,
    _png,
    _scene,
    _stats,
    _write_yolo_split,
)
from tests.robust._cli import assert_one_error_line, run_cli

# five classes, of which the scene uses the first three: ids fit both readings
NAMES5 = [*CLASSES, "bike", "bus"]


def _rows(preds: list[tuple[Any, ...]], offset: int, *, file_name: bool = True) -> list[Any]:
    rows = []
    for s, c, x1, y1, x2, y2, sc in preds:
        row: dict[str, Any] = {
            "image_id": int(s) if s.isnumeric() else s,
            "category_id": c + offset,
            "bbox": [float(x1), float(y1), float(x2 - x1), float(y2 - y1)],
            "score": sc,
        }
        if file_name:
            row["file_name"] = f"{s}.png"
        rows.append(row)
    return rows


def _ground_truths(tmp_path: Path, gt: dict[str, Any], names: list[str]) -> dict[str, Path]:
    root = tmp_path / "ds"
    _write_yolo_split(root / "images" / "val", root / "labels" / "val", VAL, gt)
    (root / "data.yaml").write_text(
        yaml.safe_dump({"path": str(root), "val": "images/val", "names": names})
    )
    (root / "labels" / "val" / "classes.txt").write_text("".join(n + "\n" for n in names))
    from tests.oracle.test_layouts import H, W

    ids = {s: i + 1 for i, s in enumerate(VAL)}
    anns = [
        {
            "id": k + 1,
            "image_id": ids[s],
            "category_id": c + 1,  # convert_coco: class = category_id - 1
            "bbox": [x1, y1, x2 - x1, y2 - y1],
            "area": (x2 - x1) * (y2 - y1),
            "iscrowd": 0,
        }
        for k, (s, (c, x1, y1, x2, y2)) in enumerate((s, b) for s in VAL for b in gt[s])
    ]
    coco = {
        "images": [{"id": ids[s], "file_name": f"{s}.png", "width": W, "height": H} for s in VAL],
        "annotations": anns,
        "categories": [{"id": i + 1, "name": n} for i, n in enumerate(names)],
    }
    (tmp_path / "gt.json").write_text(json.dumps(coco))
    return {
        "data.yaml": root / "data.yaml",
        "labels": root / "labels" / "val",
        "coco": tmp_path / "gt.json",
    }


@pytest.fixture
def scene() -> Any:
    gt, preds = _scene(VAL, 1)
    return gt, [p for p in preds if p[0] in VAL]


@pytest.mark.parametrize("names", [CLASSES, NAMES5], ids=["ids-at-the-edges", "ids-inside"])
@pytest.mark.parametrize("writer", ["8.4", "older"])
@pytest.mark.parametrize("target", ["data.yaml", "labels", "coco"])
def test_ultralytics_rows_give_the_corrected_ap(
    tmp_path: Path, scene: Any, names: list[str], writer: str, target: str
) -> None:
    gt, preds = scene
    gts = _ground_truths(tmp_path, gt, names)
    offset = 1 if writer == "8.4" else 0
    pred = tmp_path / "predictions.json"
    pred.write_text(json.dumps(_rows(preds, offset)))
    kw: dict[str, Any] = {"images": str(tmp_path / "ds" / "images" / "val")}
    if target != "labels":
        kw = {}
    r = evaluate(str(pred), str(gts[target]), **kw)
    want = _expected(VAL, gt, preds)
    assert _stats(r) == pytest.approx(want, abs=1e-12)
    reading = "index+1" if offset else "index"
    said = [line for line in r.info if "read as class" in line]
    if target == "coco" and offset and names is CLASSES:
        assert not said  # only the usual COCO id join fits: nothing to say
    else:
        assert len(said) == 1 and f"read as class {reading} " in said[0], r.info
    # forcing the right reading gives the same; forcing the wrong one changes the answer
    assert _stats(evaluate(str(pred), str(gts[target]), pred_ids=reading, **kw)) == _stats(r)
    wrong = "index" if offset else "index+1"
    try:
        other = _stats(evaluate(str(pred), str(gts[target]), pred_ids=wrong, unknown="skip", **kw))
    except Exception:  # noqa: BLE001 - every prediction dropped is also "not the same"
        other = None
    assert other != _stats(r)


def test_pred_names_are_honoured_against_a_yolo_ground_truth(tmp_path: Path, scene: Any) -> None:
    gt, preds = scene
    gts = _ground_truths(tmp_path, gt, CLASSES)
    # a model whose class list is in another order: its names file says which is which
    order = [2, 0, 1]
    moved = [(s, order.index(c), *rest) for s, c, *rest in preds]
    pred = tmp_path / "predictions.json"
    pred.write_text(json.dumps(_rows(moved, 1)))
    names = tmp_path / "model_names.txt"
    names.write_text("".join(CLASSES[k] + "\n" for k in order))
    r = evaluate(str(pred), str(gts["data.yaml"]), pred_names=str(names))
    assert _stats(r) == pytest.approx(_expected(VAL, gt, preds), abs=1e-12)
    # without it the classes are joined by index, which is another (wrong) answer
    assert _stats(evaluate(str(pred), str(gts["data.yaml"]))) != _stats(r)
    # a missing names file is an error, never ignored
    code, out, err = run_cli([str(pred), str(gts["data.yaml"]), "--pred-names", "nope.txt"])
    assert code == 2 and "nope.txt" in err


def test_weak_evidence_stops_and_names_the_option(tmp_path: Path) -> None:
    from tests.oracle.test_layouts import H, W

    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "classes.txt").write_text("a\nb\nc\nd\n")
    (labels / "im.txt").write_text(f"1 0.5 0.5 {32 / W} {32 / H}\n")
    _png(tmp_path / "images" / "im.png")
    rows = [
        {"image_id": "im", "category_id": 2, "bbox": [W / 2 - 16, H / 2 - 16, 32, 32], "score": 0.9}
    ]
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps(rows))
    with pytest.raises(UsageError, match=r"--pred-ids index .*--pred-ids index\+1"):
        evaluate(str(pred), str(labels), images=str(tmp_path / "images"))
    line = assert_one_error_line(
        *run_cli([str(pred), str(labels), "--images", str(tmp_path / "images")])
    )
    assert "too weak" in line
    r = evaluate(str(pred), str(labels), images=str(tmp_path / "images"), pred_ids="index+1")
    assert r.summary["AP50"] == pytest.approx(1.0, abs=1e-12)
    assert np.isclose(
        evaluate(str(pred), str(labels), images=str(tmp_path / "images"), pred_ids="index").summary[
            "AP50"
        ],
        0.0,
    )
