"""Subsets of a dataset: ``--classes``, ``--image-ids`` and ``--class-agnostic``.

Each is a transform of the :class:`~iou_cli.data.Dataset` before evaluation, equal to
pycocotools' ``params.catIds`` / ``params.imgIds`` restricted and ``params.useCats = 0``:

* classes: predictions and ground truths of other categories are dropped and the category
  table keeps the chosen ones in their order (pycocotools loads only ``catIds``' annotations);
* images: the same for images (the image table stays in pycocotools' sorted-id order);
* class-agnostic: one category. pycocotools (``useCats=0``) concatenates each image's ground
  truths and detections category by category in ``catIds`` order (annotation order inside a
  category) before the stable score sort and the ``maxDets`` cut, which then apply per image
  across categories. Rows are reordered to (category, row) so that the protocol's "file order
  inside a group" is exactly that concatenation: score ties and IoU ties resolve as there.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from dataclasses import replace

import numpy as np

from ..data import Boxes, Categories, Dataset, Images, first_few, norm_id
from ..errors import UsageError

AGNOSTIC_NAME = "any"


def parse_list(text: str) -> list[str]:
    """``a,b , c`` -> ``["a", "b", "c"]`` (empty items dropped)."""
    return [t.strip() for t in text.split(",") if t.strip()]


def read_image_ids(arg: str) -> list[str]:
    """``--image-ids``: an existing file (ids separated by newlines, commas or blanks) or an
    inline comma-separated list."""
    if os.path.exists(arg) and not os.path.isdir(arg):
        # a file, or a pipe such as <(echo 1): read (bounded, recorded as read), never taken
        # as the id "/dev/fd/63"
        from ..loaders.files import read_text

        text = read_text(arg, expected="a list of image ids")
        ids = [t for t in text.replace(",", " ").split() if t]
        if not ids:
            raise UsageError(f"--image-ids: {arg} lists no image id")
        return ids
    ids = parse_list(arg)
    if not ids:
        raise UsageError(f"--image-ids: expected a file or ID[,ID...], got {arg!r}")
    return ids


def _remap(keep: np.ndarray) -> np.ndarray:
    """Old index -> new index (-1 for dropped) for a boolean keep mask."""
    out = np.full(keep.shape[0], -1, dtype=np.int64)
    out[keep] = np.arange(int(keep.sum()), dtype=np.int64)
    return out


def _filter_boxes(boxes: Boxes, field: str, mapping: np.ndarray) -> Boxes:
    col = getattr(boxes, field)
    new = mapping[col] if len(boxes) else col
    keep = new >= 0
    out = boxes.take(keep) if not keep.all() else boxes
    return replace(out, **{field: new[keep]})


def select_classes(ds: Dataset, wanted: Sequence[str]) -> Dataset:
    """Keep the categories named in ``wanted`` (a name, or an id when no name matches)."""
    cats = ds.categories
    by_name: dict[str, int] = {}
    by_id: dict[Hashable, int] = {}
    for k in range(len(cats)):
        name = cats.names[k]
        if name is not None:
            by_name.setdefault(name, k)
        if cats.ids[k] is not None:
            by_id.setdefault(norm_id(cats.ids[k]), k)
    keep = np.zeros(len(cats), dtype=bool)
    unknown: list[str] = []
    for w in wanted:
        hit = by_name.get(w)
        if hit is None:
            hit = by_id.get(norm_id(w))
        if hit is None:
            unknown.append(w)
        else:
            keep[hit] = True
    if unknown:
        import difflib

        lowered = {n.lower(): n for n in by_name}
        hints = []
        for w in unknown[:3]:
            close = lowered.get(w.lower()) or next(
                iter(difflib.get_close_matches(w, list(by_name), n=1, cutoff=0.6)), None
            )
            if close is not None:
                hints.append(f"{w!r} -> {close!r}")
        hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
        raise UsageError(
            f"--classes: {len(unknown)} class(es) not in the ground truth: "
            f"{first_few(unknown)}{hint}"
        )
    idx = np.flatnonzero(keep)
    mapping = _remap(keep)
    categories = Categories([cats.ids[i] for i in idx], [cats.names[i] for i in idx])
    return replace(
        ds,
        categories=categories,
        gt=_filter_boxes(ds.gt, "category", mapping),
        pred=_filter_boxes(ds.pred, "category", mapping),
    )


def select_images(ds: Dataset, wanted: Sequence[str]) -> Dataset:
    """Keep the images whose key (COCO id) or file stem is in ``wanted``."""
    im = ds.images
    lookup: dict[Hashable, int] = {}
    for i in range(len(im)):
        lookup.setdefault(norm_id(im.keys[i]), i)
        stem = im.stems[i]
        if stem is not None:
            lookup.setdefault(stem, i)
    keep = np.zeros(len(im), dtype=bool)
    unknown: list[str] = []
    for w in wanted:
        found = lookup.get(norm_id(w), lookup.get(w))
        if found is None:
            unknown.append(w)
        else:
            keep[found] = True
    if unknown:
        raise UsageError(
            f"--image-ids: {len(unknown)} image(s) not in the ground truth: {first_few(unknown)}"
        )
    idx = np.flatnonzero(keep)
    mapping = _remap(keep)
    images = Images(
        [im.keys[i] for i in idx], [im.stems[i] for i in idx], im.width[idx], im.height[idx]
    )
    return replace(
        ds,
        images=images,
        gt=_filter_boxes(ds.gt, "image", mapping),
        pred=_filter_boxes(ds.pred, "image", mapping),
    )


def _category_major(boxes: Boxes) -> Boxes:
    order = np.argsort(boxes.category, kind="stable")
    if len(boxes) == 0 or (order == np.arange(len(boxes))).all():
        return replace(boxes, category=np.zeros(len(boxes), dtype=np.int64))
    out = boxes.take(order)
    return replace(out, category=np.zeros(len(out), dtype=np.int64))


def class_agnostic(ds: Dataset) -> Dataset:
    """All categories as one (pycocotools ``useCats = 0``)."""
    return replace(
        ds,
        categories=Categories([None], [AGNOSTIC_NAME]),
        gt=_category_major(ds.gt),
        pred=_category_major(ds.pred),
    )


def apply(
    ds: Dataset,
    *,
    classes: Sequence[str] | None = None,
    image_ids: Sequence[str] | None = None,
    agnostic: bool = False,
) -> Dataset:
    """The subsets in pycocotools' order: categories and images restricted, then collapsed."""
    if classes:
        ds = select_classes(ds, classes)
    if image_ids:
        ds = select_images(ds, image_ids)
    if agnostic:
        ds = class_agnostic(ds)
    return ds
