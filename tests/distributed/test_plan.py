"""The cluster plan without a cluster (fast): map per image bucket in any row order, the
per-class rows shuffled and reduced per class, combined on the driver, equals the one-shot
``evaluate`` bit for bit; a failing map is reported located, as an InputError."""

from __future__ import annotations

import pytest

from iou_cli import evaluate
from iou_cli.distributed import core, rows
from iou_cli.errors import InputError
from tests.distributed.scenes import CASES, plan, same, scene


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n_buckets", [1, 3])
def test_plan_equals_one_shot(case: str, n_buckets: int) -> None:
    protocol, iou_type = CASES[case]
    for seed in (1, 2):
        gt, dets = scene(case, seed)
        one = evaluate(dets, gt, protocol=protocol, iou_type=iou_type)
        got = plan(gt, dets, protocol, n_buckets, seed, iou_type=iou_type)
        same(one, got)


def test_images_without_predictions_count_their_ground_truth() -> None:
    gt, dets = scene("coco-bbox", 5)
    first = dets[0]["image_id"]
    dets = [d for d in dets if d["image_id"] == first]
    same(evaluate(dets, gt), plan(gt, dets, "coco", 2, 0))


def test_payload_round_trip() -> None:
    import numpy as np

    arrays: dict[str, np.ndarray] = {
        "a": np.arange(5, dtype=np.int64),
        "b": np.ones((2, 3), dtype=np.uint8),
    }
    out, info = rows.unpack(rows.pack(arrays, {"x": 1}))
    assert info == {"x": 1}
    assert all(np.array_equal(out[k], arrays[k]) for k in arrays)


def test_worker_error_is_reported_located() -> None:
    gt, dets = scene("coco-bbox", 3)
    dets[4]["bbox"] = [1, 2, "wide", 4]
    with pytest.raises(InputError) as err:
        plan(gt, dets, "coco", 2, 0)
    e = err.value
    assert e.path == "<predictions>"
    assert (e.where or "").startswith("[4]"), e.where
    assert "bbox" in e.message()


def test_worker_crash_names_the_place() -> None:
    job = core.Job(gt={"images": []}, protocol="coco", options={"iou_type": "bbox"})
    try:
        raise ZeroDivisionError("boom")
    except ZeroDivisionError as exc:
        cat, payload = core.error_row(job, exc, None)
    assert cat == rows.ERROR
    with pytest.raises(
        InputError, match=r"<predictions>:worker, in test_worker_crash.*ZeroDivisionError: boom"
    ):
        core.raise_error(payload)


def test_missing_columns_are_refused_on_the_driver() -> None:
    with pytest.raises(InputError, match=r"preds.parquet:columns: .*missing column\(s\) score, "):
        core.check_columns(["image_id", "category_id", "bbox"], "preds.parquet", "row")
    core.check_columns(["image_id", "category_id", "score", "segmentation"], "p", None)
