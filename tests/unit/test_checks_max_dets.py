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


@pytest.mark.parametrize("unknown", [False, True])  # every image's size known; one not
def test_outside_mask_known_and_unknown_sizes(unknown: bool) -> None:
    import numpy as np

    from iou_cli.data import Boxes

    # image 0 is 100 x 50; image 1 the same or of unknown size
    width = np.array([100.0, np.nan if unknown else 100.0])
    height = np.array([50.0, np.nan if unknown else 50.0])
    xyxy = [
        [10, 10, 20, 20],  # inside
        [100, 10, 120, 20],  # touches the right border only: outside
        [100, 10, 100, 20],  # zero width on the border: inside
        [101, 10, 101, 20],  # zero width beyond the border: outside
        [-5, -5, 0, 60],  # meets the left border only: outside
        [90, 40, 130, 70],  # overlaps a corner: inside
    ]
    rows = xyxy + xyxy
    boxes = Boxes.build(np.array(rows, dtype=float), image=[0] * 6 + [1] * 6, category=[0] * 12)
    want = [False, True, False, True, True, False]
    got = checks._outside_mask(boxes, width, height).tolist()
    assert got == want + ([False] * 6 if unknown else want)
