"""Targets given per batch under LVIS: each image's target dict carries its federated lists
(``neg_category_ids``, ``not_exhaustive_category_ids``) beside its boxes; the categories
carry ``frequency``. Split over ranks in random batches and merged in any order, the result
equals ``evaluate`` on the equivalent LVIS files bit for bit (lvis-api's numbers: the
LVIS oracle tests pin ``evaluate`` to them)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iou_cli import Evaluator, evaluate
from iou_cli.errors import InputError
from tests.oracle.lvisgen import random_lvis_scene
from tests.state.hypo import many, quick
from tests.state.test_merge_exact import same
from tests.state.test_targets_exact import Tensorish
from tests.state.test_targets_shapes import ranks_run

LISTS = ("neg_category_ids", "not_exhaustive_category_ids")


def lvis_pair(
    gt: dict[str, Any], dets: list[dict[str, Any]], image_id: int, wrap: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    image = next(im for im in gt["images"] if im["id"] == image_id)
    anns = [a for a in gt["annotations"] if a["image_id"] == image_id]
    ds = [d for d in dets if d["image_id"] == image_id]
    t: dict[str, Any] = {
        "image_id": image_id,
        "boxes": wrap(np.asarray([a["bbox"] for a in anns], dtype=np.float64).reshape(-1, 4)),
        "labels": wrap(np.asarray([a["category_id"] for a in anns], dtype=np.int64)),
        "area": wrap(np.asarray([a["area"] for a in anns], dtype=np.float64)),
        "ignore": wrap(np.asarray([a.get("ignore", 0) for a in anns], dtype=np.int64)),
    }
    for key in LISTS:
        t[key] = wrap(np.asarray(image[key], dtype=np.int64))
    p = {
        "boxes": wrap(np.asarray([d["bbox"] for d in ds], dtype=np.float64).reshape(-1, 4)),
        "scores": wrap(np.asarray([d["score"] for d in ds], dtype=np.float64)),
        "labels": wrap(np.asarray([d["category_id"] for d in ds], dtype=np.int64)),
    }
    return p, t


def check(data: st.DataObject) -> None:
    seed = data.draw(st.integers(0, 10_000), label="seed")
    gt, dets = random_lvis_scene(seed, n_images=8)
    ties = data.draw(st.sampled_from([0, 1, 2]), label="ties")
    if ties:
        levels = np.linspace(0.1, 0.9, ties)
        rng = np.random.default_rng(seed)
        for d in dets:
            d["score"] = float(levels[int(rng.integers(0, ties))])
    wrap = data.draw(st.sampled_from([np.asarray, Tensorish]), label="arrays")
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), protocol="lvis")
    got = ranks_run(
        gt, lambda i: lvis_pair(gt, dets, i, wrap), data, protocol="lvis", box_format="xywh"
    )
    same(one, got)
    for key in ("evaluated_predictions", "evaluated_ground_truths"):
        assert got.params[key] == one.params[key], key


@quick(6)
@given(data=st.data())
def test_lvis_targets_any_split_equals_one_shot(data: st.DataObject) -> None:
    check(data)


@pytest.mark.slow
@many(50)
@given(data=st.data())
def test_lvis_targets_any_split_equals_one_shot_many(data: st.DataObject) -> None:
    check(data)


def test_lvis_target_lists_must_be_ids() -> None:
    cats = [{"id": 1, "frequency": "f"}, {"id": 2, "frequency": "r"}]
    ev = Evaluator(protocol="lvis", categories=cats)
    pred = {"boxes": np.zeros((0, 4)), "scores": [], "labels": []}
    for bad in ([1.5], ["cat"]):
        target = {"image_id": 1, "boxes": np.zeros((0, 4)), "labels": [], "neg_category_ids": bad}
        with pytest.raises(
            InputError,
            match=r"update \d:targets\[0\].neg_category_ids\[0\]: expected a category id",
        ):
            ev.update([pred], [target])


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # pycocotools
def test_lvis_mask_targets_over_two_ranks() -> None:
    """LVIS with ``iou_type="segm"``: binary masks per image (the file's polygons and RLEs
    decoded by pycocotools), over two ranks merged, equal ``evaluate`` on the file whose
    segmentations are those masks' RLEs."""
    mask_api = pytest.importorskip("pycocotools.mask")
    gt, dets = random_lvis_scene(1, n_images=6, segm=True)
    size = {im["id"]: (im["height"], im["width"]) for im in gt["images"]}

    def decoded(seg: Any, image_id: int) -> np.ndarray:
        h, w = size[image_id]
        rle = mask_api.frPyObjects(seg, h, w) if isinstance(seg, list) else seg
        if isinstance(rle, list):
            rle = mask_api.merge(rle)
        if isinstance(rle.get("counts"), str):
            rle = {"size": rle["size"], "counts": rle["counts"].encode()}
        return np.asarray(mask_api.decode(rle), dtype=np.uint8)

    def as_rle(m: np.ndarray) -> dict[str, Any]:
        rle = mask_api.encode(np.asfortranarray(m))
        return {"size": [int(v) for v in rle["size"]], "counts": rle["counts"].decode()}

    for rec in [*gt["annotations"], *dets]:
        rec["mask"] = decoded(rec["segmentation"], rec["image_id"])
        rec["segmentation"] = as_rle(rec["mask"])
    ranks = [
        Evaluator(protocol="lvis", iou_type="segm", categories=gt["categories"], box_format="xywh")
        for _ in range(2)
    ]
    for n, im in enumerate(gt["images"]):
        h, w = size[im["id"]]
        anns = [a for a in gt["annotations"] if a["image_id"] == im["id"]]
        ds = [d for d in dets if d["image_id"] == im["id"]]
        target = {
            "image_id": im["id"],
            "masks": np.asarray([a["mask"] for a in anns], dtype=np.uint8).reshape(-1, h, w),
            "boxes": np.asarray([a["bbox"] for a in anns], dtype=np.float64).reshape(-1, 4),
            "labels": [a["category_id"] for a in anns],
            "area": [a["area"] for a in anns],
            "ignore": [a.get("ignore", 0) for a in anns],
            **{key: im[key] for key in LISTS},
        }
        pred = {
            "masks": np.asarray([d["mask"] for d in ds], dtype=np.uint8).reshape(-1, h, w),
            "scores": [d["score"] for d in ds],
            "labels": [d["category_id"] for d in ds],
        }
        ranks[n % 2].update([pred], [target])
    for rec in gt["annotations"]:
        del rec["mask"]
    for rec in dets:
        del rec["mask"], rec["bbox"]  # the predictions' boxes: their masks', as given above
    one = evaluate(dets, gt, protocol="lvis", iou_type="segm")
    assert one.summary["AP"] > 0.05 and one.summary["tp"] > 0  # not an empty scene
    merged = Evaluator.merge([Evaluator.from_bytes(r.to_bytes()) for r in ranks[::-1]])
    same(one, merged.compute())
