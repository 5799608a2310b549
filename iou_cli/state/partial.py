"""The mergeable state of an evaluation: match records per prediction, counts per class.

Evaluation is a map (per image: candidate pairs, IoU, greedy matching) and a reduce (per
class and area range: sort by score, cumulative sums, precision at recall points). A
:class:`PartialState` is the map's output for a set of images, exactly additive: two states
of disjoint image sets concatenate into the state of their union, and the reduce
(:mod:`.reduce`) of any such union is bit for bit the one-shot evaluation.

Per evaluated prediction (rows, any order):

* ``category`` (class index into the ground truth's table) and ``score`` (float64);
* the tie key of the reduce's sort: COCO/LVIS ``image`` (ground-truth image ordinal) and
  ``rank`` (position inside its (image, class) group by score, file order on ties), as
  pycocotools' stable mergesort over images in id order ranks them; VOC ``key`` (the row's
  position in the predictions' file order, as the devkit's stable sort ranks them);
* ``bits``: per (area range, IoU threshold) whether it is a true positive, then per (area
  range, IoU threshold) whether it is ignored (neither: a false positive), packed 8 a byte;
* ``iou``: the IoU of the true positives at the operating point (area "all"), one float64
  each, in row order (rows that are not such true positives have none).

Per class: ``counts["n_pos"]`` (area ranges x classes) counted ground truths,
``counts["n_det"]`` predictions before ``maxDets``. ``images`` lists the image ordinals the
state covers (an image in two parts is refused, never counted twice). ``header`` holds the
protocol, its parameters, the ground truth's fingerprint and category table: two states
merge only when their headers agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
U8Array = npt.NDArray[np.uint8]

# header fields two states must share to merge (the rest is informative)
MERGE_KEYS = ("images_by", "protocol", "params", "fingerprint", "categories", "n_images", "layout")
# an id-keyed state (targets given per batch: no ground-truth file, so no fingerprint and no
# fixed image table) merges on these; its images are named by id (``image_keys``)
ID_MERGE_KEYS = ("images_by", "protocol", "params", "categories", "layout")


@dataclass
class PartialState:
    """See the module docstring."""

    header: dict[str, Any]
    images: IntArray
    category: IntArray
    score: FloatArray
    image: IntArray  # COCO/LVIS tie key (ground-truth image ordinal); VOC: unused (zeros)
    rank: IntArray  # COCO/LVIS tie key inside the image; VOC: the file-order key
    bits: U8Array  # (n, n_bytes) packed flags, see the module docstring
    iou: FloatArray  # IoU of the operating point's true positives, in row order
    counts: dict[str, IntArray] = field(default_factory=dict)
    extra: dict[str, int] = field(default_factory=dict)  # additive scalars ("max_*": max)
    source: str = ""  # where it came from, for messages (a file name)
    # id-keyed states (header "images_by": "id"): the image id of each ordinal, sorted as
    # pycocotools sorts image ids; ``images`` is then every ordinal
    image_keys: IntArray | None = None

    @property
    def by_id(self) -> bool:
        return self.header.get("images_by") == "id"

    def __len__(self) -> int:
        return int(self.score.shape[0])

    @property
    def n_flags(self) -> int:
        return int(self.header["layout"]["n_flags"])

    def flags(self) -> npt.NDArray[np.bool_]:
        """``(n, n_flags)`` booleans (unpacked ``bits``)."""
        return np.unpackbits(self.bits, axis=1, count=self.n_flags).astype(bool)


def pack_flags(flags: npt.NDArray[np.bool_]) -> U8Array:
    """``(n, f)`` booleans packed 8 a byte along each row."""
    return np.packbits(flags.astype(np.uint8), axis=1)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_compatible(states: Sequence[PartialState]) -> None:
    """Refuse states of different protocols, parameters or ground truths (located at the
    second state's source, naming the first field that differs)."""
    first = states[0]
    for st in states[1:]:
        for key in ID_MERGE_KEYS if first.by_id and st.by_id else MERGE_KEYS:
            a, b = first.header.get(key), st.header.get(key)
            if a != b:
                what = {
                    "images_by": "one has targets given per batch (images by id), the other "
                    "a ground-truth file",
                    "fingerprint": "a different ground truth",
                    "params": "different parameters",
                    "protocol": "a different protocol",
                }.get(key, f"a different {key}")
                detail = ""
                if key == "params" and isinstance(a, dict) and isinstance(b, dict):
                    diff = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
                    if diff:
                        k = diff[0]
                        detail = f" ({k}: {_describe(b.get(k))} here, {_describe(a.get(k))} there)"
                elif key == "protocol":
                    detail = f" ({b} here, {a} there)"
                raise InputError(
                    st.source or None,
                    "header",
                    f"cannot merge with {first.source or 'the first part'}: {what}{detail}",
                )


def check_disjoint(states: Sequence[PartialState]) -> None:
    """Refuse an image covered by two states (it would be counted twice)."""
    owner: dict[int, int] = {}
    if sum(s.images.shape[0] for s in states) == 0:
        return
    all_img = np.concatenate([s.images for s in states])
    uniq, counts = np.unique(all_img, return_counts=True)
    dup = uniq[counts > 1]
    if dup.size == 0:
        return
    img = int(dup[0])
    for i, s in enumerate(states):
        if np.any(s.images == img):
            if img in owner:
                first = states[owner[img]].source or f"part {owner[img] + 1}"
                raise InputError(
                    s.source or None,
                    f"images[{int(np.searchsorted(s.images, img))}]",
                    f"image {_image_name(s, img)} is also in {first} ({dup.size} image(s) "
                    "overlap): each image must be in exactly one part",
                )
            owner[img] = i


def _image_name(state: PartialState, ordinal: int) -> str:
    return f"#{ordinal}"


def _refuse_id_overlap(states: Sequence[PartialState], key: int, n_dup: int) -> None:
    """An image id in two id-keyed states: refused, naming both parts."""
    owners = [
        i for i, s in enumerate(states) if s.image_keys is not None and np.any(s.image_keys == key)
    ]
    first, second = states[owners[0]], states[owners[-1]]
    hint = ""
    if any(s.header.get("image_ids") == "assigned" for s in (first, second)):
        hint = (
            " (ids assigned in order of arrival start at 0 in every Evaluator: give each "
            "target its image_id to merge evaluators)"
        )
    raise InputError(
        second.source or None,
        "images",
        f"image {key} is also in {first.source or f'part {owners[0] + 1}'} ({n_dup} image(s) "
        f"overlap): each image must be in exactly one part{hint}",
    )


def _by_id(states: Sequence[PartialState]) -> list[PartialState]:
    """Id-keyed states re-numbered over the union of their image ids (sorted as pycocotools
    sorts image ids), so their tie keys compare across states."""
    from dataclasses import replace

    keys = [s.image_keys if s.image_keys is not None else np.zeros(0, np.int64) for s in states]
    union = np.unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
    out = []
    for s, k in zip(states, keys, strict=True):
        g = np.searchsorted(union, k).astype(np.int64)  # local ordinal -> global

        def keyed(x: np.ndarray, g: np.ndarray = g) -> np.ndarray:
            """key: image ordinal << 32 | position, its image re-numbered"""
            return (g[x >> 32] << 32) | (x & 0xFFFFFFFF) if x.size else x

        image, rank = s.image, s.rank
        kind = s.header["layout"]["kind"]
        if kind in ("voc", "dota"):  # predictions' keys (file order of an image-wise file)
            rank = keyed(rank)
        if kind == "dota":  # the ground truth each prediction hit, by the same kind of key
            image = keyed(image)
        elif kind != "voc":
            image = g[image] if image.size else image
        out.append(replace(s, images=g[s.images], image=image, rank=rank, image_keys=union))
    return out


def merge_states(states: Sequence[PartialState], *, allow_overlap: bool = False) -> PartialState:
    """The state of the union of ``states`` (same header; disjoint images unless
    ``allow_overlap``, where an image's records are simply all kept)."""
    if not states:
        raise ValueError("nothing to merge")
    check_compatible(states)
    if states[0].by_id:
        keys = [s.image_keys for s in states if s.image_keys is not None]
        if not allow_overlap and keys:
            uniq, n = np.unique(np.concatenate(keys), return_counts=True)
            if (n > 1).any():
                _refuse_id_overlap(states, int(uniq[n > 1][0]), int((n > 1).sum()))
        if len(states) > 1:
            states = _by_id(states)
    elif not allow_overlap:
        check_disjoint(states)
    first = states[0]
    if len(states) == 1:
        return first
    counts = {
        k: np.sum([s.counts[k] for s in states], axis=0).astype(np.int64) for k in first.counts
    }
    extra: dict[str, int] = {}
    for k in first.extra:
        vals = [int(s.extra.get(k, 0)) for s in states]
        extra[k] = max(vals) if k.startswith("max_") else sum(vals)
    header, images = first.header, np.sort(np.concatenate([s.images for s in states]))
    if first.by_id and first.image_keys is not None:  # every image of the union, once
        images = np.arange(first.image_keys.shape[0])
        header = {**header, "n_images": int(first.image_keys.shape[0])}
    return PartialState(
        header=header,
        images=images.astype(np.int64),
        category=np.concatenate([s.category for s in states]),
        score=np.concatenate([s.score for s in states]),
        image=np.concatenate([s.image for s in states]),
        rank=np.concatenate([s.rank for s in states]),
        bits=np.concatenate([s.bits for s in states], axis=0),
        iou=np.concatenate([s.iou for s in states]),
        counts=counts,
        extra=extra,
        source=first.source,
        image_keys=first.image_keys,
    )


def empty_like(header: dict[str, Any], counts: dict[str, IntArray]) -> PartialState:
    """A state covering no image (zero counts shaped like ``counts``)."""
    nb = (int(header["layout"]["n_flags"]) + 7) // 8
    return PartialState(
        header=header,
        images=np.zeros(0, dtype=np.int64),
        category=np.zeros(0, dtype=np.int64),
        score=np.zeros(0, dtype=np.float64),
        image=np.zeros(0, dtype=np.int64),
        rank=np.zeros(0, dtype=np.int64),
        bits=np.zeros((0, nb), dtype=np.uint8),
        iou=np.zeros(0, dtype=np.float64),
        counts={k: np.zeros_like(v) for k, v in counts.items()},
        extra={},
    )
