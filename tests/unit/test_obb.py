"""Rotated-box IoU against shapely (exact polygon overlay) and the corner convention against
Ultralytics' ``xywhr2xyxyxyxy`` (restated below from its source) and hotcoco's corners."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from iou_cli.geometry.obb import (
    ObbWarning,
    convex_quads,
    corners_to_xywhr,
    obb_iou,
    xywhr_to_corners,
)

shapely = pytest.importorskip(
    "shapely", reason="shapely is the test oracle (pip install '.[test]')"
)
from shapely.geometry import Polygon  # noqa: E402

EPS = 1e-9  # the bound to shapely


def shapely_iou(a: np.ndarray, b: np.ndarray, crowd: np.ndarray | None = None) -> np.ndarray:
    """The oracle: shapely's overlay area on each quad's convex hull (the documented rule)."""
    pa = [Polygon(q.reshape(4, 2)).convex_hull for q in a]
    pb = [Polygon(q.reshape(4, 2)).convex_hull for q in b]
    out = np.zeros((len(pa), len(pb)))
    for i, p in enumerate(pa):
        for j, q in enumerate(pb):
            inter = p.intersection(q).area
            union = p.area if crowd is not None and crowd[j] else p.area + q.area - inter
            out[i, j] = inter / union if union > 0 else 0.0
    return out


def ultralytics_xywhr2xyxyxyxy(x: np.ndarray) -> np.ndarray:
    """Ultralytics ``ops.xywhr2xyxyxyxy`` (NumPy branch), restated: pt1 = ctr + v1 + v2, pt2 =
    ctr + v1 - v2, pt3 = ctr - v1 - v2, pt4 = ctr - v1 + v2 with v1 = w/2 (cos, sin) and
    v2 = h/2 (-sin, cos)."""
    ctr = x[:, :2]
    w, h, a = x[:, 2:3], x[:, 3:4], x[:, 4:5]
    v1 = np.concatenate([w / 2 * np.cos(a), w / 2 * np.sin(a)], -1)
    v2 = np.concatenate([-h / 2 * np.sin(a), h / 2 * np.cos(a)], -1)
    return np.stack([ctr + v1 + v2, ctr + v1 - v2, ctr - v1 - v2, ctr - v1 + v2], -2)


def rand_boxes(rng: np.random.Generator, n: int, offset: float = 0.0) -> np.ndarray:
    return np.column_stack(
        [
            rng.uniform(0, 60, n) + offset,
            rng.uniform(0, 60, n) + offset,
            rng.uniform(0.5, 30, n),
            rng.uniform(0.5, 30, n),
            rng.uniform(-4, 4, n),
        ]
    )


def test_convention_matches_ultralytics_and_hotcoco() -> None:
    rng = np.random.default_rng(1)
    b = rand_boxes(rng, 50)
    ours = xywhr_to_corners(b).reshape(-1, 4, 2)
    ultra = ultralytics_xywhr2xyxyxyxy(b)
    # same four points: Ultralytics starts at our c2 and goes c2, c1, c0, c3
    np.testing.assert_allclose(ultra, ours[:, [2, 1, 0, 3]], rtol=0, atol=1e-12)
    # a positive angle turns x towards y (clockwise on screen): at +90 degrees the w side is
    # vertical and c0 (top-left at 0) moves to the top-right
    c = xywhr_to_corners([[0, 0, 4, 2, math.pi / 2]]).reshape(4, 2)
    np.testing.assert_allclose(c, [[1, -2], [1, 2], [-1, 2], [-1, -2]], atol=1e-12)
    np.testing.assert_allclose(corners_to_xywhr(xywhr_to_corners(b)), _wrap(b), atol=1e-9)


def _wrap(b: np.ndarray) -> np.ndarray:
    out = b.copy()
    out[:, 4] = np.arctan2(np.sin(b[:, 4]), np.cos(b[:, 4]))
    return out


def test_convention_matches_hotcoco_corner_order() -> None:
    browse = pytest.importorskip("hotcoco.browse", reason="hotcoco is in the test extra")
    rng = np.random.default_rng(2)
    for row in rand_boxes(rng, 20):
        ref = np.asarray(browse._obb_to_corners(list(row)))
        np.testing.assert_allclose(xywhr_to_corners(row[None]).reshape(4, 2), ref, atol=1e-12)


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_random_pairs_match_shapely(offset: float) -> None:
    rng = np.random.default_rng(3)
    a = xywhr_to_corners(rand_boxes(rng, 120, offset))
    b = xywhr_to_corners(rand_boxes(rng, 90, offset))
    ours = obb_iou(a, b)
    ref = shapely_iou(a, b)
    assert (ref > 0).sum() > 500  # the scene really overlaps
    assert np.abs(ours - ref).max() <= EPS
    assert np.array_equal(obb_iou(b, a), ours.T)  # symmetric to the last bit
    assert ours.min() >= 0 and ours.max() <= 1


def test_five_column_input_equals_corners() -> None:
    rng = np.random.default_rng(4)
    b = rand_boxes(rng, 40)
    np.testing.assert_array_equal(obb_iou(b, b), obb_iou(xywhr_to_corners(b), xywhr_to_corners(b)))


SQ = [0, 0, 10, 0, 10, 10, 0, 10]
DEGENERATE = {
    "identical": (SQ, SQ, 1.0),
    "identical_other_turning": (SQ, [0, 10, 10, 10, 10, 0, 0, 0], 1.0),
    "identical_other_start": (SQ, [10, 10, 0, 10, 0, 0, 10, 0], 1.0),
    "nested": (SQ, [2, 2, 6, 2, 6, 6, 2, 6], 16 / 100),
    "shared_edge": (SQ, [10, 0, 20, 0, 20, 10, 10, 10], 0.0),
    "touching_corner": (SQ, [10, 10, 20, 10, 20, 20, 10, 20], 0.0),
    "diamond_touching_corner": (SQ, [15, 10, 20, 15, 15, 20, 10, 15], 0.0),
    "zero_area_segment": (SQ, [0, 5, 10, 5, 10, 5, 0, 5], 0.0),
    "zero_area_point": (SQ, [5, 5, 5, 5, 5, 5, 5, 5], 0.0),
    "both_zero_area": ([1, 1, 2, 2, 3, 3, 4, 4], [1, 1, 2, 2, 3, 3, 4, 4], 0.0),
    "collinear_edges": (SQ, [5, 0, 15, 0, 15, 10, 5, 10], 50 / 150),
    "half_overlap_collinear_x": (SQ, [0, 5, 10, 5, 10, 15, 0, 15], 50 / 150),
    "triangle_as_quad": (SQ, [0, 0, 10, 0, 5, 0, 0, 10], None),
    "diamond_in_square": (SQ, [5, 0, 10, 5, 5, 10, 0, 5], 0.5),
    "far_apart": (SQ, [100, 100, 110, 100, 110, 110, 100, 110], 0.0),
    "huge_coords": (
        [1e6, 1e6, 1e6 + 10, 1e6, 1e6 + 10, 1e6 + 10, 1e6, 1e6 + 10],
        [1e6 + 5, 1e6, 1e6 + 15, 1e6, 1e6 + 15, 1e6 + 10, 1e6 + 5, 1e6 + 10],
        50 / 150,
    ),
}


@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_degenerate_pairs(name: str) -> None:
    a, b, expected = DEGENERATE[name]
    qa, qb = np.asarray([a], float), np.asarray([b], float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ObbWarning)
        ours = obb_iou(qa, qb)[0, 0]
        back = obb_iou(qb, qa)[0, 0]
    ref = shapely_iou(qa, qb)[0, 0]
    assert abs(ours - ref) <= EPS
    if expected is not None:
        assert abs(ours - expected) <= EPS
    assert ours == back
    assert 0.0 <= ours <= 1.0


@pytest.mark.parametrize(
    "angle", [0.0, 1e-12, -1e-12, math.pi / 2, math.pi / 2 + 1e-12, math.pi, math.pi - 1e-12]
)
def test_angles_near_axes(angle: float) -> None:
    rng = np.random.default_rng(5)
    a = np.column_stack(
        [
            rng.uniform(0, 20, 30),
            rng.uniform(0, 20, 30),
            np.full(30, 8.0),
            np.full(30, 5.0),
            np.full(30, angle),
        ]
    )
    b = a.copy()
    b[:, 4] = 0.0
    b[:, 0] += 1.5
    ca, cb = xywhr_to_corners(a), xywhr_to_corners(b)
    assert np.abs(obb_iou(ca, cb) - shapely_iou(ca, cb)).max() <= EPS
    # a box turned by pi covers the same points
    if angle == math.pi:
        same = a * [1, 1, 1, 1, 0]
        np.testing.assert_allclose(np.diag(obb_iou(a, same)), 1.0, atol=1e-12)


def test_non_convex_uses_hull_with_warning() -> None:
    dent = [0, 0, 10, 0, 5, 2, 10, 10]  # vertex 2 dents inward
    bowtie = [0, 0, 10, 10, 10, 0, 0, 10]  # self-intersecting
    quads = np.asarray([dent, bowtie, SQ], float)
    fixed, bad = convex_quads(quads.reshape(-1, 4, 2))
    assert bad.tolist() == [True, True, False]
    with pytest.warns(ObbWarning, match="2 rotated box"):
        ours = obb_iou(quads, np.asarray([SQ, [2, 2, 8, 2, 8, 8, 2, 8]], float))
    ref = shapely_iou(quads, np.asarray([SQ, [2, 2, 8, 2, 8, 8, 2, 8]], float))
    assert np.abs(ours - ref).max() <= EPS
    assert ours[1, 0] == 1.0  # the bow tie's hull is the square


def test_crowd_is_intersection_over_prediction() -> None:
    rng = np.random.default_rng(6)
    a = xywhr_to_corners(rand_boxes(rng, 30))
    b = xywhr_to_corners(rand_boxes(rng, 20))
    crowd = np.arange(20) % 3 == 0
    assert np.abs(obb_iou(a, b, crowd=crowd) - shapely_iou(a, b, crowd)).max() <= EPS


def test_empty_and_bad_shapes() -> None:
    assert obb_iou(np.zeros((0, 5)), np.zeros((3, 5))).shape == (0, 3)
    assert obb_iou(np.zeros((2, 8)), np.zeros((0, 8))).shape == (2, 0)
    with pytest.raises(ValueError, match=r"\(N, 5\)"):
        obb_iou(np.zeros((2, 7)), np.zeros((2, 8)))


def test_public_api_exports_obb_iou() -> None:
    import iou_cli

    assert iou_cli.obb_iou is obb_iou


def test_arbitrary_quadrilaterals_match_shapely() -> None:
    """DOTA quads are not always rectangles: random 4-point quads (a share of them not convex:
    the hull rule) against shapely's overlay of the same hulls."""
    rng = np.random.default_rng(7)
    centre = rng.uniform(0, 40, (150, 1, 2))
    quads = (centre + rng.uniform(-12, 12, (150, 4, 2))).reshape(-1, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ObbWarning)
        ours = obb_iou(quads[:80], quads[80:])
    ref = shapely_iou(quads[:80], quads[80:])
    assert (ref > 0).sum() > 300
    assert np.abs(ours - ref).max() <= EPS


def test_rigid_motion_and_scale_leave_iou_unchanged() -> None:
    rng = np.random.default_rng(8)
    a = xywhr_to_corners(rand_boxes(rng, 40)).reshape(-1, 4, 2)
    b = xywhr_to_corners(rand_boxes(rng, 30)).reshape(-1, 4, 2)
    base = obb_iou(a.reshape(-1, 8), b.reshape(-1, 8))
    for _ in range(5):
        t = rng.uniform(-1e4, 1e4, 2)
        th = rng.uniform(-np.pi, np.pi)
        s = rng.uniform(0.01, 100)
        r = s * np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        moved = obb_iou((a @ r.T + t).reshape(-1, 8), (b @ r.T + t).reshape(-1, 8))
        assert np.abs(moved - base).max() <= EPS


@pytest.mark.slow
def test_many_random_pairs_match_shapely() -> None:
    """`make test-slow`: 40,000 pairs of rotated rectangles and 10,000 arbitrary quads."""
    rng = np.random.default_rng(9)
    a = xywhr_to_corners(rand_boxes(rng, 200))
    b = xywhr_to_corners(rand_boxes(rng, 200))
    assert np.abs(obb_iou(a, b) - shapely_iou(a, b)).max() <= EPS
    centre = rng.uniform(0, 60, (200, 1, 2))
    quads = (centre + rng.uniform(-15, 15, (200, 4, 2))).reshape(-1, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ObbWarning)
        ours = obb_iou(quads[:100], quads[100:])
    assert np.abs(ours - shapely_iou(quads[:100], quads[100:])).max() <= EPS
