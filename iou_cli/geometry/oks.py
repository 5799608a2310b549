"""Object Keypoint Similarity (OKS), vectorised over pairs, as ``pycocotools.cocoeval``'s
``computeOks`` computes it for one pair, float operation for float operation:

* ``var = (2 * sigma) ** 2`` per keypoint;
* a ground truth with labelled keypoints (``v > 0``): ``d^2 = dx^2 + dy^2`` over the labelled
  ones only; one without any: the distance of each predicted keypoint to the ground truth's
  box enlarged by its size on every side (``[x - w, x + 2w] x [y - h, y + 2h]``), over all K;
* ``e = d^2 / var / (area + eps) / 2`` with the ground truth's annotated ``area``;
* ``OKS = sum(exp(-e)) / n`` with NumPy's pairwise sum over the ``n`` kept keypoints in
  keypoint order (rows with the same ``n`` are summed together, which NumPy does row by row
  with the same algorithm as over a single 1-D array).

Prediction visibility flags play no part (pycocotools ignores them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, UsageError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# pycocotools Params.setKpParams: the 17 COCO person keypoints, same arithmetic (/ 10.0)
COCO_SIGMAS: FloatArray = (
    np.array(
        [0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07, 0.87]
        + [0.87, 0.89, 0.89]
    )
    / 10.0
)
COCO_KEYPOINT_NAMES = [
    "nose",
    "left_eye",
    "right_eye",
    "left_ear",
    "right_ear",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
    "left_hip",
    "right_hip",
    "left_knee",
    "right_knee",
    "left_ankle",
    "right_ankle",
]


@dataclass(frozen=True)
class PairTerms:
    """Per pair and keypoint: the OKS exponent ``e`` and whether the keypoint counts."""

    e: FloatArray  # (P, K)
    kept: BoolArray  # (P, K): labelled in the ground truth (all K when none is)
    labelled: BoolArray  # (P,): the ground truth has at least one labelled keypoint


def pair_terms(
    d_xy: FloatArray,
    g_kpts: FloatArray,
    g_area: FloatArray,
    g_box: FloatArray,
    sigmas: FloatArray,
) -> PairTerms:
    """The exponents of aligned pairs.

    ``d_xy`` (P, K, 2+) predicted x, y; ``g_kpts`` (P, K, 3) ground-truth x, y, v;
    ``g_area`` (P,) annotated areas; ``g_box`` (P, 4) ground-truth boxes ``x, y, w, h``;
    ``sigmas`` (K,) or (P, K).
    """
    return plane_terms(
        d_xy[:, :, 0],
        d_xy[:, :, 1],
        g_kpts[:, :, 0],
        g_kpts[:, :, 1],
        g_kpts[:, :, 2] > 0,
        g_area,
        g_box,
        sigmas,
    )


def plane_terms(
    xd: FloatArray,
    yd: FloatArray,
    xg: FloatArray,
    yg: FloatArray,
    vis: BoolArray,
    g_area: FloatArray,
    g_box: FloatArray,
    sigmas: FloatArray,
    labelled: BoolArray | None = None,
) -> PairTerms:
    """:func:`pair_terms` on (P, K) planes (``vis``: the ground truth labels the keypoint;
    ``labelled``: whether it labels any, when known)."""
    var = (np.asarray(sigmas, dtype=np.float64) * 2) ** 2
    if labelled is None:
        labelled = np.asarray(vis.any(axis=1), dtype=bool)
    dx = np.subtract(xd, xg)
    dy = np.subtract(yd, yg)
    if not labelled.all():
        un = ~labelled
        bx, by, bw, bh = (g_box[un, j][:, None] for j in range(4))
        x0, x1 = bx - bw, bx + bw * 2
        y0, y1 = by - bh, by + bh * 2
        xu, yu = xd[un], yd[un]
        dx[un] = np.maximum(0.0, x0 - xu) + np.maximum(0.0, xu - x1)
        dy[un] = np.maximum(0.0, y0 - yu) + np.maximum(0.0, yu - y1)
    # e = (dx**2 + dy**2) / var / (area + eps) / 2, in place, the same operations in order
    np.square(dx, out=dx)
    np.square(dy, out=dy)
    dx += dy
    del dy
    dx /= var
    dx /= (g_area + np.spacing(1))[:, None]
    dx /= 2
    kept = vis | ~labelled[:, None]
    return PairTerms(e=dx, kept=kept, labelled=labelled)


def pair_oks(
    d_xy: FloatArray,
    g_kpts: FloatArray,
    g_area: FloatArray,
    g_box: FloatArray,
    sigmas: FloatArray,
) -> FloatArray:
    """OKS of aligned (prediction, ground truth) pairs (see :func:`pair_terms`), (P,)."""
    return oks_from_terms(pair_terms(d_xy, g_kpts, g_area, g_box, sigmas))


def oks_from_terms(
    t: PairTerms, order: IntArray | None = None, n: IntArray | None = None
) -> FloatArray:
    """``sum(exp(-e)) / n`` over each pair's kept keypoints, summed as NumPy sums them;
    ``order`` and ``n``: each pair's (its ground truth's, :class:`KeptOrder`), when known."""
    P = t.e.shape[0]
    if P == 0:
        return np.zeros(0, dtype=np.float64)
    ex = np.negative(t.e)
    np.exp(ex, out=ex)
    if n is None:
        n = t.kept.sum(axis=1)
    return row_sums(ex, t.kept, n, order) / n


@dataclass(frozen=True)
class KeptOrder:
    """What of the OKS sum is the ground truth's alone, so shared by every pair of it (made
    once per evaluation, gathered per block of pairs): its keypoints in summing order, the
    kept ones first (the labelled ones; all K when none is), each group in keypoint order;
    whether any keypoint is labelled; how many are kept."""

    order: IntArray  # (M, K)
    labelled: BoolArray  # (M,)
    n: IntArray  # (M,)

    @classmethod
    def of(cls, g_kpts: FloatArray) -> KeptOrder:
        """``g_kpts``: the ground truths' keypoints (M, K, 3)."""
        vis: BoolArray = np.asarray(g_kpts[:, :, 2] > 0)
        labelled: BoolArray = np.asarray(vis.any(axis=1))
        kept = vis | ~labelled[:, None]
        order = np.argsort(~kept, axis=1, kind="stable").astype(np.intp)
        return cls(order, labelled, kept.sum(axis=1))


# NumPy's pairwise summation (umath loops_utils: 8 accumulators up to 128 values)
_PW_BLOCK = 128


def row_sums(
    a: FloatArray, kept: BoolArray, n: IntArray, order: IntArray | None = None
) -> FloatArray:
    """``np.sum(a[i][kept[i]])`` for every row, bit for bit, without a Python loop over rows
    (the values non-negative: OKS terms).

    NumPy sums a contiguous run of ``n`` float64 sequentially when ``n < 8``, else into 8
    accumulators over whole blocks of 8, combined as ``((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))``,
    then the remaining ``n % 8`` values one by one. Rows with ``n < 8`` are summed over all K
    columns in order with zeros for the values not kept (adding a zero never changes a sum
    of non-negative values); in the others the kept values are moved to the front of their
    row (zeros after them), so rows only need grouping by where their blocks end.
    ``order`` (P, K): each row's columns with the kept ones first (:class:`KeptOrder`): the
    values are gathered in that order (~2x faster than moving them by their counts).
    """
    P, K = a.shape
    if K > _PW_BLOCK:  # NumPy splits such rows recursively: let it sum them
        return _row_sums_numpy(a, kept, n)
    if order is not None:
        return _front_row_sums(np.take_along_axis(np.where(kept, a, 0.0), order, axis=1), n)
    out = np.empty(P, dtype=np.float64)
    small = n < 8
    few = np.flatnonzero(small)
    if few.size:
        masked = np.where(kept[few], a[few], 0.0)
        res = np.zeros(few.size)
        for j in range(K):
            res += masked[:, j]
        out[few] = res
    many = np.flatnonzero(~small)
    if many.size == 0:
        return out
    nb = n[many]
    c = a[many] if many.size != P else a.copy()
    part = np.flatnonzero(nb < K)
    if part.size:  # compact the kept values of rows that drop some
        kp = kept[many[part]]
        dense = np.zeros((part.size, K))
        pos = np.cumsum(kp, axis=1, dtype=np.intp)
        pos += np.arange(part.size, dtype=np.intp)[:, None] * K - 1
        dense.ravel()[pos[kp]] = c[part][kp]
        c[part] = dense
    ends = nb - nb % 8
    for b in range(8, K + 1, 8):
        sel = np.flatnonzero(ends == b)
        if sel.size == 0:
            continue
        cc = c[sel] if sel.size != c.shape[0] else c
        r = cc[:, :8].copy()
        for i in range(8, b, 8):
            r += cc[:, i : i + 8]
        res = ((r[:, 0] + r[:, 1]) + (r[:, 2] + r[:, 3])) + (
            (r[:, 4] + r[:, 5]) + (r[:, 6] + r[:, 7])
        )
        for j in range(b, K):
            res += cc[:, j]
        out[many[sel]] = res
    return out


def _front_row_sums(c: FloatArray, n: IntArray) -> FloatArray:
    """:func:`row_sums` of rows whose ``n`` kept values come first, zeros after them."""
    P, K = c.shape
    out = np.empty(P, dtype=np.float64)
    ends = n - n % 8
    for b in range(0, K + 1, 8):
        sel = np.flatnonzero(ends == b)
        if sel.size == 0:
            continue
        cc = c[sel] if sel.size != P else c
        if b == 0:  # fewer than 8: one by one
            res = cc[:, 0].copy()
            tail = range(1, min(K, 8))
        else:
            r = cc[:, :8].copy()
            for i in range(8, b, 8):
                r += cc[:, i : i + 8]
            res = ((r[:, 0] + r[:, 1]) + (r[:, 2] + r[:, 3])) + (
                (r[:, 4] + r[:, 5]) + (r[:, 6] + r[:, 7])
            )
            tail = range(b, min(K, b + 8))
        for j in tail:
            res += cc[:, j]
        out[sel] = res
    return out


def _row_sums_numpy(a: FloatArray, kept: BoolArray, n: IntArray) -> FloatArray:
    out = np.zeros(a.shape[0], dtype=np.float64)
    order = np.argsort(~kept, axis=1, kind="stable")
    sub = np.take_along_axis(a, order, axis=1)
    for m in sorted(set(n.tolist())):  # (np.unique would import numpy.ma: ~10 ms)
        sel = n == m
        out[sel] = np.sum(np.ascontiguousarray(sub[sel, :m]), axis=1)
    return out


@dataclass(frozen=True)
class FarBound:
    """Pairs whose OKS is certainly below a threshold, from boxes alone (O(1) per pair;
    :func:`far_bound`). Per row what :meth:`far` needs: the predictions' keypoint extents,
    the regions the ground truths' counted keypoints lie in, each ground truth's ``e``
    scale."""

    d: FloatArray  # (N, 4) x0, y0, x1, y1 of each prediction's keypoints
    g: FloatArray  # (M, 4) the same of each ground truth's region
    scale: FloatArray  # (M,) 2 * max(var) * (area + eps)
    limit: float

    def far(self, d_rows: IntArray, g_rows: IntArray) -> BoolArray:
        """Pairs certainly below the threshold (see :func:`far_bound`)."""
        # (np.take: a row gather ~10x faster than fancy indexing of (n, 4) rows)
        d, g = np.take(self.d, d_rows, axis=0), np.take(self.g, g_rows, axis=0)
        gap_x = np.maximum(0.0, np.maximum(g[:, 0] - d[:, 2], d[:, 0] - g[:, 2]))
        gap_y = np.maximum(0.0, np.maximum(g[:, 1] - d[:, 3], d[:, 1] - g[:, 3]))
        s = np.take(self.scale, g_rows)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            e_min = (gap_x**2 + gap_y**2) / s
        return np.asarray(e_min > self.limit, dtype=bool) & (s > 0) & np.isfinite(s)


def far_bound(
    d_kpts: FloatArray,
    g_kpts: FloatArray,
    g_box: FloatArray,
    g_area: FloatArray,
    sigmas: FloatArray,
    g_cat: IntArray,
    min_oks: float,
    d_corners: FloatArray | None = None,
) -> FarBound | None:
    """The bound that calls pairs far (None: none can be, ``min_oks`` outside (0, 1]).

    Every keypoint a pair counts lies in a box: a labelled ground-truth keypoint in the box
    of its labelled keypoints, the region the enlarged-box rule measures to (for ground
    truths without any) is that enlarged box, and every predicted keypoint is in the
    prediction's keypoint extent. With ``g`` the gap between the two boxes, each counted
    ``d^2 >= g^2``, so ``e >= g^2 / max(var) / (area + eps) / 2`` and ``OKS <= exp(-that)``.
    A pair is called far only with a wide margin (``e_min > 1.01 * -ln(min_oks) + 1e-9``),
    so float rounding can never drop a pair pycocotools would count. ``d_corners``: the
    predictions' :func:`kpt_corners` when known (the fast reader makes them).
    """
    if not (0.0 < min_oks <= 1.0):
        return None
    dc = kpt_corners(d_kpts) if d_corners is None else d_corners
    vis = g_kpts[:, :, 2] > 0
    lab = vis.any(axis=1)
    with np.errstate(invalid="ignore"):
        gx0 = np.where(vis, g_kpts[:, :, 0], np.inf).min(axis=1)
        gx1 = np.where(vis, g_kpts[:, :, 0], -np.inf).max(axis=1)
        gy0 = np.where(vis, g_kpts[:, :, 1], np.inf).min(axis=1)
        gy1 = np.where(vis, g_kpts[:, :, 1], -np.inf).max(axis=1)
    bx, by, bw, bh = (g_box[:, j] for j in range(4))
    gc = np.stack(
        [
            np.where(lab, gx0, bx - bw),
            np.where(lab, gy0, by - bh),
            np.where(lab, gx1, bx + bw * 2),
            np.where(lab, gy1, by + bh * 2),
        ],
        axis=1,
    )
    var_max = ((np.asarray(sigmas, dtype=np.float64) * 2) ** 2).max(axis=1)
    g_var = var_max[0] if var_max.shape[0] == 1 else var_max[g_cat]
    scale = np.broadcast_to(2 * g_var * (g_area + np.spacing(1)), g_area.shape)
    return FarBound(dc, gc, scale, 1.01 * -np.log(min_oks) + 1e-9)


def kpt_corners(kpts: FloatArray) -> FloatArray:
    """Corners ``x0, y0, x1, y1`` (N, 4) of the extent of all K keypoints of each row
    (:attr:`iou_cli.data.Boxes.kpt_box`)."""
    n = kpts.shape[0]
    out = np.empty((n, 4), dtype=np.float64)
    for at in range(0, n, _CORNER_ROWS):  # a block's (K, 2, rows) copy stays in the cache
        xy = np.ascontiguousarray(kpts[at : at + _CORNER_ROWS, :, :2].transpose(1, 2, 0))
        out[at : at + _CORNER_ROWS, :2] = xy.min(axis=0).T
        out[at : at + _CORNER_ROWS, 2:] = xy.max(axis=0).T
    return out


# rows per block: min/max over the K axis of a (K, 2, rows) copy run along whole rows of
# values, ~2x faster than NumPy's reduction of each row's K strided values
_CORNER_ROWS = 2048


def extent(kpts: FloatArray, corners: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
    """Box ``x, y, w, h`` (N, 4) and area (N,) spanned by all K keypoints of each row, as
    pycocotools' ``loadRes`` derives a keypoint result's box and area (from ``corners``,
    :func:`kpt_corners`, when they are known)."""
    c = kpt_corners(kpts) if corners is None else corners
    x0, y0, x1, y1 = (c[:, j] for j in range(4))
    box = np.stack([x0, y0, x1 - x0, y1 - y0], axis=1)
    return box, (x1 - x0) * (y1 - y0)


def resolve_sigmas(
    k: int,
    labels: list[str],
    *,
    file_sigmas: FloatArray | None,
    file_source: str,
    given: npt.ArrayLike | None,
    given_source: str = "--sigmas",
    fallback: str = "coco",
    dims: int = 3,
) -> tuple[FloatArray, str]:
    """The sigmas to use, (1, K) or (C, K), and a line saying where they came from.

    ``given`` (the user's) wins; then the file's (per category; a category without any
    takes COCO's when K is 17); COCO's 17 for 17-keypoint data; otherwise a
    :class:`UsageError` (never a silent default). ``fallback="ultralytics"``: Ultralytics'
    own rule where the data gives none (COCO's for ``kpt_shape [17, 3]``, else 1/K; ``dims``
    is the labels' values per keypoint), said on the info line.
    """
    how = (
        "pass --sigmas v1,v2,... (or a file), a data.yaml 'kpt_oks_sigmas', or "
        "'sigmas' on the COCO categories"
    )
    if given is not None:
        g = np.asarray(given, dtype=np.float64).reshape(-1)
        if not (np.isfinite(g).all() and (g > 0).all()):
            raise UsageError(f"{given_source}: expected sigmas > 0, got {g.tolist()}")
        if g.shape[0] != k:
            raise UsageError(
                f"{given_source}: {g.shape[0]} sigmas, but the keypoints have K = {k} "
                "(one sigma per keypoint)"
            )
        return g[None, :], f"{given_source} ({k} values)"
    coco = k == COCO_SIGMAS.shape[0]
    if fallback == "ultralytics":
        fb, fb_source = ultralytics_sigmas(k, dims)
        if file_sigmas is None:
            return fb, fb_source
        table = np.array(file_sigmas, dtype=np.float64)
        missing = np.isnan(table).any(axis=1)
        table[missing] = fb[0]
        if missing.any():
            file_source += f"; {fb_source} for {int(missing.sum())} class(es) without any"
        return (table[:1] if (table == table[0]).all() else table), file_source
    if file_sigmas is not None:
        table = np.array(file_sigmas, dtype=np.float64)
        missing = np.isnan(table).any(axis=1)
        if missing.any():
            if not coco:
                c = int(np.flatnonzero(missing)[0])
                raise UsageError(
                    f"no OKS sigmas for class {labels[c]!r} ({file_source} names them for "
                    f"other classes only) and K = {k} has no default: {how}"
                )
            table[missing] = COCO_SIGMAS
            file_source += f"; COCO's 17 for {int(missing.sum())} class(es) without any"
        if (table == table[0]).all():
            table = table[:1]
        return table, file_source
    if coco:
        return COCO_SIGMAS[None, :].copy(), "COCO's 17 person-keypoint sigmas (pycocotools)"
    raise UsageError(
        f"the keypoints have K = {k}, and OKS needs one sigma per keypoint (COCO's 17 apply "
        f"to 17-keypoint data only): {how}"
    )


def ultralytics_sigmas(k: int, dims: int = 3) -> tuple[FloatArray, str]:
    """Ultralytics' sigmas when the data gives none: COCO's for ``kpt_shape [17, 3]``,
    otherwise ``1 / K``; with the line that says so."""
    if k == COCO_SIGMAS.shape[0] and dims == 3:
        return COCO_SIGMAS[
            None, :
        ].copy(), "COCO's 17 person-keypoint sigmas (Ultralytics' OKS_SIGMA)"
    return (
        np.full((1, k), 1.0 / k),
        f"Ultralytics' default for kpt_shape [{k}, {dims}]: 1/K = 1/{k} for every keypoint "
        "(give --sigmas or kpt_oks_sigmas for your skeleton's own)",
    )


def keypoint_count(ds: Any) -> int:
    """The K both sides share (a mismatch is an input error)."""
    gk, pk = ds.gt.keypoints, ds.pred.keypoints
    if gk is None or pk is None:
        raise ValueError("keypoint pairs need keypoints on both sides (--iou-type keypoints)")
    if len(ds.gt) and len(ds.pred) and gk.shape[1] != pk.shape[1]:
        raise InputError(
            ds.pred_path,
            None,
            f"predictions have {pk.shape[1]} keypoints per object, the ground truth "
            f"({ds.gt_path}) has {gk.shape[1]}",
        )
    return int(gk.shape[1]) if len(ds.gt) else int(pk.shape[1])


def prepare_keypoints(
    ds: Any, sigmas: npt.ArrayLike | None = None, source: str = "--sigmas", fallback: str = "coco"
) -> Any:
    """``ds`` with its skeleton's sigmas resolved (see :func:`resolve_sigmas`; ``fallback``
    the rule where the data gives none) and K checked."""
    from dataclasses import replace

    from ..data import Skeleton

    k = keypoint_count(ds)
    for role in ("gt", "pred"):  # an empty side takes the other's K (no rows, no K of its own)
        b = getattr(ds, role)
        if len(b) == 0 and b.keypoints is not None and b.keypoints.shape[1] != k:
            ds = replace(ds, **{role: replace(b, keypoints=np.zeros((0, k, 3)))})
    sk = ds.skeleton or Skeleton(k=k)
    labels = [ds.categories.label(c) for c in range(len(ds.categories))]
    file_sigmas = sk.sigmas
    if file_sigmas is not None and file_sigmas.shape[0] not in (1, len(labels)):
        file_sigmas = None
    if file_sigmas is not None and file_sigmas.shape[1] != k:
        raise UsageError(f"{sk.source}: {file_sigmas.shape[1]} sigmas, but K = {k}")
    table, src = resolve_sigmas(
        k,
        labels,
        file_sigmas=file_sigmas,
        file_source=sk.source,
        given=sigmas,
        given_source=source,
        fallback=fallback,
        dims=sk.dims,
    )
    return replace(ds, skeleton=replace(sk, k=k, sigmas=table, source=src, resolved=True))


def resolved_sigmas(ds: Any) -> tuple[FloatArray, str]:
    """The dataset's resolved sigmas (resolving them now if :func:`prepare_keypoints` was
    not called)."""
    sk = ds.skeleton
    if sk is None or not sk.resolved or sk.sigmas is None:
        sk = prepare_keypoints(ds).skeleton
    return sk.sigmas, sk.source
