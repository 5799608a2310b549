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

BOX_FORMATS = ("xyxy", "xywh", "cxcywh")
_COMPACT = 64  # merge the per-update states every this many updates


def _array(value: Any, what: str) -> np.ndarray:
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


def _scalar(value: Any) -> Any:
    arr = _array(value, "image_id")
    if arr.ndim == 0 or arr.size == 1:
        out = arr.reshape(-1)[0].item()
        return int(out) if isinstance(out, float) and out.is_integer() else out
    raise UsageError(f"image_id: expected one id per image, got shape {arr.shape}")


def _xywh(boxes: np.ndarray, fmt: str) -> np.ndarray:
    b = boxes.astype(np.float64).reshape(-1, 4)
    if fmt == "xywh":
        return b
    if fmt == "xyxy":
        return np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)
    w, h = b[:, 2], b[:, 3]
    return np.stack([b[:, 0] - w / 2, b[:, 1] - h / 2, w, h], axis=1)


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


class Evaluator:
    """Streaming, mergeable evaluation (see the module docstring).

    ``gt``: a path, a COCO dataset dict, or a side from :func:`iou_cli.load`; ``protocol``:
    ``coco``, ``lvis``, ``voc`` or ``voc07``; ``box_format``: of the boxes given as arrays;
    other keywords are :func:`iou_cli.evaluate`'s protocol options (``iou_type``,
    ``iou_thr``, ``score_thr``, ``max_dets``, ``iou_thrs``, ``honor_ignore``, ``plus_one``).
    VOC's ties keep file order; here that is (image order of the ground truth, position in
    the update), the order of a file listed image by image.
    """

    def __init__(
        self,
        gt: Any = None,
        protocol: str = "coco",
        *,
        box_format: str = "xyxy",
        gt_format: str | None = None,
        unknown: str = "error",
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
        if gt is not None:
            self._load_gt(gt)

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
        if self._gt is None:
            raise UsageError(
                "update: this Evaluator has no ground truth (one read from bytes can only be "
                "merged and computed); create it with Evaluator(gt, ...)"
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
        from .state.build import build_state, restrict

        new = np.flatnonzero(covered)
        again = [int(i) for i in new if int(i) in self._seen]
        if again:
            key = ds.images.keys[again[0]]
            raise UsageError(
                f"update: image {key!r} was already evaluated by an earlier update ({len(again)} "
                "image(s) again): give each image's predictions in one update"
            )
        sub, rows = restrict(ds, covered)
        if self._options.get("iou_type") == "segm":
            from .geometry.masks import prepare_masks

            sub = prepare_masks(sub)
        keys = None
        if self.protocol.startswith("voc"):
            # the devkit's file order, for a file listed image by image
            img = sub.pred.image
            by_img = np.argsort(img, kind="stable")
            start = np.searchsorted(img[by_img], img[by_img], side="left")
            pos = np.empty_like(img)
            pos[by_img] = np.arange(img.shape[0]) - start
            keys = img * (1 << 32) + pos
        state = build_state(
            sub, self.protocol, self._options, covered=new, pred_keys=keys, fp=self._fp
        )
        self._seen.update(int(i) for i in new)
        self._parts.append(state)
        if len(self._parts) >= _COMPACT:
            self._parts = [merge_states(self._parts)]

    # ------------------------------------------------------------------ results
    def state(self) -> PartialState:
        """The merged match records so far."""
        if not self._parts:
            if self._gt_ds is None:
                raise UsageError("compute: nothing to evaluate (no update, no state)")
            from .state.build import build_state

            empty = np.zeros(len(self._gt_ds.images), dtype=bool)
            return build_state(
                self._gt_ds, self.protocol, self._options, image_mask=empty, fp=self._fp
            )
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
        ev._fp = str(state.header.get("fingerprint", ""))
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
        return merged
