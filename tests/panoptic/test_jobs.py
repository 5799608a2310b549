"""--jobs: worker processes give the same bits as one process, and the same first error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iou_cli.errors import InputError
from iou_cli.tasks.panoptic import evaluate_panoptic

from .gen import random_sets


def test_jobs_give_identical_results(tmp_path: Path) -> None:
    pred, gt = random_sets(tmp_path, 7, n_images=70)  # three chunks of 32 images
    one = evaluate_panoptic(str(pred), str(gt), per_image=True)
    two = evaluate_panoptic(str(pred), str(gt), per_image=True, jobs=2)
    assert one.summary == two.summary
    assert one.per_class == two.per_class
    assert one.extra == two.extra


def test_jobs_report_the_first_error_in_image_order(tmp_path: Path) -> None:
    pred, gt = random_sets(tmp_path, 8, n_images=70)
    doc = json.loads(pred.read_text())
    for i in (40, 65):  # two broken images in two chunks: the earlier one is named
        doc["annotations"][i]["segments_info"].append(
            {"id": 16_777_000 + i, "category_id": 1, "area": 1, "iscrowd": 0}
        )
    pred.write_text(json.dumps(doc))
    for jobs in (1, 2):
        with pytest.raises(InputError) as info:
            evaluate_panoptic(str(pred), str(gt), jobs=jobs)
        assert (
            info.value.where
            == f"annotations[40].segments_info[{len(doc['annotations'][40]['segments_info']) - 1}]"
        )
