"""``--protocol lvis`` against lvis-api 0.5.3 (the reference) on generated federated scenes.

Every scene (tests/oracle/lvisgen.py) holds each federated case: images over 300
predictions with score ties at the 300th place, negative classes, not-exhaustive classes,
classes of each frequency, rare classes without ground truth, ground truths of area 0 and
with a user ``ignore``, zero-size predictions. Checked: the 13 summary values and every
class's AP, AP50, AP75, APs/m/l, AR300 and ARs/m/l to |delta| <= 1e-12 (None where lvis-api
says -1), the frequency group on each per-class row, stage by stage the predictions and
ground truths lvis-api evaluates, and each prediction's fate (the --matches rows).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from iou_cli.api import evaluate, load_pair
from iou_cli.options import LoadOptions
from iou_cli.protocols.lvis import federated, select
from tests.oracle.lvisapi import (
    CLASS_KEYS,
    SUMMARY_KEYS,
    counts_at,
    fates,
    lvis_api,
    lvis_eval,
    per_class,
    summary_of,
)
from tests.oracle.lvisgen import random_lvis_scene

N_SEEDS = int(os.environ.get("IOU_EVAL_LVIS_SEEDS", "12"))


@pytest.fixture(scope="module", autouse=True)
def _needs_lvis_api() -> None:
    lvis_api()


def _files(tmp_path: Path, gt: dict[str, Any], dets: list[dict[str, Any]]) -> tuple[str, str]:
    g = tmp_path / "gt.json"
    d = tmp_path / "preds.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    return str(d), str(g)


def _close(a: list[float | None], b: list[float | None]) -> bool:
    return all(
        (x is None and y is None) or (x is not None and y is not None and abs(x - y) <= 1e-12)
        for x, y in zip(a, b, strict=True)
    )


def _check(tmp_path: Path, gt: dict[str, Any], dets: list[dict[str, Any]], iou_type: str) -> None:
    preds, gt_path = _files(tmp_path, gt, dets)
    r = evaluate(preds, gt_path, protocol="lvis", iou_type=iou_type)
    ev = lvis_eval(gt, dets, iou_type)
    ours = [r.summary[k] for k in SUMMARY_KEYS]
    assert _close(ours, summary_of(ev)), (ours, summary_of(ev))
    theirs = per_class(ev)
    for key in CLASS_KEYS:
        assert _close([row[key] for row in r.per_class], [row[key] for row in theirs]), key
    freq = {c["id"]: c["frequency"] for c in gt["categories"]}
    assert [row["frequency"] for row in r.per_class] == [
        freq[row["category_id"]] for row in r.per_class
    ]


@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_bbox_matches_lvis_api(tmp_path: Path, seed: int) -> None:
    gt, dets = random_lvis_scene(seed)
    _check(tmp_path, gt, dets, "bbox")


@pytest.mark.parametrize("seed, pred_bbox", [(100, True), (101, False), (102, True)])
def test_segm_matches_lvis_api(tmp_path: Path, seed: int, pred_bbox: bool) -> None:
    # pred_bbox=False: lvis-api takes the predictions' areas from their masks
    gt, dets = random_lvis_scene(seed, segm=True, pred_bbox=pred_bbox, n_images=8)
    _check(tmp_path, gt, dets, "segm")


def test_no_rare_class_with_ground_truth_gives_null_apr(tmp_path: Path) -> None:
    gt, dets = random_lvis_scene(7)
    rare = {c["id"] for c in gt["categories"] if c["frequency"] == "r"}
    gt["annotations"] = [a for a in gt["annotations"] if a["category_id"] not in rare]
    ev = lvis_eval(gt, dets)
    assert ev.results["APr"] == -1
    preds, gt_path = _files(tmp_path, gt, dets)
    r = evaluate(preds, gt_path, protocol="lvis")
    assert r.summary["APr"] is None
    assert _close([r.summary[k] for k in SUMMARY_KEYS], summary_of(ev))


@pytest.mark.parametrize("seed", range(6))
def test_evaluated_predictions_and_ground_truths_are_lvis_apis(tmp_path: Path, seed: int) -> None:
    # the stages before matching: top 300 per image (ties in file order), area > 0, class
    # present or verified absent; unmatched ones ignored where not exhaustive
    gt, dets = random_lvis_scene(seed)
    ev = lvis_eval(gt, dets)
    ds = load_pair(*_files(tmp_path, gt, dets), LoadOptions())
    rows, g_rows, nel = select(ds, federated(ds))

    def key(d: dict[str, Any]) -> tuple[Any, ...]:
        return (d["image_id"], d["category_id"], d["score"], tuple(d["bbox"]))

    theirs = [d for v in ev._dts.values() for d in v]
    assert Counter(key(dets[int(r)]) for r in rows) == Counter(key(d) for d in theirs)
    assert sorted(int(ds.gt.ids[g]) for g in g_rows) == sorted(
        g["id"] for v in ev._gts.values() for g in v
    )
    assert Counter(key(dets[int(r)]) for r, n in zip(rows, nel, strict=True) if n) == Counter(
        key(d) for d in theirs if d["category_id"] in ev.img_nel[d["image_id"]]
    )
    over = Counter(d["image_id"] for d in dets)
    assert max(over.values()) > 300  # the scene does exercise the per-image cap


@pytest.mark.parametrize("seed, score_thr, iou_thr", [(0, 0.3, 0.5), (1, 0.0, 0.75), (2, 0.6, 0.5)])
def test_operating_point_counts_are_lvis_apis(
    tmp_path: Path, seed: int, score_thr: float, iou_thr: float
) -> None:
    # TP / FP / FN at one IoU threshold and confidence, counted from lvis-api's per-image
    # results (dt_matches, dt_ignore, gt_ignore of area "all"); the --matches rows agree
    gt, dets = random_lvis_scene(seed)
    preds, gt_path = _files(tmp_path, gt, dets)
    r = evaluate(
        preds, gt_path, protocol="lvis", score_thr=score_thr, iou_thr=iou_thr, matches=True
    )
    tp, fp, fn = counts_at(lvis_eval(gt, dets), score_thr, iou_thr)
    assert (r.summary["tp"], r.summary["fp"], r.summary["fn"]) == (tp, fp, fn)
    assert r.matches is not None
    assert Counter(r.matches.columns["outcome"])["TP"] == tp
    assert Counter(r.matches.columns["outcome"])["FN"] == fn


@pytest.mark.parametrize("seed, iou_thr", [(3, 0.5), (4, 0.5), (5, 0.75)])
def test_matches_rows_are_lvis_apis_fates(tmp_path: Path, seed: int, iou_thr: float) -> None:
    # every evaluated prediction's fate (TP / FP / ignored) and the ground truth it took,
    # and the missed ground truths, equal lvis-api's per-image results at --score-thr 0
    gt, dets = random_lvis_scene(seed)
    preds, gt_path = _files(tmp_path, gt, dets)
    r = evaluate(preds, gt_path, protocol="lvis", score_thr=0.0, iou_thr=iou_thr, matches=True)
    assert r.matches is not None
    cols = r.matches.columns
    ours = Counter(
        (im, dets[int(p) - 1]["category_id"], s, o, int(g))
        for im, p, s, o, g in zip(
            cols["image"],
            cols["pred_id"],
            cols["score"],
            cols["outcome"],
            cols["gt_id"],
            strict=True,
        )
        if o != "FN"
    )
    theirs, missed = fates(lvis_eval(gt, dets), iou_thr)
    assert ours == Counter(theirs)
    fn = sorted(int(g) for g, o in zip(cols["gt_id"], cols["outcome"], strict=True) if o == "FN")
    assert fn == sorted(missed)
    assert {"TP", "FP", "ignored"} <= set(cols["outcome"])
