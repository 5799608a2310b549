"""Differential test: random COCO scenes, iou-eval vs pycocotools, every stat and per-class AP."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from iou_cli.api import evaluate
from tests.oracle.cocogen import random_scene
from tests.oracle.pycoco import STAT_KEYS, per_class_ap, pycoco_eval, stats_of

N_SEEDS = int(os.environ.get("IOU_EVAL_DIFF_SEEDS", "40"))
N_FAST = 8  # seeds `make test` runs; the rest are slow (`make test-slow`, CI)
SEEDS = [
    seed if seed < N_FAST else pytest.param(seed, marks=pytest.mark.slow) for seed in range(N_SEEDS)
]


def _run(tmp_path: Path, seed: int, **kw: object) -> tuple[object, object]:
    gt, dets = random_scene(seed)
    if not dets:
        pytest.skip("pycocotools cannot load an empty result list")
    g = tmp_path / "gt.json"
    d = tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    return evaluate(str(d), str(g), **kw), pycoco_eval(gt, dets)  # type: ignore[arg-type]


def _close(a: list[float | None], b: list[float | None]) -> bool:
    return all(
        (x is None and y is None) or (x is not None and y is not None and abs(x - y) <= 1e-12)
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_random_scene_matches_pycocotools(tmp_path: Path, seed: int) -> None:
    r, ev = _run(tmp_path, seed)
    ours = [r.summary[k] for k in STAT_KEYS]  # type: ignore[attr-defined]
    assert _close(ours, stats_of(ev)), (seed, ours, stats_of(ev))
    assert _close([row["AP"] for row in r.per_class], per_class_ap(ev))  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", range(5))
def test_honor_ignore_differs_only_through_ignore_flags(tmp_path: Path, seed: int) -> None:
    # pycocotools overwrites a user 'ignore' with 'iscrowd' (default, compatible);
    # --honor-ignore also ignores ground truths flagged 'ignore'. Hand count: the positives
    # (tp + fn) drop by exactly the number of non-crowd ground truths flagged ignore.
    gt, dets = random_scene(seed)
    g = tmp_path / "gt.json"
    d = tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    plain = evaluate(str(d), str(g))
    honored = evaluate(str(d), str(g), honor_ignore=True)
    n_ignore = sum(1 for a in gt["annotations"] if a.get("ignore") and not a["iscrowd"])
    assert (
        plain.summary["fn"] + plain.summary["tp"] - (honored.summary["fn"] + honored.summary["tp"])
        == n_ignore
    )
