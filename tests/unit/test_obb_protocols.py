"""Protocols on rotated boxes reduce to the box protocols when every box is axis-aligned:
COCO (pycocotools-exact on boxes) and VOC give the same numbers from the corner column, in
any corner order and turning direction."""

from __future__ import annotations

import numpy as np
import pytest

from iou_cli.api import evaluate_dataset
from iou_cli.data import Boxes, Categories, Dataset, Images
from iou_cli.errors import UsageError

KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"]


def corners(xyxy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The four corners of each box, from a random vertex, either way round."""
    x1, y1, x2, y2 = xyxy.T
    q = np.stack([x1, y1, x2, y1, x2, y2, x1, y2], axis=1).reshape(-1, 4, 2)
    out = np.empty_like(q)
    for i in range(q.shape[0]):
        r = np.roll(q[i], int(rng.integers(0, 4)), axis=0)
        out[i] = r[::-1] if rng.random() < 0.5 else r
    return out.reshape(-1, 8)


def scene(seed: int) -> tuple[Dataset, Dataset]:
    rng = np.random.default_rng(seed)
    n_img, k = 6, 3
    g_img = rng.integers(0, n_img, 60)
    g_xy = rng.integers(0, 300, (60, 2)).astype(float)
    g_wh = rng.choice([6.0, 20.0, 50.0, 120.0], (60, 2))
    g = np.concatenate([g_xy, g_xy + g_wh], axis=1)
    g_cat = rng.integers(0, k, 60)
    crowd = rng.random(60) < 0.05
    diff = rng.random(60) < 0.1
    p_src = rng.integers(0, 60, 150)
    jitter = rng.integers(-4, 5, (150, 4)).astype(float)
    p = g[p_src] + jitter
    p[:, 2:] = np.maximum(p[:, 2:], p[:, :2] + 1)
    p_img, p_cat = g_img[p_src], g_cat[p_src]
    score = np.round(rng.random(150), 1)
    images = Images(
        list(range(n_img)), [None] * n_img, np.full(n_img, 400.0), np.full(n_img, 400.0)
    )
    cats = Categories([1, 2, 3], ["a", "b", "c"])

    def side(xyxy, img, cat, obb, **kw):
        return Boxes.build(xyxy, image=img, category=cat, obb=obb, **kw)

    box = Dataset(
        images,
        cats,
        side(g, g_img, g_cat, None, iscrowd=crowd, difficult=diff),
        side(p, p_img, p_cat, None, score=score),
    )
    rot = Dataset(
        images,
        cats,
        side(g, g_img, g_cat, corners(g, rng), iscrowd=crowd, difficult=diff),
        side(p, p_img, p_cat, corners(p, rng), score=score),
    )
    return box, rot


@pytest.mark.parametrize("seed", range(6))
def test_coco_on_axis_aligned_obb_equals_coco_boxes(seed: int) -> None:
    box, rot = scene(seed)
    a = evaluate_dataset(box, protocol="coco").summary
    b = evaluate_dataset(rot, protocol="coco", iou_type="obb").summary
    for key in KEYS:
        assert (a[key] is None and b[key] is None) or abs(a[key] - b[key]) <= 1e-12, key


@pytest.mark.parametrize("protocol", ["voc", "voc07"])
@pytest.mark.parametrize("seed", range(6))
def test_voc_on_axis_aligned_obb_equals_voc_boxes(seed: int, protocol: str) -> None:
    box, rot = scene(seed)
    a = evaluate_dataset(box, protocol=protocol)
    b = evaluate_dataset(rot, protocol=protocol, iou_type="obb")
    assert a.summary["mAP"] is not None
    assert abs(a.summary["mAP"] - b.summary["mAP"]) <= 1e-12
    for ra, rb in zip(a.per_class, b.per_class, strict=True):
        assert (ra["AP"] is None and rb["AP"] is None) or abs(ra["AP"] - rb["AP"]) <= 1e-12


def test_plus_one_is_refused_on_obb() -> None:
    _, rot = scene(0)
    with pytest.raises(UsageError, match="--plus-one"):
        evaluate_dataset(rot, protocol="voc", iou_type="obb", plus_one=True)


def test_dota_refuses_axis_aligned_boxes() -> None:
    box, _ = scene(0)
    with pytest.raises(UsageError, match="dota"):
        evaluate_dataset(box, protocol="dota")


@pytest.mark.parametrize("seed", range(3))
def test_analyses_on_axis_aligned_obb_equal_box_analyses(seed: int) -> None:
    from iou_cli.analysis.run import AnalysisOptions, analyze

    box, rot = scene(seed)
    a = evaluate_dataset(box, protocol="coco", matches=True)
    b = evaluate_dataset(rot, protocol="coco", iou_type="obb", matches=True)
    opts = AnalysisOptions(tide=True, confusion=True, per_image=True)
    analyze(a, opts)
    analyze(b, opts)
    assert a.extra["tide"] == b.extra["tide"]
    assert a.extra["confusion"] == b.extra["confusion"]
