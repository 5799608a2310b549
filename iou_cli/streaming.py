"""The streaming :class:`Evaluator`: update per batch, compute once, merge across processes.

::

    from iou_cli import Evaluator

    ev = Evaluator("instances_val2017.json")          # path, COCO dict, or iou_cli.load(...)
    for batch in loader:
        ev.update(outputs, targets)                    # per-image dicts of arrays or tensors
    ev.compute().summary["AP"]                         # the same Result as iou_cli.evaluate

    # distributed: every rank sends its state, any rank merges
    states = [None] * world; torch.distributed.all_gather_object(states, ev.to_bytes())
    Evaluator.merge([Evaluator.from_bytes(b) for b in states]).compute()

Matching happens in :meth:`Evaluator.update`; memory holds the match records
(:class:`~iou_cli.state.partial.PartialState`), not the predictions. The images of an
update are matched with all their predictions at once: an image given twice (in two updates,
or in two merged evaluators) is refused, never counted twice. Only images that appeared in
an update (with predictions, in ``targets``, or in ``image_ids``) count their ground truths,
as the torchvision references' ``CocoEvaluator`` does; give every image to reproduce
``evaluate`` on a whole file (it is then equal bit for bit).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .data import Dataset, Side
from .errors import UsageError
from .result import Result
from .state.partial import PartialState, merge_states
from .state.targets import BOX_FORMATS, BatchReader, as_array, scalar_id, to_xywh

# targets given per batch: the iou types each protocol takes them for (LVIS: its per-image
# lists neg_category_ids / not_exhaustive_category_ids ride on each image's target dict)
TARGET_KINDS = {
    "coco": ("bbox", "segm", "keypoints", "obb"),
    "lvis": ("bbox", "segm"),
    "voc": ("bbox", "obb"),
    "voc07": ("bbox", "obb"),
    "dota": ("obb",),
}

_COMPACT = 64  # merge the per-update states every this many updates
_array, _scalar, _xywh = as_array, scalar_id, to_xywh


def records_from_arrays(
    predictions: Sequence[Mapping[str, Any]],
    targets: Sequence[Mapping[str, Any]] | None,
    box_format: str,
) -> tuple[list[dict[str, Any]], list[Any]]:
    """COCO result records from per-image dicts of arrays (``boxes`` (N, 4) in
    ``box_format``, ``scores``, ``labels``, optionally ``keypoints`` (N, K, 3); ``image_id``
    there or in ``targets``), and the image ids in order."""
    recs: list[dict[str, Any]] = []
    ids: list[Any] = []
    if targets is not None and len(targets) != len(predictions):
        raise UsageError(
            f"update: {len(predictions)} prediction dicts but {len(targets)} targets (one per image)"
        )
    for i, p in enumerate(predictions):
        src = p if "image_id" in p else (targets[i] if targets is not None else {})
        if "image_id" not in src:
            raise UsageError(
                f"update: predictions[{i}] has no image_id (give it there or in targets)"
            )
        img = _scalar(src["image_id"])
        ids.append(img)
        missing = [k for k in ("boxes", "scores", "labels") if k not in p]
        if missing:
            raise UsageError(f"update: predictions[{i}] has no {', '.join(missing)}")
        boxes = _xywh(_array(p["boxes"], "boxes"), box_format)
        scores = _array(p["scores"], "scores").astype(np.float64).reshape(-1)
        labels = _array(p["labels"], "labels").reshape(-1)
        if not (boxes.shape[0] == scores.shape[0] == labels.shape[0]):
            raise UsageError(
                f"update: predictions[{i}]: {boxes.shape[0]} boxes, {scores.shape[0]} scores, "
                f"{labels.shape[0]} labels (expected one of each per prediction)"
            )
        kps: list[Any] = [None] * boxes.shape[0]
        if "keypoints" in p:  # (N, K, 3) x, y, score (torchvision keypoint R-CNN, YOLO-pose)
            kp = _array(p["keypoints"], "keypoints").astype(np.float64)
            if kp.ndim != 3 or kp.shape[0] != boxes.shape[0] or kp.shape[2] not in (2, 3):
                raise UsageError(
                    f"update: predictions[{i}]: keypoints of shape {kp.shape}, expected "
                    f"({boxes.shape[0]}, K, 3) (x, y, score per keypoint)"
                )
            if kp.shape[2] == 2:
                kp = np.concatenate([kp, np.ones(kp.shape[:2] + (1,))], axis=2)
            kps = kp.reshape(kp.shape[0], -1).tolist()
        for b, s, c, k in zip(boxes.tolist(), scores.tolist(), labels.tolist(), kps, strict=True):
            rec = {"image_id": img, "category_id": c, "bbox": b, "score": s}
            if k is not None:
                rec["keypoints"] = k
            recs.append(rec)
    return recs, ids


def _pose_k(categories: list[dict[str, Any]], sigmas: Any) -> int:
    """Targets given per batch: the K of a state without any pose yet (see BatchReader)."""
    if sigmas is not None:
        return int(np.asarray(sigmas, dtype=np.float64).reshape(-1).shape[0])
    for c in categories:  # a category's keypoint names, or its OKS sigmas (iou-eval's key)
        for key in ("keypoints", "sigmas"):
            values = c.get(key)
            if isinstance(values, list) and values:
                return len(values)
    return 17


class Evaluator:
    """Streaming, mergeable evaluation (see the module docstring).

    ``gt``: a path, a COCO dataset dict, or a side from :func:`iou_cli.load`; ``protocol``:
    ``coco``, ``lvis``, ``voc``, ``voc07`` or ``dota``; ``box_format``: of the boxes given as
    arrays; other keywords are :func:`iou_cli.evaluate`'s protocol options (``iou_type``,
    ``iou_thr``, ``score_thr``, ``max_dets``, ``iou_thrs``, ``honor_ignore``, ``plus_one``,
    ``sigmas``, ``all_point``). VOC's and DOTA's ties keep file order; here that is (image
    order of the ground truth, position in the update), the order of a file listed image by
    image.

    Without a ground truth, ``categories=`` (ids or COCO category dicts) makes the targets
    come per batch: ``update(predictions, targets)`` (``coco``, ``lvis``, ``voc``, ``voc07``,
    ``dota``: boxes, masks, keypoints, rotated boxes as :data:`TARGET_KINDS` lists; see
    :mod:`iou_cli.state.targets` and docs/streaming.md); its states are keyed by image id.
    """

    def __init__(
        self,
        gt: Any = None,
        protocol: str = "coco",
        *,
        box_format: str = "xyxy",
        gt_format: str | None = None,
        unknown: str = "error",
        categories: Any = None,
        **options: Any,
    ) -> None:
        from .options import RunOptions

        if box_format not in BOX_FORMATS:
            raise UsageError(
                f"box_format: expected one of {', '.join(BOX_FORMATS)}, got {box_format!r}"
            )
        run = RunOptions.build(
            {"protocol": protocol, "gt_format": gt_format, "unknown": unknown, **options}
        )
        run = run.for_inputs()  # DOTA's default geometry is obb, as evaluate reads it
        run.validate()
        self._run = run
        opts = run.protocol_options()
        from .state.build import run_options

        run_options(protocol, opts)  # option errors now, not at the first update
        self.protocol = protocol
        self.box_format = box_format
        self._options = opts
        self._unknown = unknown
        self._gt_format = gt_format
        self._parts: list[PartialState] = []
        self._seen: set[int] = set()
        self._gt: Side | None = None
        self._gt_ds: Dataset | None = None
        self._fp = ""
        self._reader: BatchReader | None = None
        self._seen_keys: set[int] = set()
        if gt is not None and categories is not None:
            raise UsageError(
                "Evaluator: give a ground truth or categories= (targets given per batch), not both"
            )
        if gt is not None:
            self._load_gt(gt)
        elif categories is not None:
            if run.iou_type not in TARGET_KINDS.get(protocol, ()):
                raise UsageError(
                    f"Evaluator: --protocol {protocol} --iou-type {run.iou_type} needs a "
                    "ground-truth file (targets given per batch work with coco bbox, segm, "
                    "keypoints and obb, lvis bbox and segm, voc and voc07 bbox and obb, "
                    "dota obb)"
                )
            self._reader = BatchReader(
                categories, box_format, kind=run.iou_type, lvis=protocol == "lvis"
            )
            if run.iou_type == "keypoints":
                self._reader.k_default = _pose_k(self._reader.categories, run.load.sigmas)

    # ------------------------------------------------------------------ ground truth
    def _load_options(self) -> Any:
        return self._run.loader_options()

    def _load_gt(self, gt: Any) -> None:
        from .api import _source
        from .loaders import load_side
        from .state.build import fingerprint

        side = (
            gt
            if isinstance(gt, Side)
            else load_side(
                _source(gt, "ground_truth"),
                role="gt",
                fmt=self._gt_format,
                opts=self._load_options(),
            )
        )
        self._gt = side
        self._gt_ds = self._join([])
        self._fp = fingerprint(self._gt_ds)

    def _join(self, records: list[dict[str, Any]]) -> Dataset:
        from .data import align, locator
        from .loaders import load_side
        from .loaders.join import check_geometry, join_results

        assert self._gt is not None
        opts = self._load_options()
        pred = load_side(records, role="pred", fmt=None, opts=opts)
        info: list[str] = []
        pred = join_results(pred, self._gt, opts, info)
        check_geometry(pred)
        ds = align(pred, self._gt, unknown=self._unknown)
        ds.locate = locator(pred, self._gt, ds)
        if self._options.get("iou_type") == "keypoints":  # the sigmas as evaluate resolves them
            from .geometry.oks import prepare_keypoints

            if self._reader is not None:
                ds = self._reader.with_k(ds)
            from .protocols import get_protocol

            fallback = get_protocol(self.protocol).sigma_default
            ds = prepare_keypoints(ds, opts.sigmas, fallback=fallback)
        return ds

    # ------------------------------------------------------------------ updates
    def update(
        self,
        predictions: Any,
        targets: Sequence[Mapping[str, Any]] | None = None,
        *,
        image_ids: Iterable[Any] | None = None,
    ) -> None:
        """Match a batch: COCO result records (dicts with ``image_id``, ``category_id``,
        ``bbox`` or ``segmentation``, ``score``) or per-image dicts of arrays (``boxes``,
        ``scores``, ``labels``, and ``image_id`` there or in ``targets``). Images in
        ``image_ids`` (or ``targets``) count even without predictions."""
        if self._reader is not None:
            self._update_targets(predictions, targets, image_ids)
            return
        if self._gt is None:
            raise UsageError(
                "update: this Evaluator has no ground truth (one read from bytes can only be "
                "merged and computed); create it with Evaluator(gt, ...) or, to give targets "
                "per batch, Evaluator(protocol=..., categories=[...])"
            )
        preds = list(predictions)
        if preds and isinstance(preds[0], Mapping) and "boxes" in preds[0]:
            records, ids = records_from_arrays(preds, targets, self.box_format)
        else:
            records, ids = preds, []
            if targets is not None:
                ids = [_scalar(t["image_id"]) for t in targets]
        ds = self._join(records)
        covered = np.zeros(len(ds.images), dtype=bool)
        covered[ds.pred.image] = True
        extra_ids = [*ids, *(list(image_ids) if image_ids is not None else [])]
        if extra_ids:
            covered |= self._image_mask(extra_ids)
        self._add(ds, covered)

    def _image_mask(self, ids: Sequence[Any]) -> np.ndarray:
        from .data import norm_id

        assert self._gt_ds is not None
        keys = self._gt_ds.images.keys
        stems = self._gt_ds.images.stems
        lookup = {norm_id(k): i for i, k in enumerate(keys)}
        lookup.update({s: i for i, s in enumerate(stems) if s is not None and s not in lookup})
        mask = np.zeros(len(keys), dtype=bool)
        for k in ids:
            i = lookup.get(norm_id(k), lookup.get(str(k)))
            if i is None:
                raise UsageError(f"update: image {k!r} is not in the ground truth")
            mask[i] = True
        return mask

    def _add(self, ds: Dataset, covered: np.ndarray) -> None:
        from .state.build import restrict

        new = np.flatnonzero(covered)
        again = [int(i) for i in new if int(i) in self._seen]
        if again:
            key = ds.images.keys[again[0]]
            raise UsageError(
                f"update: image {key!r} was already evaluated by an earlier update ({len(again)} "
                "image(s) again): give each image's predictions in one update"
            )
        sub, rows = restrict(ds, covered)
        state = self._build(sub, covered=new, fp=self._fp)
        self._seen.update(int(i) for i in new)
        self._keep(state)

    def _build(self, sub: Dataset, *, covered: np.ndarray, fp: str) -> PartialState:
        from .state.build import build_state

        if self._options.get("iou_type") == "segm":
            from .geometry.masks import prepare_masks

            sub = prepare_masks(sub)
        elif self._options.get("iou_type") == "keypoints":
            from .state.build import prepare_part_keypoints

            sub = prepare_part_keypoints(sub, self._run.load.sigmas)
        keys = None
        from .protocols import get_protocol

        if get_protocol(self.protocol).curves == "voc":
            # the devkit's file order, for a file listed image by image
            img = sub.pred.image
            by_img = np.argsort(img, kind="stable")
            start = np.searchsorted(img[by_img], img[by_img], side="left")
            pos = np.empty_like(img)
            pos[by_img] = np.arange(img.shape[0]) - start
            keys = img * (1 << 32) + pos
        return build_state(
            sub, self.protocol, self._options, covered=covered, pred_keys=keys, fp=fp
        )

    def _keep(self, state: PartialState) -> None:
        self._parts.append(state)
        if len(self._parts) >= _COMPACT:
            self._parts = [merge_states(self._parts)]

    def _update_targets(
        self, predictions: Any, targets: Any, image_ids: Iterable[Any] | None
    ) -> None:
        """Targets given per batch: the batch as its COCO objects (state/targets.py),
        matched by the file path's own loader and protocol, kept keyed by image id."""
        assert self._reader is not None
        if targets is None:
            raise UsageError(
                "update: this Evaluator has no ground truth: give each batch's targets "
                "(update(predictions, targets))"
            )
        extra = list(image_ids) if image_ids is not None else None
        batch = self._reader.batch(list(predictions), list(targets), extra)
        ids = [scalar_id(k) for k in batch.image_ids]
        again = [k for k in ids if k in self._seen_keys]
        if again:
            raise UsageError(
                f"update {self._reader.n_updates}: image {again[0]!r} was already evaluated by "
                f"an earlier update ({len(again)} image(s) again): give each image once"
            )
        state = self._batch_state(batch)
        self._seen_keys.update(ids)
        self._keep(state)

    def _batch_state(self, batch: Any) -> PartialState:
        from .loaders import load_side
        from .state.targets import image_keys

        assert self._reader is not None
        self._gt = load_side(batch.gt, role="gt", fmt=None, opts=self._load_options())
        try:
            ds = self._join(batch.records)
        finally:
            self._gt = None
        state = self._build(ds, covered=np.arange(len(ds.images)), fp="")
        state.header.update(
            images_by="id",
            fingerprint=None,
            image_ids="given" if self._reader.ids_given else "assigned",
        )
        state.image_keys = image_keys(ds.images.keys)
        return state

    # ------------------------------------------------------------------ results
    def state(self) -> PartialState:
        """The merged match records so far."""
        if not self._parts:
            if self._reader is not None:  # no update yet: a state of no image
                from .state.targets import Batch

                return self._batch_state(Batch(self._reader.dataset([]), []))
            if self._gt_ds is None:
                raise UsageError("compute: nothing to evaluate (no update, no state)")
            from .state.build import build_state

            empty = np.zeros(len(self._gt_ds.images), dtype=bool)
            ds = self._gt_ds
            if self._options.get("iou_type") == "keypoints":
                from .state.build import prepare_part_keypoints

                ds = prepare_part_keypoints(ds, self._run.load.sigmas)
            return build_state(ds, self.protocol, self._options, image_mask=empty, fp=self._fp)
        if len(self._parts) > 1:
            self._parts = [merge_states(self._parts)]
        return self._parts[0]

    def compute(self) -> Result:
        """The Result of every image given so far (the same as :func:`iou_cli.evaluate`'s)."""
        from .state.reduce import result

        return result(self.state())

    def reset(self) -> None:
        """Forget every update (the ground truth and options stay)."""
        self._parts = []
        self._seen = set()
        self._seen_keys = set()
        if self._reader is not None:
            self._reader.next_id, self._reader.ids_given = 0, None

    def to_bytes(self) -> bytes:
        """The state as a partial file's bytes (docs/partial-format.md)."""
        from .state.codec import to_bytes

        return to_bytes(self.state())

    @classmethod
    def from_state(cls, state: PartialState) -> Evaluator:
        ev = cls.__new__(cls)
        ev.protocol = str(state.header["protocol"])
        ev.box_format = "xyxy"
        ev._options = {}
        ev._unknown = "error"
        ev._gt_format = None
        ev._parts = [state]
        ev._seen = {int(i) for i in state.images}
        ev._gt = None
        ev._gt_ds = None
        ev._fp = str(state.header.get("fingerprint") or "")
        ev._reader = None
        keys = state.image_keys
        ev._seen_keys = {int(k) for k in keys} if state.by_id and keys is not None else set()
        return ev

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "") -> Evaluator:
        """An Evaluator holding a partial file's state (it merges and computes)."""
        from .state.codec import from_bytes

        return cls.from_state(from_bytes(bytes(data), source))

    @classmethod
    def merge(cls, evaluators: Sequence[Evaluator], *, allow_overlap: bool = False) -> Evaluator:
        """One Evaluator holding the union (same ground truth and parameters; an image in
        two of them is refused unless ``allow_overlap``)."""
        if not evaluators:
            raise UsageError("Evaluator.merge: nothing to merge")
        states = [e.state() for e in evaluators]
        merged = cls.from_state(merge_states(states, allow_overlap=allow_overlap))
        first = evaluators[0]
        if first._gt is not None:
            merged._gt, merged._gt_ds = first._gt, first._gt_ds
            merged._options, merged._gt_format = first._options, first._gt_format
            merged.box_format, merged._unknown = first.box_format, first._unknown
        if first._reader is not None:  # it may go on updating (ids must then be given)
            merged._reader, merged._options = first._reader, first._options
            merged.box_format = first.box_format
        return merged
