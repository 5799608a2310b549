"""YOLO prediction column order (loaders/yolo.py column_order), on rows worked by hand.

Ultralytics writes ``class cx cy w h conf``, darknet/globox ``class conf cx cy w h``; the
confidence is the column that is not a plausible box coordinate across the file.
"""

from __future__ import annotations

import numpy as np

from iou_cli.loaders.yolo import column_order

# the five numbers after the class; every box fits its image in its own order
ULTRA = np.array(
    [
        [0.5, 0.5, 0.2, 0.3, 0.9],  # as darknet: cy 0.2, h 0.9 -> cy - h/2 = -0.25: no
        [0.1, 0.8, 0.2, 0.3, 0.4],  # as darknet: cx 0.8, w 0.3 fits; cy 0.2, h 0.4 -> 0.0: yes
        [0.9, 0.1, 0.1, 0.2, 0.7],  # as darknet: cx 0.1, w 0.2 -> 0.0; cy 0.1, h 0.7 -> -0.25: no
    ]
)
DARKNET = ULTRA[:, [4, 0, 1, 2, 3]]
# DARKNET read as Ultralytics: [0.9 0.5 0.5 0.2] cx + w/2 = 1.15: no; [0.4 0.1 0.8 0.2] fits
# (0.0..0.8, 0.0..0.2); [0.7 0.9 0.1 0.1] fits: 1 of 3 misfits


def test_detected_both_ways() -> None:
    assert column_order(ULTRA, "yolo", detect=True) == ("yolo", None)
    assert column_order(DARKNET, "yolo", detect=True) == ("yolo-darknet", None)


def test_tie_keeps_the_default() -> None:
    both = np.array([[0.5, 0.5, 0.5, 0.2, 0.2]])  # a box either way
    assert column_order(both, "yolo", detect=True) == ("yolo", None)
    assert column_order(np.empty((0, 5)), "yolo", detect=True) == ("yolo", None)


def test_forced_order_warns_only_when_the_other_fits_everything() -> None:
    fmt, warning = column_order(DARKNET, "yolo", detect=False)
    assert fmt == "yolo" and warning is not None
    assert (
        "1 of 3 predicted boxes do not fit" in warning and "--pred-format yolo-darknet" in warning
    )
    # forced right: no warning
    assert column_order(ULTRA, "yolo", detect=False) == ("yolo", None)
    assert column_order(DARKNET, "yolo-darknet", detect=False) == ("yolo-darknet", None)
