"""The COCO panoptic loader reads every image's segments_info in one batch: the columns must
be those of the record-by-record reader, and anything off must leave the batch (None) so
that the record-by-record reader locates it."""

from __future__ import annotations

from typing import Any

import numpy as np

from iou_cli.loaders.panoptic import _all_segments_fast, _segments_fast


def _seg(sid: Any, cat: Any = 1, crowd: Any = 0, area: Any = 5) -> dict[str, Any]:
    return {"id": sid, "category_id": cat, "iscrowd": crowd, "area": area, "bbox": [0, 0, 1, 1]}


def test_batch_equals_record_by_record() -> None:
    anns: list[dict[str, Any]] = [
        {"segments_info": [_seg(3), _seg(4, cat=7, crowd=1, area=2.5)]},
        {"segments_info": []},
        {"segments_info": [_seg(3, cat=2, area=None), _seg((1 << 24) - 1)]},  # id 3 again: ok
    ]
    batch = _all_segments_fast(anns)
    assert batch is not None and len(batch) == 3
    for ann, cols in zip(anns, batch, strict=True):
        one = _segments_fast(ann["segments_info"])
        assert one is not None
        for a, b in zip(cols, one, strict=True):
            assert a.dtype == b.dtype
            assert np.array_equal(a, b, equal_nan=True)


def test_anything_off_leaves_the_batch() -> None:
    ok = {"segments_info": [_seg(3), _seg(4)]}
    bads: tuple[Any, ...] = (
        {"segments_info": [_seg(3), _seg(3)]},  # duplicate id in one image
        {"segments_info": [_seg(0)]},  # id 0 is VOID
        {"segments_info": [_seg(1 << 24)]},
        {"segments_info": [_seg(3, crowd=2)]},
        {"segments_info": [_seg(3, area=-1)]},
        {"segments_info": [_seg("3")]},
        {"segments_info": [{"id": 3}]},
        {"segments_info": "x"},
        {"no": 1},
        [],
    )
    for bad in bads:
        assert _all_segments_fast([ok, bad]) is None, bad
