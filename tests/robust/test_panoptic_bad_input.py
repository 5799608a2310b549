"""Broken panoptic inputs: one located InputError each (the CLI's exit-2 line is tested in
tests/cli/test_cli_panoptic.py with the same table)."""

from __future__ import annotations

from pathlib import Path

import pytest

from iou_cli.errors import InputError
from iou_cli.tasks.panoptic import evaluate_panoptic
from tests.robust.panoptic_bad_cases import CASES, valid


def test_the_valid_pair_evaluates(tmp_path: Path) -> None:
    pred, gt = valid(tmp_path)
    res = evaluate_panoptic(str(pred), str(gt))
    # image 1: person 24 px vs 30 px (I 24, IoU 0.8), sky 24 vs 18 (I 18, IoU 0.75);
    # image 2: car 24 vs 20 (I 20, IoU 20/24). PQ = (0.8 + 0.75 + 20/24) / 3.
    assert res.summary["PQ"] == pytest.approx((0.8 + 0.75 + 20 / 24) / 3, abs=1e-15)
    assert res.summary["tp"] == 3 and res.summary["fp"] == res.summary["fn"] == 0


@pytest.mark.parametrize(
    ("case", "named", "where", "words"), CASES, ids=[c[0].__name__ for c in CASES]
)
def test_bad_input_is_one_located_error(
    tmp_path: Path, case: object, named: str, where: str | None, words: str
) -> None:
    assert_one_located_error(tmp_path, case, named, where, words)


def assert_one_located_error(
    tmp_path: Path, case: object, named: str, where: str | None, words: str
) -> None:
    """``case`` spoils a valid pair: the evaluation raises one error at ``named:where``."""
    pred, gt = valid(tmp_path)
    case(pred, gt)  # type: ignore[operator]
    with pytest.raises(InputError) as info:
        evaluate_panoptic(str(pred), str(gt))
    err = info.value
    assert err.path is not None and Path(err.path) == tmp_path / named, err.message()
    assert err.where == where, err.message()
    assert words in err.reason, err.message()


def test_unknown_skip_leaves_out_one_sided_images(tmp_path: Path) -> None:
    from tests.robust.panoptic_bad_cases import pred_no_record, pred_unknown_image

    pred, gt = valid(tmp_path)
    pred_no_record(pred, gt)
    pred_unknown_image(pred, gt)
    res = evaluate_panoptic(str(pred), str(gt), unknown="skip")
    assert res.summary["images"] == 1
    assert res.params["skipped"] == {"missing_prediction": 1, "unknown_image": 1}
    assert res.summary["PQ"] == pytest.approx((0.8 + 0.75) / 2, abs=1e-15)
