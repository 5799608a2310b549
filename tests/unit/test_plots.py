"""Figures: names from inputs stay text (mathtext off, "_" labels kept), empty cases draw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iou_cli import evaluate
from iou_cli.analysis import curves as C
from iou_cli.report import plots

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "coco"
NAMES = ["$\\frac{1}{$", "_leading underscore", "<script>alert(1)</script>"]


def _inputs(tmp_path: Path, *, preds: list | None = None) -> tuple[Path, Path]:
    gt = json.loads((SAMPLE / "gt.json").read_text())
    for c, n in zip(gt["categories"], NAMES, strict=True):
        c["name"] = n
    g = tmp_path / "gt.json"
    g.write_text(json.dumps(gt))
    p = tmp_path / "preds.json"
    p.write_text(json.dumps(preds) if preds is not None else (SAMPLE / "preds.json").read_text())
    return p, g


def test_names_are_drawn_as_typed(tmp_path: Path) -> None:
    pred, gt = _inputs(tmp_path)
    r = evaluate(pred, gt)
    cv = C.for_result(r)
    figs = plots.figures(r, cv)
    assert [s for s, _, _ in figs] == ["pr_curve", "confidence", "ap_per_class", "pr_per_class"]
    # a "$...$" name would raise in mathtext; a "_" label would vanish from a legend
    texts = []
    for _, _, fig in figs:
        for ax in fig.axes:
            texts += [t.get_text() for t in ax.get_yticklabels()] + [ax.get_title()]
        svg = plots.svg(fig)
        assert b"<script" not in svg
        assert plots.png(fig)[:4] == b"\x89PNG"
    assert "$\\frac{1}{$" in texts and "_leading underscore" in texts


def test_figures_without_predictions_or_ground_truth(tmp_path: Path) -> None:
    pred, gt = _inputs(tmp_path, preds=[])
    r = evaluate(pred, gt)
    cv = C.for_result(r)
    assert cv is not None and cv["confidence"]["score"] == []
    for _, _, fig in plots.figures(r, cv):
        assert plots.png(fig)[:4] == b"\x89PNG"
    empty = {"iou_thrs": [0.5], "recall": [0.0, 1.0], "precision": {"0.5": {"a": None}}}
    assert C.mean_ap(empty, "0.5") is None
    plots.png(plots.pr_overall(empty))
    plots.png(plots.pr_per_class(empty, [{"name": "a", "n_gt": 0}]))


def test_missing_matplotlib_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from iou_cli.errors import UsageError

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import raises ImportError
    with pytest.raises(UsageError, match=r"pip install 'iou-eval\[plots\]'"):
        plots.ap_bars([{"name": "a", "AP": 0.5}])
