"""The IoU engine: the seeds' worked examples, pycocotools agreement, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from iou_cli import convert, iou, paired_iou

# ---------------------------------------------------------------- seeds/000 (OD-Metrics)


def test_seed000_worked_example() -> None:
    # (50,100,150,150) vs (105,120,185,160): intersection 45*30 = 1350,
    # union 5000 + 3200 - 1350 = 6850 -> 1350/6850 = 0.19708029...
    got = iou([[50, 100, 150, 150]], [[105, 120, 185, 160]], box_format="xyxy")
    assert got.shape == (1, 1)
    assert got[0, 0] == 1350 / 6850
    assert round(float(got[0, 0]), 8) == 0.19708029


def test_seed000_crowd_is_intersection_over_prediction_area() -> None:
    # crowd: |a ∩ b| / |a| = 1350 / 5000
    got = iou([[50, 100, 150, 150]], [[105, 120, 185, 160]], iscrowd=[1])
    assert got[0, 0] == 1350 / 5000


# ---------------------------------------------------------------- seeds/001 (Kolena)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([0, 0, 10, 10], [5, 5, 15, 15], 25 / 175),  # example 1: 0.143
        ([0, 0, 10, 10], [10, 10, 15, 15], 0.0),  # example 2: disjoint (touching corner)
        ([0, 0, 10, 10], [0, 0, 10, 10], 1.0),  # example 3: identical
    ],
)
def test_seed001_examples(a: list[float], b: list[float], expected: float) -> None:
    assert iou([a], [b])[0, 0] == expected


# ---------------------------------------------------------------- seeds/002 (PyTorch tutorial)

# 'mid' = cxcywh, 'corners' = xyxy. Expected values are the tutorial's, rounded to 4 places
# there, except where noted: the tutorial clamps intersection corners at 0 (clamp(0)) and adds
# 1e-8 to the union, which is wrong for boxes reaching negative coordinates.
TUTORIAL: list[tuple[list[float], list[float], float, str, tuple[int, ...]]] = [
    ([2.5, 3.5, 3, 5], [3.5, 6, 3, 6], 0.2222, "cxcywh", (3, 3, 3)),
    ([0.25, 0.35, 0.3, 0.5], [0.35, 0.6, 0.3, 0.6], 0.2222, "cxcywh", (1,)),
    ([0.2, 0.2, 0.2, 0.2], [0.5, 0.5, 0.4, 0.4], 0.0, "cxcywh", (1,)),
    ([0.2, 0.2, 0.2, 0.2], [0.2, 0.2, 0.2, 0.2], 1.0, "cxcywh", (1,)),
    ([0.78, 0.095, 0.2, 0.2], [0.88, 0.1, 0.2, 0.2], 0.3223, "cxcywh", (3, 3, 3)),
    ([0.95, 0.6, 0.5, 0.2], [0.95, 0.7, 0.3, 0.2], 0.2308, "cxcywh", (3, 3, 3)),
    ([0.25, 0.15, 0.3, 0.1], [0.25, 0.35, 0.3, 0.1], 0.0, "cxcywh", (3, 3, 3)),
    ([0.5, 0.5, 0.2, 0.2], [0.5, 0.5, 0.2, 0.2], 1.0, "cxcywh", (3, 3, 3)),
    ([0.7, 0.95, 0.6, 0.1], [0.5, 1.15, 0.4, 0.7], 0.0968, "cxcywh", (3, 3, 3)),
    # seed case 9, first box: the tutorial expects 0.5319 because clamp(0) moves the
    # corner (1 - 1.5, 1 - 1.5) = (-0.5, -0.5) to (0, 0). Exact: intersection
    # [-0.4, 2.6] x [-0.4, 2.5] ∩ [-0.5, 2.5]^2 = 2.9 * 2.8 = 8.12; union 9 + 8.88 - 8.12
    # = 9.76 ... with a = 3x3 = 9, b = 3x3 = 9: union 9 + 9 - 8.12 = 9.88 -> 8.12 / 9.88
    ([1, 1, 3, 3], [1.2, 1.1, 3, 3], 8.12 / 9.88, "cxcywh", (3, 7, 7)),
    ([2, 2, 5, 5], [2, 3, 2, 2], 0.16, "cxcywh", (3, 7, 7)),
    ([5, 5, 5, 5], [5, 5, 5, 5], 1.0, "cxcywh", (3, 7, 7)),
    ([1, 1, 3, 3], [2, 3, 2, 2], 0.0612, "cxcywh", (3, 7, 7)),
    # seed case 10, second box: the tutorial expects 0.2252 (clamp(0) again). Exact:
    # a = [-0.5, 4.5]^2 (25), b = [-0.5, 2.5]^2 (9): intersection 9, union 25 -> 0.36
    ([2, 2, 5, 5], [1, 1, 3, 3], 0.36, "cxcywh", (3, 7, 7)),
    ([5, 5, 5, 5], [0, 0, 0, 0], 0.0, "cxcywh", (3, 7, 7)),
    ([0.3, 0.3, 0.3, 0.3], [0.3, 0.3, 0.3, 0.3], 1.0, "cxcywh", (3, 7, 7)),
    ([3, 3, 3, 3], [2, 3, 2, 2], 0.3, "cxcywh", (3, 7, 7)),
    ([3, 3, 3, 3], [0, 0, 0, 0], 0.0, "cxcywh", (3, 7, 7)),
    ([0.2, 0.2, 0.5, 0.5], [0.2, 0.2, 0.6, 0.5], 0.75, "xyxy", (3, 3, 3)),
    ([0.2, 0.2, 0.5, 0.5], [0.2, 0.2, 0.5, 0.5], 1.0, "xyxy", (1,)),
    ([0.2, 0.2, 0.4, 0.4], [0.4, 0.2, 0.6, 0.4], 0.0, "xyxy", (3, 3, 3)),
    ([0.2, 0.2, 0.4, 0.4], [0.2, 0.4, 0.4, 0.6], 0.0, "xyxy", (3, 3, 3)),
]


@pytest.mark.parametrize(("a", "b", "expected", "fmt", "shape"), TUTORIAL)
def test_seed002_tutorial_batched(
    a: list[float], b: list[float], expected: float, fmt: str, shape: tuple[int, ...]
) -> None:
    A = np.broadcast_to(np.asarray(a, dtype=float), (*shape, 4))
    B = np.broadcast_to(np.asarray(b, dtype=float), (*shape, 4))
    got = paired_iou(A, B, box_format=fmt)
    assert got.shape == shape
    # the tutorial's values are rounded to 4 places; exact ones (fractions) to 1e-12
    tol = 5e-5 if expected not in (0.0, 1.0, 0.16, 0.36, 0.3, 0.75, 8.12 / 9.88) else 1e-12
    assert np.allclose(got, expected, atol=tol, rtol=0)


def test_seed002_exact_values_differ_from_the_tutorials_clamped_ones() -> None:
    got = paired_iou(
        [[1, 1, 3, 3], [2, 2, 5, 5]], [[1.2, 1.1, 3, 3], [1, 1, 3, 3]], box_format="cxcywh"
    )
    assert abs(got[0] - 0.5319) > 0.2 and abs(got[1] - 0.2252) > 0.1


# ---------------------------------------------------------------- seeds/003 and 004


def test_seed003_numpy_batch_version_without_epsilon() -> None:
    # element-wise over rows; the seed adds 1e-5 to the union, we do not: exact fractions
    a = np.array([[0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 2, 2]])
    b = np.array([[5, 5, 15, 15], [20, 20, 30, 30], [1, 1, 3, 3]])
    assert paired_iou(a, b).tolist() == [25 / 175, 0.0, 1 / 7]


def test_seed004_ssd_pairwise_m_by_n() -> None:
    a = np.array([[0, 0, 10, 10], [5, 5, 15, 15]])
    b = np.array([[0, 0, 10, 10], [5, 5, 15, 15], [100, 100, 110, 110]])
    expected = np.array([[1.0, 25 / 175, 0.0], [25 / 175, 1.0, 0.0]])
    assert np.array_equal(iou(a, b), expected)


# ---------------------------------------------------------------- edge cases


def test_empty_inputs_have_empty_shapes() -> None:
    assert iou([], [[0, 0, 1, 1]]).shape == (0, 1)
    assert iou([[0, 0, 1, 1]], np.zeros((0, 4))).shape == (1, 0)
    assert paired_iou(np.zeros((0, 4)), np.zeros((0, 4))).shape == (0,)


def test_zero_area_union_is_zero_and_touching_is_zero() -> None:
    assert iou([[1, 1, 1, 1]], [[1, 1, 1, 1]])[0, 0] == 0.0
    assert iou([[0, 0, 1, 1]], [[1, 0, 2, 1]])[0, 0] == 0.0


def test_negative_coordinates_are_not_clamped() -> None:
    # [-2, 2]^2 vs [-1, 3]^2: intersection 3*3 = 9, union 16 + 16 - 9 = 23
    assert iou([[-2, -2, 2, 2]], [[-1, -1, 3, 3]])[0, 0] == 9 / 23


@pytest.mark.parametrize(
    ("box", "message"),
    [
        ([[5, 0, 1, 1]], "row 0 is inverted"),
        ([[0, 0, np.nan, 1]], "row 0 has a non-finite value"),
        ([[0, 0, 1, 1], [0, 0, np.inf, 1]], "row 1 has a non-finite value"),
        ([[0, 0, 1]], "expected shape"),
    ],
)
def test_bad_boxes_raise_value_error_naming_the_row(box: list[list[float]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        iou(box, [[0, 0, 1, 1]])


def test_any_real_dtype_and_lists() -> None:
    a = np.array([[0, 0, 4, 4]], dtype=np.int16)
    b = ((2, 2, 6, 6),)
    assert iou(a, b, box_format="xyxy")[0, 0] == 4 / 28


# ---------------------------------------------------------------- pycocotools agreement


@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_pycocotools_mask_iou(seed: int) -> None:
    from pycocotools import mask as mask_utils

    rng = np.random.default_rng(seed)
    n, m = 300, 200
    dt = np.c_[rng.uniform(-50, 500, (n, 2)), rng.uniform(0, 200, (n, 2))]
    gt = np.c_[rng.uniform(-50, 500, (m, 2)), rng.uniform(0, 200, (m, 2))]
    # integer boxes too, so that many IoUs are exact fractions
    dt[: n // 2] = np.round(dt[: n // 2])
    gt[: m // 2] = np.round(gt[: m // 2])
    crowd = rng.random(m) < 0.3
    for flags in (np.zeros(m, dtype=bool), crowd):
        ref = mask_utils.iou(dt.tolist(), gt.tolist(), flags.astype(np.uint8).tolist())
        got = iou(dt, gt, box_format="xywh", iscrowd=flags)
        assert np.abs(got - ref).max() <= 1e-12
        # in fact bit-identical (the public API clips pycocotools' rare 1 + ulp to 1)
        assert np.array_equal(got, np.minimum(ref, 1.0))


# ---------------------------------------------------------------- properties

coord = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)
size = st.floats(0, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def xywh_boxes(draw: st.DrawFn, n: int) -> np.ndarray:
    xy = draw(arrays(np.float64, (n, 2), elements=coord))
    wh = draw(arrays(np.float64, (n, 2), elements=size))
    return np.c_[xy, wh]


@given(xywh_boxes(6), xywh_boxes(5))
def test_bounds_and_symmetry(a: np.ndarray, b: np.ndarray) -> None:
    m = iou(a, b, box_format="xywh")
    assert ((m >= 0) & (m <= 1)).all()
    assert np.allclose(m, iou(b, a, box_format="xywh").T, rtol=0, atol=1e-12)


@given(xywh_boxes(4), xywh_boxes(4))
@example(np.full((4, 4), [8192.0, 8192.0, 1.0, 1.0]), np.full((4, 4), [8192.0, 8192.0, 0.95, 0.95]))
def test_crowd_iou_is_at_least_plain_iou(a: np.ndarray, b: np.ndarray) -> None:
    plain = iou(a, b, box_format="xywh")
    crowd = iou(a, b, box_format="xywh", iscrowd=[True] * 4)
    # crowd >= plain holds exactly only while intersection <= the ground truth's area; the corners
    # x + w are rounded to the coordinates' ulp, so the intersection can exceed the area by about
    # ulp(|x| + w) / w relatively (x = 8192, w = 0.95: 1.2e-12). Allow that, per ground truth.
    scale = np.abs(b[:, :2]).max(axis=1) + b[:, 2:].max(axis=1)
    side = np.maximum(b[:, 2:].min(axis=1), 1e-300)
    tol = 1e-12 + 4 * np.finfo(float).eps * scale / side
    assert (crowd >= plain - tol[None, :]).all()
    assert ((crowd >= 0) & (crowd <= 1 + 1e-12)).all()


@given(
    st.integers(-100, 100),
    st.integers(-100, 100),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([1, 2, 4, 8]),
)
def test_invariant_under_translation_and_axis_scaling(dx: int, dy: int, sx: int, sy: int) -> None:
    a = np.array([[0, 0, 10, 10], [3, 4, 9, 20]], dtype=float)
    b = np.array([[5, 5, 15, 15], [0, 0, 6, 6], [2, 2, 3, 3]], dtype=float)
    base = iou(a, b)
    t = np.array([dx, dy, dx, dy])
    s = np.array([sx, sy, sx, sy])
    # integer coordinates and power-of-two scales keep every value exact
    assert np.array_equal(iou(a + t, b + t), base)
    assert np.array_equal(iou(a * s, b * s), base)


@given(xywh_boxes(5))
def test_format_round_trips(boxes: np.ndarray) -> None:
    for fmt in ("xyxy", "cxcywh"):
        back = convert(convert(boxes, "xywh", fmt), fmt, "xywh")
        assert np.allclose(back, boxes, rtol=1e-9, atol=1e-6)


@given(xywh_boxes(5), xywh_boxes(5))
def test_pairwise_diagonal_equals_elementwise(a: np.ndarray, b: np.ndarray) -> None:
    assert np.array_equal(
        np.diag(iou(a, b, box_format="xywh")), paired_iou(a, b, box_format="xywh")
    )


def test_subnormal_sizes_give_zero_not_nan() -> None:
    # found by hypothesis: w*h underflows to 0 while w, h > 0; 0/0 must not leak out as NaN
    tiny = 4.17583907e-229
    box = [[tiny, tiny, tiny, tiny]]
    assert iou(box, box, box_format="xywh")[0, 0] == 0.0
    assert paired_iou(box, box, box_format="xywh")[0] == 0.0
