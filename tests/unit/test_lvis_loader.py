"""LVIS ground truth: federated labels as CSR columns, LVIS v1's layout, located errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.data import order_images
from iou_cli.errors import InputError
from iou_cli.loaders.coco import load_coco
from iou_cli.loaders.join import load_dataset
from iou_cli.options import LoadOptions


def _lvis(**over: Any) -> dict[str, Any]:
    # LVIS v1 val's layout: coco_url (no file_name), no iscrowd, categories with frequency.
    # Image ids out of order and categories out of id order, as real files may be.
    gt: dict[str, Any] = {
        "images": [
            {
                "id": 397133,
                "width": 640,
                "height": 427,
                "coco_url": "http://images.cocodataset.org/val2017/000000397133.jpg",
                "neg_category_ids": [3, 1203, 3],
                "not_exhaustive_category_ids": [],
            },
            {
                "id": 139,
                "width": 640,
                "height": 426,
                "coco_url": "http://images.cocodataset.org/train2017/000000000139.jpg",
                "neg_category_ids": [],
                "not_exhaustive_category_ids": [7, 1],
            },
        ],
        "annotations": [
            {"id": 5, "image_id": 139, "category_id": 7, "bbox": [1, 2, 3, 4], "area": 12.0},
        ],
        "categories": [
            {"id": 7, "name": "apple", "synset": "apple.n.01", "frequency": "f"},
            {"id": 1, "name": "aerosol_can", "synset": "aerosol.n.02", "frequency": "c"},
            {"id": 3, "name": "alarm_clock", "synset": "alarm_clock.n.01", "frequency": "r"},
        ],
    }
    gt.update(over)
    return gt


def _write(tmp_path: Path, data: Any, name: str = "gt.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return str(p)


def _rows(ptr: np.ndarray, col: np.ndarray) -> list[list[int]]:
    return [col[ptr[i] : ptr[i + 1]].tolist() for i in range(ptr.shape[0] - 1)]


def test_federated_columns_in_file_and_in_id_order(tmp_path: Path) -> None:
    side = load_coco(_write(tmp_path, _lvis()), role="gt")
    fed = side.federated
    assert fed is not None and fed.missing is None
    # categories sorted by id: 1 (c), 3 (r), 7 (f); id 1203 is not a category: dropped;
    # duplicates collapse
    assert side.categories.ids == [1, 3, 7]
    assert fed.frequency.tolist() == [1, 0, 2]
    assert _rows(fed.neg_ptr, fed.neg_cat) == [[1], []]  # file order: 397133, 139
    assert _rows(fed.nel_ptr, fed.nel_cat) == [[], [0, 2]]
    assert side.images.stems == ["000000397133", "000000000139"]  # from coco_url
    ordered = order_images(side)  # pycocotools / lvis-api order: sorted ids
    assert ordered.images.keys == [139, 397133]
    fed2 = ordered.federated
    assert fed2 is not None
    assert _rows(fed2.neg_ptr, fed2.neg_cat) == [[], [1]]
    assert _rows(fed2.nel_ptr, fed2.nel_cat) == [[0, 2], []]


def test_dataset_carries_the_ground_truth_labels(tmp_path: Path) -> None:
    gt = _write(tmp_path, _lvis())
    preds = _write(
        tmp_path,
        [{"image_id": 139, "category_id": 7, "bbox": [1, 2, 3, 4], "score": 0.5}],
        "preds.json",
    )
    ds = load_dataset(preds, gt, LoadOptions())
    assert ds.federated is not None
    assert ds.images.keys == [139, 397133]
    assert _rows(ds.federated.neg_ptr, ds.federated.neg_cat) == [[], [1]]


def test_plain_coco_has_no_federated_labels(tmp_path: Path) -> None:
    data = _lvis()
    for im in data["images"]:
        del im["neg_category_ids"], im["not_exhaustive_category_ids"]
    for c in data["categories"]:
        del c["frequency"]
    assert load_coco(_write(tmp_path, data), role="gt").federated is None
    # predictions never carry them
    assert load_coco(_write(tmp_path, _lvis(), "p.json"), role="gt").federated is not None


def test_missing_fields_are_recorded_for_the_protocol(tmp_path: Path) -> None:
    data = _lvis()
    del data["images"][1]["not_exhaustive_category_ids"]
    del data["categories"][2]["frequency"]
    fed = load_coco(_write(tmp_path, data), role="gt").federated
    assert fed is not None and fed.missing == "images[1].not_exhaustive_category_ids"
    data = _lvis()
    del data["categories"][2]["frequency"]
    fed = load_coco(_write(tmp_path, data), role="gt").federated
    assert fed is not None and fed.missing == "categories[2].frequency"
    assert fed.frequency.tolist() == [1, -1, 2]


@pytest.mark.parametrize(
    "path, value, where, error",
    [
        (("images", 0, "neg_category_ids"), 3, "images[0].neg_category_ids", "expected a list"),
        (("images", 1, "not_exhaustive_category_ids"), [7, None], "images[1]", "got null"),
        (("images", 0, "neg_category_ids"), [1.5], "neg_category_ids[0]", "a category id"),
        (("categories", 0, "frequency"), "rare", "categories[0].frequency", "got 'rare'"),
        (("categories", 1, "frequency"), 1, "categories[1].frequency", "got 1"),
    ],
)
def test_malformed_fields_are_located(
    tmp_path: Path, path: tuple[str, int, str], value: Any, where: str, error: str
) -> None:
    data = _lvis()
    table, row, key = path
    data[table][row][key] = value
    with pytest.raises(InputError) as exc:
        load_coco(_write(tmp_path, data), role="gt")
    assert where in str(exc.value) and error in str(exc.value)
