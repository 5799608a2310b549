"""--jobs: worker processes give the same bits as one process, and the same first error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from iou_cli.errors import InputError
from iou_cli.tasks.panoptic import PanopticState, evaluate_panoptic
from iou_cli.tasks.panoptic_match import ImageScore, Packed
from tests.oracle.panoptic_gen import random_sets


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


def test_the_sums_only_path_gives_the_same_bits(tmp_path: Path) -> None:
    """Without per-image rows the scores come a chunk at a time (Packed): the same numbers
    as image by image, with one process or two."""
    pred, gt = random_sets(tmp_path, 9, n_images=70)
    ref = evaluate_panoptic(str(pred), str(gt), per_image=True)
    for jobs in (1, 2):
        got = evaluate_panoptic(str(pred), str(gt), jobs=jobs)
        assert got.summary == ref.summary
        assert got.per_class == ref.per_class
        assert got.warnings == ref.warnings


def _score(cats: list[int], ious: list[float], mismatch: int = 0) -> ImageScore:
    c = np.array(sorted(set(cats)), dtype=np.int64)
    ones = np.ones(len(c), dtype=np.int64)
    return ImageScore(
        cats=c,
        tp=ones,
        fp=ones * 2,
        fn=ones * 3,
        iou=np.zeros(len(c)),
        match_cat=np.array(cats, dtype=np.int64),
        match_iou=np.array(ious),
        area_mismatch=mismatch,
    )


def test_packed_scores_add_pair_by_pair_in_order() -> None:
    """0.1 + 0.2 + 0.3 added one at a time is 0.6000000000000001; an image's own sum first
    (0.1 + (0.2 + 0.3)) would be 0.6: the packed state must add as image by image does."""
    scores = [_score([0], [0.1]), _score([0, 0], [0.2, 0.3], 2), _score([], []), _score([1], [0.5])]
    packed = Packed.of(scores)
    one, many = PanopticState.zeros(2), PanopticState.zeros(2)
    for s in scores:
        one.add(s)
    many.add_packed(packed)
    assert many.iou == one.iou and many.iou[0] == 0.1 + 0.2 + 0.3 != 0.1 + (0.2 + 0.3)
    assert many.tp.tolist() == one.tp.tolist() and many.fn.tolist() == one.fn.tolist()
    assert many.images == one.images == 4 and int(packed.area_mismatch.sum()) == 2
    for a, b in zip(packed.scores(), scores, strict=True):
        for f in ("cats", "tp", "fp", "fn", "iou", "match_cat", "match_iou"):
            x, y = getattr(a, f), getattr(b, f)
            assert x.dtype == y.dtype and np.array_equal(x, y), f
        assert a.area_mismatch == b.area_mismatch
