"""The partial file and the Evaluator's contract: round trip, refusals (each located), size."""

from __future__ import annotations

import copy
import json
import struct
from typing import Any

import numpy as np
import pytest

from iou_cli import Evaluator, evaluate
from iou_cli.errors import InputError, UsageError
from iou_cli.state.codec import FORMAT_VERSION, MAGIC, from_bytes, to_bytes
from tests.oracle.cocogen import random_scene


@pytest.fixture(scope="module")
def scene() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return random_scene(3, n_images=16, n_cats=4)


def halves(gt: dict[str, Any], dets: list[dict[str, Any]], **kw: Any) -> list[Evaluator]:
    ids = [im["id"] for im in gt["images"]]
    out = []
    for part in (ids[::2], ids[1::2]):
        ev = Evaluator(copy.deepcopy(gt), **kw)
        ev.update([d for d in dets if d["image_id"] in part], image_ids=part)
        out.append(ev)
    return out


def test_bytes_round_trip_and_merge_equal_one_shot(scene: Any) -> None:
    gt, dets = scene
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt))
    a, b = halves(gt, dets)
    merged = Evaluator.merge(
        [Evaluator.from_bytes(b.to_bytes()), Evaluator.from_bytes(a.to_bytes())]
    )
    res = merged.compute()
    assert res.summary == one.summary and res.per_class == one.per_class
    assert a.to_bytes() == to_bytes(from_bytes(a.to_bytes()))  # stable encoding


def test_file_layout_is_readable_without_iou_eval(scene: Any) -> None:
    gt, dets = scene
    data = halves(gt, dets)[0].to_bytes()
    magic, version, head_len = struct.unpack_from("<8sII", data)
    assert magic == MAGIC and version == 1  # a ground-truth file's state: still version 1
    header = json.loads(data[16 : 16 + head_len])
    spec = {s["name"]: s for s in header["arrays"]}
    base = 16 + head_len
    s = spec["score"]
    score = np.frombuffer(data, dtype=s["dtype"], count=s["shape"][0], offset=base + s["offset"])
    ptr = spec["class_ptr"]
    class_ptr = np.frombuffer(
        data, dtype=ptr["dtype"], count=ptr["shape"][0], offset=base + ptr["offset"]
    )
    assert class_ptr[-1] == score.shape[0] == header["n_predictions"]
    assert header["protocol"] == "coco" and header["fingerprint"].startswith("sha256:")


def test_bytes_per_prediction_at_most_32() -> None:
    gt, dets = random_scene(11, n_images=300, n_cats=5)
    ev = Evaluator(gt)
    ev.update(dets, image_ids=[im["id"] for im in gt["images"]])
    state = ev.state()
    data = ev.to_bytes()
    header = json.loads(data[16 : 16 + struct.unpack_from("<8sII", data)[2]])
    per_pred = sum(
        s["nbytes"]
        for s in header["arrays"]
        if s["name"] in ("score", "image", "rank", "bits", "iou")
    )
    assert len(state) > 1000
    assert per_pred / len(state) <= 32  # the state's own cost (header and counts apart)


@pytest.mark.parametrize(
    ("mutate", "what"),
    [
        (lambda d: d[:-10], "truncated"),
        (lambda d: d[: len(d) // 2], "truncated"),
        (lambda d: d[:-40] + bytes([d[-40] ^ 1]) + d[-39:], "checksum"),
        (lambda d: d[:8] + struct.pack("<I", FORMAT_VERSION + 1) + d[12:], "newer"),
        (lambda d: b"{}" + d, "not an iou-eval partial file"),
        (lambda d: d + b"x", "corrupt"),
    ],
)
def test_damaged_files_are_refused_located(scene: Any, mutate: Any, what: str) -> None:
    gt, dets = scene
    data = halves(gt, dets)[0].to_bytes()
    with pytest.raises(InputError) as err:
        from_bytes(mutate(data), "part-1.iou")
    assert what in str(err.value) and str(err.value).startswith("part-1.iou")


def test_overlapping_images_are_refused(scene: Any) -> None:
    gt, dets = scene
    a, _ = halves(gt, dets)
    a2 = Evaluator.from_bytes(a.to_bytes(), "b.iou")
    with pytest.raises(InputError, match="also in"):
        Evaluator.merge([Evaluator.from_bytes(a.to_bytes(), "a.iou"), a2])
    # on purpose: kept both (each image's records twice)
    Evaluator.merge([a, a2], allow_overlap=True)


def test_image_given_twice_to_one_evaluator_is_refused(scene: Any) -> None:
    gt, dets = scene
    ev = Evaluator(copy.deepcopy(gt))
    img = gt["images"][0]["id"]
    ev.update([], image_ids=[img])
    with pytest.raises(UsageError, match="already evaluated"):
        ev.update([], image_ids=[img])
    ev.reset()
    ev.update([], image_ids=[img])


def test_mixed_ground_truths_and_parameters_are_refused(scene: Any) -> None:
    gt, dets = scene
    a, _ = halves(gt, dets)
    other = copy.deepcopy(gt)
    other["annotations"] = other["annotations"][1:]
    _, b = halves(other, dets)
    with pytest.raises(InputError, match="different ground truth"):
        Evaluator.merge([a, Evaluator.from_bytes(b.to_bytes(), "b.iou")])
    _, c = halves(gt, dets, iou_thr=0.75)
    with pytest.raises(
        InputError, match=r"different parameters \(op_iou_thr: 0.75 here, 0.5 there\)"
    ):
        Evaluator.merge([a, Evaluator.from_bytes(c.to_bytes(), "c.iou")])
    _, v = halves(gt, dets, protocol="voc")
    with pytest.raises(InputError, match="different protocol"):
        Evaluator.merge([a, v])


class Tensorish:
    """Anything with ``__array__`` (a torch tensor on the CPU behaves so)."""

    def __init__(self, a: Any) -> None:
        self._a = np.asarray(a)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._a if dtype is None else self._a.astype(dtype)


@pytest.mark.parametrize("box_format", ["xywh", "xyxy", "cxcywh"])
def test_arrays_per_image_equal_records(scene: Any, box_format: str) -> None:
    gt, dets = scene
    ev = Evaluator(copy.deepcopy(gt), box_format=box_format)
    ref = Evaluator(copy.deepcopy(gt))
    outputs, targets, recs = [], [], []
    for im in gt["images"]:
        mine = [d for d in dets if d["image_id"] == im["id"]]
        b = np.array([d["bbox"] for d in mine], dtype=np.float64).reshape(-1, 4)
        if box_format == "xyxy":
            b = np.c_[b[:, :2], b[:, :2] + b[:, 2:]]
        elif box_format == "cxcywh":
            b = np.c_[b[:, :2] + b[:, 2:] / 2, b[:, 2:]]
        outputs.append(
            {
                "boxes": Tensorish(b),
                "scores": Tensorish([d["score"] for d in mine]),
                "labels": Tensorish(np.array([d["category_id"] for d in mine], dtype=np.int64)),
            }
        )
        targets.append({"image_id": Tensorish(im["id"])})
        back = {
            "xywh": b,
            "xyxy": np.c_[b[:, :2], b[:, 2:] - b[:, :2]],
            "cxcywh": np.c_[b[:, :2] - b[:, 2:] / 2, b[:, 2:]],
        }[box_format]
        recs += [dict(d, bbox=[float(v) for v in bb]) for d, bb in zip(mine, back, strict=True)]
    ev.update(outputs[:5], targets[:5])
    ev.update(outputs[5:], targets[5:])
    ref.update(recs, image_ids=[im["id"] for im in gt["images"]])
    assert ev.compute().summary == ref.compute().summary
    if box_format == "xywh":
        assert ev.compute().summary == evaluate(copy.deepcopy(dets), copy.deepcopy(gt)).summary


def test_usage_errors(scene: Any) -> None:
    gt, dets = scene
    with pytest.raises(UsageError, match="box_format"):
        Evaluator(gt, box_format="yxyx")
    with pytest.raises(UsageError, match="protocol"):
        Evaluator(gt, protocol="nope")
    ev = Evaluator.from_bytes(halves(gt, dets)[0].to_bytes())
    with pytest.raises(UsageError, match="no ground truth"):
        ev.update(dets)
    with pytest.raises(UsageError, match="no image_id"):
        Evaluator(copy.deepcopy(gt)).update(
            [{"boxes": np.zeros((0, 4)), "scores": [], "labels": []}]
        )


def test_parallel_decode_gives_the_same_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from iou_cli.loaders import fastcoco

    _, dets = random_scene(5, n_images=40, n_cats=4)
    data = json.dumps(dets, indent=1).encode()
    one = fastcoco.read_results(data)
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 1)
    two = fastcoco.read_results(data, jobs=3)
    assert one is not None and two is not None
    for key in one:
        assert np.array_equal(one[key], two[key]) and one[key].dtype == two[key].dtype
    # a slice that is not a plain record list declines the whole file, as one process does
    bad = data.replace(b'"score"', b'"score": {"nested": 1}, "x"', 1)
    assert fastcoco.read_results(bad, jobs=3) is None
