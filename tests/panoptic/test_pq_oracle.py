"""PQ, SQ, RQ (All, Things, Stuff) and per-class tp/fp/fn/IoU sums against hotcoco's
panoptic evaluation (hotcoco.panoptic.PanopticEval, "parity verified" with panopticapi) on
generated sets: random shapes, VOID gaps and holes, crowd segments, sparse and 24-bit ids,
relabelled, missed and spurious predictions. Every value equal within 1e-12."""

from __future__ import annotations

from pathlib import Path

import pytest

from iou_cli.tasks.panoptic import evaluate_panoptic

from .gen import random_sets

panoptic = pytest.importorskip("hotcoco.panoptic", reason="hotcoco (test extra) missing")
TOL = 1e-12


def compare(pred: Path, gt: Path) -> float:
    ours = evaluate_panoptic(str(pred), str(gt))
    ev = panoptic.PanopticEval(str(gt), str(pred))
    ev.evaluate()
    ref = ev.results()
    worst = 0.0
    for name, suffix in (("All", ""), ("Things", "_th"), ("Stuff", "_st")):
        assert ours.summary[f"N{suffix}"] == ref[name]["n"]
        for m in ("pq", "sq", "rq"):
            d = abs(ours.summary[f"{m.upper()}{suffix}"] - ref[name][m])
            worst = max(worst, d)
    per = {r["category_id"]: r for r in ours.per_class}
    for cid, r in ref["per_class"].items():
        row = per[int(cid)]
        assert (row["tp"], row["fp"], row["fn"]) == (r["tp"], r["fp"], r["fn"]), cid
        worst = max(worst, abs(row["iou_sum"] - r["iou"]))
        if row["PQ"] is not None:
            for m in ("pq", "sq", "rq"):
                worst = max(worst, abs(row[m.upper()] - r[m]))
    assert worst <= TOL
    return worst


@pytest.mark.parametrize("seed", range(6))
def test_random_sets_equal_hotcoco(tmp_path: Path, seed: int) -> None:
    pred, gt = random_sets(tmp_path, seed, n_images=10)
    compare(pred, gt)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 160))
def test_many_random_sets_equal_hotcoco(tmp_path: Path, seed: int) -> None:
    pred, gt = random_sets(tmp_path, seed, n_images=25)
    compare(pred, gt)


def test_sample_data_equals_hotcoco() -> None:
    root = Path(__file__).resolve().parents[2] / "sample_data" / "panoptic"
    compare(root / "pred.json", root / "gt.json")
