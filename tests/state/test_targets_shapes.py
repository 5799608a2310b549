"""Targets given per batch for poses and rotated boxes: ``Evaluator(protocol=...,
iou_type="keypoints" | "obb", categories=...)`` with ``update(predictions, targets)`` of
per-image arrays (keypoints ``(N, K, 3)`` / ``(N, K, 2)``, rotated boxes ``(N, 5)``), split
over ranks in random batches, sent as bytes and merged in any order, equals ``evaluate`` on
the equivalent COCO files bit for bit (summary, per-class rows, pycocotools' arrays)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iou_cli import Evaluator, evaluate
from iou_cli.errors import InputError, UsageError
from tests.oracle.kptgen import random_kpt_scene
from tests.oracle.obbgen import rotated_scene
from tests.state.hypo import many, quick
from tests.state.test_merge_exact import same
from tests.state.test_targets_exact import Tensorish

SIG5 = [0.05, 0.1, 0.03, 0.07, 0.2]
OBB_PROTOCOLS = ("coco", "voc", "voc07", "dota")
EXAMPLES = quick(6)


def _col(objs: list[dict[str, Any]], key: str, wrap: Any, dtype: Any = np.float64) -> Any:
    return wrap(np.asarray([o[key] for o in objs], dtype=dtype))


def kpt_pair(
    gt: dict[str, Any], dets: list[dict[str, Any]], image_id: int, k: int, wrap: Any, xy: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One image's (prediction dict, target dict): keypoints (N, K, 3) (predictions
    (N, K, 2) when ``xy``), boxes / area / num_keypoints where the file has them."""
    anns = [a for a in gt["annotations"] if a["image_id"] == image_id]
    ds = [d for d in dets if d["image_id"] == image_id]
    kp = np.asarray([a["keypoints"] for a in anns], dtype=np.float64).reshape(len(anns), k, 3)
    t: dict[str, Any] = {
        "image_id": image_id,
        "keypoints": wrap(kp),
        "labels": _col(anns, "category_id", wrap, np.int64),
        "iscrowd": _col(anns, "iscrowd", wrap, np.int64),
    }
    for key in ("area", "num_keypoints"):
        if anns and key in anns[0]:
            t[key] = _col(anns, key, wrap)
    if anns and "bbox" in anns[0]:
        t["boxes"] = wrap(np.asarray([a["bbox"] for a in anns]).reshape(-1, 4))
    pk = np.asarray([d["keypoints"] for d in ds], dtype=np.float64).reshape(len(ds), k, 3)
    p: dict[str, Any] = {
        "keypoints": wrap(pk[:, :, :2] if xy else pk),
        "scores": _col(ds, "score", wrap),
        "labels": _col(ds, "category_id", wrap, np.int64),
    }
    if ds and "bbox" in ds[0]:
        p["boxes"] = wrap(np.asarray([d["bbox"] for d in ds]).reshape(-1, 4))
    return p, t


def obb_pair(
    gt: dict[str, Any], dets: list[dict[str, Any]], image_id: int, wrap: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    anns = [a for a in gt["annotations"] if a["image_id"] == image_id]
    ds = [d for d in dets if d["image_id"] == image_id]
    t = {
        "image_id": image_id,
        "boxes": wrap(np.asarray([a["obb"] for a in anns], dtype=np.float64).reshape(-1, 5)),
        "labels": _col(anns, "category_id", wrap, np.int64),
        "area": _col(anns, "area", wrap),
        "difficult": wrap(np.asarray([a.get("ignore", 0) for a in anns], dtype=np.int64)),
    }
    p = {
        "boxes": wrap(np.asarray([d["obb"] for d in ds], dtype=np.float64).reshape(-1, 5)),
        "scores": _col(ds, "score", wrap),
        "labels": _col(ds, "category_id", wrap, np.int64),
    }
    return p, t


def ranks_run(gt: dict[str, Any], pair: Any, data: st.DataObject, **options: Any) -> Any:
    """The images split over 1-4 ranks, each updated in random batches in random order,
    through bytes or not, merged in a random order."""
    ids = [im["id"] for im in gt["images"]]
    n = data.draw(st.integers(1, 4), label="ranks")
    owner = data.draw(st.lists(st.integers(0, n - 1), min_size=len(ids), max_size=len(ids)))
    evaluators = []
    for r in range(n):
        ev = Evaluator(categories=copy.deepcopy(gt["categories"]), **options)
        mine = data.draw(st.permutations([i for i, o in zip(ids, owner, strict=True) if o == r]))
        pos = 0
        while pos < len(mine):
            size = data.draw(st.integers(1, 4), label="batch")
            pairs = [pair(i) for i in mine[pos : pos + size]]
            pos += size
            ev.update([p for p, _ in pairs], [t for _, t in pairs])
        if data.draw(st.booleans(), label="through bytes"):
            ev = Evaluator.from_bytes(ev.to_bytes())
        evaluators.append(ev)
    order = data.draw(st.permutations(range(n)), label="merge order")
    return Evaluator.merge([evaluators[i] for i in order]).compute()


def _ties(dets: list[dict[str, Any]], seed: int, ties: int) -> None:
    if ties:
        levels = np.linspace(0.1, 0.9, ties)
        rng = np.random.default_rng(seed + 7)
        for d in dets:
            d["score"] = float(levels[int(rng.integers(0, ties))])


def check_keypoints(data: st.DataObject) -> None:
    seed = data.draw(st.integers(0, 10_000), label="seed")
    k, sig = data.draw(st.sampled_from([(17, None), (5, SIG5)]), label="K")
    gt, dets = random_kpt_scene(seed, k=k)
    _ties(dets, seed, data.draw(st.sampled_from([0, 1, 2]), label="ties"))
    if data.draw(st.booleans(), label="no area"):  # OKS then scales by the box's w*h
        for a in gt["annotations"]:
            a.pop("area", None)
    if data.draw(st.booleans(), label="no num_keypoints"):  # counted from the flags
        for a in gt["annotations"]:
            a.pop("num_keypoints", None)
    xy = data.draw(st.booleans(), label="predictions (N, K, 2)")
    wrap = data.draw(st.sampled_from([np.asarray, Tensorish]), label="arrays")
    opts = {"iou_type": "keypoints", "sigmas": sig}
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), protocol="coco", **opts)
    got = ranks_run(
        gt, lambda i: kpt_pair(gt, dets, i, k, wrap, xy), data, box_format="xywh", **opts
    )
    same(one, got)


@EXAMPLES
@given(data=st.data())
def test_keypoint_targets_any_split_equals_one_shot(data: st.DataObject) -> None:
    check_keypoints(data)


@pytest.mark.slow
@many(60)
@given(data=st.data())
def test_keypoint_targets_any_split_equals_one_shot_many(data: st.DataObject) -> None:
    check_keypoints(data)


def check_obb(protocol: str, data: st.DataObject) -> None:
    seed = data.draw(st.integers(0, 10_000), label="seed")
    gt, dets = rotated_scene(seed)
    _ties(dets, seed, data.draw(st.sampled_from([0, 1, 2]), label="ties"))
    rng = np.random.default_rng(seed)
    for a in gt["annotations"]:  # difficult (VOC, DOTA) / ignored (COCO) ground truths
        if rng.random() < 0.1:
            a["ignore"] = 1
    if protocol != "coco":  # the devkits' ties: a file listed image by image
        dets = sorted(dets, key=lambda d: d["image_id"])
    wrap = data.draw(st.sampled_from([np.asarray, Tensorish]), label="arrays")
    opts = {"protocol": protocol, "iou_type": "obb"}
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), **opts)
    same(one, ranks_run(gt, lambda i: obb_pair(gt, dets, i, wrap), data, **opts))


@pytest.mark.parametrize("protocol", OBB_PROTOCOLS)
@EXAMPLES
@given(data=st.data())
def test_obb_targets_any_split_equals_one_shot(protocol: str, data: st.DataObject) -> None:
    check_obb(protocol, data)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", OBB_PROTOCOLS)
@many(50)
@given(data=st.data())
def test_obb_targets_any_split_equals_one_shot_many(protocol: str, data: st.DataObject) -> None:
    check_obb(protocol, data)


def test_keypoint_targets_given_xy_are_visible() -> None:
    """Ground-truth keypoints ``(N, K, 2)``: every keypoint labelled and visible (v = 2),
    as the equivalent file with those flags."""
    gt, dets = random_kpt_scene(4, k=17)
    for a in gt["annotations"]:
        a["keypoints"][2::3] = [2] * 17
        a.pop("num_keypoints", None)
    ev = Evaluator(categories=gt["categories"], iou_type="keypoints", box_format="xywh")
    pairs = [kpt_pair(gt, dets, im["id"], 17, np.asarray, False) for im in gt["images"]]
    for _, t in pairs:
        t["keypoints"] = np.asarray(t["keypoints"])[:, :, :2]
    ev.update([p for p, _ in pairs], [t for _, t in pairs])
    same(evaluate(dets, gt, iou_type="keypoints"), ev.compute())


def _kp_ev(**kw: Any) -> Evaluator:
    return Evaluator(categories=[1], iou_type="keypoints", **kw)


def test_keypoint_target_refusals() -> None:
    ev = _kp_ev()
    pose = np.zeros((1, 4, 3))
    pred = {"keypoints": pose, "scores": [0.5], "labels": [1]}
    with pytest.raises(InputError, match=r"update 1:targets\[0\].keypoints: expected keypoints"):
        ev.update([pred], [{"image_id": 1, "keypoints": np.zeros((1, 4)), "labels": [1]}])
    with pytest.raises(InputError, match=r"update 2:targets\[0\]: no keypoints"):
        ev.update([pred], [{"image_id": 1, "boxes": np.zeros((1, 4)), "labels": [1]}])
    with pytest.raises(InputError, match=r"targets\[0\].keypoints: a value is not finite"):
        ev.update([pred], [{"image_id": 1, "keypoints": pose + np.nan, "labels": [1]}])
    ev = _kp_ev(sigmas=[0.1] * 4)
    ev.update([pred], [{"image_id": 1, "keypoints": pose + 1, "labels": [1]}])
    with pytest.raises(InputError, match=r"3 keypoints per object, but earlier updates had K = 4"):
        ev.update([pred], [{"image_id": 2, "keypoints": np.ones((1, 3, 3)), "labels": [1]}])
    with pytest.raises(InputError, match=r"predictions\[0\]: 1 poses, 2 scores"):
        bad = {"keypoints": pose, "scores": [0.5, 0.4], "labels": [1, 1]}
        ev.update([bad], [{"image_id": 3, "keypoints": pose, "labels": [1]}])


def test_obb_target_refusals() -> None:
    ev = Evaluator(categories=[1], protocol="dota")
    pred = {"boxes": np.zeros((0, 5)), "scores": [], "labels": []}
    with pytest.raises(InputError, match=r"targets\[0\].boxes: corners \(N, 8\) are not taken"):
        ev.update([pred], [{"image_id": 1, "boxes": np.zeros((1, 8)), "labels": [1]}])
    with pytest.raises(InputError, match=r"expected rotated boxes of shape \(N, 5\)"):
        ev.update([pred], [{"image_id": 1, "boxes": np.zeros((1, 4)), "labels": [1]}])


@pytest.mark.parametrize(
    ("protocol", "iou_type", "message"),
    [
        ("ultralytics", "bbox", "needs a ground-truth file"),  # yolo val's own state
        ("ultralytics", "keypoints", "needs a ground-truth file"),
        ("voc", "keypoints", "evaluates bbox and obb only"),  # the protocol's own refusal
        ("lvis", "keypoints", "evaluates bbox and segm only"),
    ],
)
def test_unsupported_targets_are_refused(protocol: str, iou_type: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        Evaluator(categories=[1], protocol=protocol, iou_type=iou_type)


@pytest.mark.parametrize("how", ["sigmas", "names", "category sigmas"])
def test_a_rank_without_poses_merges_with_one_that_has_them(how: str) -> None:
    """A rank that saw no pose (K unknown there) takes K from ``sigmas=``, the categories'
    keypoint names or their sigmas, so its state merges with the others'."""
    cat: dict[str, Any] = {"id": 1, "name": "p"}
    kw: dict[str, Any] = {}
    if how == "sigmas":
        kw["sigmas"] = SIG5
    elif how == "names":
        cat["keypoints"] = [f"k{j}" for j in range(5)]
        kw["sigmas"] = SIG5
    else:
        cat["sigmas"] = SIG5
    ranks = [Evaluator(categories=[cat], iou_type="keypoints", **kw) for _ in range(2)]
    pose = np.full((1, 5, 3), 2.0)
    pose[0, :, 0] = np.arange(5) * 10.0
    ranks[0].update(
        [{"keypoints": pose, "scores": [0.9], "labels": [1]}],
        [{"image_id": 1, "keypoints": pose, "labels": [1], "area": [100.0]}],
    )
    nothing = {"keypoints": np.zeros((0, 5, 3)), "scores": [], "labels": []}
    ranks[1].update([nothing], [{"image_id": 2, "keypoints": np.zeros((0, 5, 3)), "labels": []}])
    got = Evaluator.merge([Evaluator.from_bytes(r.to_bytes()) for r in ranks]).compute()
    flat = pose.reshape(-1).tolist()
    gt = {
        "images": [{"id": 1}, {"id": 2}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "keypoints": flat, "area": 100.0}
            | {"bbox": [0.0, 0.0, 40.0, 0.0], "iscrowd": 0}
        ],
        "categories": [cat],
    }
    dets = [{"image_id": 1, "category_id": 1, "keypoints": flat, "score": 0.9}]
    same(evaluate(dets, gt, iou_type="keypoints", **kw), got)
    assert got.summary["AP"] > 0.99  # the one pose, found exactly
