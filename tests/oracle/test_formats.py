"""CVAT for images 1.1 XML, LabelMe JSON and Open Images CSV (issue 17): real exports from the
review_object_detection_metrics database (see tests/data/NOTICE) and files generated the way
each tool writes them, scored against pycocotools on the same data in COCO form; formats that
are not read get an error that names them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import pytest

from iou_cli.api import evaluate
from tests.conftest import DATA
from tests.helpers import assert_one_error_line, run_cli
from tests.oracle.pycoco import STAT_KEYS
from tests.oracle.test_layouts import (
    CLASSES,
    TRAIN,
    VAL,
    H,
    W,
    _expected,
    _png,
    _scene,
    _ultralytics_predictions,
)

V100 = DATA / "peers_voc" / "voc100"
DETS = str(V100 / "dets" / "coco_format" / "coco_dets.json")

# pycocotools on coco_format_v1 + the remapped COCO detections (fixture curators' values,
# peers/_derived; rounded to 6 places there)
DERIVED_COCO = [
    0.346958, 0.610030, 0.353714, 0.075181, 0.339482, 0.497881,
    0.373505, 0.520647, 0.522570, 0.158333, 0.446662, 0.580923,
]  # fmt: skip


def _stats(r: Any) -> list[float | None]:
    return [r.summary[k] for k in STAT_KEYS]


def test_cvat_export_of_the_review_database() -> None:
    cvat = str(V100 / "gts" / "cvat_format" / "annotations.xml")
    coco = str(V100 / "gts" / "coco_format_v1" / "instances_default.json")
    r = evaluate(DETS, cvat)
    assert _stats(r) == _stats(evaluate(DETS, coco))  # the same export as COCO: exact
    assert _stats(r) == pytest.approx(DERIVED_COCO, abs=5e-7)
    v = evaluate(DETS, cvat, protocol="voc")
    assert v.summary["mAP"] == pytest.approx(0.6109129074794388, abs=1e-12)


def test_open_images_csv_with_decimal_commas() -> None:
    # the peer's converter wrote "0,394" (a spreadsheet's decimal comma, quoted); sizes come
    # from the detections' COCO file, two images without detections need none under VOC
    csv = str(V100 / "gts" / "openimages_format" / "all_bounding_boxes.csv")
    v = evaluate(DETS, csv, protocol="voc")
    assert v.summary["mAP"] == pytest.approx(0.6109129074794388, abs=1e-12)


@pytest.fixture
def scene() -> Any:
    gt_v, pr_v = _scene(VAL, 1)
    gt_t, pr_t = _scene(TRAIN, 2)
    return {**gt_v, **gt_t}, pr_v + pr_t


def _names_file(tmp_path: Path) -> str:
    p = tmp_path / "classes.txt"
    p.write_text("\n".join(CLASSES) + "\n")
    return str(p)


def test_cvat_project_export_with_subsets(tmp_path: Path, scene: Any) -> None:
    gt, preds = scene
    labels = "".join(f"<label><name>{n}</name><attributes/></label>" for n in CLASSES)
    images = []
    for i, s in enumerate(TRAIN + VAL):
        subset = "train" if s in TRAIN else "val"
        shapes = []
        for j, (c, x1, y1, x2, y2) in enumerate(gt[s]):
            if j % 2:  # a polygon whose extent is the box
                pts = f"{x1:.2f},{y1:.2f};{x2:.2f},{y1:.2f};{x2:.2f},{y2:.2f};{x1:.2f},{y2:.2f}"
                shapes.append(
                    f'<polygon label={quoteattr(CLASSES[c])} source="manual" occluded="0" '
                    f'points="{pts}" z_order="0"></polygon>'
                )
            else:
                shapes.append(
                    f'<box label={quoteattr(CLASSES[c])} source="manual" occluded="0" '
                    f'xtl="{x1:.2f}" ytl="{y1:.2f}" xbr="{x2:.2f}" ybr="{y2:.2f}" z_order="0">'
                    "</box>"
                )
        images.append(
            f'<image id="{i}" name="{s}.jpg" subset="{subset}" width="{W}" height="{H}">'
            + "".join(shapes)
            + "</image>"
        )
    xml = tmp_path / "annotations.xml"
    xml.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<annotations><version>1.1</version>'
        f"<meta><project><labels>{labels}</labels></project></meta>"
        + "".join(images)
        + "</annotations>"
    )
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    r = evaluate(str(pred), str(xml), pred_names=_names_file(tmp_path))
    assert _stats(r) == _expected(VAL, gt, preds)
    assert any("subset val, 5 images" in line for line in r.info)


def test_labelme_folder(tmp_path: Path, scene: Any) -> None:
    gt, preds = scene
    folder = tmp_path / "labelme"
    folder.mkdir()
    for s in VAL:
        shapes = []
        for j, (c, x1, y1, x2, y2) in enumerate(gt[s]):
            if j % 2:
                pts = [[x2, y2], [x1, y1]]  # a rectangle dragged from bottom-right
                kind = "rectangle"
            else:
                pts = [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]
                kind = "polygon"
            shapes.append(
                {
                    "label": CLASSES[c],
                    "points": pts,
                    "group_id": None,
                    "shape_type": kind,
                    "flags": {},
                }
            )
        shapes.append({"label": "person", "points": [[3, 4]], "shape_type": "point", "flags": {}})
        (folder / f"{s}.json").write_text(
            json.dumps(
                {
                    "version": "5.4.1",
                    "flags": {},
                    "shapes": shapes,
                    "imagePath": f"{s}.jpg",
                    "imageData": None,
                    "imageHeight": H,
                    "imageWidth": W,
                },
                indent=2,
            )
        )
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    r = evaluate(str(pred), str(folder), pred_names=_names_file(tmp_path))
    assert _stats(r) == _expected(VAL, gt, preds, by_name=True)
    assert any("'point' shape(s) are not boxes" in w for w in r.warnings)


def test_open_images_csv_with_images_folder(tmp_path: Path, scene: Any) -> None:
    gt, preds = scene
    import csv

    with open(tmp_path / "gt.csv", "w", newline="") as f:  # as Python's csv module writes it
        w = csv.writer(f)
        w.writerow(
            [
                "ImageID",
                "Source",
                "LabelName",
                "Confidence",
                "XMin",
                "XMax",
                "YMin",
                "YMax",
                "IsOccluded",
                "IsTruncated",
                "IsGroupOf",
                "IsDepiction",
                "IsInside",
            ]
        )
        for s in VAL:
            _png(tmp_path / "images" / f"{s}.png")
            for c, x1, y1, x2, y2 in gt[s]:
                w.writerow(
                    [s, "xclick", CLASSES[c], 1, x1 / W, x2 / W, y1 / H, y2 / H, 0, 0, 0, 0, 0]
                )
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    r = evaluate(
        str(pred),
        str(tmp_path / "gt.csv"),
        pred_names=_names_file(tmp_path),
        images=str(tmp_path / "images"),
    )
    # the CSV lists images with boxes only; --images shows img_empty exists (no objects)
    assert _stats(r) == _expected(VAL, gt, preds, by_name=True)
    assert any("1 images without a row" in line for line in r.info)


@pytest.mark.parametrize(
    ("name", "content", "named"),
    [
        ("via.json", '{"_via_settings": {}, "_via_img_metadata": {}}', "VIA"),
        (
            "createml.json",
            '[{"image": "a.jpg", "annotations": [{"label": "x", '
            '"coordinates": {"x": 1, "y": 2, "width": 3, "height": 4}}]}]',
            "CreateML",
        ),
        (
            "ls.json",
            '[{"id": 1, "annotations": [{"result": []}], "data": {"image": "a.jpg"}}]',
            "Label Studio",
        ),
        ("data.tfrecord", "\x00\x01", "TFRecord"),
        ("boxes.csv", "filename,xmin,ymin,xmax,ymax,class\na.jpg,1,2,3,4,cat\n", "CSV"),
    ],
)
def test_formats_not_read_are_named(tmp_path: Path, name: str, content: str, named: str) -> None:
    p = tmp_path / name
    p.write_text(content)
    line = assert_one_error_line(*run_cli([DETS, str(p), "-q"]))
    assert named in line and "not read" in line


def test_kitti_label_folder_is_named(tmp_path: Path) -> None:
    d = tmp_path / "training" / "label_2"
    d.mkdir(parents=True)
    (d / "000000.txt").write_text(
        "Car 0.00 0 -1.58 587.01 173.33 614.12 200.12 1.65 1.67 3.64 -0.65 1.71 46.70 -1.59\n"
    )
    line = assert_one_error_line(*run_cli([DETS, str(d), "-q"]))
    assert "KITTI" in line


@pytest.mark.parametrize("form", ["coco", "voc", "yolo"])
def test_roboflow_export_roots_without_data_yaml(tmp_path: Path, scene: Any, form: str) -> None:
    # Roboflow downloads: README.roboflow.txt beside train/ valid/ test/; COCO puts
    # _annotations.coco.json in each split (images renumbered from 0), VOC an XML beside each
    # image, YOLO images/ + labels/ (data.yaml omitted here: the root alone must do)
    from tests.oracle.test_layouts import _coco, _voc_xml, _write_yolo_split

    gt, preds = scene
    root = tmp_path / "export"
    root.mkdir()
    (root / "README.roboflow.txt").write_text("Exported via roboflow.com\n")
    for split, stems in (("train", TRAIN), ("valid", VAL)):
        folder = root / split
        if form == "coco":
            dataset, _ = _coco(stems, gt, preds)
            for im in dataset["images"]:
                im["id"] -= 1
            for a in dataset["annotations"]:
                a["image_id"] -= 1
            folder.mkdir()
            (folder / "_annotations.coco.json").write_text(json.dumps(dataset))
        elif form == "voc":
            for s in stems:
                _voc_xml(folder, s, gt[s])
        else:
            _write_yolo_split(folder / "images", folder / "labels", stems, gt)
            (folder / "labels").mkdir(exist_ok=True)
    if form == "yolo":
        (root / "classes.txt").write_text("\n".join(CLASSES) + "\n")
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    kw: dict[str, Any] = {} if form == "yolo" else {"pred_names": _names_file(tmp_path)}
    r = evaluate(str(pred), str(root), **kw)
    assert _stats(r) == _expected(VAL, gt, preds, by_name=form == "voc")
    assert any("Roboflow export: split valid" in line for line in r.info)


def test_coco_root_with_annotations_per_split(tmp_path: Path) -> None:
    # COCO's own layout (and detectron2's, mmdetection's): annotations/instances_<split>.json;
    # val2017-style names default to the one split starting with "val"
    src = DATA / "coco" / "instances_val2014_100.json"
    dets = str(DATA / "coco" / "instances_val2014_fakebbox100_results.json")
    (tmp_path / "annotations").mkdir()
    shutil.copy(src, tmp_path / "annotations" / "instances_val2014.json")
    (tmp_path / "annotations" / "instances_train2014.json").write_text(
        '{"images": [], "annotations": [], "categories": []}'
    )
    r = evaluate(dets, str(tmp_path))
    assert _stats(r) == _stats(evaluate(dets, str(src)))
    assert any("COCO root: split val2014" in line for line in r.info)
    (tmp_path / "annotations" / "instances_val2014.json").rename(
        tmp_path / "annotations" / "instances_minival.json"
    )
    (tmp_path / "annotations" / "instances_test.json").write_text("{}")
    line = assert_one_error_line(*run_cli([dets, str(tmp_path), "-q"]))
    assert "minival, test, train2014" in line and "--split" in line
