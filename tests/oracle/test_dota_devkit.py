"""The DOTA protocol against the devkit's task-1 logic (CAPTAIN-WHU/DOTA_devkit,
``dota_evaluation_task1.py``), restated below as a straight loop with shapely standing in for
its compiled ``polyiou``, and against hand calculations."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from iou_cli.data import Boxes, Categories, Dataset, Images
from iou_cli.geometry.obb import xywhr_to_corners
from iou_cli.protocols.dota import run_dota

shapely = pytest.importorskip("shapely", reason="shapely stands in for polyiou")
from shapely.geometry import Polygon  # noqa: E402


def poly_iou(p: np.ndarray, q: np.ndarray) -> float:
    a = Polygon(np.asarray(p).reshape(4, 2)).convex_hull
    b = Polygon(np.asarray(q).reshape(4, 2)).convex_hull
    inter = a.intersection(b).area
    union = a.area + b.area - inter
    return inter / union if union > 0 else 0.0


def devkit_ap(rec: np.ndarray, prec: np.ndarray, use_07: bool) -> float:
    """``voc_ap`` of the devkit, restated."""
    if use_07:
        ap = 0.0
        for t in np.arange(0.0, 1.1, 0.1):
            p = 0 if np.sum(rec >= t) == 0 else np.max(prec[rec >= t])
            ap = ap + p / 11.0
        return float(ap)
    mrec = np.concatenate(([0.0], rec, [1.0]))
    mpre = np.concatenate(([0.0], prec, [0.0]))
    for i in range(mpre.size - 1, 0, -1):
        mpre[i - 1] = max(mpre[i - 1], mpre[i])
    idx = np.where(mrec[1:] != mrec[:-1])[0]
    return float(np.sum((mrec[idx + 1] - mrec[idx]) * mpre[idx + 1]))


def devkit_eval(
    images: list[str],
    gts: dict[str, list[tuple[list[float], str, int]]],
    dets: dict[str, list[tuple[str, float, list[float]]]],
    classname: str,
    use_07: bool = True,
    ovthresh: float = 0.5,
) -> float:
    """``voc_eval`` of the devkit, restated: one class, detections in Task1 file order."""
    class_recs: dict[str, dict[str, Any]] = {}
    npos = 0
    for im in images:
        objs = [o for o in gts.get(im, []) if o[1] == classname]
        bbox = np.array([o[0] for o in objs])
        difficult = np.array([o[2] for o in objs]).astype(bool)
        npos += int(sum(~difficult))
        class_recs[im] = {"bbox": bbox, "difficult": difficult, "det": [False] * len(objs)}
    lines = dets.get(classname, [])
    image_ids = [x[0] for x in lines]
    confidence = np.array([x[1] for x in lines])
    bb_all = np.array([x[2] for x in lines]).reshape(-1, 8)
    sorted_ind = np.argsort(-confidence)
    bb_all = bb_all[sorted_ind, :]
    image_ids = [image_ids[x] for x in sorted_ind]
    nd = len(image_ids)
    tp = np.zeros(nd)
    fp = np.zeros(nd)
    for d in range(nd):
        r = class_recs[image_ids[d]]
        bb = bb_all[d, :].astype(float)
        ovmax = -np.inf
        bbgt = r["bbox"].astype(float)
        jmax = -1
        if bbgt.size > 0:
            gxmin, gymin = np.min(bbgt[:, 0::2], axis=1), np.min(bbgt[:, 1::2], axis=1)
            gxmax, gymax = np.max(bbgt[:, 0::2], axis=1), np.max(bbgt[:, 1::2], axis=1)
            bxmin, bymin = np.min(bb[0::2]), np.min(bb[1::2])
            bxmax, bymax = np.max(bb[0::2]), np.max(bb[1::2])
            iw = np.maximum(np.minimum(gxmax, bxmax) - np.maximum(gxmin, bxmin) + 1.0, 0.0)
            ih = np.maximum(np.minimum(gymax, bymax) - np.maximum(gymin, bymin) + 1.0, 0.0)
            inters = iw * ih
            uni = (
                (bxmax - bxmin + 1.0) * (bymax - bymin + 1.0)
                + (gxmax - gxmin + 1.0) * (gymax - gymin + 1.0)
                - inters
            )
            keep_index = np.where(inters / uni > 0)[0]
            if len(keep_index) > 0:
                overlaps = [poly_iou(bbgt[k], bb) for k in keep_index]
                ovmax = np.max(overlaps)
                jmax = keep_index[int(np.argmax(overlaps))]
        if ovmax > ovthresh:
            if not r["difficult"][jmax]:
                if not r["det"][jmax]:
                    tp[d] = 1.0
                    r["det"][jmax] = True
                else:
                    fp[d] = 1.0
        else:
            fp[d] = 1.0
    fp = np.cumsum(fp)
    tp = np.cumsum(tp)
    rec = tp / float(npos)
    prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
    return devkit_ap(rec, prec, use_07)


def to_dataset(
    images: list[str],
    classes: list[str],
    gts: dict[str, list[tuple[list[float], str, int]]],
    dets: dict[str, list[tuple[str, float, list[float]]]],
) -> Dataset:
    """The same scene as iou-eval's columns: predictions in Task1 reading order (class file
    by class file, lines in order), ground truths image by image in file order."""
    index = {im: i for i, im in enumerate(images)}
    g_rows = [(index[im], o) for im in images for o in gts.get(im, [])]
    p_rows = [(c, d) for c in classes for d in dets.get(c, [])]
    gt = Boxes.build(
        np.zeros((len(g_rows), 4)),
        image=[i for i, _ in g_rows],
        category=[classes.index(o[1]) for _, o in g_rows],
        difficult=[bool(o[2]) for _, o in g_rows],
        obb=np.array([o[0] for _, o in g_rows], dtype=float).reshape(-1, 8),
    )
    pr = Boxes.build(
        np.zeros((len(p_rows), 4)),
        image=[index[d[0]] for _, d in p_rows],
        category=[classes.index(c) for c, _ in p_rows],
        score=[d[1] for _, d in p_rows],
        obb=np.array([d[2] for _, d in p_rows], dtype=float).reshape(-1, 8),
    )
    n = len(images)
    imgs = Images(list(images), list(images), np.full(n, np.nan), np.full(n, np.nan))
    return Dataset(imgs, Categories([None] * len(classes), list(classes)), gt, pr)


def random_scene(seed: int) -> tuple[list[str], list[str], dict, dict]:
    rng = np.random.default_rng(seed)
    classes = ["plane", "ship", "small-vehicle"]
    images = [f"P{k:04d}" for k in range(int(rng.integers(3, 7)))]
    gts: dict[str, list] = {}
    dets: dict[str, list] = {c: [] for c in classes}
    for im in images:
        if rng.random() < 0.2:
            continue  # an image with no objects at all
        n = int(rng.integers(1, 12))
        boxes = np.column_stack(
            [
                rng.uniform(20, 200, n),
                rng.uniform(20, 200, n),
                rng.uniform(5, 40, n),
                rng.uniform(5, 40, n),
                rng.uniform(-np.pi, np.pi, n),
            ]
        )
        for b in boxes:
            c = classes[int(rng.integers(0, 3))]
            diff = int(rng.random() < 0.2)
            gts.setdefault(im, []).append((list(xywhr_to_corners(b[None])[0]), c, diff))
            for _ in range(int(rng.integers(0, 3))):  # jittered hits, some duplicates
                j = b + rng.normal(0, [3, 3, 3, 3, 0.2])
                j[2:4] = np.abs(j[2:4]) + 1
                score = round(float(rng.random()), 1)  # coarse scores: many ties
                dets[c].append((im, score, list(xywhr_to_corners(j[None])[0])))
    for im in images:  # false positives anywhere, some on images without objects
        for _ in range(int(rng.integers(0, 4))):
            b = [
                rng.uniform(0, 220),
                rng.uniform(0, 220),
                rng.uniform(5, 30),
                rng.uniform(5, 30),
                rng.uniform(-3, 3),
            ]
            c = classes[int(rng.integers(0, 3))]
            dets[c].append(
                (im, round(float(rng.random()), 1), list(xywhr_to_corners(np.array([b]))[0]))
            )
    for c in classes:
        order = rng.permutation(len(dets[c]))
        dets[c] = [dets[c][k] for k in order]
    return images, classes, gts, dets


@pytest.mark.parametrize("matches", [True, False])  # False: pairs below 0.5 are pruned
@pytest.mark.parametrize("all_point", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_random_scenes_match_devkit_loop(seed: int, all_point: bool, matches: bool) -> None:
    images, classes, gts, dets = random_scene(seed)
    ds = to_dataset(images, classes, gts, dets)
    res = run_dota(ds, all_point=all_point, matches=matches).result()
    aps = []
    for k, c in enumerate(classes):
        npos = sum(1 for im in images for o in gts.get(im, []) if o[1] == c and not o[2])
        ours = res.per_class[k]["AP"]
        if npos == 0:
            assert ours is None  # devkit: 0/0 recall; left out of the mean here
            continue
        ref = devkit_eval(images, gts, dets, c, use_07=not all_point)
        assert ours is not None and abs(ours - ref) <= 1e-12, (c, ours, ref)
        aps.append(ref)
    if aps:
        assert abs(res.summary["mAP"] - sum(aps) / len(aps)) <= 1e-12


def _sq(cx: float, cy: float, s: float, a: float = 0.3) -> list[float]:
    return list(xywhr_to_corners(np.array([[cx, cy, s, s, a]]))[0])


def test_hand_case_difficult_duplicate_and_miss() -> None:
    """Class ``ship``: GT A and B count, GT D is difficult. Visited by score: 0.9 on A (TP),
    0.8 on A again (duplicate: FP), 0.7 on D (difficult: neither), 0.6 far away (FP).
    tp = 1 1 1 1 (cumulative), fp = 0 1 1 2, recall 0.5 throughout, precision 1, 1/2, 1/2,
    1/3. VOC07: precision 1 at recall >= 0, 0.1, ..., 0.5 (6 of 11 points) -> 6/11;
    all-point: 0.5 * 1 = 0.5."""
    images = ["P0"]
    gts = {
        "P0": [
            (_sq(50, 50, 20), "ship", 0),
            (_sq(150, 50, 20), "ship", 0),
            (_sq(50, 150, 20), "ship", 1),
        ]
    }
    dets = {
        "ship": [
            ("P0", 0.6, _sq(300, 300, 20)),
            ("P0", 0.9, _sq(50, 50, 20)),
            ("P0", 0.7, _sq(50, 150, 20)),
            ("P0", 0.8, _sq(51, 50, 20)),
        ]
    }
    ds = to_dataset(images, ["ship"], gts, dets)
    r07 = run_dota(ds).result()
    assert abs(r07.per_class[0]["AP"] - 6 / 11) <= 1e-12
    curve = run_dota(ds).curves[0]
    assert (curve["tp"], curve["fp"], curve["n_gt"]) == (1, 2, 2)
    assert abs(run_dota(ds, all_point=True).result().per_class[0]["AP"] - 0.5) <= 1e-12


def test_iou_exactly_half_is_not_a_hit() -> None:
    """IoU > 0.5 strictly: a 12x10 GT and a 12x10 prediction shifted by 4 share 8x10 = 80
    over a union of 160: IoU 0.5 exactly, which the devkit counts as a miss."""
    gt = [0.0, 0.0, 12.0, 0.0, 12.0, 10.0, 0.0, 10.0]
    pred = [4.0, 0.0, 16.0, 0.0, 16.0, 10.0, 4.0, 10.0]  # overlap 8x10 = 80, union 160
    ds = to_dataset(["P0"], ["plane"], {"P0": [(gt, "plane", 0)]}, {"plane": [("P0", 0.9, pred)]})
    res = run_dota(ds).result()
    assert res.per_class[0]["AP"] == 0.0
    pred2 = [3.9, 0.0, 15.9, 0.0, 15.9, 10.0, 3.9, 10.0]
    ds2 = to_dataset(["P0"], ["plane"], {"P0": [(gt, "plane", 0)]}, {"plane": [("P0", 0.9, pred2)]})
    assert math.isclose(run_dota(ds2).result().per_class[0]["AP"], 1.0, abs_tol=1e-12)


@pytest.mark.slow
def test_many_random_scenes_match_devkit_loop() -> None:
    """`make test-slow`: 150 more scenes, both AP rules."""
    for seed in range(100, 250):
        images, classes, gts, dets = random_scene(seed)
        ds = to_dataset(images, classes, gts, dets)
        for all_point in (False, True):
            res = run_dota(ds, all_point=all_point).result()
            for k, c in enumerate(classes):
                if res.per_class[k]["AP"] is None:
                    continue
                ref = devkit_eval(images, gts, dets, c, use_07=not all_point)
                assert abs(res.per_class[k]["AP"] - ref) <= 1e-12, (seed, c)
