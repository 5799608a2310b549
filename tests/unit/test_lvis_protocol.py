"""LVIS selection helpers, by hand (lvis-api's rules; the oracle tests check the same
against lvis-api itself)."""

from __future__ import annotations

import numpy as np

from iou_cli.data import Federated
from iou_cli.protocols.lvis import summary, top_per_image


def test_top_per_image_keeps_file_order_on_ties() -> None:
    # image 0: scores .9 .5 .5 .7 .5 -> the best 3 are .9, .7 and the first .5 (row 1):
    # lvis-api's sorted(..., reverse=True) is stable. Image 1 has only two: both kept.
    image = np.array([0, 0, 0, 0, 0, 1, 1])
    score = np.array([0.9, 0.5, 0.5, 0.7, 0.5, 0.1, 0.2])
    assert top_per_image(image, score, 3).tolist() == [1, 1, 0, 1, 0, 1, 1]
    assert top_per_image(image, score, 5).all()
    assert top_per_image(image[:0], score[:0], 3).shape == (0,)


def test_pair_keys_expand_the_csr_rows() -> None:
    ptr = np.array([0, 2, 2, 3])  # image 0: classes 1, 4; image 1: none; image 2: class 0
    cat = np.array([1, 4, 0])
    assert Federated.pair_keys(ptr, cat, 5).tolist() == [1, 4, 10]


def test_group_means_skip_undefined_classes() -> None:
    # T=1, R=2, K=3, A=4: class 0 (rare) undefined, class 1 (common) 0.5 / 0.25, class 2
    # (frequent) 1.0 / 0.0 -> APr None, APc 0.375, APf 0.5, AP (0.5 + 0.25 + 1 + 0) / 4
    p = np.full((1, 2, 3, 4), -1.0)
    p[0, :, 1, :] = [[0.5] * 4, [0.25] * 4]
    p[0, :, 2, :] = [[1.0] * 4, [0.0] * 4]
    r = np.full((1, 3, 4), -1.0)
    r[0, 1:, :] = 0.5
    s = summary(p, r, np.array([0.5]), np.array([0, 1, 2]))
    assert (s["APr"], s["APc"], s["APf"]) == (None, 0.375, 0.5)
    assert s["AP"] == 0.4375 and s["AP50"] == 0.4375 and s["AP75"] is None
    assert s["AR300"] == 0.5
