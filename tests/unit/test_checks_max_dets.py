"""The maxDets warning counts predictions per (image, class) with a table when the pairs are
dense and by sorting when sparse: the same warning either way (a hand-made scene: image 2 /
class b has 4 predictions, image 1 / class a 3, with ``max_dets`` 2)."""

from __future__ import annotations

from typing import Any

import pytest

from iou_cli import checks
from iou_cli.api import load_pair, run_options


def _scene() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    gt = {
        "images": [{"id": i, "width": 100, "height": 100} for i in (1, 2, 3)],
        "categories": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
             "iscrowd": 0},
        ],
    }  # fmt: skip
    dets = [{"image_id": 2, "category_id": 2, "bbox": [i, 0, 5, 5], "score": 0.5} for i in range(4)]
    dets += [
        {"image_id": 1, "category_id": 1, "bbox": [i, 0, 5, 5], "score": 0.5} for i in range(3)
    ]
    dets += [{"image_id": 3, "category_id": 1, "bbox": [1, 1, 5, 5], "score": 0.5}]
    return dets, gt


@pytest.mark.parametrize("slack", [checks.DENSE_SLACK, -(10**9)])  # table, then sort
def test_max_dets_warning_dense_and_sparse(monkeypatch: pytest.MonkeyPatch, slack: int) -> None:
    monkeypatch.setattr(checks, "DENSE_SLACK", slack)
    dets, gt = _scene()
    ds = load_pair(dets, gt, run_options(None, {}).for_inputs().loader_options())
    got = [w for w in checks.warnings_for(ds, max_dets=2) if "predictions (at most" in w]
    assert got == [
        "2 image/class pairs have more than 2 predictions (at most 4): only the 2 "
        "highest-scoring of each are scored (--max-dets) (first: image 1 / a, image 2 / b)"
    ]
