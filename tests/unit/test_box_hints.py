"""Near-zero AP while the boxes would overlap under another format: the warning names it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iou_cli.api import evaluate

ROOT = Path(__file__).resolve().parents[2]
GT = json.loads((ROOT / "sample_data" / "coco" / "gt.json").read_text())
PRED = json.loads((ROOT / "sample_data" / "coco" / "preds.json").read_text())
SIZE = {im["id"]: (im["width"], im["height"]) for im in GT["images"]}


def _rewrite(how: str) -> list[dict[str, object]]:
    out = []
    for r in PRED:
        x, y, w, h = r["bbox"]
        W, H = SIZE[r["image_id"]]
        box = {
            "corners": [x, y, x + w, y + h],
            "centres": [x + w / 2, y + h / 2, w, h],
            "normalised": [x / W, y / H, w / W, h / H],
        }[how]
        out.append({**r, "bbox": box})
    return out


@pytest.mark.parametrize(
    ("how", "named"),
    [
        ("corners", "x1 y1 x2 y2 (corners), not x y w h"),
        ("centres", "cx cy w h (centres), not x y w h"),
        ("normalised", "normalised to [0, 1]"),
    ],
)
def test_the_other_format_is_named(how: str, named: str) -> None:
    r = evaluate(_rewrite(how), GT)
    assert r.summary["AP"] < 0.01
    hint = [w for w in r.warnings if "check the predictions' box format" in w]
    assert len(hint) == 1 and named in hint[0], r.warnings


def test_silent_on_a_normal_run() -> None:
    r = evaluate(PRED, GT)
    assert not any("box format" in w for w in r.warnings)
