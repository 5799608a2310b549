"""The panoptic JSONs read at once (``--jobs`` above 1): the predictions in a forked process
while this one reads the ground truth. Same sides, same read-set, same errors in the same
order as one process; a child that fails or dies leaves the reading to this process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from iou_cli.errors import InputError
from iou_cli.loaders.files import reading
from iou_cli.loaders.panoptic import load_panoptic
from iou_cli.tasks import panoptic_load as pl
from iou_cli.tasks.panoptic import evaluate_panoptic, load_pair
from tests.robust.panoptic_bad_cases import CASES, valid
from tests.robust.test_panoptic_bad_input import assert_one_located_error
from tests.unit.same import same

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _serial(pred: Path, gt: Path) -> tuple[Any, Any, list[str]]:
    with reading() as rs:
        g = load_panoptic(str(gt), ground_truth=True, role="ground truth")
        p = load_panoptic(str(pred), ground_truth=False, role="predictions")
        return p, g, sorted(rs.paths())


def test_forked_sides_and_read_set_equal_one_process(tmp_path: Path) -> None:
    pred, gt = valid(tmp_path)
    want_p, want_g, want_read = _serial(pred, gt)
    with reading() as rs:
        p, g = pl.load_sides(str(pred), str(gt), None, None)
        read = sorted(rs.paths())
    assert same(p, want_p) and same(g, want_g)
    assert read == want_read and str(pred) in read


def test_load_pair_forks_only_with_jobs_and_big_predictions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pred, gt = valid(tmp_path)
    calls: list[str] = []
    real = pl.load_sides

    def spy(*a: Any) -> Any:
        calls.append("fork")
        return real(*a)

    monkeypatch.setattr(pl, "load_sides", spy)
    load_pair(str(pred), str(gt), jobs=2)  # a small file: one process
    assert calls == []
    monkeypatch.setattr(pl, "MIN_BYTES", 0)
    load_pair(str(pred), str(gt), jobs=1)
    assert not pl.forkable("-", str(gt), 2) and not pl.forkable(str(pred), "-", 2)
    assert calls == []
    got = load_pair(str(pred), str(gt), jobs=2)
    assert calls == ["fork"]
    one = load_pair(str(pred), str(gt), jobs=1)
    assert same(got, one)


def test_evaluations_equal_with_the_forked_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pred, gt = valid(tmp_path)
    one = evaluate_panoptic(str(pred), str(gt))
    monkeypatch.setattr(pl, "MIN_BYTES", 0)
    two = evaluate_panoptic(str(pred), str(gt), jobs=2)
    assert two.summary == one.summary
    assert two.per_class == one.per_class


@pytest.mark.parametrize(
    ("case", "named", "where", "words"), CASES, ids=[c[0].__name__ for c in CASES]
)
def test_bad_input_errors_are_one_processs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: object,
    named: str,
    where: str | None,
    words: str,
) -> None:
    monkeypatch.setattr(pl, "forkable", lambda *a: True)
    assert_one_located_error(tmp_path, case, named, where, words)


def test_a_child_that_dies_leaves_the_reading_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pred, gt = valid(tmp_path)
    want_p, want_g, want_read = _serial(pred, gt)

    def dies(*args: object) -> None:
        os._exit(3)

    monkeypatch.setattr(pl, "_read_sides", dies)
    with reading() as rs:
        p, g = pl.load_sides(str(pred), str(gt), None, None)
        read = sorted(rs.paths())
    assert same(p, want_p) and same(g, want_g) and read == want_read


def test_a_ground_truth_error_comes_first(tmp_path: Path) -> None:
    pred, gt = valid(tmp_path)
    (tmp_path / "gt.json").write_text("{")
    (tmp_path / "pred.json").write_text("[")
    with pytest.raises(InputError) as info:
        pl.load_sides(str(pred), str(gt), None, None)
    assert Path(str(info.value.path)) == tmp_path / "gt.json"
