"""The torchvision detection references' ``CocoEvaluator`` pattern, with the drop-in.

``RefStyleEvaluator`` below is written here (not copied) to the shape of that class: one
``COCOeval`` per iou type; ``update`` per batch sets ``cocoDt`` and ``params.imgIds``,
runs ``evaluate()`` and keeps ``evalImgs`` reshaped (categories, areas, images);
``synchronize_between_processes`` gathers every rank's (image ids, records), keeps each
image once (``np.unique``) and assigns ``evalImgs``, ``params.imgIds`` and ``_paramsEval``;
then ``accumulate`` and ``summarize``. The only line that names a library is the import.

Two ranks run as two processes over disjoint halves of the images in batches of three and
hand their state over as bytes (what ``torch.distributed.all_gather`` carries); the merged
summary must equal pycocotools' one-shot run on all images, text and ``stats``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import multiprocessing
import pickle
from typing import Any

import numpy as np
import pytest

from tests.cocoapi.scenes import pycoco_objects, segm_scene
from tests.oracle.cocogen import random_scene

pytest.importorskip("pycocotools")

IOU_TYPES = ("bbox", "segm")


class RefStyleEvaluator:
    def __init__(self, coco_gt: Any, iou_types: tuple[str, ...]) -> None:
        from iou_cli.cocoapi import COCOeval  # the one changed import

        self.coco_gt = copy.deepcopy(coco_gt)
        self.iou_types = iou_types
        self.coco_eval = {t: COCOeval(self.coco_gt, iouType=t) for t in iou_types}
        self.img_ids: list[Any] = []
        self.eval_imgs: dict[str, list[Any]] = {t: [] for t in iou_types}

    def update(self, predictions: dict[int, dict[str, Any]]) -> None:
        from iou_cli.cocoapi import COCO

        img_ids = list(np.unique(list(predictions.keys())))
        self.img_ids.extend(img_ids)
        for t in self.iou_types:
            results = _results(predictions, t)
            coco_dt = COCO.loadRes(self.coco_gt, results) if results else COCO()
            ev = self.coco_eval[t]
            ev.cocoDt = coco_dt
            ev.params.imgIds = list(img_ids)
            ev.evaluate()
            shape = (-1, len(ev.params.areaRng), len(ev.params.imgIds))
            self.eval_imgs[t].append(np.asarray(ev.evalImgs).reshape(shape))

    def state_bytes(self) -> bytes:
        """What a rank puts on the wire (all_gather pickles it)."""
        merged = {t: np.concatenate(self.eval_imgs[t], 2) for t in self.iou_types}
        return pickle.dumps((self.img_ids, merged))

    def synchronize_between_processes(self, gathered: list[bytes]) -> None:
        parts = [pickle.loads(b) for b in gathered]
        all_ids = np.array([i for ids, _ in parts for i in ids])
        ids, first = np.unique(all_ids, return_index=True)
        for t in self.iou_types:
            records = np.concatenate([recs[t] for _, recs in parts], 2)[..., first]
            ev = self.coco_eval[t]
            ev.evalImgs = list(records.flatten())
            ev.params.imgIds = list(ids)
            ev._paramsEval = copy.deepcopy(ev.params)

    def accumulate(self) -> None:
        for ev in self.coco_eval.values():
            ev.accumulate()

    def summarize(self) -> None:
        for t, ev in self.coco_eval.items():
            print(f"IoU metric: {t}")
            ev.summarize()


def _results(predictions: dict[int, dict[str, Any]], iou_type: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for img, pred in predictions.items():
        boxes = np.asarray(pred["boxes"], dtype=np.float64).reshape(-1, 4)
        for j in range(boxes.shape[0]):
            rec = {
                "image_id": img,
                "category_id": int(pred["labels"][j]),
                "score": float(pred["scores"][j]),
            }
            if iou_type == "bbox":
                x1, y1, x2, y2 = boxes[j]
                rec["bbox"] = [x1, y1, x2 - x1, y2 - y1]
            else:
                rec["segmentation"] = pred["masks"][j]
            out.append(rec)
    return out


def _predictions(seed: int) -> tuple[dict[str, Any], list[dict[int, dict[str, Any]]]]:
    """The scene's ground truth (with masks) and one model output dict per image."""
    gt, boxes = random_scene(seed)
    _, masks = segm_scene(seed)
    per_image: dict[int, dict[str, Any]] = {
        im["id"]: {"boxes": [], "scores": [], "labels": [], "masks": []} for im in gt["images"]
    }
    for b, m in zip(boxes, masks, strict=True):
        p = per_image[b["image_id"]]
        x, y, w, h = b["bbox"]
        p["boxes"].append([x, y, x + w, y + h])
        p["scores"].append(b["score"])
        p["labels"].append(b["category_id"])
        p["masks"].append(m["segmentation"])
    return segm_scene(seed)[0], [{k: v} for k, v in per_image.items()]


def _rank(seed: int, rank: int, world: int) -> bytes:
    from iou_cli.cocoapi import COCO

    gt, outputs = _predictions(seed)
    ev = RefStyleEvaluator(COCO(gt), IOU_TYPES)
    mine = outputs[rank::world]
    for i in range(0, len(mine), 3):
        batch: dict[int, dict[str, Any]] = {}
        for one in mine[i : i + 3]:
            batch.update(one)
        ev.update(batch)
    return ev.state_bytes()


@pytest.mark.parametrize("seed", [5])
def test_two_ranks_exchanging_bytes_equal_pycocotools_one_shot(seed: int) -> None:
    from pycocotools.cocoeval import COCOeval as RefEval

    from iou_cli.cocoapi import COCO

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        gathered = pool.starmap(_rank, [(seed, 0, 2), (seed, 1, 2)])
    assert all(isinstance(b, bytes) for b in gathered)
    gt, outputs = _predictions(seed)
    ev = RefStyleEvaluator(COCO(gt), IOU_TYPES)
    ev.synchronize_between_processes(gathered)
    ev.accumulate()
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        ev.summarize()

    everything: dict[int, dict[str, Any]] = {}
    for one in outputs:
        everything.update(one)
    want = []
    for t in IOU_TYPES:
        p_gt, p_dt = pycoco_objects(gt, _results(everything, t))
        ref = RefEval(p_gt, p_dt, t)
        with contextlib.redirect_stdout(io.StringIO()):
            ref.evaluate()
            ref.accumulate()
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            print(f"IoU metric: {t}")
            ref.summarize()
        want.append(buf.getvalue())
        ours = ev.coco_eval[t]
        assert np.array_equal(ours.stats, ref.stats), t
        for key in ("precision", "recall", "scores"):
            assert np.array_equal(ours.eval[key], ref.eval[key]), (t, key)
    assert text.getvalue() == "".join(want)
