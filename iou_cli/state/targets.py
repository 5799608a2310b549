"""Targets given per batch (no ground-truth file): a batch as the COCO objects it stands for.

An :class:`~iou_cli.streaming.Evaluator` made with ``categories=`` instead of a ground truth
gets each batch's targets beside its predictions, in the shape training loops have them
(torchmetrics' ``MeanAveragePrecision.update(preds, target)``): one dict per image,
``boxes`` ``(N, 4)`` in a named box format and ``labels`` (plus optional ``iscrowd``,
``area``, ``ignore``/``difficult`` and ``image_id``), or COCO annotation records. This
module turns one batch into the COCO dataset dict and results list it is equivalent to;
the Evaluator matches them with the file path's own loader and protocols, so a run fed
batch by batch equals :func:`iou_cli.evaluate` on the equivalent COCO files.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, UsageError
from .target_shapes import keypoint_rows, labelled_extent, obb_rows, per_image, target_keys

BOX_FORMATS = ("xyxy", "xywh", "cxcywh")
_NOUN = {"segm": "masks", "keypoints": "poses"}
# LVIS targets: the per-image federated lists (category ids; absent: empty)
LVIS_LISTS = ("neg_category_ids", "not_exhaustive_category_ids")
_NO_LISTS: dict[str, list[int]] = {key: [] for key in LVIS_LISTS}
TARGET_KEYS = ("boxes", "labels", "iscrowd", "area", "ignore", "difficult", "image_id")


def as_array(value: Any, what: str) -> npt.NDArray[Any]:
    """Anything with ``__array__`` (NumPy, torch on CPU, ...) as a NumPy array; torch
    tensors on a device are moved to the CPU first (never importing torch here)."""
    for step in ("detach", "cpu"):
        fn = getattr(value, step, None)
        if callable(fn) and not isinstance(value, np.ndarray):
            value = fn()
    try:
        return np.asarray(value)
    except Exception as exc:  # pragma: no cover - exotic array types
        raise UsageError(f"{what}: expected an array, got {type(value).__name__}") from exc


def scalar_id(value: Any, what: str = "image_id") -> Any:
    arr = as_array(value, what)
    if arr.ndim == 0 or arr.size == 1:
        out = arr.reshape(-1)[0].item()
        return int(out) if isinstance(out, float) and out.is_integer() else out
    raise UsageError(f"{what}: expected one id per image, got shape {arr.shape}")


def to_xywh(boxes: npt.NDArray[Any], fmt: str) -> npt.NDArray[np.float64]:
    """``(N, 4)`` boxes in ``fmt`` as COCO's ``x, y, w, h`` (float64)."""
    b = boxes.astype(np.float64).reshape(-1, 4)
    if fmt == "xywh":
        return b
    if fmt == "xyxy":
        return np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)
    w, h = b[:, 2], b[:, 3]
    return np.stack([b[:, 0] - w / 2, b[:, 1] - h / 2, w, h], axis=1)


def category_table(categories: Any) -> list[dict[str, Any]]:
    """``categories=``: ids (``[1, 2, 3]``) or COCO category dicts (``{"id", "name"}``), as
    the COCO ``categories`` table; an empty list, a repeated id or a bad entry is refused."""
    if isinstance(categories, (str, bytes)) or not isinstance(categories, Sequence | np.ndarray):
        if hasattr(categories, "__array__"):
            categories = as_array(categories, "categories").reshape(-1).tolist()
        else:
            raise UsageError(
                "categories: expected a list of category ids or of COCO category dicts, got "
                f"{type(categories).__name__}"
            )
    table: list[dict[str, Any]] = []
    seen: set[Any] = set()
    for i, c in enumerate(categories):
        entry = dict(c) if isinstance(c, Mapping) else {"id": c}
        cid = entry.get("id")
        if isinstance(cid, np.generic):
            cid = cid.item()
        if not isinstance(cid, int) or isinstance(cid, bool):
            raise UsageError(f"categories[{i}]: expected an integer id, got {cid!r}")
        if cid in seen:
            raise UsageError(f"categories[{i}]: category id {cid} is given twice")
        seen.add(cid)
        entry["id"] = cid
        table.append(entry)
    if not table:
        raise UsageError("categories: expected at least one category")
    return table


def mask_rle(mask: npt.NDArray[Any]) -> dict[str, Any]:
    """A binary ``(H, W)`` mask as COCO's uncompressed RLE (runs over the column-major
    pixels, zeros first), what ``pycocotools.mask.encode`` stores before compressing."""
    h, w = mask.shape
    flat = np.asarray(mask, dtype=bool).ravel(order="F").astype(np.int8)
    if flat.size == 0:
        return {"size": [int(h), int(w)], "counts": [0]}
    bounds = np.concatenate([[0], np.flatnonzero(np.diff(flat)) + 1, [flat.size]])
    runs = np.diff(bounds).tolist()
    return {"size": [int(h), int(w)], "counts": ([0] if flat[0] else []) + runs}


def mask_extent(mask: npt.NDArray[Any]) -> tuple[list[float], float]:
    """COCO's box (``x, y, w, h`` of the pixels set, as ``pycocotools.mask.toBbox``) and
    area (pixels set) of a binary mask."""
    ys, xs = np.nonzero(mask)
    if xs.size == 0:
        return [0.0, 0.0, 0.0, 0.0], 0.0
    x0, y0 = float(xs.min()), float(ys.min())
    return [x0, y0, float(xs.max()) + 1 - x0, float(ys.max()) + 1 - y0], float(xs.size)


@dataclass
class Batch:
    """One update's COCO objects: ``gt`` (a dataset dict: the batch's images, their
    annotations, every category), ``records`` (a results list) and the image ids in order
    of arrival."""

    gt: dict[str, Any]
    records: list[dict[str, Any]]
    image_ids: list[Any] = field(default_factory=list)


class BatchReader:
    """Builds :class:`Batch` es; keeps what spans updates: the category table, how image
    ids are given (every target or none) and the next id to assign."""

    def __init__(
        self,
        categories: Any,
        box_format: str,
        segm: bool = False,
        kind: str = "bbox",
        lvis: bool = False,
    ) -> None:
        self.categories = category_table(categories)
        self.known = {c["id"] for c in self.categories}
        self.box_format = box_format
        # the iou type: "bbox", "segm" (objects are "masks": arrays or COCO RLE dicts),
        # "keypoints" ((N, K, 2|3) arrays), "obb" ((N, 5) rotated boxes); target_shapes.py
        self.kind = "segm" if segm else kind
        self.segm = self.kind == "segm"
        self.k: int | None = None  # keypoints: K, fixed by the first update that has some
        # K before any pose was seen (an update or a rank without any): sigmas= or the
        # categories' keypoint names give it, else COCO's 17 (whose sigmas are the default)
        self.k_default = 17
        # LVIS: each image's federated lists (neg_category_ids, not_exhaustive_category_ids)
        self.lvis = lvis
        self._lists: dict[Any, dict[str, list[int]]] = {}
        self.ids_given: bool | None = None  # True: targets carry image_id; False: assigned
        self.next_id = 0
        self.n_updates = 0

    def _label_list(self) -> str:
        ids = sorted(self.known)
        shown = ", ".join(str(i) for i in ids[:8])
        return shown + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")

    def _labels(self, values: Any, where: str, image: Any) -> list[int]:
        arr = as_array(values, where).reshape(-1)
        out: list[int] = []
        for j, v in enumerate(arr.tolist()):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if v not in self.known or isinstance(v, bool):
                raise InputError(
                    f"update {self.n_updates}",
                    f"{where}[{j}]",
                    f"label {v!r} of image {image!r} is not one of the categories "
                    f"({self._label_list()})",
                )
            out.append(int(v))
        return out

    def _image_id(
        self, target: Mapping[str, Any] | None, pred: Mapping[str, Any] | None, i: int
    ) -> Any:
        given = [
            scalar_id(d["image_id"]) for d in (target, pred) if d is not None and "image_id" in d
        ]
        if len(given) == 2 and given[0] != given[1]:
            raise InputError(
                f"update {self.n_updates}",
                f"predictions[{i}].image_id",
                f"image {given[1]!r} here, {given[0]!r} in targets[{i}]",
            )
        has = bool(given)
        if self.ids_given is None:
            self.ids_given = has
        elif self.ids_given != has:
            raise InputError(
                f"update {self.n_updates}",
                f"targets[{i}]",
                "no image_id, where earlier targets had one"
                if self.ids_given
                else "an image_id, where earlier targets had none (ids were assigned in order "
                "of arrival): give image_id in every target or in none",
            )
        if has:
            return given[0]
        self.next_id += 1
        return self.next_id - 1

    def _masks(
        self, d: Mapping[str, Any], where: str
    ) -> list[tuple[dict[str, Any], list[float] | None, float | None]]:
        """``masks``: ``(N, H, W)`` binary arrays, or a list of COCO RLE dicts / 2-D arrays;
        as ``(segmentation, box or None, area or None)`` per object."""
        if "masks" not in d:
            raise InputError(
                f"update {self.n_updates}", where, "no masks (iou_type='segm' scores masks)"
            )
        value = d["masks"]
        items = list(value) if isinstance(value, (list, tuple)) else None
        if items is None:
            arr = as_array(value, "masks")
            if arr.ndim != 3:
                raise InputError(
                    f"update {self.n_updates}",
                    f"{where}.masks",
                    f"expected masks of shape (N, H, W), got {arr.shape}",
                )
            items = list(arr)
        out: list[tuple[dict[str, Any], list[float] | None, float | None]] = []
        for j, m in enumerate(items):
            if isinstance(m, Mapping):  # COCO RLE as given
                rle = dict(m)
                counts = rle.get("counts")
                area = float(sum(counts[1::2])) if isinstance(counts, list) else None
                out.append((rle, None, area))
                continue
            arr = as_array(m, f"masks[{j}]")
            if arr.ndim != 2:
                raise InputError(
                    f"update {self.n_updates}",
                    f"{where}.masks[{j}]",
                    f"expected an (H, W) mask, got {arr.shape}",
                )
            box, area = mask_extent(arr.astype(bool))
            out.append((mask_rle(arr), box, area))
        return out

    def _annotations(
        self, t: Mapping[str, Any], i: int, image: Any, first_id: int
    ) -> list[dict[str, Any]]:
        need = (*target_keys(self.kind), "labels")
        missing = [k for k in need if k not in t]
        if missing:
            raise InputError(
                f"update {self.n_updates}", f"targets[{i}]", f"no {', '.join(missing)}"
            )
        masks = self._masks(t, f"targets[{i}]") if self.segm else None
        labels = self._labels(t["labels"], f"targets[{i}].labels", image)
        kpts = self._keypoints(t, f"targets[{i}]", gt=True)
        shapes = self._target_boxes(t, i, masks, kpts)
        n = len(shapes)
        if kpts is not None and len(kpts) != n:
            raise InputError(
                f"update {self.n_updates}", f"targets[{i}]", f"{n} boxes but {len(kpts)} poses"
            )
        if masks is not None and len(masks) != n:
            raise InputError(
                f"update {self.n_updates}", f"targets[{i}]", f"{n} boxes but {len(masks)} masks"
            )
        cols: dict[str, list[Any]] = {}
        for key in ("iscrowd", "area", "ignore", "difficult", "num_keypoints"):
            if key in t and t[key] is not None:
                col = as_array(t[key], key).reshape(-1)
                if col.shape[0] != n:
                    raise InputError(
                        f"update {self.n_updates}",
                        f"targets[{i}].{key}",
                        f"{col.shape[0]} values for {n} boxes",
                    )
                cols[key] = col.tolist()
        if len(labels) != n:
            raise InputError(
                f"update {self.n_updates}", f"targets[{i}]", f"{n} boxes but {len(labels)} labels"
            )
        anns = []
        for j, (b, c) in enumerate(zip(shapes, labels, strict=True)):
            ann: dict[str, Any] = {"id": first_id + j, "image_id": image, "category_id": c}
            if b is not None:
                ann["obb" if self.kind == "obb" else "bbox"] = b
            ann["iscrowd"] = int(bool(cols["iscrowd"][j])) if "iscrowd" in cols else 0
            if kpts is not None:
                ann["keypoints"] = kpts[j]
                if "num_keypoints" in cols:
                    ann["num_keypoints"] = int(cols["num_keypoints"][j])
            if "area" in cols:
                ann["area"] = float(cols["area"][j])
            if masks is not None:
                self._mask_fields(ann, masks[j], i)
            if bool(cols.get("ignore", [0] * n)[j]) or bool(cols.get("difficult", [0] * n)[j]):
                ann["ignore"] = 1  # VOC's difficult is COCO's ignore flag
            anns.append(ann)
        return anns

    def _mask_fields(self, ann: dict[str, Any], mask: Any, i: int) -> None:
        rle, _, area = mask
        ann["segmentation"] = rle
        if "area" not in ann:
            if area is None:
                raise InputError(
                    f"update {self.n_updates}",
                    f"targets[{i}].area",
                    "compressed RLE masks need their area (give 'area')",
                )
            ann["area"] = area  # the mask's pixels, as COCO files hold it

    def _target_boxes(
        self, t: Mapping[str, Any], i: int, masks: list[Any] | None, kpts: list[Any] | None
    ) -> list[Any]:
        """Each target object's box field: ``obb`` rows, COCO ``x, y, w, h``, or (none
        given) its pose's labelled extent or its mask's box."""
        if self.kind == "obb":
            return obb_rows(
                as_array(t["boxes"], "boxes"), update=self.n_updates, where=f"targets[{i}]"
            )
        if t.get("boxes") is not None:
            out: list[Any] = to_xywh(as_array(t["boxes"], "boxes"), self.box_format).tolist()
            return out
        if kpts is not None:  # poses without boxes: their labelled keypoints' extent
            return labelled_extent(kpts)
        return [b if b is not None else [0.0] * 4 for _, b, _ in masks or []]  # masks' boxes

    def _keypoints(self, d: Mapping[str, Any], where: str, *, gt: bool) -> list[Any] | None:
        if self.kind != "keypoints":
            return None
        rows = keypoint_rows(
            as_array(d["keypoints"], "keypoints"), gt=gt, update=self.n_updates, where=where,
            k=self.k,
        )  # fmt: skip
        if rows and self.k is None:
            self.k = len(rows[0]) // 3
        return rows

    def _predictions(self, p: Mapping[str, Any], i: int, image: Any) -> list[dict[str, Any]]:
        need = ("masks" if self.segm else target_keys(self.kind)[0], "scores", "labels")
        missing = [k for k in need if k not in p]
        if missing:
            raise InputError(
                f"update {self.n_updates}", f"predictions[{i}]", f"no {', '.join(missing)}"
            )
        scores = as_array(p["scores"], "scores").astype(np.float64).reshape(-1)
        labels = self._labels(p["labels"], f"predictions[{i}].labels", image)
        shapes: list[Any]
        boxes: list[Any] | None = None
        if self.segm:
            shapes = [m for m, _, _ in self._masks(p, f"predictions[{i}]")]
            key = "segmentation"
        elif self.kind == "keypoints":
            shapes = self._keypoints(p, f"predictions[{i}]", gt=False) or []
            key = "keypoints"
            if p.get("boxes") is not None:  # else the keypoints' extent, as loadRes
                boxes = to_xywh(as_array(p["boxes"], "boxes"), self.box_format).tolist()
                if len(boxes) != len(shapes):
                    raise InputError(
                        f"update {self.n_updates}",
                        f"predictions[{i}]",
                        f"{len(boxes)} boxes but {len(shapes)} poses",
                    )
        elif self.kind == "obb":
            shapes = obb_rows(
                as_array(p["boxes"], "boxes"), update=self.n_updates, where=f"predictions[{i}]"
            )
            key = "obb"
        else:
            shapes = to_xywh(as_array(p["boxes"], "boxes"), self.box_format).tolist()
            key = "bbox"
        if not (len(shapes) == scores.shape[0] == len(labels)):
            raise InputError(
                f"update {self.n_updates}",
                f"predictions[{i}]",
                f"{len(shapes)} {_NOUN.get(self.kind, 'boxes')}, {scores.shape[0]} scores, "
                f"{len(labels)} labels (expected one of each per prediction)",
            )
        out = [
            {"image_id": image, "category_id": c, key: b, "score": s}
            for b, s, c in zip(shapes, scores.tolist(), labels, strict=True)
        ]
        for rec, b in zip(out, boxes or [], strict=False):
            rec["bbox"] = b
        return out

    def batch(
        self, predictions: Sequence[Any], targets: Sequence[Any], image_ids: Sequence[Any] | None
    ) -> Batch:
        """One update's :class:`Batch` (see the module docstring)."""
        self.n_updates += 1
        preds, tgts = list(predictions), list(targets)
        first = tgts[0] if tgts else (preds[0] if preds else None)
        # COCO records (targets, or with no target, predictions) have no "boxes" / "masks"
        records_in = first is None or (isinstance(first, Mapping) and not per_image(first))
        if records_in:
            return self._records_batch(preds, tgts, image_ids)
        if len(preds) != len(tgts):
            raise InputError(
                f"update {self.n_updates}",
                None,
                f"{len(preds)} prediction dicts but {len(tgts)} targets (one of each per image)",
            )
        ids: list[Any] = []
        anns: list[dict[str, Any]] = []
        recs: list[dict[str, Any]] = []
        for i, (p, t) in enumerate(zip(preds, tgts, strict=True)):
            if not isinstance(t, Mapping) or not isinstance(p, Mapping):
                raise InputError(
                    f"update {self.n_updates}", f"targets[{i}]", "expected a dict per image"
                )
            image = self._image_id(t, p, i)
            ids.append(image)
            if self.lvis:
                self._lists[image] = self._federated(t, i)
            anns += self._annotations(t, i, image, len(anns) + 1)
            recs += self._predictions(p, i, image)
        for extra in image_ids or []:
            ids.append(scalar_id(extra))
        seen: dict[Any, int] = {}
        for i, k in enumerate(ids):
            if k in seen:
                raise InputError(
                    f"update {self.n_updates}",
                    f"targets[{i}]" if i < len(tgts) else "image_ids",
                    f"image {k!r} is given twice in this batch (also targets[{seen[k]}])",
                )
            seen[k] = i
        batch = Batch({**self.dataset(ids), "annotations": anns}, recs, ids)
        self._lists = {}
        return batch

    def _federated(self, t: Mapping[str, Any], i: int) -> dict[str, list[int]]:
        """An LVIS target's per-image lists as the image record of an LVIS file holds them."""
        out: dict[str, list[int]] = {}
        for key in LVIS_LISTS:
            value = t.get(key)
            arr = as_array([] if value is None else value, key).reshape(-1)
            vals: list[int] = []
            for j, v in enumerate(arr.tolist()):
                if isinstance(v, float) and v.is_integer():
                    v = int(v)
                if not isinstance(v, int) or isinstance(v, bool):
                    raise InputError(
                        f"update {self.n_updates}",
                        f"targets[{i}].{key}[{j}]",
                        f"expected a category id, got {v!r}",
                    )
                vals.append(v)
            out[key] = vals
        return out

    def _records_batch(
        self, preds: list[Any], tgts: list[Any], image_ids: Sequence[Any] | None
    ) -> Batch:
        """Targets as COCO annotation records (``image_id``, ``category_id``, ``bbox``
        x, y, w, h, ...), predictions as COCO result records or per-image dicts."""
        if self.ids_given is False:
            raise InputError(
                f"update {self.n_updates}",
                "targets",
                "COCO records name their images, where earlier targets had no image_id "
                "(ids were assigned in order of arrival): give image_id in every target or in none",
            )
        self.ids_given = True
        anns = []
        ids: list[Any] = []
        for i, a in enumerate(tgts):
            if "image_id" not in a or "category_id" not in a:
                raise InputError(
                    f"update {self.n_updates}", f"targets[{i}]", "no image_id or category_id"
                )
            image = scalar_id(a["image_id"])
            self._labels([a["category_id"]], f"targets[{i}].category_id", image)
            anns.append({**a, "id": i + 1})
            ids.append(image)
        recs: list[dict[str, Any]] = []
        for i, p in enumerate(preds):
            if isinstance(p, Mapping) and per_image(p):
                if "image_id" not in p:
                    raise InputError(f"update {self.n_updates}", f"predictions[{i}]", "no image_id")
                image = scalar_id(p["image_id"])
                recs += self._predictions(p, i, image)
            else:
                image = scalar_id(p["image_id"])
                self._labels([p["category_id"]], f"predictions[{i}].category_id", image)
                recs.append(dict(p))
            ids.append(image)
        ids += [scalar_id(x) for x in image_ids or []]
        uniq = list(dict.fromkeys(ids))
        return Batch({**self.dataset(uniq), "annotations": anns}, recs, uniq)

    def with_k(self, ds: Any) -> Any:
        """``ds`` (keypoints) with its empty sides at the run's K: a batch without any pose
        reads K = 0, which is no other batch's (their states would not merge)."""
        from dataclasses import replace

        k = self.k or self.k_default
        for role in ("gt", "pred"):
            b = getattr(ds, role)
            if len(b) == 0 and (b.keypoints is None or b.keypoints.shape[1] != k):
                ds = replace(ds, **{role: replace(b, keypoints=np.zeros((0, k, 3)))})
        return ds

    def dataset(self, ids: list[Any]) -> dict[str, Any]:
        return {
            "images": [
                {"id": k, **(self._lists.get(k, _NO_LISTS) if self.lvis else {})}
                for k in dict.fromkeys(ids)
            ],
            "annotations": [],
            "categories": [dict(c) for c in self.categories],
        }


def image_keys(ids: Sequence[Hashable]) -> npt.NDArray[np.int64]:
    """Image ids as the int64 keys an id-keyed state holds (COCO image ids are integers)."""
    return np.asarray([int(k) for k in ids], dtype=np.int64)  # type: ignore[call-overload]
