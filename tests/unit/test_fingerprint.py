"""The ground-truth fingerprint (``meta.gt_fingerprint``: ``compare`` warns and ``merge``
refuses when two differ) stays the value earlier versions wrote for the same ground truth:
the digests below were made by the code before the arrays were hashed in place (each
``tobytes()`` copy then cost ~6 ms at COCO val keypoints' size)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iou_cli import api
from iou_cli.data import _raw, fingerprint
from iou_cli.options import LoadOptions

ROOT = Path(__file__).resolve().parents[2] / "sample_data"

PINNED = [
    (
        "coco",
        "bbox",
        "sha256:c0ac227b910663e5d623825f4e16455ca67041dbbbedfa633fe5851ae8842841",
    ),
    (
        "keypoints/coco",
        "keypoints",
        "sha256:665ec37effc593c8c483b8ea4a5027e446f6a01184e44826f6476467135d1f0f",
    ),
    (
        "lvis",
        "bbox",
        "sha256:741e328e3a9625f40457af0f79fcd57bd47899c60a60c2753cbcda9c439c8f4a",
    ),
]


@pytest.mark.parametrize(("folder", "iou_type", "digest"), PINNED)
def test_fingerprint_is_the_one_earlier_versions_wrote(
    folder: str, iou_type: str, digest: str
) -> None:
    ds = api.load_pair(
        str(ROOT / folder / "preds.json"),
        str(ROOT / folder / "gt.json"),
        LoadOptions(iou_type=iou_type),
    )
    assert fingerprint(ds) == digest


@pytest.mark.parametrize(
    "arr",
    [
        np.arange(5, dtype=">f8"),  # another byte order
        np.zeros(0),
        np.zeros((0, 4)),
        np.array([True, False, True]),
        np.arange(12.0).reshape(3, 4).T,  # Fortran order: hashed in C order
        np.arange(12, dtype=np.int16)[::3],  # strided
        np.float64(3.0),
    ],
)
def test_an_array_hashes_as_its_bytes_in_c_order(arr: np.ndarray) -> None:
    import hashlib

    a, b = hashlib.sha256(), hashlib.sha256()
    a.update(_raw(arr))
    b.update(np.asarray(arr).tobytes(order="C"))
    assert a.digest() == b.digest()
