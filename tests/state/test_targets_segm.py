"""Targets given per batch with masks (``iou_type="segm"``): binary ``(N, H, W)`` arrays or
COCO RLE dicts per image, split over ranks in random batches, merged in any order, equal
``evaluate`` on the equivalent COCO files (masks encoded by pycocotools itself) bit for bit."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iou_cli import Evaluator, evaluate
from iou_cli.state.targets import mask_extent, mask_rle
from tests.state.hypo import quick
from tests.state.test_merge_exact import same

mask_api = pytest.importorskip("pycocotools.mask")

H, W = 20, 28


def blob(rng: np.random.Generator) -> np.ndarray:
    m = np.zeros((H, W), dtype=np.uint8)
    y, x = int(rng.integers(0, H - 4)), int(rng.integers(0, W - 4))
    m[y : y + int(rng.integers(1, 10)), x : x + int(rng.integers(1, 12))] = 1
    if rng.random() < 0.5:  # not a rectangle
        m[y, x] = 0
    return m


def shift(m: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    out = np.roll(m, (int(rng.integers(-2, 3)), int(rng.integers(-2, 3))), axis=(0, 1))
    return np.asarray(out, dtype=np.uint8)


def coco_rle(m: np.ndarray) -> dict[str, Any]:
    rle = mask_api.encode(np.asfortranarray(m))
    return {"size": [int(v) for v in rle["size"]], "counts": rle["counts"].decode()}


def make_scene(seed: int) -> tuple[dict[str, Any], dict[int, Any], list[dict[str, Any]]]:
    """The COCO files (pycocotools' own RLE) and the masks per image as a loop holds them."""
    rng = np.random.default_rng(seed)
    images = [{"id": int(i), "width": W, "height": H} for i in rng.choice(999, 6, replace=False)]
    anns: list[dict[str, Any]] = []
    dets: list[dict[str, Any]] = []
    per_image: dict[int, Any] = {}
    for im in images:
        gts = [blob(rng) for _ in range(int(rng.integers(0, 4)))]
        cats = [int(rng.integers(1, 4)) for _ in gts]
        crowd = [int(rng.random() < 0.1) for _ in gts]
        preds, pcats, scores = [], [], []
        for g, c in zip(gts, cats, strict=True):
            for _ in range(int(rng.integers(0, 3))):
                preds.append(shift(g, rng))
                pcats.append(c if rng.random() < 0.8 else int(rng.integers(1, 4)))
                scores.append(float(rng.choice([0.3, 0.6, 0.9])))
        for _ in range(int(rng.integers(0, 3))):
            preds.append(blob(rng))
            pcats.append(int(rng.integers(1, 4)))
            scores.append(float(rng.choice([0.3, 0.6, 0.9])))
        for g, c, k in zip(gts, cats, crowd, strict=True):
            r = coco_rle(g)
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": im["id"],
                    "category_id": c,
                    "segmentation": r,
                    "area": float(mask_api.area(mask_api.encode(np.asfortranarray(g)))),
                    "bbox": [
                        float(v) for v in mask_api.toBbox(mask_api.encode(np.asfortranarray(g)))
                    ],
                    "iscrowd": k,
                }
            )
        for p, c, s in zip(preds, pcats, scores, strict=True):
            dets.append(
                {"image_id": im["id"], "category_id": c, "segmentation": coco_rle(p), "score": s}
            )
        per_image[im["id"]] = (gts, cats, crowd, preds, pcats, scores)
    gt = {"images": images, "annotations": anns, "categories": [{"id": c} for c in (1, 2, 3)]}
    return gt, per_image, dets


def test_mask_rle_and_extent_are_pycocotools() -> None:
    rng = np.random.default_rng(3)
    for m in [blob(rng) for _ in range(30)] + [
        np.zeros((H, W), np.uint8),
        np.ones((H, W), np.uint8),
    ]:
        ours = mask_rle(m)
        rle = mask_api.encode(np.asfortranarray(m))
        assert mask_api.frPyObjects(ours, H, W)["counts"] == rle["counts"]  # the same runs
        box, area = mask_extent(m)
        assert area == float(mask_api.area(rle)) and box == [float(v) for v in mask_api.toBbox(rle)]


@quick(8)
@given(data=st.data())
def test_masks_any_split_equals_one_shot(data: st.DataObject) -> None:
    gt, per_image, dets = make_scene(data.draw(st.integers(0, 10_000), label="seed"))
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), iou_type="segm")
    ids = list(per_image)
    n_parts = data.draw(st.integers(1, 3), label="ranks")
    owner = data.draw(st.lists(st.integers(0, n_parts - 1), min_size=len(ids), max_size=len(ids)))
    parts = []
    for k in range(n_parts):
        ev = Evaluator(protocol="coco", iou_type="segm", categories=[1, 2, 3])
        mine = [i for i, o in zip(ids, owner, strict=True) if o == k]
        for lo in range(0, len(mine), 2):
            preds, targets = [], []
            for i in mine[lo : lo + 2]:
                gts, cats, crowd, pm, pcats, scores = per_image[i]
                as_rle = data.draw(st.booleans(), label="RLE dicts")
                stack = (
                    (lambda ms: [coco_rle(m) for m in ms])
                    if as_rle
                    else (lambda ms: np.asarray(ms, dtype=np.uint8).reshape(-1, H, W))
                )
                targets.append(
                    {"image_id": i, "masks": stack(gts), "labels": cats, "iscrowd": crowd}
                    | ({"area": [float(g.sum()) for g in gts]} if as_rle else {})
                )
                preds.append({"masks": stack(pm), "scores": scores, "labels": pcats})
            ev.update(preds, targets)
        parts.append(Evaluator.from_bytes(ev.to_bytes()))
    order = data.draw(st.permutations(range(n_parts)), label="merge order")
    same(one, Evaluator.merge([parts[i] for i in order]).compute())
