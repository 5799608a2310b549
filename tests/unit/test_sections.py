"""Typed analysis sections (iou_cli.analysis.sections): each is its JSON section, key for key."""

from __future__ import annotations

import json
from pathlib import Path

from iou_cli import evaluate
from iou_cli.analysis.sections import Calibration, Confusion, Rows, TideBreakdown, plain
from iou_cli.report.result import to_json

ROOT = Path(__file__).resolve().parents[2]
GT = ROOT / "sample_data" / "coco" / "gt.json"
PRED = ROOT / "sample_data" / "coco" / "preds.json"


def test_sections_are_typed_and_serialise_to_their_json() -> None:
    r = evaluate(PRED, GT, tide=True, confusion=True, per_image=True, calibration=True)
    a = r.analyses
    assert isinstance(a["tide"], TideBreakdown) and isinstance(a["confusion"], Confusion)
    assert isinstance(a["calibration"], Calibration) and isinstance(a["per_image"], Rows)
    assert r.extra is r.analyses  # the old name
    doc = json.loads(to_json(r))
    for key, section in plain(a).items():
        assert doc[key] == json.loads(json.dumps(section)), key
    t = a["tide"]
    assert t["dAP"] is t.dAP and list(t) == ["pos_thr", "bg_thr", "baseline", "dAP", "count"]
    assert t.to_json()["count"] == doc["tide"]["count"]
    assert a["per_image"] == doc["per_image"] and len(a["per_image"]) == len(doc["per_image"])
