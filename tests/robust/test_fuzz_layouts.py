"""Mutation fuzzing of the issue-17 readers through the CLI (data.yaml, obj.data, VOC split
lists, CVAT XML, LabelMe JSON, Open Images CSV, Ultralytics predictions.json): a report or one
located error line with exit 2, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.robust.test_fuzz_loaders import FUZZ, GOOD, _with_dir, byte_mutation, check

pytestmark = pytest.mark.fuzz

PRED = GOOD / "coco_pred.json"
DATA_YAML = b"path: .\ntrain: images/train\nval: images/val\nnames:\n- cat\n- 'dog, big'\n"
OBJ_DATA = b"classes = 2\ntrain = data/train.txt\nvalid = data/valid.txt\nnames = data/obj.names\n"
CVAT = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<annotations><version>1.1</version><meta><task>'
    b"<labels><label><name>cat</name></label><label><name>dog</name></label></labels></task>"
    b'</meta><image id="0" name="a.jpg" width="100" height="100" subset="val">'
    b'<box label="cat" xtl="10" ytl="10" xbr="30" ybr="30" occluded="0"></box></image>'
    b'<image id="1" name="b.jpg" width="100" height="100" subset="val">'
    b'<polygon label="dog" points="50,50;80,50;80,70" occluded="0"></polygon></image>'
    b"</annotations>\n"
)
LABELME = json.dumps(
    {
        "version": "5.4.1",
        "shapes": [{"label": "cat", "points": [[10, 10], [30, 30]], "shape_type": "rectangle"}],
        "imagePath": "a.jpg",
        "imageHeight": 100,
        "imageWidth": 100,
    }
).encode()
OPENIMAGES = (
    b"ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,IsOccluded,IsTruncated,IsGroupOf\n"
    b'a,xclick,cat,1,0.1,0.3,0.1,0.3,0,0,0\nb,xclick,dog,1,"0,5","0,8",0.5,0.7,0,0,0\n'
)
ULTRA_PRED = json.dumps(
    [
        {
            "image_id": "a",
            "file_name": "a.jpg",
            "category_id": 0,
            "bbox": [10, 10, 20, 20],
            "score": 0.9,
        },
        {
            "image_id": "b",
            "file_name": "b.jpg",
            "category_id": 1,
            "bbox": [50, 50, 30, 20],
            "score": 0.8,
        },
    ]
).encode()


def _yolo_root(d: Path, yaml_bytes: bytes) -> Path:
    root = d / "ds"
    for split in ("train", "val"):
        (root / "images" / split).mkdir(parents=True)
        (root / "labels" / split).mkdir(parents=True)
    for n in ("a.txt", "b.txt"):
        shutil.copy(GOOD / "yolo_gt" / n, root / "labels" / "val" / n)
    (root / "data.yaml").write_bytes(yaml_bytes)
    return root


@FUZZ
@given(
    data=byte_mutation(DATA_YAML), pred=st.one_of(st.just(ULTRA_PRED), byte_mutation(ULTRA_PRED))
)
def test_data_yaml(data: bytes, pred: bytes) -> None:
    def go(d: Path) -> None:
        root = _yolo_root(d, data)
        (d / "p.json").write_bytes(pred)
        check([str(d / "p.json"), str(root / "data.yaml"), "--image-size", "100,100"])

    _with_dir(go)


@FUZZ
@given(data=byte_mutation(OBJ_DATA), listing=byte_mutation(b"data/obj_valid_data/a.jpg\n"))
def test_obj_data(data: bytes, listing: bytes) -> None:
    def go(d: Path) -> None:
        root = d / "dk"
        (root / "obj_valid_data").mkdir(parents=True)
        shutil.copy(GOOD / "yolo_gt" / "a.txt", root / "obj_valid_data" / "a.txt")
        (root / "obj.names").write_bytes(b"cat\ndog\n")
        (root / "train.txt").write_bytes(b"")
        (root / "valid.txt").write_bytes(listing)
        (root / "obj.data").write_bytes(data)
        check([str(GOOD / "yolo_pred"), str(root)])

    _with_dir(go)


@FUZZ
@given(data=byte_mutation(CVAT))
def test_cvat_xml(data: bytes) -> None:
    def go(d: Path) -> None:
        (d / "annotations.xml").write_bytes(data)
        check(
            [
                str(PRED),
                str(d / "annotations.xml"),
                "--gt-format",
                "cvat",
                "--image-map",
                str(GOOD / "coco_gt.json"),
            ]
        )

    _with_dir(go)


@FUZZ
@given(data=byte_mutation(LABELME))
def test_labelme_json(data: bytes) -> None:
    def go(d: Path) -> None:
        (d / "lm").mkdir()
        (d / "lm" / "a.json").write_bytes(data)
        check(
            [
                str(PRED),
                str(d / "lm"),
                "--gt-format",
                "labelme",
                "--image-map",
                str(GOOD / "coco_gt.json"),
                "--unknown",
                "skip-images",
            ]
        )

    _with_dir(go)


@FUZZ
@given(data=byte_mutation(OPENIMAGES))
def test_open_images_csv(data: bytes) -> None:
    def go(d: Path) -> None:
        (d / "gt.csv").write_bytes(data)
        check(
            [
                str(PRED),
                str(d / "gt.csv"),
                "--gt-format",
                "openimages",
                "--image-map",
                str(GOOD / "coco_gt.json"),
                "--unknown",
                "skip",
                "--protocol",
                "voc",
            ]
        )

    _with_dir(go)


@FUZZ
@given(listing=byte_mutation(b"a\nb\n"))
def test_voc_split_list(listing: bytes) -> None:
    def go(d: Path) -> None:
        shutil.copytree(GOOD / "voc_gt", d / "voc" / "Annotations")
        (d / "voc" / "ImageSets" / "Main").mkdir(parents=True)
        (d / "voc" / "ImageSets" / "Main" / "val.txt").write_bytes(listing)
        check([str(GOOD / "voc_pred"), str(d / "voc"), "--unknown", "skip-images"])

    _with_dir(go)
