"""Calibration (ECE, MCE) against scikit-learn's calibration_curve and a hand calculation."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import calibration_curve

from iou_cli.analysis.calibration import calibration


def test_hand_calculation() -> None:
    # bin [0, 0.1]: scores 0.05, 0.1 (0.1 sits on an upper edge: first bin), 1 correct
    #   conf 0.075, acc 0.5, gap 0.425
    # bin (0.9, 1]: scores 0.95, 1.0, both correct: conf 0.975, acc 1, gap 0.025
    # ECE = 2/4 * 0.425 + 2/4 * 0.025 = 0.225; MCE = 0.425
    score = np.array([0.05, 0.1, 0.95, 1.0])
    correct = np.array([True, False, True, True])
    out = calibration(score, correct, np.zeros(4, dtype=np.int64), ["a"], 0.5)
    assert out["overall"]["ece"] == pytest.approx(0.225, abs=1e-15)
    assert out["overall"]["mce"] == pytest.approx(0.425, abs=1e-15)
    assert [b["count"] for b in out["overall"]["bins"]] == [2, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    assert out["per_class"][0]["ece"] == out["overall"]["ece"]


@pytest.mark.parametrize("seed", range(10))
def test_bins_equal_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    score = np.round(rng.random(n), int(rng.integers(1, 4)))  # values on bin edges too
    correct = rng.random(n) < score
    cat = rng.integers(0, 3, n)
    out = calibration(score, correct, cat, ["a", "b", "c"], 0.5)
    prob_true, prob_pred = calibration_curve(correct, score, n_bins=10, strategy="uniform")
    bins = [b for b in out["overall"]["bins"] if b["count"]]
    np.testing.assert_allclose([b["accuracy"] for b in bins], prob_true, rtol=0, atol=1e-15)
    np.testing.assert_allclose([b["confidence"] for b in bins], prob_pred, rtol=0, atol=1e-15)
    counts = np.array([b["count"] for b in bins])
    gap = np.abs(prob_true - prob_pred)
    assert out["overall"]["ece"] == pytest.approx(float(np.sum(counts / n * gap)), abs=1e-15)
    assert out["overall"]["mce"] == pytest.approx(float(gap.max()), abs=1e-15)
    for k in range(3):
        sel = cat == k
        if not sel.any():
            assert out["per_class"][k]["ece"] is None
            continue
        pt, pp = calibration_curve(correct[sel], score[sel], n_bins=10, strategy="uniform")
        m = np.histogram(score[sel], bins=np.linspace(0, 1, 11))[0]  # count check below
        assert out["per_class"][k]["n"] == int(m.sum())
        assert out["per_class"][k]["mce"] == pytest.approx(float(np.abs(pt - pp).max()), abs=1e-15)
