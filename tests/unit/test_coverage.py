"""Coverage of the paired bootstrap on simulated data: over many independent test sets drawn
from one large population of images, the 95% CI of the AP difference covers the population's
true difference about 95% of the time.

The simulation scores at one IoU threshold, with each model's outcome per object drawn
directly (detected with a true-positive score, or missed) plus background false positives,
so the population's AP is known exactly (the same weighted accumulation over every image).
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_cli.analysis.bootstrap import ScoreTable
from iou_cli.analysis.scorers import CocoScorer, paired_deltas

K = 3


def _population(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    n_gt = rng.poisson(3.0, n)
    g_img = np.repeat(np.arange(n), n_gt)
    g_cat = rng.integers(0, K, g_img.shape[0])
    return {"g_img": g_img, "g_cat": g_cat, "seed": np.array([seed])}


def _model(pop: dict[str, np.ndarray], n: int, p_hit: float, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    g_img, g_cat = pop["g_img"], pop["g_cat"]
    hit = np.less(rng.random(g_img.shape[0]), p_hit)
    n_fp = rng.poisson(2.0, n)
    fp_img = np.repeat(np.arange(n), n_fp)
    img = np.r_[g_img[hit], fp_img]
    cat = np.r_[g_cat[hit], rng.integers(0, K, fp_img.shape[0])]
    score = np.r_[rng.beta(4, 2, int(hit.sum())), rng.beta(2, 4, fp_img.shape[0])]
    tp = np.r_[np.ones(int(hit.sum()), dtype=np.bool_), np.zeros(fp_img.shape[0], dtype=np.bool_)]
    return {"img": img, "cat": cat, "score": score, "tp": tp}


def _scorer(pop: dict[str, np.ndarray], m: dict[str, np.ndarray], images: np.ndarray) -> CocoScorer:
    """The model on ``images`` (population indices), re-indexed 0..len-1."""
    index = np.full(int(max(pop["g_img"].max(), m["img"].max())) + 1, -1)
    index[images] = np.arange(images.shape[0])
    d = index[m["img"]] >= 0
    g = index[pop["g_img"]] >= 0
    D = int(d.sum())
    tab = ScoreTable(
        det_image=index[m["img"][d]],
        det_category=m["cat"][d],
        det_score=m["score"][d],
        det_rank=np.zeros(D, np.int64),
        det_out=np.zeros(D, bool),
        matched=m["tp"][d][None, :],
        tp=m["tp"][d][None, :],
        gt_image=index[pop["g_img"][g]],
        gt_category=pop["g_cat"][g],
    )
    return CocoScorer(
        {"all": tab},
        n_classes=K,
        iou_thrs=np.array([0.5]),
        rec_thrs=np.linspace(0.0, 1.0, 101),
        max_dets=(100,),
    )


def _coverage(reps: int, n_test: int, n_boot: int) -> float:
    N = 20_000
    pop = _population(N, 1)
    a, b = _model(pop, N, 0.70, 2), _model(pop, N, 0.75, 3)
    everything = np.arange(N)
    ones = np.ones((1, N), np.int32)
    true = (
        _scorer(pop, b, everything).score(ones)[0]["AP"][0]
        - _scorer(pop, a, everything).score(ones)[0]["AP"][0]
    )
    rng = np.random.default_rng(7)
    covered = 0
    for r in range(reps):
        images = np.sort(rng.choice(N, n_test, replace=False))
        deltas, _ = paired_deltas(
            _scorer(pop, a, images),
            _scorer(pop, b, images),
            n_images=n_test,
            n_samples=n_boot,
            seed=r,
        )
        lo, hi = np.percentile(deltas["AP"], [2.5, 97.5])
        covered += bool(lo <= true <= hi)
    return covered / reps


def test_ci_covers_the_true_difference_quick() -> None:
    assert _coverage(reps=30, n_test=300, n_boot=200) >= 0.8


@pytest.mark.slow
def test_ci_covers_the_true_difference_at_the_stated_rate() -> None:
    # 300 test sets: the binomial standard error of the rate is ~1.3 points
    assert 0.915 <= _coverage(reps=300, n_test=300, n_boot=400) <= 0.985
