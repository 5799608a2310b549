"""Dataset layouts built the way their tools write them (issue 17), scored against pycocotools
on the same data in COCO form.

Every layout below is written as its tool writes it: Ultralytics (``data.yaml`` through
``yaml.safe_dump``, ``images/<split>`` + ``labels/<split>``, no label file for an image
without objects, as ``convert_coco`` does; ``predictions.json`` rows with the stem as
``image_id``, an int when numeric, and ``file_name``), Roboflow exports (``../train/images``
paths, ``README.roboflow.txt``), datumaro/CVAT darknet (``obj.data`` + ``<subset>.txt`` +
``obj_<subset>_data/``), VOC roots with ``ImageSets/Main/<split>.txt``. Image sizes are
powers of two and corners integers, so the normalised YOLO values are exact binary fractions
and the comparison is exact.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate
from tests.conftest import DATA
from tests.helpers import assert_one_error_line, run_cli
from tests.oracle.pycoco import STAT_KEYS, pycoco_eval, stats_of

W, H = 512, 256
# a name with a comma and one with quotes: a hand-written YAML parser got these wrong
CLASSES = ["person", "car, red", 'say "hi"']
VAL = ["000000001000", "000000001001", "img_b", "img_c", "img_empty"]
TRAIN = ["t1", "t2", "t3"]


def _scene(stems: list[str], seed: int) -> tuple[dict[str, list[Any]], list[tuple[Any, ...]]]:
    """Ground truth ``stem -> [(cls, x1, y1, x2, y2)]`` (none on ``img_empty``) and
    predictions ``(stem, cls, x1, y1, x2, y2, score)``, some of them on ``img_empty``."""
    rng = np.random.default_rng(seed)
    gt: dict[str, list[Any]] = {}
    preds: list[tuple[Any, ...]] = []
    for stem in stems:
        boxes = []
        if stem != "img_empty":
            for _ in range(int(rng.integers(2, 6))):
                w = int(rng.choice([8, 24, 40, 64, 120, 200]))
                h = int(rng.choice([8, 24, 40, 64, 120, 200]))
                x1 = int(rng.integers(0, W - w))
                y1 = int(rng.integers(0, H - min(h, H - 1) - 1))
                h = min(h, H - y1)
                boxes.append((int(rng.integers(0, len(CLASSES))), x1, y1, x1 + w, y1 + h))
        gt[stem] = boxes
        for c, x1, y1, x2, y2 in boxes:
            if rng.random() < 0.8:  # a jittered hit
                d = [int(v) for v in rng.integers(-4, 5, size=4)]
                b = (max(0, x1 + d[0]), max(0, y1 + d[1]), min(W, x2 + d[2]), min(H, y2 + d[3]))
                if b[2] > b[0] and b[3] > b[1]:
                    preds.append((stem, c, *b, round(float(rng.random()), 4)))
        for _ in range(int(rng.integers(1, 3))):  # false positives (also on img_empty)
            x1, y1 = int(rng.integers(0, W - 40)), int(rng.integers(0, H - 40))
            c = int(rng.integers(0, len(CLASSES)))
            preds.append((stem, c, x1, y1, x1 + 32, y1 + 32, round(float(rng.random()), 4)))
    return gt, preds


def _coco(
    stems: list[str], gt: dict[str, list[Any]], preds: list[tuple[Any, ...]], by_name: bool = False
) -> Any:
    """The same data in COCO form (image ids 1.., category ids = class indices, or ranks in
    name order with ``by_name``: VOC has no class indices and lists its classes by name, so
    pycocotools averages the classes in that order), scored by pycocotools."""
    ids = {s: i + 1 for i, s in enumerate(stems)}
    rank = {c: sorted(CLASSES).index(n) if by_name else c for c, n in enumerate(CLASSES)}
    gt = {s: [(rank[b[0]], *b[1:]) for b in boxes] for s, boxes in gt.items()}
    preds = [(p[0], rank[p[1]], *p[2:]) for p in preds]
    names = sorted(CLASSES) if by_name else CLASSES
    anns: list[dict[str, Any]] = []
    for s in stems:
        for c, x1, y1, x2, y2 in gt[s]:
            w, h = x2 - x1, y2 - y1
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": ids[s],
                    "category_id": c,
                    "bbox": [x1, y1, w, h],
                    "area": w * h,
                    "iscrowd": 0,
                }
            )
    dataset = {
        "images": [{"id": ids[s], "file_name": s + ".png", "width": W, "height": H} for s in stems],
        "annotations": anns,
        "categories": [{"id": i, "name": n} for i, n in enumerate(names)],
    }
    dets = [
        {"image_id": ids[s], "category_id": c, "bbox": [x1, y1, x2 - x1, y2 - y1], "score": sc}
        for s, c, x1, y1, x2, y2, sc in preds
        if s in ids
    ]
    return dataset, dets


def _expected(
    stems: list[str], gt: dict[str, list[Any]], preds: list[tuple[Any, ...]], by_name: bool = False
) -> Any:
    dataset, dets = _coco(stems, gt, preds, by_name)
    return stats_of(pycoco_eval(dataset, dets))


def _png(path: Path) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (W, H)).save(path)


def _yolo_lines(boxes: list[Any]) -> str:
    return "".join(
        f"{c} {(x1 + x2) / 2 / W} {(y1 + y2) / 2 / H} {(x2 - x1) / W} {(y2 - y1) / H}\n"
        for c, x1, y1, x2, y2 in boxes
    )


def _write_yolo_split(images: Path, labels: Path, stems: list[str], gt: dict[str, Any]) -> None:
    labels.mkdir(parents=True, exist_ok=True)
    for s in stems:
        _png(images / f"{s}.png")
        if gt[s]:  # Ultralytics' convert_coco writes no file for an image without objects
            (labels / f"{s}.txt").write_text(_yolo_lines(gt[s]))


def _ultralytics_predictions(path: Path, preds: list[tuple[Any, ...]]) -> Path:
    """``predictions.json`` as Ultralytics' val writes it: the stem as image_id (an int when
    numeric), file_name on every row, category_id = class index (custom datasets)."""
    rows = [
        {
            "image_id": int(s) if s.isnumeric() else s,
            "file_name": f"{s}.png",
            "category_id": c,
            "bbox": [float(x1), float(y1), float(x2 - x1), float(y2 - y1)],
            "score": sc,
        }
        for s, c, x1, y1, x2, y2, sc in preds
    ]
    path.write_text(json.dumps(rows))
    return path


def _stats(r: Any) -> list[float | None]:
    return [r.summary[k] for k in STAT_KEYS]


@pytest.fixture
def scene() -> Any:
    gt_v, pr_v = _scene(VAL, 1)
    gt_t, pr_t = _scene(TRAIN, 2)
    return {**gt_v, **gt_t}, pr_v + pr_t


@pytest.mark.parametrize("names_as", ["list", "dict"])
def test_ultralytics_data_yaml_reads_val_split_and_empty_images(
    tmp_path: Path, scene: Any, names_as: str
) -> None:
    import yaml

    gt, preds = scene
    root = tmp_path / "ds"
    for split, stems in (("train", TRAIN), ("val", VAL)):
        _write_yolo_split(root / "images" / split, root / "labels" / split, stems, gt)
    names: Any = CLASSES if names_as == "list" else dict(enumerate(CLASSES))
    (root / "data.yaml").write_text(
        yaml.safe_dump(
            {"path": str(root), "train": "images/train", "val": "images/val", "names": names}
        )
    )
    pred = _ultralytics_predictions(
        tmp_path / "predictions.json", [p for p in preds if p[0] in VAL]
    )
    want = _expected(VAL, gt, preds)
    for target in (root / "data.yaml", root):  # data.yaml itself, or the dataset root
        r = evaluate(str(pred), str(target))
        assert _stats(r) == want
        assert r.per_class[1]["name"] == "car, red"
        assert any("split val" in line for line in r.info)
        assert any("file_name" in line for line in r.info)
    # the train split on request
    tpred = _ultralytics_predictions(tmp_path / "t.json", [p for p in preds if p[0] in TRAIN])
    r = evaluate(str(tpred), str(root / "data.yaml"), split="train")
    assert _stats(r) == _expected(TRAIN, gt, preds)
    # predictions of the other split are unknown images: an error, not a merge
    line = assert_one_error_line(*run_cli([str(tpred), str(root / "data.yaml"), "-q"]))
    assert "3 images not in the ground truth" in line


def test_without_the_split_the_false_positives_on_an_empty_image_count(
    tmp_path: Path, scene: Any
) -> None:
    # the silent wrong answer of issue 17: dropping the predictions on img_empty inflates AP
    gt, preds = scene
    root = tmp_path / "ds"
    _write_yolo_split(root / "images" / "val", root / "labels" / "val", VAL, gt)
    (root / "classes.txt").write_text("\n".join(CLASSES) + "\n")
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    r = evaluate(str(pred), str(root / "labels" / "val"))
    assert _stats(r) == _expected(VAL, gt, preds)
    inflated = _expected(VAL[:-1], gt, preds)
    assert inflated[0] != _stats(r)[0]


def test_roboflow_export_root(tmp_path: Path, scene: Any) -> None:
    import yaml

    gt, preds = scene
    root = tmp_path / "rf"
    for split, stems in (("train", TRAIN), ("valid", VAL)):
        _write_yolo_split(root / split / "images", root / split / "labels", stems, gt)
    (root / "README.roboflow.txt").write_text("exported from roboflow.com\n")
    (root / "data.yaml").write_text(
        yaml.safe_dump(
            {
                "train": "../train/images",
                "val": "../valid/images",
                "nc": len(CLASSES),
                "names": CLASSES,
            }
        )
    )
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    r = evaluate(str(pred), str(root))
    assert _stats(r) == _expected(VAL, gt, preds)
    assert any("Roboflow" in line for line in r.info)


def test_several_splits_none_named_val_is_exit_2(tmp_path: Path, scene: Any) -> None:
    import yaml

    gt, preds = scene
    root = tmp_path / "ds"
    _write_yolo_split(root / "images" / "train", root / "labels" / "train", TRAIN, gt)
    _write_yolo_split(root / "images" / "test", root / "labels" / "test", VAL, gt)
    (root / "data.yaml").write_text(
        yaml.safe_dump({"train": "images/train", "test": "images/test", "names": CLASSES})
    )
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    line = assert_one_error_line(*run_cli([str(pred), str(root / "data.yaml"), "-q"]))
    assert "train, test" in line and "--split" in line
    r = evaluate(str(pred), str(root / "data.yaml"), split="test")
    assert _stats(r) == _expected(VAL, gt, preds)


def test_darknet_obj_data_valid_subset(tmp_path: Path, scene: Any) -> None:
    # datumaro / CVAT "YOLO 1.1": obj.data, obj.names, <subset>.txt, obj_<subset>_data/
    gt, preds = scene
    root = tmp_path / "dk"
    for subset, stems in (("train", TRAIN), ("valid", VAL)):
        folder = root / f"obj_{subset}_data"
        _write_yolo_split(folder, folder, stems, gt)
        (root / f"{subset}.txt").write_text(
            "".join(f"data/obj_{subset}_data/{s}.png\n" for s in stems)
        )
    (root / "obj.names").write_text("\n".join(CLASSES) + "\n")
    (root / "obj.data").write_text(
        f"classes = {len(CLASSES)}\ntrain = data/train.txt\nvalid = data/valid.txt\n"
        "names = data/obj.names\nbackup = backup/\n"
    )
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    r = evaluate(str(pred), str(root))
    assert _stats(r) == _expected(VAL, gt, preds)
    assert any("split valid" in line for line in r.info)


def _voc_xml(
    folder: Path, stem: str, boxes: list[Any], *, scores: list[float] | None = None, origin: int = 0
) -> None:
    from xml.sax.saxutils import escape

    objs = []
    for i, (c, x1, y1, x2, y2) in enumerate(boxes):
        score = f"<score>{scores[i]}</score>" if scores is not None else ""
        name = escape(CLASSES[c])
        objs.append(
            f"<object><name>{name}</name>{score}<difficult>0</difficult>"
            f"<bndbox><xmin>{x1 + origin}</xmin><ymin>{y1 + origin}</ymin>"
            f"<xmax>{x2}</xmax><ymax>{y2}</ymax></bndbox></object>"
        )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.xml").write_text(
        f"<annotation><filename>{stem}.png</filename><size><width>{W}</width>"
        f"<height>{H}</height><depth>3</depth></size>{''.join(objs)}</annotation>"
    )


def test_voc_root_imagesets_split_and_listed_image_without_xml(tmp_path: Path, scene: Any) -> None:
    # Label Studio's VOC export skips the XML of an image without objects; the split list
    # still names it
    gt, preds = scene
    root = tmp_path / "voc"
    for s in VAL + TRAIN:
        if gt[s]:
            _voc_xml(root / "Annotations", s, gt[s])
    main = root / "ImageSets" / "Main"
    main.mkdir(parents=True)
    (main / "train.txt").write_text("\n".join(TRAIN) + "\n")
    (main / "val.txt").write_text("\n".join(VAL) + "\n")
    (main / "trainval.txt").write_text("\n".join(TRAIN + VAL) + "\n")
    (main / "person_val.txt").write_text("".join(f"{s} -1\n" for s in VAL))  # per class
    by_stem: dict[str, list[Any]] = {}
    for s, c, x1, y1, x2, y2, sc in preds:
        if s in VAL:
            by_stem.setdefault(s, []).append((c, x1, y1, x2, y2, sc))
    for s, rows in by_stem.items():
        _voc_xml(tmp_path / "pred", s, [r[:5] for r in rows], scores=[r[5] for r in rows])
    # COCO protocol: the COCO form numbers the classes by name order, as the VOC reader does
    r = evaluate(str(tmp_path / "pred"), str(root))
    want = _expected(VAL, gt, preds, by_name=True)
    assert _stats(r) == want
    assert any("ImageSets/Main: split val, 5 images" in line for line in r.info)


@pytest.mark.parametrize("origin", [0, 1])
def test_voc_origin_with_results_list_and_image_map(
    tmp_path: Path, scene: Any, origin: int
) -> None:
    # devkit / hotcoco / supervision write 1-based corners (continuous box xmin-1 .. xmax);
    # datumaro / CVAT / globox 0-based. A detectron2-style results list has the ids of the
    # COCO file it was run on: --image-map gives id -> file_name and the category names
    gt, preds = scene
    root = tmp_path / "voc"
    for s in VAL:
        _voc_xml(root / "Annotations", s, gt[s], origin=origin)
    dataset, dets = _coco(VAL, gt, preds, by_name=True)
    (tmp_path / "map.json").write_text(json.dumps({**dataset, "annotations": []}))
    (tmp_path / "dets.json").write_text(json.dumps(dets))
    r = evaluate(
        str(tmp_path / "dets.json"),
        str(root),
        image_map=str(tmp_path / "map.json"),
        voc_origin=origin,
    )
    assert _stats(r) == stats_of(pycoco_eval(dataset, dets))
    assert any("--image-map" in line for line in r.info)
    if origin == 1:  # read as 0-based, a 1-based file is off by one pixel
        wrong = evaluate(
            str(tmp_path / "dets.json"), str(root), image_map=str(tmp_path / "map.json")
        )
        assert _stats(wrong) != _stats(r)


def test_renumbered_coco_export_meets_ultralytics_predictions(tmp_path: Path, scene: Any) -> None:
    # Roboflow / CVAT / Label Studio COCO exports number images 1..N: Ultralytics'
    # predictions.json (image_id = stem, 1000 for 000000001000) meets them by file_name
    gt, preds = scene
    dataset, dets = _coco(VAL, gt, preds)
    (tmp_path / "gt.json").write_text(json.dumps(dataset))
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    r = evaluate(str(pred), str(tmp_path / "gt.json"))
    assert _stats(r) == stats_of(pycoco_eval(dataset, dets))
    assert any("file_name of the results rows" in line for line in r.info)
    # {"annotations": [...]} without images/categories is a results list too
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"annotations": json.loads(pred.read_text())}))
    assert _stats(evaluate(str(wrapped), str(tmp_path / "gt.json"))) == _stats(r)
    # without file_name, the image_id is the stem (an int when numeric, as Ultralytics writes)
    rows = json.loads(pred.read_text())
    for row in rows:
        del row["file_name"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(rows))
    r2 = evaluate(str(bare), str(tmp_path / "gt.json"))
    assert _stats(r2) == _stats(r)
    assert any("as Ultralytics writes it" in line for line in r2.info)


def test_skip_that_drops_every_prediction_is_exit_2(tmp_path: Path, scene: Any) -> None:
    gt, preds = scene
    dataset, _ = _coco(VAL, gt, preds)
    (tmp_path / "gt.json").write_text(json.dumps(dataset))
    rows = [
        {"image_id": 999, "category_id": 0, "bbox": [1, 1, 5, 5], "score": 0.5},
        {"image_id": 998, "category_id": 1, "bbox": [1, 1, 5, 5], "score": 0.5},
    ]
    (tmp_path / "p.json").write_text(json.dumps(rows))
    args = [str(tmp_path / "p.json"), str(tmp_path / "gt.json"), "-q"]
    line = assert_one_error_line(*run_cli([*args, "--unknown", "skip"]))
    assert "dropped every prediction" in line
    line = assert_one_error_line(*run_cli([*args, "--unknown", "skip-classes"]))
    assert "not in the ground truth" in line and "skip-images" in line


VOC100 = DATA / "peers_voc" / "voc100"


def test_review_database_yolo_gt_against_coco_detections_voc_protocol() -> None:
    # review_object_detection_metrics: darknet YOLO ground truth (no image files) against
    # COCO detections whose dataset lists sizes only for images with detections. Two ground-
    # truth images have no detection, so no size: under the VOC protocol their boxes cannot
    # meet a prediction and their coordinates cannot change the result. Expected value:
    # the fixture curators' VOC script, difficult as normal (YOLO has no difficult flag).
    dets = str(VOC100 / "dets" / "coco_format" / "coco_dets.json")
    gts = str(VOC100 / "gts" / "yolo_format")
    r = evaluate(dets, gts, protocol="voc")
    assert r.summary["mAP"] == pytest.approx(0.6109129074794388, abs=1e-12)
    # under COCO the area ranges need every ground-truth area: ask for sizes
    line = assert_one_error_line(*run_cli([dets, gts, "-q"]))
    assert "2007_000676, 2007_001377" in line and "--protocol voc" in line


def _seg_lines(boxes: list[Any], named: bool) -> str:
    """YOLO-seg rows (Ultralytics): ``class x1 y1 ... xn yn``, a polygon whose extent is the
    box (corners plus a point inside the top edge); ``named``: the class as its name (globox
    writes names in column 1)."""
    out = []
    for c, x1, y1, x2, y2 in boxes:
        pts = [(x1, y1), ((x1 + x2) // 2, y1), (x2, y1), (x2, y2), (x1, y2)]
        label = CLASSES[c].replace(" ", "_") if named else str(c)
        out.append(label + "".join(f" {x / W} {y / H}" for x, y in pts) + "\n")
    return "".join(out)


@pytest.mark.parametrize("named", [False, True])
def test_yolo_seg_polygons_are_boxes_of_their_extent(
    tmp_path: Path, scene: Any, named: bool
) -> None:
    import yaml

    gt, preds = scene
    root = tmp_path / "seg"
    for s in VAL:
        _png(root / "images" / "val" / f"{s}.png")
        if gt[s]:
            (root / "labels" / "val").mkdir(parents=True, exist_ok=True)
            (root / "labels" / "val" / f"{s}.txt").write_text(_seg_lines(gt[s], named))
    names = [n.replace(" ", "_") for n in CLASSES]  # a name in column 1 has no spaces
    (root / "data.yaml").write_text(yaml.safe_dump({"val": "images/val", "names": names}))
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    r = evaluate(str(pred), str(root))
    assert _stats(r) == _expected(VAL, gt, preds)


def test_yolo_prediction_centred_outside_the_image_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "gt").mkdir()
    (tmp_path / "pr").mkdir()
    (tmp_path / "gt" / "a.txt").write_text("0 0.5 0.5 0.25 0.25\n")
    (tmp_path / "pr" / "a.txt").write_text("0 0.5 0.5 0.25 0.25 0.9\n0 1.1 0.5 0.25 0.25 0.8\n")
    args = [str(tmp_path / "pr"), str(tmp_path / "gt"), "-q", "-o", "json", "--score-thr", "0"]
    code, out, err = run_cli(args)
    assert code == 0, err
    assert "1 predicted YOLO box with the centre outside the image" in err
    summary = json.loads(out)["summary"]
    assert (summary["tp"], summary["fp"]) == (1, 1)  # kept: a false positive


def test_yolo_seg_masks_under_segm_equal_pycocotools(tmp_path: Path, scene: Any) -> None:
    # Ultralytics segment: labels "class x1 y1 ... xn yn", predictions (save_txt, save_conf)
    # "class x1 y1 ... xn yn conf"; masks rasterised at the sizes of images/val/*.png
    from pycocotools import mask as mask_utils

    gt, preds = scene
    root = tmp_path / "seg"

    def tri(x1: int, y1: int, x2: int, y2: int) -> list[tuple[int, int]]:
        return [(x1, y1), (x2, y1), (x1, y2)]  # a triangle: a mask unlike its box

    for s in VAL:
        _png(root / "images" / "val" / f"{s}.png")
        if gt[s]:
            (root / "labels" / "val").mkdir(parents=True, exist_ok=True)
            (root / "labels" / "val" / f"{s}.txt").write_text(
                "".join(
                    f"{c}" + "".join(f" {x / W} {y / H}" for x, y in tri(*b)) + "\n"
                    for c, *b in gt[s]
                )
            )
    (root / "classes.txt").write_text("\n".join(CLASSES) + "\n")
    pdir = tmp_path / "pred"
    pdir.mkdir()
    for s in VAL:
        rows = [p for p in preds if p[0] == s]
        (pdir / f"{s}.txt").write_text(
            "".join(
                f"{c}" + "".join(f" {x / W} {y / H}" for x, y in tri(x1, y1, x2, y2)) + f" {sc}\n"
                for _, c, x1, y1, x2, y2, sc in rows
            )
        )
    ids = {s: i + 1 for i, s in enumerate(VAL)}

    def poly(x1: int, y1: int, x2: int, y2: int) -> list[list[float]]:
        return [[float(v) for xy in tri(x1, y1, x2, y2) for v in xy]]

    anns: list[dict[str, Any]] = []
    for s in VAL:
        for c, *b in gt[s]:
            rle = mask_utils.merge(mask_utils.frPyObjects(poly(*b), H, W))
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": ids[s],
                    "category_id": c,
                    "iscrowd": 0,
                    "segmentation": poly(*b),
                    "area": float(mask_utils.area(rle)),
                    "bbox": [b[0], b[1], b[2] - b[0], b[3] - b[1]],
                }
            )
    dataset = {
        "images": [{"id": ids[s], "file_name": f"{s}.png", "width": W, "height": H} for s in VAL],
        "annotations": anns,
        "categories": [{"id": i, "name": n} for i, n in enumerate(CLASSES)],
    }
    dets = [
        {
            "image_id": ids[s],
            "category_id": c,
            "segmentation": poly(x1, y1, x2, y2),
            "bbox": [x1, y1, x2 - x1, y2 - y1],
            "score": sc,
        }
        for s, c, x1, y1, x2, y2, sc in preds
        if s in ids
    ]
    want = stats_of(pycoco_eval(dataset, dets, "segm"))
    r = evaluate(str(pdir), str(root / "labels" / "val"), iou_type="segm")
    assert _stats(r) == want
    assert _stats(r) != _stats(evaluate(str(pdir), str(root / "labels" / "val")))  # not boxes


def test_layout_errors_are_one_located_line(tmp_path: Path) -> None:
    pred = str(DATA / "bad" / "good" / "coco_pred.json")
    bad_yaml = tmp_path / "data.yaml"
    bad_yaml.write_text("names: [cat, dog\nval: images/val\n")
    line = assert_one_error_line(*run_cli([pred, str(bad_yaml), "-q"]))
    assert "data.yaml:3: not valid YAML" in line or "data.yaml:2: not valid YAML" in line
    missing = tmp_path / "m" / "data.yaml"
    missing.parent.mkdir()
    missing.write_text("val: images/val\nnames: [cat]\n")
    line = assert_one_error_line(*run_cli([pred, str(missing), "-q"]))
    assert "split path 'images/val' does not exist" in line
    line = assert_one_error_line(*run_cli([pred, str(missing), "--voc-origin", "2"]))
    assert "--voc-origin" in line
    # a results list has ids only; a VOC ground truth has no ids: say how to join
    voc = tmp_path / "voc"
    voc.mkdir()
    (voc / "a.xml").write_text(
        "<annotation><object><name>cat</name><bndbox><xmin>1</xmin>"
        "<ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox></object>"
        "</annotation>"
    )
    line = assert_one_error_line(*run_cli([pred, str(voc), "-q"]))
    assert "--image-map" in line


def test_split_names_from_folders_are_escaped(tmp_path: Path) -> None:
    # a split is a folder name: shown through text.term, never as a terminal control
    root = tmp_path / "ds"
    for split in ("train", "a\x1b[2Jb"):
        (root / "labels" / split).mkdir(parents=True)
        (root / "labels" / split / "x.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    line = assert_one_error_line(*run_cli([str(root / "labels"), str(root), "-q"]))
    assert "\x1b" not in line and "train" in line


def test_images_folder_shows_images_without_label_files(tmp_path: Path, scene: Any) -> None:
    # a plain label folder (Ultralytics convert_coco output: labels only) with --images: the
    # images without a label file are images without objects, and their sizes are read
    gt, preds = scene
    labels = tmp_path / "labels"
    _write_yolo_split(tmp_path / "imgs", labels, VAL, gt)
    (labels / "classes.txt").write_text("\n".join(CLASSES) + "\n")
    pred = _ultralytics_predictions(tmp_path / "p.json", [p for p in preds if p[0] in VAL])
    r = evaluate(str(pred), str(labels), images=str(tmp_path / "imgs"))
    assert _stats(r) == _expected(VAL, gt, preds)
    assert any("1 images without a label file" in line for line in r.info)


def test_unknown_skip_classes_keeps_unknown_images_an_error(tmp_path: Path, scene: Any) -> None:
    gt, preds = scene
    dataset, dets = _coco(VAL, gt, preds)
    (tmp_path / "gt.json").write_text(json.dumps(dataset))
    extra = {"image_id": 1, "category_id": 99, "bbox": [1, 1, 5, 5], "score": 0.5}
    (tmp_path / "p.json").write_text(json.dumps([*dets, extra]))
    r = evaluate(str(tmp_path / "p.json"), str(tmp_path / "gt.json"), unknown="skip-classes")
    assert _stats(r) == stats_of(pycoco_eval(dataset, dets))
    assert any("skipped 1 prediction" in w for w in r.warnings)
    lost = {"image_id": 999, "category_id": 0, "bbox": [1, 1, 5, 5], "score": 0.5}
    (tmp_path / "p.json").write_text(json.dumps([*dets, extra, lost]))
    args = [str(tmp_path / "p.json"), str(tmp_path / "gt.json"), "-q", "--unknown"]
    line = assert_one_error_line(*run_cli([*args, "skip-classes"]))
    assert "999" in line and "skip-images" in line


def test_voc_folder_with_images_folder(tmp_path: Path, scene: Any) -> None:
    # CVAT/datumaro and Label Studio VOC exports may leave out the XML of an image without
    # objects; --images shows it exists
    gt, preds = scene
    for s in VAL:
        _png(tmp_path / "imgs" / f"{s}.png")
        if gt[s]:
            _voc_xml(tmp_path / "ann", s, gt[s])
    dataset, dets = _coco(VAL, gt, preds, by_name=True)
    (tmp_path / "dets.json").write_text(json.dumps(dets))
    (tmp_path / "map.json").write_text(json.dumps({**dataset, "annotations": []}))
    args: dict[str, Any] = {"image_map": str(tmp_path / "map.json")}
    r = evaluate(
        str(tmp_path / "dets.json"), str(tmp_path / "ann"), images=str(tmp_path / "imgs"), **args
    )
    assert _stats(r) == stats_of(pycoco_eval(dataset, dets))
    line = assert_one_error_line(
        *run_cli(
            [
                str(tmp_path / "dets.json"),
                str(tmp_path / "ann"),
                "--image-map",
                args["image_map"],
                "-q",
            ]
        )
    )
    assert "img_empty" in line  # without --images the image is unknown: never silently dropped
