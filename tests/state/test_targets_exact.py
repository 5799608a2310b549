"""Targets given per batch (issue 24, item 1): ``Evaluator(protocol=..., categories=...)``
with ``update(predictions, targets)`` in the shape training loops have, split over ranks in
random batches, sent as bytes and merged in any order, equals ``evaluate`` on the equivalent
COCO files bit for bit (summary, per-class rows, pycocotools' precision / recall / scores
arrays), with score ties everywhere."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iou_cli import Evaluator, evaluate
from tests.oracle.cocogen import random_scene
from tests.state.hypo import many, quick
from tests.state.test_merge_exact import same

PROTOCOLS = ("coco", "voc", "voc07")


class Tensorish:
    """Not a NumPy array: only ``__array__`` (as a torch tensor on the CPU offers)."""

    def __init__(self, values: Any) -> None:
        self._a = np.asarray(values)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._a if dtype is None else self._a.astype(dtype)


def to_format(xywh: np.ndarray, fmt: str) -> np.ndarray:
    b = np.asarray(xywh, dtype=np.float64).reshape(-1, 4)
    if fmt == "xyxy":
        return np.concatenate([b[:, :2], b[:, :2] + b[:, 2:]], axis=1)
    if fmt == "cxcywh":
        return np.concatenate([b[:, :2] + b[:, 2:] / 2, b[:, 2:]], axis=1)
    return b


def make_scene(seed: int, ties: int, protocol: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    gt, dets = random_scene(seed, n_images=10, n_cats=4)
    if ties:
        levels = np.linspace(0.1, 0.9, ties)
        rng = np.random.default_rng(seed + 7)
        for d in dets:
            d["score"] = float(levels[int(rng.integers(0, ties))])
    if protocol.startswith("voc"):  # the devkit's ties: a file listed image by image
        dets = sorted(dets, key=lambda d: d["image_id"])
    return gt, dets


def per_image(
    gt: dict[str, Any], dets: list[dict[str, Any]], image_id: int, fmt: str, wrap: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One image's (prediction dict, target dict) as a training loop holds them."""
    anns = [a for a in gt["annotations"] if a["image_id"] == image_id]
    ds = [d for d in dets if d["image_id"] == image_id]
    target = {
        "image_id": wrap(np.int64(image_id)),
        "boxes": wrap(to_format(np.array([a["bbox"] for a in anns]), fmt)),
        "labels": wrap(np.array([a["category_id"] for a in anns], dtype=np.int64)),
        "iscrowd": wrap(np.array([a["iscrowd"] for a in anns], dtype=np.int64)),
        "area": wrap(np.array([a["area"] for a in anns], dtype=np.float64)),
        "ignore": wrap(np.array([a.get("ignore", 0) for a in anns], dtype=np.int64)),
    }
    pred = {
        "boxes": wrap(to_format(np.array([d["bbox"] for d in ds]), fmt)),
        "scores": wrap(np.array([d["score"] for d in ds], dtype=np.float64)),
        "labels": wrap(np.array([d["category_id"] for d in ds], dtype=np.int64)),
    }
    return pred, target


def records_batch(
    gt: dict[str, Any], dets: list[dict[str, Any]], batch: list[int]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """COCO-style record lists (result records, annotation records) of some images."""
    keep = set(batch)
    anns = [copy.deepcopy(a) for a in gt["annotations"] if a["image_id"] in keep]
    recs = [copy.deepcopy(d) for d in dets if d["image_id"] in keep]
    return recs, anns


def split_run(
    gt: dict[str, Any], dets: list[dict[str, Any]], protocol: str, data: st.DataObject
) -> Any:
    ids = [im["id"] for im in gt["images"]]
    cats: Any = data.draw(
        st.sampled_from([gt["categories"], [c["id"] for c in gt["categories"]]]), label="cats"
    )
    if not isinstance(cats[0], dict):  # ids only: the equivalent file has no class names
        for c in gt["categories"]:
            del c["name"]
    fmt = data.draw(st.sampled_from(["xyxy", "xywh", "cxcywh"]), label="box format")
    wrap = data.draw(st.sampled_from([np.asarray, Tensorish, lambda a: np.asarray(a).tolist()]))
    n_parts = data.draw(st.integers(1, 4), label="ranks")
    owner = data.draw(st.lists(st.integers(0, n_parts - 1), min_size=len(ids), max_size=len(ids)))
    evaluators = []
    for k in range(n_parts):
        ev = Evaluator(protocol=protocol, categories=copy.deepcopy(cats), box_format=fmt)
        mine = data.draw(st.permutations([i for i, o in zip(ids, owner, strict=True) if o == k]))
        pos = 0
        while pos < len(mine):
            size = data.draw(st.integers(1, 5), label="batch")
            batch = mine[pos : pos + size]
            pos += size
            if data.draw(st.booleans(), label="COCO records"):
                recs, anns = records_batch(gt, dets, batch)
                ev.update(recs, anns, image_ids=batch)
            else:
                pairs = [per_image(gt, dets, i, fmt, wrap) for i in batch]
                ev.update([p for p, _ in pairs], [t for _, t in pairs])
        if data.draw(st.booleans(), label="through bytes"):
            ev = Evaluator.from_bytes(ev.to_bytes())
        evaluators.append(ev)
    order = data.draw(st.permutations(range(n_parts)), label="merge order")
    return Evaluator.merge([evaluators[i] for i in order]).compute()


def check(protocol: str, data: st.DataObject) -> None:
    seed = data.draw(st.integers(0, 10_000), label="seed")
    ties = data.draw(st.sampled_from([0, 1, 2, 3]), label="distinct scores (0: any)")
    gt, dets = make_scene(seed, ties, protocol)
    got = split_run(gt, dets, protocol, data)  # (drops class names when given ids only)
    same(evaluate(copy.deepcopy(dets), copy.deepcopy(gt), protocol=protocol), got)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@quick(8)
@given(data=st.data())
def test_targets_any_split_equals_one_shot(protocol: str, data: st.DataObject) -> None:
    check(protocol, data)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
@many(80)
@given(data=st.data())
def test_targets_any_split_equals_one_shot_many(protocol: str, data: st.DataObject) -> None:
    check(protocol, data)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_assigned_ids_are_the_order_of_arrival(protocol: str) -> None:
    """Targets without image_id: images numbered 0, 1, 2, ... as they arrive; the result is
    the equivalent files' with those ids."""
    gt, dets = make_scene(11, 2, protocol)
    arrival = [im["id"] for im in gt["images"]][::-1]
    new_id = {old: i for i, old in enumerate(arrival)}
    ev = Evaluator(protocol=protocol, categories=gt["categories"])
    for lo, hi in ((0, 3), (3, 7), (7, 10)):
        pairs = [per_image(gt, dets, i, "xyxy", np.asarray) for i in arrival[lo:hi]]
        for _, t in pairs:
            del t["image_id"]
        ev.update([p for p, _ in pairs], [t for _, t in pairs])
    for table in (gt["images"], gt["annotations"], dets):
        for r in table:
            key = "id" if r is not None and "file_name" in r else "image_id"
            r[key] = new_id[r[key]]
    if protocol.startswith("voc"):
        dets = sorted(dets, key=lambda d: d["image_id"])
    same(evaluate(dets, gt, protocol=protocol), ev.compute())
