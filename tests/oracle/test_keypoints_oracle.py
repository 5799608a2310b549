"""Keypoints (OKS): iou-eval against pycocotools (COCO's 17) and xtcocotools (custom K and
sigmas) on random scenes (tests/oracle/kptgen.py): every stat and every per-class value."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate, load_pair
from iou_cli.matching.pairs import candidate_pairs
from tests.oracle.kptgen import random_kpt_scene
from tests.oracle.pycoco import pycoco_eval, stats_of

KEYS = ["AP", "AP50", "AP75", "APm", "APl", "AR", "AR50", "AR75", "ARm", "ARl"]
N_SEEDS = int(os.environ.get("IOU_EVAL_KPT_SEEDS", "60"))
N_FAST = 10
SEEDS = [s if s < N_FAST else pytest.param(s, marks=pytest.mark.slow) for s in range(N_SEEDS)]
ROOT = Path(__file__).resolve().parents[2]
XTCOCO = ROOT / ".venv" / "xtcocotools-oracle" / "bin" / "python"


def _per_class(ev: Any) -> list[list[float | None]]:
    """pycocotools' 10 keypoint stats of each category (its _summarize, one class)."""
    prec, rec, thrs = ev.eval["precision"], ev.eval["recall"], ev.params.iouThrs
    out = []
    for k in range(prec.shape[2]):
        row: list[float | None] = []
        for ap in (True, False):
            for thr, area in ((None, 0), (0.5, 0), (0.75, 0), (None, 1), (None, 2)):
                s = prec[:, :, k, area, -1] if ap else rec[:, k, area, -1]
                if thr is not None:
                    s = s[np.where(thr == thrs)[0]]
                v = s[s > -1]
                row.append(float(np.mean(v)) if v.size else None)
        out.append(row)
    return out


def _ours(r: Any) -> tuple[list[float | None], list[list[float | None]]]:
    return [r.summary[k] for k in KEYS], [[row[k] for k in KEYS] for row in r.per_class]


def _worst(a: list[float | None], b: list[float | None]) -> float:
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        assert (x is None) == (y is None), (a, b)
        if x is not None and y is not None:
            worst = max(worst, abs(x - y))
    return worst


@pytest.mark.parametrize("seed", SEEDS)
def test_coco17_matches_pycocotools(seed: int) -> None:
    gt, dets = random_kpt_scene(seed)
    ev = pycoco_eval(gt, dets, "keypoints")
    r = evaluate(dets, gt, iou_type="keypoints")
    stats, per_class = _ours(r)
    assert _worst(stats, stats_of(ev)) <= 1e-12
    for ours, ref in zip(per_class, _per_class(ev), strict=True):
        assert _worst(ours, ref) <= 1e-12
    assert r.params["max_dets"] == [20]
    assert "COCO's 17" in r.params["oks_sigmas"]


@pytest.mark.parametrize("seed", range(4))
def test_oks_kernel_is_bit_identical_to_compute_oks(seed: int) -> None:
    # every pair pycocotools scores (sorted, cut to maxDets 20) has our OKS, bit for bit
    gt, dets = random_kpt_scene(seed, with_bbox=False)
    ev = pycoco_eval(gt, dets, "keypoints")
    ds = load_pair(dets, gt, load_options_for())
    pairs = candidate_pairs(ds, iou_type="keypoints")
    ours = {(int(d), int(g)): v for d, g, v in zip(pairs.det, pairs.gt, pairs.iou, strict=True)}
    n = 0
    for (img, cat), m in ev.ious.items():
        if len(m) == 0:
            continue
        gts = ev._gts[img, cat]
        dts = sorted(ev._dts[img, cat], key=lambda d: -d["score"])[:20]
        for i, d in enumerate(dts):
            for j, g in enumerate(gts):
                assert ours[(d["id"] - 1, g["id"] - 1)] == m[i, j]
                n += 1
    assert n > 10


def load_options_for(**kw: Any) -> Any:
    from iou_cli.options import LoadOptions

    return LoadOptions(iou_type="keypoints", protocol="coco", **kw)


def _custom(seed: int) -> tuple[dict[str, Any], list[dict[str, Any]], list[float]]:
    rng = np.random.default_rng(1000 + seed)
    k = int(rng.choice([1, 4, 5, 8, 9, 14, 21, 26]))
    sigmas = [float(x) for x in np.round(rng.uniform(0.02, 0.15, k), 4)]
    gt, dets = random_kpt_scene(seed, k=k, n_cats=int(rng.integers(1, 4)))
    return gt, dets, sigmas


@pytest.mark.parametrize("seed", range(6))
def test_custom_sigmas_match_pycocotools_params(seed: int) -> None:
    # pycocotools with params.kpt_oks_sigmas set: --sigmas, and the categories' 'sigmas'
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    gt, dets, sigmas = _custom(seed)
    import contextlib
    import copy
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = copy.deepcopy(gt)
        coco_gt.createIndex()
        ev = COCOeval(coco_gt, coco_gt.loadRes(copy.deepcopy(dets)), "keypoints")
        ev.params.kpt_oks_sigmas = np.array(sigmas)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    r = evaluate(dets, gt, iou_type="keypoints", sigmas=sigmas)
    assert _worst(_ours(r)[0], stats_of(ev)) <= 1e-12
    gt2 = copy.deepcopy(gt)
    for c in gt2["categories"]:
        c["sigmas"] = sigmas
    r2 = evaluate(dets, gt2, iou_type="keypoints")
    assert _ours(r2) == _ours(r)
    assert "categories' 'sigmas'" in r2.params["oks_sigmas"]


@pytest.mark.skipif(
    not XTCOCO.exists(), reason="xtcocotools oracle venv missing (make xtcocotools-oracle)"
)
def test_custom_skeletons_match_xtcocotools() -> None:
    scenes = [_custom(seed) for seed in range(12)]
    payload = [{"gt": g, "dets": d, "sigmas": s} for g, d, s in scenes]
    out = subprocess.run(
        [str(XTCOCO), str(ROOT / "tests" / "oracle" / "xtcoco_harness.py")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    refs = json.loads(out.stdout)
    worst = 0.0
    for (gt, dets, sigmas), ref in zip(scenes, refs, strict=True):
        r = evaluate(dets, gt, iou_type="keypoints", sigmas=sigmas)
        stats, per_class = _ours(r)
        none = [None if v == -1 else v for v in ref["stats"]]
        worst = max(worst, _worst(stats, none))
        for ours, row in zip(per_class, ref["per_class"], strict=True):
            worst = max(worst, _worst(ours, [None if v == -1 else v for v in row]))
    assert worst <= 1e-12, worst


@pytest.mark.parametrize("seed", range(3))
def test_hotcoco_keypoints_agree(tmp_path: Path, seed: int) -> None:
    # hotcoco (test extra) evaluates keypoints too: its 10 stats equal ours (and so
    # pycocotools'), on the same random scenes
    hotcoco = pytest.importorskip("hotcoco", reason="hotcoco (test extra) missing")
    import contextlib
    import io

    gt, dets = random_kpt_scene(100 + seed)
    g, d = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = hotcoco.COCO(str(g))
        ev = hotcoco.COCOeval(coco_gt, coco_gt.load_res(str(d)), "keypoints")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    ref = [None if s == -1 else float(s) for s in list(ev.stats)[:10]]
    ours = _ours(evaluate(str(d), str(g), iou_type="keypoints"))[0]
    assert _worst(ours, ref) <= 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_per_category_sigmas_equal_pycocotools_class_by_class(seed: int) -> None:
    # categories with their own 'sigmas': each class's AP equals pycocotools run on that
    # class alone (params.catIds) with that class's sigmas
    import contextlib
    import copy
    import io

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    rng = np.random.default_rng(seed)
    gt, dets = random_kpt_scene(200 + seed, k=6, n_cats=3)
    for c in gt["categories"]:
        c["sigmas"] = [float(x) for x in np.round(rng.uniform(0.02, 0.15, 6), 4)]
    r = evaluate(dets, gt, iou_type="keypoints")
    assert "categories' 'sigmas'" in r.params["oks_sigmas"]
    for row, cat in zip(r.per_class, gt["categories"], strict=True):
        with contextlib.redirect_stdout(io.StringIO()):
            g = COCO()
            g.dataset = copy.deepcopy(gt)
            g.createIndex()
            ev = COCOeval(g, g.loadRes(copy.deepcopy(dets)), "keypoints")
            ev.params.kpt_oks_sigmas = np.array(cat["sigmas"])
            ev.params.catIds = [cat["id"]]
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
        assert _worst([row[k] for k in KEYS], stats_of(ev)) <= 1e-12
