"""TIDE against the reference code (tidecv 1.0.1, run by tests/oracle/tide_harness.py).

On scenes where the definitions coincide (tests/oracle/tidegen.py) and with tidecv's recall
grid (``i / 100``; pycocotools' ``linspace`` differs in the last bit at 10 of the 101 points),
every dAP equals tidecv's to 1e-9 (fractions; tidecv reports percent), every error count is
equal, and every false positive carries tidecv's error type. With the COCO grid (the product),
the baseline is exactly the report's AP50 and the deltas stay within the grid's effect.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from iou_cli import evaluate
from iou_cli.analysis.tide import ERROR_NAMES, breakdown
from tests.oracle.tide_oracle import run_tidecv
from tests.oracle.tidegen import harness_input, tide_scene

N_SCENES = int(os.environ.get("IOU_EVAL_TIDE_SCENES", "25"))  # make fuzz: 1000
TIDECV_GRID = np.array([x / 100 for x in range(101)])
NAME = {"cls": "Cls", "loc": "Loc", "both": "Both", "dupe": "Dupe", "bkg": "Bkg"}


@pytest.fixture(scope="module")
def scenes() -> list[tuple[dict, list, dict]]:
    built = [tide_scene(seed) for seed in range(N_SCENES)]
    oracle = run_tidecv([harness_input(gt, dets) for gt, dets in built])
    return [(gt, dets, o) for (gt, dets), o in zip(built, oracle, strict=True)]


def _ours(gt: dict, dets: list, grid: np.ndarray | None) -> tuple[Any, Any, Any]:
    r = evaluate(dets, gt)
    ev = r.evaluation
    section, err = breakdown(
        ev.dataset, ev.table, pos_thr=0.5, bg_thr=0.1, rec_thrs=grid, max_det=100
    )
    return section, err, r


def test_equals_tidecv(scenes: list) -> None:
    """dAP to 1e-9, the counts, and every prediction's error type and every Miss."""
    worst = 0.0
    for i, (gt, dets, o) in enumerate(scenes):
        section, err, r = _ours(gt, dets, TIDECV_GRID)
        assert section["baseline"] == pytest.approx(o["ap"] / 100, abs=1e-12), i
        for name, v in {**o["main"], **o["special"]}.items():
            diff = abs(section["dAP"][name] - v / 100)
            worst = max(worst, diff)
            assert diff <= 1e-9, (i, name, section["dAP"][name], v / 100)
        assert {k: section["count"][k] for k in o["count"]} == o["count"], i
        table = r.evaluation.table
        # prediction rows are file order, as the harness adds them (its _id)
        ours = {
            int(table.det[p]): NAME[ERROR_NAMES[c]] for p, c in enumerate(err.code.tolist()) if c
        }
        theirs = {int(k): v for k, v in o["pred_error"].items()}
        assert ours == theirs, i
        assert sorted(np.flatnonzero(err.missed).tolist()) == o["gt_miss"], i
    assert worst <= 1e-9


def test_coco_grid_baseline_is_ap50(scenes: list) -> None:
    for gt, dets, o in scenes[:5]:
        section, _, r = _ours(gt, dets, None)
        assert section["baseline"] == r.summary["AP50"]
        # the recall grid moves AP by at most a few points of one recall step
        assert abs(section["baseline"] - o["ap"] / 100) < 0.02
