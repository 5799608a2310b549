"""compare: a class with fewer than MIN_GT ground truths is never called significant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iou_cli.analysis import compare as cmp


def _files(tmp_path: Path) -> list[str]:
    images = [{"id": i, "file_name": f"{i}.jpg", "width": 100, "height": 100} for i in range(20)]
    anns, a, b = [], [], []
    for i in range(20):
        cat = 2 if i < 3 else 1  # "rare" has 3 ground truths, one on each of 3 images
        anns.append(
            {"id": i + 1, "image_id": i, "category_id": cat, "bbox": [10, 10, 30, 30],
             "area": 900, "iscrowd": 0}
        )  # fmt: skip
        det = {"image_id": i, "category_id": cat, "bbox": [10, 10, 30, 30], "score": 0.9}
        a.append(det)
        if cat == 1:
            b.append(det)  # B misses every "rare" object
    gt = {
        "images": images,
        "annotations": anns,
        "categories": [{"id": 1, "name": "common"}, {"id": 2, "name": "rare"}],
    }
    paths = []
    for name, doc in (("a.json", a), ("b.json", b), ("gt.json", gt)):
        (tmp_path / name).write_text(json.dumps(doc))
        paths.append(str(tmp_path / name))
    return paths


def test_few_ground_truths_are_never_significant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _files(tmp_path)
    c = cmp.compare(paths, gates=[], bootstrap=200)
    rare = next(r for r in c.per_class if r["name"] == "rare")
    assert rare["n_gt"] == 3 and rare["delta"] == pytest.approx(-1.0)
    assert rare["significant"] is False and c.params["min_gt"] == cmp.MIN_GT
    # without the rule the same interval would be called significant
    monkeypatch.setattr(cmp, "MIN_GT", 0)
    c = cmp.compare(paths, gates=[], bootstrap=200)
    assert next(r for r in c.per_class if r["name"] == "rare")["significant"] is True
