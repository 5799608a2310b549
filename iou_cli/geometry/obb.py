"""Rotated boxes (OBB): the one corner convention, and the exact IoU of convex quadrilaterals.

Convention (image coordinates: x to the right, y down)::

        c0 ---------- c1        c_k = (cx, cy) + R(angle) @ o_k,  R(a) = [[cos a, -sin a],
        |      w       |                                                  [sin a,  cos a]]
        |h   (cx,cy)   |        o_0 = (-w/2, -h/2)   o_1 = (+w/2, -h/2)
        |              |        o_2 = (+w/2, +h/2)   o_3 = (-w/2, +h/2)
        c3 ---------- c2

``angle`` is in radians; a positive angle turns the x axis towards the y axis, which is
clockwise on screen (y points down). At angle 0, c0 is the top-left corner and the corners go
clockwise on screen: hotcoco's order. Ultralytics' ``xywhr2xyxyxyxy`` gives the same four
points starting at c2 (c2, c1, c0, c3). A row of corners is ``x0 y0 x1 y1 x2 y2 x3 y3``.

IoU is computed on corners: both sides are reduced to convex quadrilaterals turning the same
way, every candidate pair's intersection is clipped at once (Sutherland-Hodgman over NumPy
arrays, one clipping edge at a time) and measured with the shoelace formula around a local
origin (so 1e6-pixel coordinates keep their digits). Only pairs whose axis-aligned boxes
overlap with positive area are clipped. A quadrilateral that is not convex (a dent, or a
self-intersecting "bow tie": annotation errors of this kind exist in DOTA) is replaced by its
convex hull; :func:`convex_quads` reports how many, and callers turn that into a warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

_CHUNK = 1 << 14  # pairs clipped per block: temporaries of about 1 MB, reused from the heap


class ObbWarning(UserWarning):
    """Some quadrilaterals were not convex and were replaced by their convex hull."""


def xywhr_to_corners(boxes: npt.ArrayLike) -> FloatArray:
    """``(N, 5)`` rows ``cx, cy, w, h, angle`` (radians) -> ``(N, 8)`` corners c0..c3."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 5)
    cx, cy, w, h, a = (b[:, k] for k in range(5))
    cos, sin = np.cos(a), np.sin(a)
    out = np.empty((b.shape[0], 8), dtype=np.float64)
    for k, (ox, oy) in enumerate(((-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5))):
        dx, dy = ox * w, oy * h
        out[:, 2 * k] = cx + dx * cos - dy * sin
        out[:, 2 * k + 1] = cy + dx * sin + dy * cos
    return out


def corners_to_xywhr(corners: npt.ArrayLike) -> FloatArray:
    """``(N, 8)`` corners -> ``(N, 5)`` ``cx, cy, w, h, angle``: the inverse of
    :func:`xywhr_to_corners` for rectangles (centre = mean of the corners, ``w = |c1 - c0|``,
    ``h = |c2 - c1|``, ``angle = atan2`` of c0 -> c1, in (-pi, pi]). For a quadrilateral that
    is not a rectangle this is a summary, not the shape: IoU always uses the corners."""
    c = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    centre = c.mean(axis=1)
    e01 = c[:, 1] - c[:, 0]
    e12 = c[:, 2] - c[:, 1]
    w = np.hypot(e01[:, 0], e01[:, 1])
    h = np.hypot(e12[:, 0], e12[:, 1])
    angle = np.arctan2(e01[:, 1], e01[:, 0])
    return np.column_stack([centre, w, h, angle])


def as_quads(boxes: npt.ArrayLike) -> FloatArray:
    """``(N, 5)`` rotated boxes or ``(N, 8)`` corners -> ``(N, 4, 2)`` corner points."""
    b = np.asarray(boxes, dtype=np.float64)
    if b.ndim == 1 and b.shape[0] == 0:
        return np.zeros((0, 4, 2), dtype=np.float64)
    if b.ndim == 3 and b.shape[1:] == (4, 2):
        return b
    if b.ndim != 2 or b.shape[1] not in (5, 8):
        raise ValueError(
            f"rotated boxes: expected an (N, 5) array (cx, cy, w, h, angle) or an (N, 8) array "
            f"of corners, got shape {b.shape}"
        )
    if b.shape[1] == 5:
        b = xywhr_to_corners(b)
    return b.reshape(-1, 4, 2)


def signed_area(q: FloatArray) -> FloatArray:
    """Shoelace area of ``(N, V, 2)`` polygons around their first vertex (positive when the
    vertices turn counter-clockwise in x-right, y-up axes)."""
    if q.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    if q.shape[1] == 4:
        return _quad_area(q)
    d = q - q[:, :1]  # around the first vertex: its wrap-around term is zero
    x, y = d[..., 0], d[..., 1]
    return 0.5 * (x[:, :-1] * y[:, 1:] - x[:, 1:] * y[:, :-1]).sum(axis=1)


XY = tuple[list[FloatArray], list[FloatArray]]


def _xy(q: FloatArray) -> XY:
    """The x and y of each corner of ``(N, 4, 2)`` quads as contiguous columns (one
    transposed copy: the column arithmetic then reads memory in order)."""
    cols = np.ascontiguousarray(q.reshape(q.shape[0], 8).T)
    return [cols[0], cols[2], cols[4], cols[6]], [cols[1], cols[3], cols[5], cols[7]]


def _quad_area(q: FloatArray, xy: XY | None = None) -> FloatArray:
    """:func:`signed_area` of quads, column by column: the same products and the same
    additions in the same order (the row sum of three terms), so the same bits, without
    the strided ``(N, 4, 2)`` temporaries."""
    x, y = _xy(q) if xy is None else xy
    x0, y0 = x[0], y[0]
    dx = [x0 - x0, x[1] - x0, x[2] - x0, x[3] - x0]
    dy = [y0 - y0, y[1] - y0, y[2] - y0, y[3] - y0]
    t0 = dx[0] * dy[1] - dx[1] * dy[0]
    t1 = dx[1] * dy[2] - dx[2] * dy[1]
    t2 = dx[2] * dy[3] - dx[3] * dy[2]
    return 0.5 * ((t0 + t1) + t2)


def polygon_area(corners: npt.ArrayLike) -> FloatArray:
    """Area of ``(N, 8)`` corner rows (their convex hull where a quad is not convex)."""
    q, _ = convex_quads(as_quads(corners))
    return signed_area(q)


def _turns(q: FloatArray, xy: XY | None = None) -> list[FloatArray]:
    """Cross product at each vertex of ``(N, 4, 2)`` quads (the turn direction): edge
    ``i`` runs from vertex ``i`` to ``i + 1``, vertex ``i`` turns from edge ``i - 1``."""
    x, y = _xy(q) if xy is None else xy
    ex = [x[(i + 1) % 4] - x[i] for i in range(4)]
    ey = [y[(i + 1) % 4] - y[i] for i in range(4)]
    return [ex[i - 1] * ey[i] - ey[i - 1] * ex[i] for i in range(4)]


def _hull4(pts: FloatArray) -> FloatArray:
    """Convex hull of 4 points (monotone chain), padded to 4 vertices, counter-clockwise."""
    p = sorted({(float(x), float(y)) for x, y in pts})

    def half(seq: list[tuple[float, float]]) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        for pt in seq:
            while len(out) >= 2:
                (ox, oy), (ax, ay) = out[-2], out[-1]
                if (ax - ox) * (pt[1] - oy) - (ay - oy) * (pt[0] - ox) <= 0:
                    out.pop()
                else:
                    break
            out.append(pt)
        return out

    if len(p) < 3:
        hull = p
    else:
        lower, upper = half(p), half(p[::-1])
        hull = lower[:-1] + upper[:-1]
    if not hull:
        hull = [(float(pts[0, 0]), float(pts[0, 1]))]
    while len(hull) < 4:
        hull.append(hull[-1])
    return np.asarray(hull[:4], dtype=np.float64)


def convex_quads(quads: npt.ArrayLike) -> tuple[FloatArray, BoolArray]:
    """``(N, 4, 2)`` quads -> (the same quads, each made convex and counter-clockwise; a
    boolean mask of those that were not convex and were replaced by their convex hull).

    A quadrilateral whose four turns all have one sign (zeros allowed) is convex; any other
    (a dent or a bow tie) becomes its convex hull (a triangle repeats its last vertex)."""
    q, bad, _ = convex_quads_area(quads)
    return q, bad


def convex_quads_area(
    quads: npt.ArrayLike, *, copy: bool = True
) -> tuple[FloatArray, BoolArray, FloatArray]:
    """:func:`convex_quads` and the :func:`signed_area` of its quads (computed once).
    ``copy=False``: quads that need no change come back as the input itself (read it
    only)."""
    q, bad, area, _ = _convex(quads, copy)
    return q, bad, area


def _convex(quads: npt.ArrayLike, copy: bool) -> tuple[FloatArray, BoolArray, FloatArray, XY]:
    """:func:`convex_quads_area` and the input's corner columns (:func:`_xy`; the hull of
    the points has their extremes, so :func:`aabb` may read them)."""
    q = np.asarray(as_quads(quads), dtype=np.float64)
    owned = copy
    if copy:
        q = np.array(q, copy=True)
    xy = _xy(q)
    if q.shape[0] == 0:
        return q, np.zeros(0, dtype=bool), np.zeros(0, dtype=np.float64), xy
    t0, t1, t2, t3 = _turns(q, xy)
    with np.errstate(invalid="ignore"):
        bad = ~(
            ((t0 >= 0) & (t1 >= 0) & (t2 >= 0) & (t3 >= 0))
            | ((t0 <= 0) & (t1 <= 0) & (t2 <= 0) & (t3 <= 0))
        )
    odd = np.flatnonzero(bad)
    bad[odd] = np.isfinite(q[odd]).all(axis=(1, 2))
    fix = np.flatnonzero(bad)
    if fix.size and not owned:
        q, owned = q.copy(), True
    for i in fix:
        q[i] = _hull4(q[i])
    area = _quad_area(q, xy)  # (the columns are a copy: the hulls are not in them)
    if fix.size:
        area[fix] = signed_area(q[fix])  # row by row: the bits a whole-array call gives
    cw = np.flatnonzero(area < 0)
    if cw.size:
        if not owned:
            q = q.copy()
        q[cw] = q[cw][:, ::-1]
        area[cw] = signed_area(q[cw])
    return q, bad, area, xy


def _immutable(a: FloatArray) -> bool:
    """``a`` views memory nobody can change: its owner (an ndarray) is read-only, and so
    is ``a``."""
    owner = a
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return owner.base is None and not owner.flags.writeable and not a.flags.writeable


_MEMO: list[tuple[FloatArray, FloatArray, BoolArray, FloatArray, FloatArray]] = []
_MEMO_ROWS = 4096  # smaller sides are recomputed (cheaper than comparing)


def convex_geometry(quads: npt.ArrayLike) -> tuple[FloatArray, BoolArray, FloatArray, FloatArray]:
    """:func:`convex_quads_area` and the :func:`aabb` of the quads, as read-only arrays,
    remembered for the last two large inputs (a loader and the matching after it ask for
    the same corners): a remembered answer is given only for the same read-only memory
    (see :func:`_immutable`; the DOTA loader freezes its corners) or for corners equal,
    bit for bit, to a private copy of the ones it was computed from."""
    src = np.asarray(as_quads(quads), dtype=np.float64)
    big = src.shape[0] >= _MEMO_ROWS
    frozen = _immutable(src)
    if big:
        for seen, q, bad, area, box in _MEMO:
            if seen.shape != src.shape:
                continue
            same_memory = frozen and seen.ctypes.data == src.ctypes.data
            if (same_memory and seen.strides == src.strides) or np.array_equal(seen, src):
                return q, bad, area, box
    q, bad, area, box = _convex_blocks(src, copy=not frozen)
    for arr in (q, bad, area, box):
        if arr.flags.writeable:
            arr.setflags(write=False)
    if big:  # (frozen corners are remembered as they are: they cannot change)
        _MEMO.insert(0, (src if frozen else src.copy(), q, bad, area, box))
        del _MEMO[2:]
    return q, bad, area, box


_GEO_BLOCK = 1 << 14  # quads made convex at once: each temporary 128 KiB, reused


def _convex_blocks(
    src: FloatArray, *, copy: bool
) -> tuple[FloatArray, BoolArray, FloatArray, FloatArray]:
    """:func:`_convex` and :func:`aabb` a block of quads at a time (every value is computed
    row by row, so the same bits as in one call): the temporaries stay small and warm
    instead of a dozen fresh arrays of every row. ``copy=False``: quads that need no
    change come back as ``src`` itself."""
    n = src.shape[0]
    if n <= _GEO_BLOCK:
        q, bad, area, xy = _convex(src, copy)
        return q, bad, area, aabb(q, xy)
    bad = np.empty(n, dtype=bool)
    area = np.empty(n, dtype=np.float64)
    box = np.empty((n, 4), dtype=np.float64)
    out = np.array(src, copy=True) if copy else None
    for s in range(0, n, _GEO_BLOCK):
        part = src[s : s + _GEO_BLOCK]
        qb, bad[s : s + _GEO_BLOCK], area[s : s + _GEO_BLOCK], xy = _convex(part, False)
        box[s : s + _GEO_BLOCK] = aabb(qb, xy)
        if qb is not part and out is None:  # a hull or a turn: the quads are copied
            out = np.array(src, copy=True)
        if out is not None:
            out[s : s + _GEO_BLOCK] = qb
    return (src if out is None else out), bad, area, box


def _next(c: FloatArray, last: IntArray) -> FloatArray:
    """Each row's value at the next vertex of its polygon (cyclic over its ``last + 1``
    vertices; padding positions get anything)."""
    out = np.empty_like(c)
    out[:, :-1] = c[:, 1:]
    out[:, -1] = c[:, 0]  # every slot holds a value of the row (never uninitialised memory)
    out[np.arange(c.shape[0]), last] = c[:, 0]
    return out


def _clip_edge(
    px: FloatArray, py: FloatArray, n: IntArray, a: FloatArray, b: FloatArray
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Keep the part of each convex polygon ``(px[k, :n[k]], py[k, :n[k]])`` left of the
    line ``a[k] -> b[k]`` (points on the line are kept); x and y in separate arrays."""
    k, v = px.shape
    valid = np.arange(v)[None, :] < n[:, None]
    last = np.maximum(n - 1, 0)
    ex = (b[:, 0] - a[:, 0])[:, None]
    ey = (b[:, 1] - a[:, 1])[:, None]
    s = ex * (py - a[:, 1:2]) - ey * (px - a[:, 0:1])
    sn = _next(s, last)
    inside = s >= 0
    keep = valid & inside
    cross = valid & (inside != (sn >= 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(cross, s / np.where(cross, s - sn, 1.0), 0.0)
    xx = px + t * (_next(px, last) - px)
    xy = py + t * (_next(py, last) - py)
    # each vertex's kept point, then its crossing: slots in that order
    cnt = keep.astype(np.int64) + cross
    end = np.cumsum(cnt, axis=1)
    new_n = end[:, -1] if v else np.zeros(k, dtype=np.int64)
    width = max(int(new_n.max()) if k else 0, 1)
    start = (end - cnt).ravel()
    ox = np.zeros(k * width, dtype=np.float64)
    oy = np.zeros(k * width, dtype=np.float64)
    fk = np.flatnonzero(keep)
    to = fk // v * width + start[fk]
    ox[to] = px.ravel()[fk]
    oy[to] = py.ravel()[fk]
    fc = np.flatnonzero(cross)
    to = fc // v * width + start[fc] + keep.ravel()[fc]
    ox[to] = xx.ravel()[fc]
    oy[to] = xy.ravel()[fc]
    return ox.reshape(k, width), oy.reshape(k, width), new_n


def _polygon_area(px: FloatArray, py: FloatArray, n: IntArray) -> FloatArray:
    """Shoelace area of padded polygons ``(px[k, :n[k]], py[k, :n[k]])`` (zero below three
    vertices)."""
    k, v = px.shape
    if k == 0 or v == 0:
        return np.zeros(k, dtype=np.float64)
    valid = np.arange(v)[None, :] < n[:, None]
    last = np.maximum(n - 1, 0)
    term = np.where(valid, px * _next(py, last) - _next(px, last) * py, 0.0)
    # summed vertex by vertex, so a polygon's area does not depend on the padded width (the
    # most vertices of any polygon in the call): NumPy's sum(axis=1) groups its additions by
    # the row length, which made a pair's IoU differ in the last bit with the pairs it was
    # computed beside (one image at a time vs the whole file: issue 24's exactness)
    total = term[:, 0].copy()
    for j in range(1, v):
        total += term[:, j]
    return 0.5 * total


def intersection_area(pa: FloatArray, pb: FloatArray) -> FloatArray:
    """Exact intersection area of aligned convex counter-clockwise quads ``(K, 4, 2)``.

    Symmetric to the last bit: each pair is clipped in a canonical order (the
    lexicographically smaller quad is the subject) around an origin both quads share."""
    k = pa.shape[0]
    if k == 0:
        return np.zeros(0, dtype=np.float64)
    fa = pa.reshape(k, 8)
    fb = pb.reshape(k, 8)
    diff = fa != fb
    first = np.argmax(diff, axis=1)
    rows = np.arange(k)
    swap = diff.any(axis=1) & (fa[rows, first] > fb[rows, first])
    subj = np.where(swap[:, None, None], pb, pa)
    clip = np.where(swap[:, None, None], pa, pb)
    origin = np.minimum(subj.min(axis=1), clip.min(axis=1))  # shared by both orders
    subj = subj - origin[:, None, :]
    clip = clip - origin[:, None, :]
    px, py = subj[:, :, 0], subj[:, :, 1]
    n = np.full(k, 4, dtype=np.int64)
    for e in range(4):
        px, py, n = _clip_edge(px, py, n, clip[:, e], clip[:, (e + 1) % 4])
    return np.maximum(_polygon_area(px, py, n), 0.0)


def aabb(q: FloatArray, xy: XY | None = None) -> FloatArray:
    """``(N, 4)`` axis-aligned hulls ``x1 y1 x2 y2`` of ``(N, 4, 2)`` quads."""
    x, y = _xy(q) if xy is None else xy
    out = np.empty((4, q.shape[0]), dtype=np.float64)
    np.minimum(np.minimum(x[0], x[1]), np.minimum(x[2], x[3]), out=out[0])
    np.minimum(np.minimum(y[0], y[1]), np.minimum(y[2], y[3]), out=out[1])
    np.maximum(np.maximum(x[0], x[1]), np.maximum(x[2], x[3]), out=out[2])
    np.maximum(np.maximum(y[0], y[1]), np.maximum(y[2], y[3]), out=out[3])
    return np.ascontiguousarray(out.T)


def indexed_iou(
    qa: FloatArray,
    qb: FloatArray,
    ia: npt.NDArray[np.int64],
    ib: npt.NDArray[np.int64],
    *,
    area_a: FloatArray | None = None,
    area_b: FloatArray | None = None,
    box_a: FloatArray | None = None,
    box_b: FloatArray | None = None,
    crowd: BoolArray | None = None,
    floor: float | None = None,
) -> FloatArray:
    """IoU of the pairs ``(qa[ia[k]], qb[ib[k]])`` of convex counter-clockwise quads
    (:func:`convex_quads` output); per-quad areas and axis-aligned hulls may be given once
    (``area_*``: default the shoelace areas; ``box_*``: :func:`aabb`). ``crowd`` (one flag per
    pair) scores intersection over ``a``'s area (``a`` is the prediction side). Pairs whose
    hulls do not overlap with positive area are 0 without clipping; with ``floor``, so are
    the pairs whose IoU is provably below it (:func:`_below`): for callers that only look at
    IoUs of at least ``floor``."""
    prep = PairGeometry(qa, qb, area_a=area_a, area_b=area_b, box_a=box_a, box_b=box_b)
    return prep.iou(ia, ib, crowd=crowd, floor=floor)


class PairGeometry:
    """Two sides of quads prepared once (areas, hulls, the pre-filter's columns) for
    :meth:`iou` over many blocks of pairs (:func:`indexed_iou` is one block)."""

    def __init__(
        self,
        qa: FloatArray,
        qb: FloatArray,
        *,
        area_a: FloatArray | None = None,
        area_b: FloatArray | None = None,
        box_a: FloatArray | None = None,
        box_b: FloatArray | None = None,
    ) -> None:
        self.qa, self.qb = qa, qb
        self.aa = signed_area(qa) if area_a is None else np.asarray(area_a, dtype=np.float64)
        self.ab = signed_area(qb) if area_b is None else np.asarray(area_b, dtype=np.float64)
        self.ba = aabb(qa) if box_a is None else box_a
        self.bb = aabb(qb) if box_b is None else box_b
        # x first on contiguous columns (gathers from them are cheaper than from strided
        # ones); quads of no area never overlap (an empty x range)
        with np.errstate(invalid="ignore"):
            self.ax1 = np.where(self.aa > 0, self.ba[:, 0], np.inf)
            self.bx1 = np.where(self.ab > 0, self.bb[:, 0], np.inf)
        self.ax2 = np.ascontiguousarray(self.ba[:, 2])
        self.bx2 = np.ascontiguousarray(self.bb[:, 2])

    def iou(
        self,
        ia: npt.NDArray[np.int64],
        ib: npt.NDArray[np.int64],
        *,
        crowd: BoolArray | None = None,
        floor: float | None = None,
    ) -> FloatArray:
        """:func:`indexed_iou` of the pairs ``(ia[k], ib[k])``."""
        qa, qb, aa, ab, ba, bb = self.qa, self.qb, self.aa, self.ab, self.ba, self.bb
        k = ia.shape[0]
        out = np.zeros(k, dtype=np.float64)
        if k == 0:
            return out
        # pre-filter in stages on 1-D gathers (x first, y on the survivors): most pairs of a
        # group are far apart, and whole-row gathers of every pair cost more than the test
        with np.errstate(invalid="ignore"):
            x_lo = np.maximum(self.ax1[ia], self.bx1[ib])
            sel = np.flatnonzero(np.minimum(self.ax2[ia], self.bx2[ib]) > x_lo)
            ja, jb = ia[sel], ib[sel]
            touch_y = np.minimum(ba[ja, 3], bb[jb, 3]) > np.maximum(ba[ja, 1], bb[jb, 1])
        cand = sel[touch_y]  # ascending, as sel is
        if floor is not None and floor > 0 and cand.size:
            cr = None if crowd is None else np.asarray(crowd, dtype=bool)[cand]
            ja, jb = ia[cand], ib[cand]
            cand = cand[~_below(ba[ja], bb[jb], aa[ja], ab[jb], cr, floor)]
        for s in range(0, cand.shape[0], _CHUNK):
            c = cand[s : s + _CHUNK]
            ja, jb = ia[c], ib[c]
            a_c, b_c = aa[ja], ab[jb]
            inter = np.minimum(intersection_area(qa[ja], qb[jb]), np.minimum(a_c, b_c))
            union = a_c + b_c - inter
            if crowd is not None:
                union = np.where(np.asarray(crowd, dtype=bool)[c], a_c, union)
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.where(union > 0, inter / union, 0.0)
            out[c] = np.clip(v, 0.0, 1.0)
        return out


def _below(
    ba: FloatArray,
    bb: FloatArray,
    aa: FloatArray,
    ab: FloatArray,
    crowd: BoolArray | None,
    floor: float,
) -> BoolArray:
    """Pairs (aligned hulls ``ba``/``bb``, areas ``aa``/``ab``, all positive) whose computed
    IoU is certainly below ``floor``, without clipping. The intersection of two polygons
    lies in the intersection of their hulls and in each polygon, so it is at most
    ``u = min(hull overlap, aa, ab)``, and IoU = I / (aa + ab - I) grows with I: IoU <=
    u / (aa + ab - u) (crowd: u / aa). The clipped area can exceed the exact one by rounding
    (a few ulps of the squared extent, around a local origin): ``u`` is widened by 1e-9 of
    the squared extent and the bound by a relative 1e-9, far above any rounding of these
    few operations."""
    x1 = np.maximum(ba[:, 0], bb[:, 0])
    y1 = np.maximum(ba[:, 1], bb[:, 1])
    x2 = np.minimum(ba[:, 2], bb[:, 2])
    y2 = np.minimum(ba[:, 3], bb[:, 3])
    ex = np.maximum(ba[:, 2], bb[:, 2]) - np.minimum(ba[:, 0], bb[:, 0])
    ey = np.maximum(ba[:, 3], bb[:, 3]) - np.minimum(ba[:, 1], bb[:, 1])
    u = np.minimum((x2 - x1) * (y2 - y1) + 1e-9 * (ex * ex + ey * ey), np.minimum(aa, ab))
    union = aa + ab - u
    if crowd is not None:
        union = np.where(crowd, aa, union)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = u / union
    return bound * (1.0 + 1e-9) < floor


def obb_iou(
    a: npt.ArrayLike, b: npt.ArrayLike, *, crowd: npt.ArrayLike | None = None
) -> FloatArray:
    """Pairwise IoU ``(N, M)`` of rotated boxes ``a`` and ``b``.

    Each side is ``(N, 5)`` rows ``cx, cy, w, h, angle`` (radians, the module's convention)
    or ``(N, 8)`` corners ``x0 y0 x1 y1 x2 y2 x3 y3`` in either turning direction. Values are
    exact polygon IoU in [0, 1] and symmetric (``obb_iou(a, b) == obb_iou(b, a).T``).
    ``crowd`` (``M`` booleans) scores those columns as intersection over ``a``'s area.
    A quadrilateral that is not convex is replaced by its convex hull, with an
    :class:`ObbWarning` giving the count.
    """
    qa, bad_a = convex_quads(as_quads(a))
    qb, bad_b = convex_quads(as_quads(b))
    n_bad = int(bad_a.sum() + bad_b.sum())
    if n_bad:
        warnings.warn(
            f"{n_bad} rotated box(es) were not convex quadrilaterals; their convex hull was used",
            ObbWarning,
            stacklevel=2,
        )
    n, m = qa.shape[0], qb.shape[0]
    if n == 0 or m == 0:
        return np.zeros((n, m), dtype=np.float64)
    ba, bb = aabb(qa), aabb(qb)
    with np.errstate(invalid="ignore"):
        ov = (
            np.minimum(ba[:, None, 2], bb[None, :, 2]) > np.maximum(ba[:, None, 0], bb[None, :, 0])
        ) & (
            np.minimum(ba[:, None, 3], bb[None, :, 3]) > np.maximum(ba[:, None, 1], bb[None, :, 1])
        )
    i, j = np.nonzero(ov)
    cr = None
    if crowd is not None:
        cr = np.asarray(crowd, dtype=bool).reshape(m)[j]
    out = np.zeros((n, m), dtype=np.float64)
    out[i, j] = indexed_iou(
        qa, qb, i.astype(np.int64), j.astype(np.int64), box_a=ba, box_b=bb, crowd=cr
    )
    return out
