"""Probabilistic IoU (probiou) of rotated boxes: Ultralytics' OBB similarity.

Each rotated box ``cx, cy, w, h, angle`` is read as a 2-D Gaussian (mean the centre,
covariance ``R diag(w²/12, h²/12) Rᵀ``); two boxes' similarity is ``1 - sqrt(1 - exp(-Bd) +
eps)`` with ``Bd`` their Bhattacharyya distance clamped to ``[eps, 100]`` and ``eps = 1e-7``
(Llerena et al. 2021, arXiv 2106.06072). It is not the overlap of the polygons: two boxes
with the same centre and covariance score 1 whatever their shapes (a square and the same
square turned by 45 degrees), and boxes that do not touch still score above 0.

:func:`probiou` follows the order of operations of Ultralytics' ``batch_probiou``
(``utils/metrics.py``, read, not copied) so that in float32 it gives the numbers its OBB
validator compares with the thresholds (trigonometry, ``log`` and ``exp`` are computed in
float64 and rounded: torch's float32 versions may differ from that by one unit in the last
place). :func:`min_area_rect` is how Ultralytics summarises a labelled quadrilateral
(``cv2.minAreaRect`` in ``xyxyxyxy2xywhr``): the smallest rectangle around it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.floating]


def min_area_rect(corners: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``(N, 8)`` corners -> ``(N, 5)`` ``cx, cy, w, h, angle`` of the smallest rectangle
    containing each quadrilateral (one of its sides lies on an edge of the convex hull, so
    the four edge directions are tried). A rectangle comes back as itself (up to rounding;
    ``w``/``h`` and the angle may be swapped by a quarter turn, which is the same box)."""
    from .obb import convex_quads

    c, _ = convex_quads(np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2))  # the hull
    n = c.shape[0]
    best = np.full(n, np.inf)
    out = np.zeros((n, 5), dtype=np.float64)
    for k in range(4):
        e = c[:, (k + 1) % 4] - c[:, k]
        length = np.hypot(e[:, 0], e[:, 1])
        ok = length > 0
        u = e / np.where(ok, length, 1.0)[:, None]
        pu = c[..., 0] * u[:, None, 0] + c[..., 1] * u[:, None, 1]  # along the edge
        pv = -c[..., 0] * u[:, None, 1] + c[..., 1] * u[:, None, 0]  # across it
        lo_u, hi_u, lo_v, hi_v = pu.min(1), pu.max(1), pv.min(1), pv.max(1)
        w, h = hi_u - lo_u, hi_v - lo_v
        area = np.where(ok, w * h, np.inf)
        take = area < best
        mu, mv = (lo_u + hi_u) / 2, (lo_v + hi_v) / 2
        cx = mu * u[:, 0] - mv * u[:, 1]
        cy = mu * u[:, 1] + mv * u[:, 0]
        angle = np.arctan2(u[:, 1], u[:, 0])
        out[take] = np.column_stack([cx, cy, w, h, angle])[take]
        best = np.where(take, area, best)
    flat = ~np.isfinite(best)  # all four corners on one point: a point box
    out[flat, :2] = c[flat].mean(axis=1)
    return out


def _cov(b: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Covariance terms ``(a, b, c)`` of ``[[a, c], [c, b]]`` in Ultralytics' order."""
    t = b.dtype.type
    a0, b0 = b[:, 2] * b[:, 2] / t(12), b[:, 3] * b[:, 3] / t(12)
    r = b[:, 4].astype(np.float64)
    cos, sin = np.cos(r).astype(b.dtype), np.sin(r).astype(b.dtype)
    cos2, sin2 = cos * cos, sin * sin
    return a0 * cos2 + b0 * sin2, a0 * sin2 + b0 * cos2, (a0 - b0) * cos * sin


def probiou(gt: npt.ArrayLike, pred: npt.ArrayLike, dtype: type = np.float32) -> FloatArray:
    """``(G, D)`` probiou of ``(G, 5)`` and ``(D, 5)`` ``cx, cy, w, h, angle`` rows (angle in
    radians), computed in ``dtype`` (float32: Ultralytics' numbers)."""
    g: FloatArray = np.asarray(gt, dtype=np.float64).reshape(-1, 5).astype(dtype)
    p: FloatArray = np.asarray(pred, dtype=np.float64).reshape(-1, 5).astype(dtype)
    t = g.dtype.type
    eps = t(1e-7)
    with np.errstate(all="ignore"):  # as torch: inf and nan flow on, no warning
        x1, y1 = g[:, 0, None], g[:, 1, None]
        x2, y2 = p[None, :, 0], p[None, :, 1]
        a1, b1, c1 = (v[:, None] for v in _cov(g))
        a2, b2, c2 = (v[None, :] for v in _cov(p))
        sa, sb, sc = a1 + a2, b1 + b2, c1 + c2
        dy, dx = y1 - y2, x1 - x2
        den = sa * sb - sc * sc + eps
        t1 = ((sa * (dy * dy) + sb * (dx * dx)) / den) * t(0.25)
        t2 = ((sc * (x2 - x1) * dy) / den) * t(0.5)
        d1 = np.maximum(a1 * b1 - c1 * c1, t(0))
        d2 = np.maximum(a2 * b2 - c2 * c2, t(0))
        q = (sa * sb - sc * sc) / (t(4) * np.sqrt(d1 * d2) + eps) + eps
        t3 = np.log(q.astype(np.float64)).astype(g.dtype) * t(0.5)
        bd = np.clip(t1 + t2 + t3, eps, t(100.0))
        e = np.exp(-bd.astype(np.float64)).astype(g.dtype)
        hd = np.sqrt(t(1.0) - e + eps)
    out: FloatArray = t(1) - hd
    return out
