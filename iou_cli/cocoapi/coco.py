"""``COCO``: pycocotools' dataset index (same attributes and getters), quiet.

Built from a path or an in-memory dict. ``dataset``, ``anns``, ``imgs``, ``cats``,
``imgToAnns`` and ``catToImgs`` hold the same objects pycocotools' index holds, so code
that reads them keeps working; the getters filter in the same order.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, UsageError, kind_of


def _ids(value: Any) -> list[Any]:
    """pycocotools' ``_isArrayLike``: a list/array stays, one id becomes a list of one."""
    if hasattr(value, "__iter__") and hasattr(value, "__len__") and not isinstance(value, str):
        return list(value)
    return [value]


class COCO:
    """pycocotools' ``COCO``: ``COCO(path)``, ``COCO(dict)`` or ``COCO()`` (empty)."""

    def __init__(self, annotation_file: str | Path | dict[str, Any] | None = None) -> None:
        self.dataset: dict[str, Any] = {}
        self.anns: dict[Any, dict[str, Any]] = {}
        self.cats: dict[Any, dict[str, Any]] = {}
        self.imgs: dict[Any, dict[str, Any]] = {}
        self.imgToAnns: defaultdict[Any, list[dict[str, Any]]] = defaultdict(list)
        self.catToImgs: defaultdict[Any, list[Any]] = defaultdict(list)
        self._path = "<dict>"
        if annotation_file is None:
            return
        if isinstance(annotation_file, dict):
            data = annotation_file
        elif not isinstance(annotation_file, (str, Path)):
            raise InputError(
                None, None, f"expected a path or a COCO dict, got {kind_of(annotation_file)}"
            )
        else:
            self._path = str(annotation_file)
            try:
                with open(annotation_file, encoding="utf-8") as fh:
                    data = json.load(fh)
            except (OSError, ValueError) as exc:
                raise InputError(self._path, None, f"cannot read a COCO JSON file: {exc}") from exc
        if not isinstance(data, dict):
            raise InputError(self._path, None, f"expected a COCO object, got {kind_of(data)}")
        self.dataset = data
        self.createIndex()

    def createIndex(self) -> None:
        anns: dict[Any, dict[str, Any]] = {}
        cats: dict[Any, dict[str, Any]] = {}
        imgs: dict[Any, dict[str, Any]] = {}
        img_to_anns: defaultdict[Any, list[dict[str, Any]]] = defaultdict(list)
        cat_to_imgs: defaultdict[Any, list[Any]] = defaultdict(list)
        for key, table in (("annotations", anns), ("images", imgs), ("categories", cats)):
            recs = self.dataset.get(key, [])
            if not isinstance(recs, list):
                raise InputError(self._path, key, f"expected a list, got {kind_of(recs)}")
            for i, rec in enumerate(recs):
                if not isinstance(rec, dict) or "id" not in rec:
                    raise InputError(self._path, f"{key}[{i}]", "expected an object with an 'id'")
                table[rec["id"]] = rec
        for i, ann in enumerate(self.dataset.get("annotations", [])):
            if "image_id" not in ann:
                raise InputError(self._path, f"annotations[{i}]", "no 'image_id'")
            img_to_anns[ann["image_id"]].append(ann)
            if "categories" in self.dataset and "category_id" in ann:
                cat_to_imgs[ann["category_id"]].append(ann["image_id"])
        self.anns, self.cats, self.imgs = anns, cats, imgs
        self.imgToAnns, self.catToImgs = img_to_anns, cat_to_imgs

    def info(self) -> dict[str, Any]:
        """The dataset's ``info`` block (pycocotools prints it; this returns it)."""
        info: dict[str, Any] = self.dataset.get("info", {})
        return info

    def getAnnIds(
        self,
        imgIds: Any = (),
        catIds: Any = (),
        areaRng: Any = (),
        iscrowd: bool | None = None,
    ) -> list[Any]:
        img_ids, cat_ids, area_rng = _ids(imgIds), _ids(catIds), _ids(areaRng)
        if img_ids:
            anns = [a for i in img_ids if i in self.imgToAnns for a in self.imgToAnns[i]]
        else:
            anns = list(self.dataset.get("annotations", []))
        if cat_ids:
            wanted = set(cat_ids)
            anns = [a for a in anns if a["category_id"] in wanted]
        if area_rng:
            lo, hi = area_rng[0], area_rng[1]
            anns = [a for a in anns if lo < a["area"] < hi]
        if iscrowd is not None:
            return [a["id"] for a in anns if a["iscrowd"] == iscrowd]
        return [a["id"] for a in anns]

    def getCatIds(self, catNms: Any = (), supNms: Any = (), catIds: Any = ()) -> list[Any]:
        names, sups, ids = _ids(catNms), _ids(supNms), _ids(catIds)
        cats = list(self.dataset.get("categories", []))
        if names:
            cats = [c for c in cats if c["name"] in names]
        if sups:
            cats = [c for c in cats if c.get("supercategory") in sups]
        if ids:
            cats = [c for c in cats if c["id"] in ids]
        return [c["id"] for c in cats]

    def getImgIds(self, imgIds: Any = (), catIds: Any = ()) -> list[Any]:
        img_ids, cat_ids = _ids(imgIds), _ids(catIds)
        if not img_ids and not cat_ids:
            return list(self.imgs.keys())
        ids = set(img_ids)
        for i, cat in enumerate(cat_ids):
            if i == 0 and not ids:
                ids = set(self.catToImgs[cat])
            else:
                ids &= set(self.catToImgs[cat])
        return list(ids)

    def loadAnns(self, ids: Any = ()) -> list[dict[str, Any]]:
        return [self.anns[i] for i in _ids(ids)]

    def loadCats(self, ids: Any = ()) -> list[dict[str, Any]]:
        return [self.cats[i] for i in _ids(ids)]

    def loadImgs(self, ids: Any = ()) -> list[dict[str, Any]]:
        return [self.imgs[i] for i in _ids(ids)]

    def loadRes(self, resFile: Any) -> COCO:
        """Results (a path, a list of result dicts, or an (N, 7) array) as a ``COCO``.

        As pycocotools: the images are the ground truth's, the categories copied; bbox
        results get ``area = w * h``, ``iscrowd = 0``, ids 1..N and a box polygon when they
        have no ``segmentation``; mask results get the mask's area and, without a bbox, the
        mask's box. The records are copied (pycocotools edits the caller's dicts). Works as
        ``COCO.loadRes(gt, results)`` with ``gt`` a pycocotools ``COCO`` too.
        """
        return load_results(self, resFile)

    def loadNumpyAnnotations(self, data: Any) -> list[dict[str, Any]]:
        """Rows ``[image_id, x, y, w, h, score, category_id]`` as result dicts."""
        arr = np.asarray(data)
        if arr.ndim != 2 or arr.shape[1] != 7:
            raise UsageError(f"expected an (N, 7) array, got shape {arr.shape}")
        return [
            {
                "image_id": int(r[0]),
                "bbox": [float(r[1]), float(r[2]), float(r[3]), float(r[4])],
                "score": float(r[5]),
                "category_id": int(r[6]),
            }
            for r in arr
        ]

    def annToRLE(self, ann: dict[str, Any]) -> dict[str, Any]:
        return ann_to_rle(self, ann)

    def annToMask(self, ann: dict[str, Any]) -> np.ndarray:
        from pycocotools import mask as mask_utils

        return np.asarray(mask_utils.decode(self.annToRLE(ann)))


def ann_to_rle(coco: Any, ann: dict[str, Any]) -> dict[str, Any]:
    """An annotation's mask as compressed RLE (polygons rasterised at the image's size)."""
    from pycocotools import mask as mask_utils

    img = coco.imgs[ann["image_id"]]
    h, w = img["height"], img["width"]
    segm = ann["segmentation"]
    if isinstance(segm, list):
        rle: dict[str, Any] = mask_utils.merge(mask_utils.frPyObjects(segm, h, w))
    elif isinstance(segm.get("counts"), list):
        rle = mask_utils.frPyObjects(segm, h, w)
    else:
        rle = segm
    return rle


def load_results(gt: Any, res: Any) -> COCO:
    """:meth:`COCO.loadRes` for any object with pycocotools' ``COCO`` attributes."""
    path = "<results>"
    if isinstance(res, (str, Path)):
        path = str(res)
        try:
            with open(res, encoding="utf-8") as fh:
                anns = json.load(fh)
        except (OSError, ValueError) as exc:
            raise InputError(path, None, f"cannot read a results JSON file: {exc}") from exc
    elif isinstance(res, np.ndarray):
        anns = COCO.loadNumpyAnnotations(gt, res)
    else:
        anns = res
    if not isinstance(anns, list):
        raise InputError(path, None, f"expected a list of results, got {kind_of(anns)}")
    out = COCO()
    out.dataset["images"] = list(gt.dataset.get("images", []))
    out.dataset["categories"] = copy.deepcopy(gt.dataset.get("categories", []))
    known = set(gt.imgs)
    recs = [dict(a) if isinstance(a, dict) else a for a in anns]
    for i, ann in enumerate(recs):
        if not isinstance(ann, dict):
            raise InputError(path, f"[{i}]", f"expected a result object, got {kind_of(ann)}")
        if ann.get("image_id") not in known:
            raise InputError(
                path, f"[{i}].image_id", f"image {ann.get('image_id')!r} is not in the ground truth"
            )
    if recs:
        _complete(recs, path)
    out.dataset["annotations"] = recs
    out.createIndex()
    return out


def _complete(recs: list[dict[str, Any]], path: str) -> None:
    """pycocotools' loadRes fields: the first record decides the kind (as there)."""
    first = recs[0]
    if "bbox" in first and first["bbox"] != []:
        for i, ann in enumerate(recs):
            bb = ann.get("bbox")
            if not isinstance(bb, (list, tuple)) or len(bb) != 4:
                raise InputError(path, f"[{i}].bbox", f"expected [x, y, w, h], got {kind_of(bb)}")
            x1, y1, x2, y2 = bb[0], bb[1], bb[0] + bb[2], bb[1] + bb[3]
            if "segmentation" not in ann:
                ann["segmentation"] = [[x1, y1, x1, y2, x2, y2, x2, y1]]
            ann["area"] = bb[2] * bb[3]
            ann["id"] = i + 1
            ann["iscrowd"] = 0
    elif "segmentation" in first:
        from pycocotools import mask as mask_utils

        for i, ann in enumerate(recs):
            segm = ann.get("segmentation")
            if not isinstance(segm, dict):
                raise InputError(
                    path, f"[{i}].segmentation", f"expected an RLE object, got {kind_of(segm)}"
                )
            ann["area"] = mask_utils.area(segm)
            if "bbox" not in ann:
                ann["bbox"] = mask_utils.toBbox(segm)
            ann["id"] = i + 1
            ann["iscrowd"] = 0
    else:
        raise InputError(path, "[0]", "a result needs a 'bbox' or a 'segmentation'")
