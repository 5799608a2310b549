"""compare for two panoptic predictions: A and B equal the single runs, and a bootstrap
sample's delta equals the delta of the two models evaluated on the resampled set itself
(images repeated as drawn), so the additive-state shortcut is pinned to the full path."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from iou_cli.analysis.bootstrap import multiplicities
from iou_cli.tasks.panoptic import evaluate_panoptic
from iou_cli.tasks.panoptic_compare import compare_panoptic

from .gen import random_sets


def _model_b(pred: Path, out: Path) -> None:
    """B: A with every third segment relabelled to category 2 (same PNGs)."""
    doc = json.loads(pred.read_text())
    k = 0
    for ann in doc["annotations"]:
        for s in ann["segments_info"]:
            k += 1
            if k % 3 == 0:
                s["category_id"] = 2
    out.write_text(json.dumps(doc))


def _resampled(src: Path, dst: Path, w: np.ndarray) -> None:
    """The set with image i repeated w[i] times (new image ids, the same PNGs)."""
    doc = json.loads(src.read_text())
    anns, imgs = [], []
    sizes = {im["id"]: im for im in doc.get("images", [])}
    for ann, m in zip(doc["annotations"], w.tolist(), strict=True):
        for r in range(m):
            new = dict(ann, image_id=f"{ann['image_id']}-{r}")
            anns.append(new)
            if ann["image_id"] in sizes:
                imgs.append(dict(sizes[ann["image_id"]], id=new["image_id"]))
    doc["annotations"] = anns
    if "images" in doc:
        doc["images"] = imgs
    dst.write_text(json.dumps(doc))


def test_compare_values_and_one_bootstrap_sample(tmp_path: Path) -> None:
    pred_a, gt = random_sets(tmp_path, 3, n_images=9)
    pred_b = tmp_path / "predb.json"
    _model_b(pred_a, pred_b)
    folder = str(pred_a.with_suffix(""))
    cmp = compare_panoptic(str(pred_a), str(pred_b), str(gt), folder_b=folder, bootstrap=1, seed=5)
    ra = evaluate_panoptic(str(pred_a), str(gt))
    rb = evaluate_panoptic(str(pred_b), str(gt), pred_folder=folder)
    for k, m in cmp.metrics.items():
        assert m["a"] == ra.summary[k] and m["b"] == rb.summary[k], k
    # the one bootstrap sample, evaluated the long way
    w = next(multiplicities(9, 1, 5))[0]
    for name, src in (("a", pred_a), ("b", pred_b), ("g", gt)):
        _resampled(src, tmp_path / f"r{name}.json", w)
    gfold = str(gt.with_suffix(""))
    la = evaluate_panoptic(
        str(tmp_path / "ra.json"), str(tmp_path / "rg.json"), pred_folder=folder, gt_folder=gfold
    )
    lb = evaluate_panoptic(
        str(tmp_path / "rb.json"), str(tmp_path / "rg.json"), pred_folder=folder, gt_folder=gfold
    )
    checked = 0
    for k in ("PQ", "SQ", "RQ", "PQ_th", "RQ_st", "tp", "fp", "fn", "N"):
        a, b = la.summary[k], lb.summary[k]
        if a is None or b is None:
            continue
        m = cmp.metrics[k]
        assert math.isclose(m["ci_low"], b - a, abs_tol=1e-12), k
        assert m["ci_low"] == m["ci_high"]
        checked += 1
    assert checked >= 8
    pcs = {r["category_id"]: r for r in cmp.per_class}
    for ra_row, rb_row in zip(la.per_class, lb.per_class, strict=True):
        if ra_row["PQ"] is not None and rb_row["PQ"] is not None:
            got = pcs[ra_row["category_id"]]["ci_low"]
            assert math.isclose(got, rb_row["PQ"] - ra_row["PQ"], abs_tol=1e-12)


def test_compare_with_itself_is_not_significant(tmp_path: Path) -> None:
    pred, gt = random_sets(tmp_path, 4, n_images=6)
    cmp = compare_panoptic(str(pred), str(pred), str(gt), bootstrap=50)
    assert cmp.metrics["PQ"]["delta"] == 0.0
    assert cmp.metrics["PQ"]["significant"] is False
    assert cmp.params["bootstrap"] == 50 and cmp.params["class_key"] == "PQ"
