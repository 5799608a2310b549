"""YOLO prediction column order (loaders/yolo.py column_order), on rows worked by hand.

Ultralytics writes ``class cx cy w h conf``, darknet/globox ``class conf cx cy w h``; the
confidence is the column that is not a plausible box coordinate across the file.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_cli.errors import UsageError
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
    assert column_order(ULTRA, "yolo", detect=True) == ("yolo", None, None)
    assert column_order(DARKNET, "yolo", detect=True) == ("yolo-darknet", None, None)


def test_a_tie_is_decided_by_evidence_or_refused() -> None:
    # every box fits either way: one row gives no evidence, the order cannot be told
    both = np.array([[0.5, 0.5, 0.5, 0.2, 0.2]])
    with pytest.raises(UsageError, match=r"--pred-format yolo .*--pred-format yolo-darknet"):
        column_order(both, "yolo", detect=True)
    assert column_order(np.empty((0, 5)), "yolo", detect=True) == ("yolo", None, None)
    # two boxes of one file, both fitting either way: in Ultralytics order the confidence
    # (last column) descends, 0.3 then 0.2; read as darknet it would be 0.5 then 0.55
    rows = np.array([[0.5, 0.5, 0.5, 0.2, 0.3], [0.55, 0.5, 0.5, 0.2, 0.2]])
    fmt, warning, evidence = column_order(rows, "yolo", detect=True, groups=np.array([0, 0]))
    assert fmt == "yolo" and warning is None
    assert evidence is not None and "class cx cy w h conf" in evidence
    # the same rows written by darknet, both boxes fitting either way (0.3/0.25 wide)
    dk = np.array([[0.3, 0.5, 0.5, 0.5, 0.2], [0.25, 0.55, 0.5, 0.5, 0.25]])
    fmt, _, evidence = column_order(dk, "yolo", detect=True, groups=np.array([0, 0]))
    assert fmt == "yolo-darknet" and evidence is not None
    # in two files, one row each: no order within a file, no evidence
    with pytest.raises(UsageError):
        column_order(rows, "yolo", detect=True, groups=np.array([0, 1]))


def test_forced_order_warns_only_when_the_other_fits_everything() -> None:
    fmt, warning, _ = column_order(DARKNET, "yolo", detect=False)
    assert fmt == "yolo" and warning is not None
    assert (
        "1 of 3 predicted boxes do not fit" in warning and "--pred-format yolo-darknet" in warning
    )
    # forced right: no warning
    assert column_order(ULTRA, "yolo", detect=False) == ("yolo", None, None)
    assert column_order(DARKNET, "yolo-darknet", detect=False) == ("yolo-darknet", None, None)
