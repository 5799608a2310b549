"""A pycocotools evaluation's inputs as iou-eval columns (what ``COCOeval._prepare`` selects).

Images are ``params.imgIds`` (sorted, unique); with ``useCats`` the classes are
``params.catIds`` and each annotation keeps its own, else there is one class (-1) made of
the annotations of every category in ``params.catIds``, ordered by that list and then by
file order inside an image (pycocotools' ``[g for c in catIds for g in gts[img, c]]``), so
score ties keep pycocotools' order. Areas are the records' ``area`` fields (the ranges read
them, as pycocotools does); masks go through :func:`iou_cli.geometry.masks.prepare_masks`
(``COCO.annToRLE`` exactly).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..data import Boxes, Categories, Dataset, Images


@dataclass
class Scene:
    """The dataset plus the annotation ids of its rows (for ``evalImgs``)."""

    ds: Dataset
    gt_ids: list[Any]
    dt_ids: list[Any]
    cat_ids: list[Any]  # the K axis (``[-1]`` without useCats)


def _select(
    coco: Any, img_ids: list[Any], cat_pos: dict[Any, int], by_cat: bool
) -> list[dict[str, Any]]:
    """Annotations of ``img_ids`` whose category is in ``cat_pos``: image order, then (when
    ``by_cat``: without useCats) ``cat_pos`` order, then file order."""
    index = coco.imgToAnns
    out: list[dict[str, Any]] = []
    for img in img_ids:
        anns = index.get(img)
        if not anns:
            continue
        mine = [a for a in anns if a.get("category_id") in cat_pos]
        if by_cat and len(mine) > 1:
            mine.sort(key=lambda a: cat_pos[a["category_id"]])  # stable: file order kept
        out.extend(mine)
    return out


def _bbox(anns: list[dict[str, Any]]) -> np.ndarray:
    """(N, 4) x, y, w, h; NaN rows where a record has no 4-number bbox."""
    try:
        arr = np.array([a["bbox"] for a in anns], dtype=np.float64)
        if arr.shape == (len(anns), 4):
            return arr
    except (KeyError, TypeError, ValueError):
        pass
    out = np.full((len(anns), 4), np.nan)
    for i, a in enumerate(anns):
        bb = a.get("bbox")
        if bb is not None and len(bb) == 4:
            out[i] = bb
    return out


def _boxes(
    anns: list[dict[str, Any]],
    img_pos: dict[Any, int],
    cat_of: dict[Any, int] | None,
    *,
    segm: bool,
    scores: bool,
) -> Boxes:
    n = len(anns)
    bbox = _bbox(anns) if n else np.zeros((0, 4))
    x, y, w, h = bbox.T
    xyxy = np.stack([x, y, x + w, y + h], axis=1)
    box_area = w * h
    area = np.array([a.get("area", np.nan) for a in anns], dtype=np.float64)
    if not segm:
        area = np.where(np.isfinite(area), area, box_area)
    return Boxes.build(
        xyxy,
        box_area=box_area,
        area=area,
        image=np.fromiter((img_pos[a["image_id"]] for a in anns), dtype=np.int64, count=n),
        category=np.fromiter(
            (0 if cat_of is None else cat_of[a["category_id"]] for a in anns),
            dtype=np.int64,
            count=n,
        ),
        score=np.array([a["score"] for a in anns], dtype=np.float64) if scores else None,
        iscrowd=np.array([bool(a.get("iscrowd", 0)) for a in anns], dtype=bool),
        masks=[a.get("segmentation") for a in anns] if segm else None,
    )


def build_scene(gt: Any, dt: Any, params: Any) -> Scene:
    """The columns of ``gt``/``dt`` (pycocotools or iou-eval ``COCO`` objects) that
    ``params`` (imgIds, catIds, useCats, iouType) selects."""
    img_ids = list(params.imgIds)
    img_pos = {img: n for n, img in enumerate(img_ids)}
    cat_pos: dict[Any, int] = {}
    for n, c in enumerate(params.catIds):
        cat_pos.setdefault(c, n)
    cat_ids = list(params.catIds) if params.useCats else [-1]
    cat_of = {c: n for n, c in enumerate(params.catIds)} if params.useCats else None
    segm = params.iouType == "segm"
    gts = _select(gt, img_ids, cat_pos, not params.useCats)
    dts = _select(dt, img_ids, cat_pos, not params.useCats)
    width = np.array([gt.imgs.get(i, {}).get("width", np.nan) for i in img_ids], dtype=float)
    height = np.array([gt.imgs.get(i, {}).get("height", np.nan) for i in img_ids], dtype=float)
    ds = Dataset(
        images=Images(img_ids, [None] * len(img_ids), width, height),
        categories=Categories(cat_ids, [None] * len(cat_ids)),
        gt=_boxes(gts, img_pos, cat_of, segm=segm, scores=False),
        pred=_boxes(dts, img_pos, cat_of, segm=segm, scores=True),
        gt_path="<ground truth>",
        pred_path="<results>",
        gt_format="coco",
        pred_format="coco-results",
    )
    if segm:
        from ..geometry.masks import prepare_masks

        gt_area, dt_area = ds.gt.area, ds.pred.area
        ds = prepare_masks(ds)
        # the ranges read the records' area fields (the mask area only where absent)
        ds = replace(
            ds,
            gt=replace(ds.gt, area=np.where(np.isfinite(gt_area), gt_area, ds.gt.area)),
            pred=replace(ds.pred, area=np.where(np.isfinite(dt_area), dt_area, ds.pred.area)),
        )
    return Scene(ds, [a.get("id") for a in gts], [a.get("id") for a in dts], cat_ids)
