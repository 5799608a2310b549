"""Candidate pairs: every prediction with every ground truth of its group, and their IoU.

A group is one image (class-agnostic) or one (image, class). Groups are found by sorting
integer keys and searching, never by arrays sized images x classes, so memory follows the
number of boxes and pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..data import Boxes, Dataset
from ..geometry.iou import Corners, overlap

if TYPE_CHECKING:  # pragma: no cover
    from ..geometry.oks import FarBound, KeptOrder

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Pairs:
    """Aligned columns, one row per pair, sorted by (``det``, ``gt``).

    ``det``: prediction rows into ``ds.pred``; ``gt``: ground-truth rows into ``ds.gt``;
    ``iou``: their IoU (a crowd ground truth scores ``|d ∩ g| / |d|``, as pycocotools).
    """

    det: IntArray
    gt: IntArray
    iou: FloatArray

    def __len__(self) -> int:
        return int(self.det.shape[0])


def group_keys(boxes: Boxes, n_classes: int, *, by_class: bool = True) -> IntArray:
    """One integer per box naming its group: the image, or (image, class)."""
    if not by_class:
        return boxes.image.astype(np.int64)
    return boxes.image.astype(np.int64) * max(n_classes, 1) + boxes.category


def run_ranks(sorted_keys: IntArray) -> IntArray:
    """Position of each element inside its run of equal keys (``sorted_keys`` sorted)."""
    n = sorted_keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    first = np.flatnonzero(start)
    run = np.cumsum(start) - 1
    return np.arange(n, dtype=np.int64) - first[run]


def expand_groups(
    d_key: IntArray, g_key_sorted: IntArray
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Every detection with every ground truth of its group.

    ``d_key``: each detection's group key; ``g_key_sorted``: the ground truths' keys, sorted.
    Returns ``(pair_det, pair_g, d_gstart, d_ng)``: pairs detection-major (positions into
    ``d_key`` and into ``g_key_sorted``), and each detection's first ground-truth position
    and count.
    """
    lo = np.searchsorted(g_key_sorted, d_key, side="left").astype(np.int64)
    hi = np.searchsorted(g_key_sorted, d_key, side="right").astype(np.int64)
    d_ng = hi - lo
    n_pairs = int(d_ng.sum())
    pair_det = np.repeat(np.arange(d_key.shape[0], dtype=np.int64), d_ng)
    first_pair = np.cumsum(d_ng) - d_ng
    pair_g = np.repeat(lo, d_ng) + np.arange(n_pairs, dtype=np.int64) - np.repeat(first_pair, d_ng)
    return pair_det, pair_g, lo, d_ng


def corners(boxes: Boxes, rows: IntArray) -> Corners:
    """``(x1, y1, x2, y2, box_area)`` of ``rows``, the columns ``engine.overlap`` takes."""
    # one gather per column into contiguous arrays (no gather of whole rows first: half
    # the fresh memory, whose page faults cost more than the IoU itself)
    x1, y1, x2, y2 = (boxes.xyxy[:, j][rows] for j in range(4))
    return (x1, y1, x2, y2, boxes.box_area[rows])


def pair_iou_bbox(ds: Dataset, d_rows: IntArray, g_rows: IntArray) -> FloatArray:
    """Box IoU of aligned (prediction row, ground-truth row) arrays, crowd rule applied."""
    return overlap(corners(ds.pred, d_rows), corners(ds.gt, g_rows), ds.gt.iscrowd[g_rows])


def side_quads(boxes: Boxes) -> tuple[FloatArray, FloatArray]:
    """Convex counter-clockwise ``(N, 4, 2)`` quads of a side (its ``obb`` corners; boxes
    without that column as their four corners) and the areas its ``box_area`` gives (``w*h``
    of a COCO ``obb``, the polygon's area for corners); NaN areas are the polygon's."""
    q, area, _ = _side_obb(boxes)
    return q, area


def _side_obb(boxes: Boxes) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`side_quads` and the quads' axis-aligned hulls."""
    q, poly, box = side_polygons(boxes)
    missing = np.isnan(boxes.box_area)
    if not missing.any():
        return q, boxes.box_area, box
    return q, np.where(missing, poly, boxes.box_area), box


def side_polygons(boxes: Boxes) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Convex counter-clockwise ``(N, 4, 2)`` quads of a side, their polygon areas and
    axis-aligned hulls (read-only; ``geometry.obb.convex_geometry``)."""
    from ..geometry.obb import convex_geometry

    if boxes.obb is not None:
        raw = boxes.obb.reshape(-1, 4, 2)
    else:
        x1, y1, x2, y2 = (boxes.xyxy[:, k] for k in range(4))
        raw = np.stack([x1, y1, x2, y1, x2, y2, x1, y2], axis=1).reshape(-1, 4, 2)
    q, _, area, box = convex_geometry(raw)
    return q, area, box


def pair_iou_obb(
    ds: Dataset, d_rows: IntArray, g_rows: IntArray, *, min_iou: float | None = None
) -> FloatArray:
    """Rotated-box IoU of aligned (prediction row, ground-truth row) arrays, crowd rule
    applied (intersection over the prediction's area); pairs provably below ``min_iou``
    are 0 without clipping (``indexed_iou``'s ``floor``)."""
    from ..geometry.obb import indexed_iou

    qp, ap, bp = _side_obb(ds.pred)
    qg, ag, bg = _side_obb(ds.gt)
    return indexed_iou(
        qp,
        qg,
        np.asarray(d_rows, dtype=np.int64),
        np.asarray(g_rows, dtype=np.int64),
        area_a=ap,
        area_b=ag,
        box_a=bp,
        box_b=bg,
        crowd=ds.gt.iscrowd[g_rows],
        floor=min_iou,
    )


_OBB_BLOCK = 1 << 16  # pairs gathered at once: small temporaries, reused from the heap


def _group_pair_iou_obb(
    ds: Dataset,
    d_rows: IntArray,
    g_rows_sorted: IntArray,
    pair_det: IntArray,
    pair_g: IntArray,
    min_iou: float | None,
) -> FloatArray:
    """:func:`pair_iou_obb` of the pairs :func:`expand_groups` laid out, a block of pairs
    at a time (millions of pairs: whole-array gathers faulted in hundreds of MB)."""
    from ..geometry.obb import PairGeometry

    qp, ap, bp = _side_obb(ds.pred)
    qg, ag, bg = _side_obb(ds.gt)
    geo = PairGeometry(qp, qg, area_a=ap, area_b=ag, box_a=bp, box_b=bg)
    crowd = ds.gt.iscrowd
    out = np.empty(pair_det.shape[0], dtype=np.float64)
    for s in range(0, pair_det.shape[0], _OBB_BLOCK):
        ia = d_rows[pair_det[s : s + _OBB_BLOCK]]
        ib = g_rows_sorted[pair_g[s : s + _OBB_BLOCK]]
        out[s : s + _OBB_BLOCK] = geo.iou(ia, ib, crowd=crowd[ib], floor=min_iou)
    return out


def pair_iou_segm(
    ds: Dataset,
    d_rows: IntArray,
    g_rows_sorted: IntArray,
    d_gstart: IntArray,
    d_ng: IntArray,
    *,
    min_iou: float | None = None,
) -> FloatArray:
    """Mask IoU of every detection with every ground truth of its group (detection-major,
    as :func:`expand_groups` lays pairs out).

    ``min_iou``: a pair whose IoU provably lies below it gets 0 without its masks being
    decoded. The bound: the intersection is at most the smaller mask area and the overlap
    of the two mask boxes (``I``), and IoU grows with the intersection, so IoU is at most
    ``I / (area_d + area_g - I)`` (crowd: ``I / area_d``); float division is monotone, so
    the computed IoU is at most the computed bound too.

    ``pycocotools.mask.iou`` first compares the masks' bounding boxes (``toBbox``) and
    gives 0 where they do not overlap; that test is made here, vectorised over all pairs
    (on ``Boxes.mask_box``), so only the masks of overlapping pairs are decoded, in one
    call per image (the image's detections and ground truths that have such a pair; the
    call's own box test keeps the cross pairs of that matrix cheap). A pair's value depends
    only on its two masks: the values are pycocotools' bit for bit.
    """
    from ..geometry.masks import group_iou, mask_boxes

    n_pairs = int(d_ng.sum())
    out = np.zeros(n_pairs, dtype=np.float64)
    pm, gm = ds.pred.masks, ds.gt.masks
    if n_pairs == 0:
        return out
    if pm is None or gm is None:
        raise ValueError("segm pairs need masks on both sides (masks.prepare_masks)")
    first = np.cumsum(d_ng) - d_ng
    pair_d = np.repeat(d_rows, d_ng)
    pair_g = g_rows_sorted[np.repeat(d_gstart - first, d_ng) + np.arange(n_pairs)]
    db = ds.pred.mask_box if ds.pred.mask_box is not None else mask_boxes(pm)
    gb = ds.gt.mask_box if ds.gt.mask_box is not None else mask_boxes(gm)
    a, b = db[pair_d], gb[pair_g]
    # pycocotools' bbIou: overlap width and height both > 0 (integers: exact in float64)
    near = np.flatnonzero(
        (np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]) > 0)
        & (np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]) > 0)
    )
    if near.size and min_iou is not None and min_iou > 0:
        near = near[_may_reach(ds, pair_d[near], pair_g[near], db, gb, min_iou)]
    if near.size == 0:
        return out
    nd, ng = pair_d[near], pair_g[near]
    image = ds.pred.image[nd]
    # each image's detections and ground truths (sorted, unique) and every pair's place in
    # that image's matrix, for all images at once
    dets, d_at = _per_image(image, nd, len(ds.pred))
    gts, g_at = _per_image(image, ng, len(ds.gt))
    order = np.argsort(image, kind="stable")
    near, image, d_at, g_at = near[order], image[order], d_at[order], g_at[order]
    cut = np.flatnonzero(np.r_[True, image[1:] != image[:-1], True])
    d_rows, g_rows = dets[1].tolist(), gts[1].tolist()
    crowd = ds.gt.iscrowd
    d_lo, g_lo = _starts(dets[0]), _starts(gts[0])
    for k, (lo, hi) in enumerate(zip(cut[:-1].tolist(), cut[1:].tolist(), strict=False)):
        d0, d1 = d_lo[k], d_lo[k + 1]
        g0, g1 = g_lo[k], g_lo[k + 1]
        m = group_iou(
            [pm[r] for r in d_rows[d0:d1]], [gm[r] for r in g_rows[g0:g1]], crowd[gts[1][g0:g1]]
        )
        out[near[lo:hi]] = m[d_at[lo:hi] - d0, g_at[lo:hi] - g0]
    return out


def _per_image(
    image: IntArray, rows: IntArray, n: int
) -> tuple[tuple[IntArray, IntArray], IntArray]:
    """The distinct (image, row) pairs sorted by image then row, as ``(images, rows)``, and
    each input position's index into them."""
    key = image.astype(np.int64) * max(n, 1) + rows
    uniq, at = np.unique(key, return_inverse=True)
    return (uniq // max(n, 1), uniq % max(n, 1)), at.reshape(-1)


def _starts(images: IntArray) -> list[int]:
    """Where each image's run starts in ``images`` (sorted), and its end."""
    return np.flatnonzero(np.r_[True, images[1:] != images[:-1], True]).tolist()


def _may_reach(
    ds: Dataset, nd: IntArray, ng: IntArray, db: FloatArray, gb: FloatArray, min_iou: float
) -> BoolArray:
    """Which pairs (``nd``, ``ng``) may have a mask IoU of ``min_iou`` or more (see
    :func:`pair_iou_segm`); all of them when the mask areas are not known."""
    ad_all, ag_all = ds.pred.mask_area, ds.gt.mask_area
    if ad_all is None or ag_all is None:
        return np.ones(nd.shape[0], dtype=bool)
    a, b = db[nd], gb[ng]
    iw = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    ih = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    ad, ag = ad_all[nd], ag_all[ng]
    inter = np.minimum(np.minimum(ad, ag), iw * ih)
    with np.errstate(divide="ignore", invalid="ignore"):  # (an empty mask has no overlap)
        bound = np.where(ds.gt.iscrowd[ng], inter / ad, inter / (ad + ag - inter))
    return ~(bound < min_iou)


def sigma_table(ds: Dataset) -> tuple[FloatArray, str]:
    """The OKS sigmas, (1, K) or per category (C, K), and where they came from: as
    :func:`iou_cli.geometry.oks.prepare_keypoints` resolved them (resolved here with the
    file's own or COCO's when the dataset was built without it)."""
    from ..geometry.oks import resolved_sigmas

    return resolved_sigmas(ds)


def pair_oks(
    ds: Dataset,
    d_rows: IntArray,
    g_rows: IntArray,
    sigmas: FloatArray,
    *,
    min_oks: float | None = None,
    jobs: int = 1,
) -> FloatArray:
    """OKS of aligned (prediction row, ground-truth row) arrays; ``sigmas`` (1, K) or
    (C, K) by the ground truth's category (pycocotools' computeOks; no crowd rule: a crowd
    ground truth is compared like any other and may absorb many predictions in the matcher).

    ``min_oks``: pairs that provably score below it (:func:`iou_cli.geometry.oks.far_bound`)
    are given 0 without computing their OKS; every other pair gets its exact OKS.
    ``jobs`` > 1: with ``OKS_SPLIT_MIN`` pairs or more, up to ``jobs`` threads
    (``OKS_THREADS`` at most) compute a run of the pairs each (each pair's OKS is computed
    alone: the split cannot change a bit of it).
    """
    from ..geometry.oks import KeptOrder, far_bound

    gt, pred = ds.gt, ds.pred
    if gt.keypoints is None or pred.keypoints is None:
        raise ValueError("keypoint pairs need keypoints on both sides (--iou-type keypoints)")
    bound = None
    if min_oks is not None and min_oks > 0 and g_rows.shape[0]:  # (once, for every thread)
        bound = far_bound(
            pred.keypoints,
            gt.keypoints,
            kpt_boxes(gt, None),
            gt.area,
            sigmas,
            gt.category,
            min_oks,
            pred.kpt_box,
        )
    order = KeptOrder.of(gt.keypoints) if g_rows.shape[0] else None  # (once, for every thread)
    threads = min(jobs, OKS_THREADS, g_rows.shape[0] * 2 // OKS_SPLIT_MIN)
    if threads > 1:
        return _split_pair_oks(ds, d_rows, g_rows, sigmas, bound, threads, order)
    return _pair_oks_part(ds, d_rows, g_rows, sigmas, bound, order)


def _pair_oks_part(
    ds: Dataset,
    d_rows: IntArray,
    g_rows: IntArray,
    sigmas: FloatArray,
    bound: FarBound | None,
    order: KeptOrder | None = None,
) -> FloatArray:
    """:func:`pair_oks` in one thread, a block of pairs at a time: the far-pair test
    (``bound``; None: every pair is computed) and then the OKS of the block's other pairs
    (``order``: the ground truths' :class:`iou_cli.geometry.oks.KeptOrder`)."""
    P = g_rows.shape[0]
    out = np.zeros(P, dtype=np.float64)
    if P == 0:
        return out
    if bound is None:
        near = np.arange(P)
    else:  # (in blocks: their temporaries stay small)
        near = np.concatenate(
            [
                at
                + np.flatnonzero(
                    ~bound.far(d_rows[at : at + FAR_BLOCK], g_rows[at : at + FAR_BLOCK])
                )
                for at in range(0, P, FAR_BLOCK)
            ]
        )
    for at in range(0, near.shape[0], OKS_BLOCK):
        part = near[at : at + OKS_BLOCK]
        out[part] = _pair_oks(ds, d_rows[part], g_rows[part], sigmas, order)
    return out


# pairs from which a --jobs run splits the OKS between threads: at COCO val's size
# (~220k pairs, ~43 ms in one thread) two threads take ~30 ms (NumPy releases the GIL in
# its loops over a block's arrays; a forked process took ~40: each first write to a page
# after a fork copies it)
OKS_SPLIT_MIN = 50_000
# at most this many threads (and one more per OKS_SPLIT_MIN / 2 pairs): the GIL holds the
# small calls, so more give little, and each keeps its own blocks' memory (~7 MB)
OKS_THREADS = 4


def _split_pair_oks(
    ds: Dataset,
    d_rows: IntArray,
    g_rows: IntArray,
    sigmas: FloatArray,
    bound: FarBound | None,
    jobs: int,
    order: KeptOrder | None = None,
) -> FloatArray:
    """:func:`pair_oks` with the pairs cut into ``jobs`` runs, each computed by a thread
    (:func:`iou_cli.workers.in_threads`)."""
    from ..workers import in_threads

    P = g_rows.shape[0]
    cuts = [P * j // jobs for j in range(jobs + 1)]
    out = np.empty(P, dtype=np.float64)

    def part(j: int) -> None:
        a, b = cuts[j], cuts[j + 1]
        out[a:b] = _pair_oks_part(ds, d_rows[a:b], g_rows[a:b], sigmas, bound, order)

    in_threads(part, list(range(jobs)), jobs)
    return out


# pairs tested and computed at once: each block's temporaries ((pairs, K) planes, ~0.5 MB
# at K = 17) stay in the cache and in memory malloc reuses, where whole planes of a
# COCO-sized run (~40 MB) were fresh mappings, faulted in page by page every time
OKS_BLOCK = 4096
FAR_BLOCK = 16384  # pairs given the far-pair test at once


def _pair_oks(
    ds: Dataset,
    d_rows: IntArray,
    g_rows: IntArray,
    sigmas: FloatArray,
    order: KeptOrder | None = None,
) -> FloatArray:
    from ..geometry.oks import oks_from_terms, plane_terms

    gt, pred = ds.gt, ds.pred
    assert gt.keypoints is not None and pred.keypoints is not None
    if g_rows.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    box = kpt_boxes(gt, g_rows)
    sig = sigmas[0] if sigmas.shape[0] == 1 else sigmas[gt.category[g_rows]]
    pk, gk = pred.keypoints, gt.keypoints
    # whole rows gathered (a fast take), then one contiguous plane per coordinate
    pd, gd = np.take(pk, d_rows, axis=0), np.take(gk, g_rows, axis=0)
    xd, yd = np.ascontiguousarray(pd[:, :, 0]), np.ascontiguousarray(pd[:, :, 1])
    xg, yg = np.ascontiguousarray(gd[:, :, 0]), np.ascontiguousarray(gd[:, :, 1])
    vis = gd[:, :, 2] > 0
    area = np.take(gt.area, g_rows)
    if order is None:
        return oks_from_terms(plane_terms(xd, yd, xg, yg, vis, area, box, sig))
    lab = np.take(order.labelled, g_rows)
    terms = plane_terms(xd, yd, xg, yg, vis, area, box, sig, lab)
    return oks_from_terms(terms, np.take(order.order, g_rows, axis=0), np.take(order.n, g_rows))


def kpt_boxes(gt: Boxes, g_rows: IntArray | None) -> FloatArray:
    """The ground truths' own ``x, y, w, h`` (else derived from the corners); all rows
    when ``g_rows`` is None."""
    if gt.xywh is not None:
        return gt.xywh if g_rows is None else np.take(gt.xywh, g_rows, axis=0)
    rows: Any = slice(None) if g_rows is None else g_rows
    x1, y1, x2, y2 = (gt.xyxy[rows, j] for j in range(4))
    return np.stack([x1, y1, x2 - x1, y2 - y1], axis=1)


def group_pair_iou(
    ds: Dataset,
    iou_type: str,
    d_rows: IntArray,
    g_rows_sorted: IntArray,
    pair_det: IntArray,
    pair_g: IntArray,
    d_gstart: IntArray,
    d_ng: IntArray,
    *,
    min_sim: float | None = None,
    jobs: int = 1,
) -> FloatArray:
    """The similarity of every pair :func:`expand_groups` laid out, by the geometry
    ``iou_type``: box IoU (``bbox``), mask IoU (``segm``), rotated-box IoU (``obb``) or OKS
    (``keypoints``); for ``segm``, ``obb`` and ``keypoints`` pairs provably below
    ``min_sim`` may be given 0 (see :func:`pair_iou_segm`, :func:`pair_iou_obb`,
    :func:`pair_oks`; ``jobs``: threads the OKS may be split between)."""
    if iou_type == "keypoints":
        sig = sigma_table(ds)[0]
        d, g = d_rows[pair_det], g_rows_sorted[pair_g]
        return pair_oks(ds, d, g, sig, min_oks=min_sim, jobs=jobs)
    if iou_type == "segm":
        return pair_iou_segm(ds, d_rows, g_rows_sorted, d_gstart, d_ng, min_iou=min_sim)
    if iou_type == "obb":
        return _group_pair_iou_obb(ds, d_rows, g_rows_sorted, pair_det, pair_g, min_sim)
    return pair_iou_bbox(ds, d_rows[pair_det], g_rows_sorted[pair_g])


def candidate_pairs(
    ds: Dataset,
    *,
    det_rows: npt.ArrayLike | None = None,
    by_class: bool = True,
    min_iou: float = 0.0,
    iou_type: str = "bbox",
) -> Pairs:
    """Every (prediction, ground truth) pair of one image -- and one class when
    ``by_class`` -- whose IoU is at least ``min_iou`` (pairs of IoU 0 are dropped whenever
    ``min_iou > 0``). ``det_rows`` limits the predictions (default: all of ``ds.pred``).
    ``by_class=False`` is the class-agnostic grouping a confusion matrix needs."""
    K = len(ds.categories)
    d_rows = (
        np.arange(len(ds.pred), dtype=np.int64)
        if det_rows is None
        else np.asarray(det_rows, dtype=np.int64).reshape(-1)
    )
    d_rows = np.sort(d_rows)
    g_key_all = group_keys(ds.gt, K, by_class=by_class)
    g_rows = np.argsort(g_key_all, kind="stable").astype(np.int64)
    g_key = g_key_all[g_rows]
    d_key = group_keys(ds.pred, K, by_class=by_class)[d_rows]
    pair_det, pair_g, d_gstart, d_ng = expand_groups(d_key, g_key)
    iou = group_pair_iou(ds, iou_type, d_rows, g_rows, pair_det, pair_g, d_gstart, d_ng)
    keep = iou >= min_iou if min_iou > 0 else np.ones(iou.shape, dtype=bool)
    det = d_rows[pair_det[keep]]
    gt = g_rows[pair_g[keep]]
    iou = iou[keep]
    order = np.lexsort((gt, det))
    return Pairs(det=det[order], gt=gt[order], iou=iou[order])
