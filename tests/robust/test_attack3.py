"""The third attack (issue 22): every case as a row of one table, built under tmp_path.

Each row builds its inputs, runs ``iou-eval ARGS`` in-process from tmp_path and checks the
contract: exit 2 with exactly one located ``iou-eval: error:`` line holding the expected
text, or exit 0 (with the stderr text when given) -- never a traceback, never a file
written over an input. Rows are named after the issue's wording. The property tests of the
structural guarantees (one output guard, one reader, one JSON rule, SIGTERM) are in
test_guarantees.py.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA
from tests.robust._cli import assert_one_error_line, run_cli

GOOD = DATA / "bad" / "good"
GT = json.loads((GOOD / "coco_gt.json").read_text())
PRED = json.loads((GOOD / "coco_pred.json").read_text())


def w(p: Path, text: str | bytes) -> str:
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
    return str(p)


def coco(d: Path, gt: dict | None = None, pred: list | None = None) -> None:
    w(d / "gt.json", json.dumps(GT if gt is None else gt))
    w(d / "pred.json", json.dumps(PRED if pred is None else pred))


def yolo_root(d: Path, name: str = "y") -> None:
    """A YOLO root (labels/, classes.txt found by the loader) and a predictions folder."""
    w(d / name / "classes.txt", "cat\ndog\n")
    w(d / name / "labels" / "a.txt", "0 0.5 0.5 0.2 0.2\n")
    w(d / "p" / "a.txt", "0 0.5 0.5 0.2 0.2 0.9\n")


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">II", width, height) + b"\x08\x02\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0" * 4


def report(d: Path, name: str, **changes: object) -> str:
    """A saved -o json report of the good pair, with top-level sections replaced."""
    code, out, err = run_cli([str(d / "pred.json"), str(d / "gt.json"), "-q", "-o", "json"])
    assert code == 0, err
    doc = json.loads(out)
    doc.update(changes)
    return w(d / name, json.dumps(doc))


@dataclass
class Case:
    id: str
    build: Callable[[Path], list[str]]
    exit: int
    text: str
    stdin: bytes | None = None


@functools.lru_cache(maxsize=1)
def _bomb_bytes() -> bytes:
    # 100 gzip members of 64 MiB of spaces: 6.4 MB on disk, 6.7 GB inflated
    member = gzip.compress(b" " * (64 << 20), compresslevel=9)
    return member * 100


def _bomb(d: Path) -> bytes:
    return _bomb_bytes()


# ---------------------------------------------------------------- builders of the cases


def b_compare_report_over_names(d: Path) -> list[str]:
    yolo_root(d)
    w(d / "q" / "a.txt", "0 0.5 0.5 0.2 0.2 0.8\n")
    names = w(d / "names.txt", "cat\ndog\n")
    return ["compare", "p", "q", "y", "--names", names, "--report", names, "--bootstrap", "0"]


def b_compare_report_over_found_classes(d: Path) -> list[str]:
    yolo_root(d)
    w(d / "q" / "a.txt", "0 0.5 0.5 0.2 0.2 0.8\n")
    # the ground truth is labels/ only: classes.txt beside it is found by the loader
    return ["compare", "p", "q", "y/labels", "--report", "y/classes.txt", "--bootstrap", "0"]


def b_compare_report_into_images(d: Path) -> list[str]:
    coco(d)
    w(d / "imgs" / "a.png", png(100, 100))
    return [
        "compare", "pred.json", "pred.json", "gt.json", "--images", "imgs",
        "--report", "imgs/r.html", "--bootstrap", "0",
    ]  # fmt: skip


def b_matches_over_split_list(d: Path) -> list[str]:
    yolo_root(d)
    w(d / "y" / "images" / "a.jpg", b"")
    w(d / "y" / "val.txt", "images/a.jpg\n")
    w(d / "y" / "data.yaml", "path: .\nval: val.txt\nnames: [cat, dog]\n")
    return ["p", "y/data.yaml", "--matches", "y/val.txt"]


def b_plots_symlink_onto_classes(d: Path) -> list[str]:
    yolo_root(d)
    (d / "figs").mkdir()
    os.symlink(d / "y" / "classes.txt", d / "figs" / "pr_curve.png")
    return ["p", "y/labels", "--plots", "figs"]


def b_report_dev_stdout_with_json(d: Path) -> list[str]:
    coco(d)
    return ["pred.json", "gt.json", "-o", "json", "--report", "/dev/stdout"]


def b_report_hard_link(d: Path) -> list[str]:
    yolo_root(d)
    os.link(d / "y" / "classes.txt", d / "page.html")
    return ["p", "y/labels", "--report", "page.html"]


def b_compare_nan_gate(d: Path) -> list[str]:
    coco(d)
    a = report(d, "a.json")
    w(d / "nan.json", Path(a).read_text().replace('"AP": 0.9999999999999998', '"AP": NaN', 1))
    return ["compare", "nan.json", "a.json", "--fail-if-worse", "AP=0.01"]


def b_compare_seed(d: Path) -> list[str]:
    coco(d)
    return ["compare", "pred.json", "pred.json", "gt.json", "--seed", "-1"]


def b_compare_stdin_twice(d: Path) -> list[str]:
    coco(d)
    return ["compare", "-", "-", "gt.json"]


def _report_with(d: Path, text_of: Callable[[str], str]) -> list[str]:
    coco(d)
    a = report(d, "a.json")
    w(d / "x.json", text_of(Path(a).read_text()))
    return ["compare", "x.json", "a.json"]


def b_report_400_digits(d: Path) -> list[str]:
    return _report_with(
        d, lambda t: t.replace('"AP50": 0.9999999999999999', '"AP50": ' + "9" * 400, 1)
    )


def b_report_5000_digits(d: Path) -> list[str]:
    return _report_with(
        d, lambda t: t.replace('"AP50": 0.9999999999999999', '"AP50": ' + "9" * 5000, 1)
    )


def b_report_deep(d: Path) -> list[str]:
    return _report_with(d, lambda t: t[:-1] + ', "deep": ' + "[" * 5000 + "]" * 5000 + "}")


def b_report_second_summary(d: Path) -> list[str]:
    return _report_with(d, lambda t: t[:-1] + ', "summary": {"AP": 0.0}}')


def b_report_ap_string(d: Path) -> list[str]:
    def f(t: str) -> str:
        doc = json.loads(t)
        doc["per_class"][0]["AP"] = "0.9"
        return json.dumps(doc)

    return _report_with(d, f)


def b_report_formula_key(d: Path) -> list[str]:
    def f(t: str) -> str:
        doc = json.loads(t)
        doc["summary"]['=HYPERLINK("http://x")'] = 0.5
        return json.dumps(doc)

    return [*_report_with(d, f), "-o", "csv"]


def b_report_markdown_key(d: Path) -> list[str]:
    def f(t: str) -> str:
        doc = json.loads(t)
        doc["summary"]["a|b<script>"] = 0.5
        return json.dumps(doc)

    return [*_report_with(d, f), "-o", "markdown"]


def b_report_bad_curves(d: Path) -> list[str]:
    return _report_with(
        d, lambda t: t[:-1] + ', "curves": {"recall": [0, 1], "precision": {"0.5": {"cat": [1]}}}}'
    )


def b_report_truncated_curves(d: Path) -> list[str]:
    return _report_with(d, lambda t: t[:-1] + ', "curves": {"recall": [0, 1], "precision"')


def b_cvat_cuboid(d: Path) -> list[str]:
    xml = (
        '<annotations><image id="0" name="a.jpg" width="100" height="100">'
        '<box label="cat" xtl="10" ytl="10" xbr="30" ybr="30"/>'
        '<cuboid label="cat" xtl1="1" ytl1="1"/></image></annotations>'
    )
    w(d / "gt.xml", xml)
    return [w(d / "pred.json", json.dumps([])), "gt.xml", "--image-size", "100x100"]


def b_labelme_points_bool(d: Path) -> list[str]:
    doc = {"shapes": [{"label": "a", "points": [[True, 10], [3, 4]], "shape_type": "rectangle"}],
           "imagePath": "x.jpg", "imageHeight": 10, "imageWidth": 10}  # fmt: skip
    return [w(d / "lm.json", json.dumps(doc)), "lm.json"]


def b_labelme_points_str(d: Path) -> list[str]:
    doc = {"shapes": [{"label": "a", "points": [["12", "34"], [3, 4]], "shape_type": "rectangle"}],
           "imagePath": "x.jpg", "imageHeight": 10, "imageWidth": 10}  # fmt: skip
    return [w(d / "lm.json", json.dumps(doc)), "lm.json"]


def b_labelme_score_str(d: Path) -> list[str]:
    doc = {"shapes": [{"label": "a", "points": [[1, 2], [3, 4]], "shape_type": "rectangle",
                       "score": "0.9"}], "imagePath": "x.jpg", "imageHeight": 10, "imageWidth": 10}  # fmt: skip
    return [w(d / "lm.json", json.dumps(doc)), "lm.json"]


def b_labelme_fifo(d: Path) -> list[str]:
    (d / "lm").mkdir()
    os.mkfifo(d / "lm" / "a.json")
    return ["lm", "lm"]


def b_yolo_fifo_image(d: Path) -> list[str]:
    yolo_root(d)
    (d / "y" / "images").mkdir()
    os.mkfifo(d / "y" / "images" / "a.jpg")
    # pixel predictions against normalised labels: the image header is needed
    preds = [{"image_id": "a", "category_id": 0, "bbox": [40, 40, 20, 20], "score": 0.9}]
    return [w(d / "pred.json", json.dumps(preds)), "y"]


def b_layout_huge_header(d: Path) -> list[str]:
    yolo_root(d)
    w(d / "y" / "images" / "a.png", png(4_000_000_000, 4_000_000_000))
    preds = [{"image_id": "a", "category_id": 0, "bbox": [40, 40, 20, 20], "score": 0.9}]
    return [w(d / "pred.json", json.dumps(preds)), "y"]


def b_images_png_zero(d: Path) -> list[str]:
    yolo_root(d)
    w(d / "imgs" / "a.png", png(0, 0))
    return ["p", "y/labels", "--images", "imgs"]


def b_yaml_deep(d: Path) -> list[str]:
    yolo_root(d)
    w(d / "y" / "data.yaml", "path: .\nval: " + "[" * 5000 + "]" * 5000 + "\nnames: [cat]\n")
    return ["p", "y"]


def b_yaml_aliases(d: Path) -> list[str]:
    yolo_root(d)
    (d / "y" / "images").mkdir()
    w(d / "y" / "images" / "a.png", png(100, 100))
    w(d / "y" / "labels" / "images" / "a.txt", "0 0.5 0.5 0.2 0.2\n")
    aliases = ", ".join(["*a"] * 3000)
    w(d / "y" / "data.yaml", f"path: .\nx: &a images\nval: [{aliases}]\nnames: [cat, dog]\n")
    return ["p", "y", "-q", "-o", "json"]


def b_yaml_names_1_and_str1(d: Path) -> list[str]:
    yolo_root(d)
    (d / "y" / "images").mkdir()
    w(d / "y" / "data.yaml", "path: .\nval: images\nnames: {0: cat, 1: dog, '1': cow}\n")
    return ["p", "y"]


def b_empty_tables(d: Path) -> list[str]:
    coco(d, {"images": [], "annotations": [], "categories": []}, [])
    return ["pred.json", "gt.json", "-o", "json"]


def b_coco_images_no_class(d: Path) -> list[str]:
    gt = {"images": [{"id": 1, "file_name": "a.jpg", "width": 9, "height": 9}],
          "annotations": [], "categories": []}  # fmt: skip
    coco(d, gt, [])
    return ["pred.json", "gt.json", "-o", "json"]


def b_voc_images_no_class(d: Path) -> list[str]:
    xml = "<annotation><filename>a.jpg</filename><size><width>9</width><height>9</height></size></annotation>"
    w(d / "v" / "a.xml", xml)
    return ["v", "v", "--protocol", "voc", "-o", "json"]


def b_surrogate_plots(d: Path) -> list[str]:
    gt = json.loads(json.dumps(GT))
    gt["categories"][0]["name"] = "a\udcffb"
    w(d / "gt.json", json.dumps(gt))
    w(d / "pred.json", json.dumps(PRED))
    return ["pred.json", "gt.json", "--plots", "figs", "--report", "r.html"]


def b_voc_subfolder_xml(d: Path) -> list[str]:
    xml = "<annotation><filename>a.jpg</filename><size><width>9</width><height>9</height></size></annotation>"
    w(d / "v" / "Annotations" / "a.xml", xml)
    (d / "v" / "Annotations" / "b.xml").mkdir()
    w(d / "v" / "ImageSets" / "Main" / "val.txt", "a\nb\n")
    return ["v", "v", "-o", "json"]


def b_iou_literal_vs_file(d: Path) -> list[str]:
    w(d / "0,0,10,10", "")
    return ["iou", "0,0,10,10", "5,5,15,15"]


def b_bootstrap_huge(d: Path) -> list[str]:
    coco(d)
    return ["compare", "pred.json", "pred.json", "gt.json", "--bootstrap", "1000000000000"]


def b_bootstrap_one_significant(d: Path) -> list[str]:
    coco(d)
    return ["compare", "pred.json", "pred.json", "gt.json", "--bootstrap", "1",
            "--significant-only", "--fail-if-worse", "AP=0.01"]  # fmt: skip


def b_matches_report_one_path(d: Path) -> list[str]:
    coco(d)
    return ["pred.json", "gt.json", "--matches", "out", "--report", "out"]


def b_curves_csv(d: Path) -> list[str]:
    coco(d)
    return ["pred.json", "gt.json", "--curves", "-o", "csv"]


def b_cvat_nan_score(d: Path) -> list[str]:
    xml = (
        '<annotations><image id="0" name="a.jpg" width="100" height="100">'
        '<box label="cat" xtl="10" ytl="10" xbr="30" ybr="30">'
        '<attribute name="score">nan</attribute></box></image></annotations>'
    )
    return [w(d / "p.xml", xml), w(d / "g.xml", xml.replace("nan", "1"))]


def b_openimages_dup_header(d: Path) -> list[str]:
    csv = "ImageID,LabelName,XMin,XMax,YMin,YMax,XMin\na,cat,0.1,0.2,0.1,0.2,0.5\n"
    return [w(d / "p.csv", csv), w(d / "g.csv", csv)]


def b_openimages_ext_collision(d: Path) -> list[str]:
    csv = "ImageID,LabelName,XMin,XMax,YMin,YMax\na.jpg,cat,0.1,0.2,0.1,0.2\na.png,cat,0.1,0.2,0.1,0.2\n"
    return [w(d / "p.csv", csv), w(d / "g.csv", csv)]


def b_empty_class_name(d: Path) -> list[str]:
    gt = json.loads(json.dumps(GT))
    gt["categories"][0]["name"] = ""
    coco(d, gt)
    return ["pred.json", "gt.json"]


def b_second_bbox_key(d: Path) -> list[str]:
    coco(d)
    text = (d / "gt.json").read_text().replace('"bbox": [10, 10, 20, 20]', '"bbox": [10, 10, 20, 20], "bbox": [0, 0, 1, 1]', 1)  # fmt: skip
    w(d / "gt.json", text)
    return ["pred.json", "gt.json"]


def b_dup_under_980_deep(d: Path) -> list[str]:
    coco(d)
    gt = (d / "gt.json").read_text()
    deep = "[" * 980 + "]" * 980
    w(d / "gt.json", gt[:-1] + f', "x": {deep}, "annotations": []}}')
    return ["pred.json", "gt.json"]


def b_gzip_bomb_file(d: Path) -> list[str]:
    coco(d)
    w(d / "bomb.json.gz", _bomb(d))
    return ["bomb.json.gz", "gt.json"]


def b_gzip_bomb_stdin(d: Path) -> list[str]:
    coco(d)
    return ["-", "gt.json"]


def b_image_ids_pipe(d: Path) -> list[str]:
    coco(d)
    fifo = d / "ids"
    os.mkfifo(fifo)
    return ["pred.json", "gt.json", "--image-ids", str(fifo), "-o", "json"]


def b_nfc_names(d: Path) -> list[str]:
    gt = json.loads(json.dumps(GT))
    gt["categories"][0]["name"] = "cafe\u0301"
    pred_gt = json.loads(json.dumps(GT))
    pred_gt["categories"][0]["name"] = "caf\u00e9"
    w(d / "gt.json", json.dumps(gt))
    w(d / "names.txt", "caf\u00e9\ndog\n")
    w(d / "p" / "a.txt", "0 0.2 0.2 0.2 0.2 0.9\n")
    return ["p", "gt.json", "--pred-names", "names.txt", "--image-size", "100x100"]


def b_yolo_underscore(d: Path) -> list[str]:
    yolo_root(d)
    w(d / "y" / "labels" / "a.txt", "0 0.5 0.5 0.2_0 0.2\n")
    return ["p", "y"]


def b_lvis_crowd(d: Path) -> list[str]:
    sample = Path(__file__).resolve().parents[2] / "sample_data" / "lvis"
    gt = json.loads((sample / "gt.json").read_text())
    gt["annotations"][0]["iscrowd"] = 1
    w(d / "gt.json", json.dumps(gt))
    return [str(sample / "preds.json"), "gt.json", "--protocol", "lvis", "-q"]


CASES = [
    # --- outputs (one guard)
    Case("compare-report-over-names", b_compare_report_over_names, 2, "refusing to overwrite the input file"),
    Case("compare-report-over-found-classes", b_compare_report_over_found_classes, 2, "which this run read"),
    Case("compare-report-into-images", b_compare_report_into_images, 2, "refusing to write into the input folder imgs"),
    Case("matches-over-data-yaml-split-list", b_matches_over_split_list, 2, "val.txt, which this run read"),
    Case("plots-symlink-onto-classes", b_plots_symlink_onto_classes, 2, "figs/pr_curve.png: refusing to overwrite"),
    Case("report-dev-stdout-with-o-json", b_report_dev_stdout_with_json, 2, "would be mixed into it"),
    Case("report-hard-link-to-found-classes", b_report_hard_link, 2, "classes.txt, which this run read"),
    Case("matches-and-report-one-path", b_matches_report_one_path, 2, "would write the same file"),
    Case("curves-with-o-csv", b_curves_csv, 2, "--curves adds a 'curves' section to -o json"),
    # --- compare
    Case("compare-gate-saved-nan", b_compare_nan_gate, 2, "nan.json:1:"),
    Case("compare-seed-minus-1", b_compare_seed, 2, "--seed: expected an integer from 0"),
    Case("compare-stdin-twice", b_compare_stdin_twice, 2, "can be read only once"),
    Case("report-400-digit-int", b_report_400_digits, 2, "x.json:summary.AP50: integer 9999999999...(400 digits)"),
    Case("report-5000-digit-int", b_report_5000_digits, 2, "an integer of more than 4300 digits"),
    Case("report-deep-nesting", b_report_deep, 2, "JSON nested more than 100 deep"),
    Case("report-second-summary-key", b_report_second_summary, 2, "duplicate top-level key 'summary'"),
    Case("report-per-class-ap-string", b_report_ap_string, 2, "x.json:per_class[0].AP: expected a number"),
    Case("report-summary-key-formula", b_report_formula_key, 2, "is not a metric name"),
    Case("report-summary-key-markdown", b_report_markdown_key, 2, "is not a metric name"),
    Case("report-malformed-curves", b_report_bad_curves, 2, "x.json:curves.precision.0.5.cat: expected 2 numbers"),
    Case("report-truncated-curves", b_report_truncated_curves, 2, "x.json:1:"),
    Case("bootstrap-1e12", b_bootstrap_huge, 2, "--bootstrap: expected a sample count from 0 to 100,000"),
    Case("bootstrap-1-significant-only", b_bootstrap_one_significant, 2, "cannot make a 0.95 confidence interval"),
    # --- loaders
    Case("cvat-cuboid-said", b_cvat_cuboid, 0, "<cuboid> shapes are not boxes and are not read"),
    Case("cvat-nan-score", b_cvat_nan_score, 2, "score: expected a finite number"),
    Case("labelme-points-bool", b_labelme_points_bool, 2, "shapes[0].points: expected [[x, y], ...] of finite numbers"),
    Case("labelme-points-strings", b_labelme_points_str, 2, "shapes[0].points"),
    Case("labelme-score-string", b_labelme_score_str, 2, "shapes[0].score: expected a finite number"),
    Case("labelme-fifo-json", b_labelme_fifo, 2, "lm/a.json: not a regular file (a FIFO)"),
    Case("yolo-fifo-image", b_yolo_fifo_image, 2, "a.jpg: not a regular file (a FIFO)"),
    Case("layout-image-header-4e9", b_layout_huge_header, 2, "the image header says width 4000000000: out of range"),
    Case("images-png-0x0", b_images_png_zero, 2, "a.png: the image header says width 0: out of range"),
    Case("data-yaml-5000-deep", b_yaml_deep, 2, "data.yaml:2: YAML nested too deeply"),
    Case("data-yaml-3000-aliases", b_yaml_aliases, 0, ""),
    Case("data-yaml-names-1-and-str-1", b_yaml_names_1_and_str1, 2, "are one class index"),
    Case("openimages-duplicate-header", b_openimages_dup_header, 2, "g.csv:1: column 'XMin' appears twice") ,
    Case("openimages-a.jpg-a.png", b_openimages_ext_collision, 2, "are one image once the extension is dropped"),
    Case("empty-class-name", b_empty_class_name, 2, "gt.json:categories[0].name: empty class name"),
    Case("second-bbox-key", b_second_bbox_key, 2, "gt.json:annotations[0]: duplicate key 'bbox'"),
    Case("duplicate-key-under-980-deep", b_dup_under_980_deep, 2, "JSON nested more than 100 deep"),
    Case("voc-subfolder-named-b.xml", b_voc_subfolder_xml, 0, ""),
    Case("iou-literal-box-and-file", b_iou_literal_vs_file, 2, "is both a box and an existing file"),
    Case("image-ids-from-a-pipe", b_image_ids_pipe, 0, ""),
    Case("yolo-number-with-underscore", b_yolo_underscore, 2, "a.txt:1: expected numbers, got '0.2_0'"),
    Case("lvis-crowd-box-said", b_lvis_crowd, 0, "LVIS has no crowd rule"),
    # --- tracebacks
    Case("empty-tables-regression", b_empty_tables, 0, ""),
    Case("coco-images-without-class", b_coco_images_no_class, 0, ""),
    Case("voc-images-without-class", b_voc_images_no_class, 0, ""),
    Case("lone-surrogate-plots-report", b_surrogate_plots, 0, "drawn escaped"),
    # --- memory
    Case("gzip-bomb-file", b_gzip_bomb_file, 2, "bomb.json.gz: decompresses to more than 200 times its size"),
    Case("gzip-bomb-stdin", b_gzip_bomb_stdin, 2, "<stdin>: decompresses to more than 200 times its size", stdin=b"bomb"),
]  # fmt: skip


class _Stdin:
    def __init__(self, data: bytes) -> None:
        import io

        self.buffer = io.BytesIO(data)

    def isatty(self) -> bool:
        return False

    def read(self, n: int = -1) -> str:
        return self.buffer.read(n).decode()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_attack3_case(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = case.build(tmp_path)
    before = _snapshot(tmp_path)
    feeder = None
    if case.stdin is not None:
        monkeypatch.setattr("sys.stdin", _Stdin(_bomb(tmp_path)))
    if case.id == "image-ids-from-a-pipe":
        import threading

        def feed() -> None:
            with open(tmp_path / "ids", "wb") as fh:
                fh.write(b"1\n")

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
    code, out, err = run_cli(args)
    if feeder is not None:
        feeder.join(5)
    assert "Traceback" not in err
    if case.exit == 2:
        line = assert_one_error_line(code, out, err)
        assert case.text in line, (line, case.text)
    else:
        assert code == case.exit, err
        assert case.text in err, err
    # never an input written over, never a temporary file left
    after = _snapshot(tmp_path)
    for path, digest in before.items():
        assert after.get(path) == digest, f"{path} changed"
    assert not [p for p in after if ".iou-eval-" in p], after


def _snapshot(root: Path) -> dict[str, object]:
    import hashlib

    out: dict[str, object] = {}
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            if os.path.islink(p) or not os.path.isfile(p):
                out[os.path.relpath(p, root)] = "special"
                continue
            out[os.path.relpath(p, root)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


# ---------------------------------------------------------------- cases that check numbers


def test_empty_tables_give_null_ap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli([*b_empty_tables(tmp_path), "-q"])
    assert code == 0, err
    assert json.loads(out)["summary"]["AP"] is None


def test_cvat_rotation_is_the_extent_of_the_rotated_box(tmp_path: Path) -> None:
    # a 40 x 10 box centred at (50, 50) rotated by 90 degrees covers x 45..55, y 30..70 (by
    # hand); the prediction is exactly that extent: AP 1 (unrotated, IoU 1/7: AP 0)
    xml = (
        '<annotations><image id="0" name="a.jpg" width="100" height="100">'
        '<box label="cat" xtl="30" ytl="45" xbr="70" ybr="55" rotation="90"/>'
        "</image></annotations>"
    )
    gt = w(tmp_path / "g.xml", xml)
    pred = w(
        tmp_path / "p.xml",
        xml.replace('xtl="30" ytl="45" xbr="70" ybr="55" rotation="90"/>', 'xtl="45" ytl="30" '
                    'xbr="55" ybr="70"><attribute name="score">0.9</attribute></box>'),
    )  # fmt: skip
    code, out, err = run_cli([pred, gt, "-q", "-o", "json"])
    assert code == 0, err
    assert json.loads(out)["summary"]["AP50"] == pytest.approx(1.0, abs=1e-12)


def test_nfc_equal_class_names_join_and_are_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli([*b_nfc_names(tmp_path), "-o", "json", "--per-class"])
    assert code == 0, err
    assert "normalised to Unicode NFC" in err
    names = [r["name"] for r in json.loads(out)["per_class"]]
    assert "caf\u00e9" in names and "cafe\u0301" not in names


def test_compare_joins_classes_by_id_when_both_sides_have_ids(tmp_path: Path) -> None:
    # two classes named "cat" (ids 1 and 2): A finds only class 2, B only class 1; by id the
    # deltas are +1 for id 1 and -1 for id 2 (by name both rows would be one "cat")
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100, "iscrowd": 0},
            {"id": 2, "image_id": 1, "category_id": 2, "bbox": [50, 50, 10, 10], "area": 100, "iscrowd": 0},
        ],
        "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "cat"}],
    }  # fmt: skip
    w(tmp_path / "gt.json", json.dumps(gt))
    w(tmp_path / "a.json", json.dumps([{"image_id": 1, "category_id": 2, "bbox": [50, 50, 10, 10], "score": 0.9}]))  # fmt: skip
    w(tmp_path / "b.json", json.dumps([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}]))  # fmt: skip
    args = [str(tmp_path / n) for n in ("a.json", "b.json", "gt.json")]
    code, out, err = run_cli(
        ["compare", *args, "--bootstrap", "0", "-o", "json", "-q", "--per-class"]
    )
    assert code == 0, err
    rows = {r["category_id"]: r for r in json.loads(out)["per_class"]}
    assert rows[1]["delta"] == pytest.approx(1.0, abs=1e-12)
    assert rows[2]["delta"] == pytest.approx(-1.0, abs=1e-12)


def test_curves_keep_every_class_when_renamed_duplicates_collide() -> None:
    from iou_cli.analysis.curves import unique_names

    names = unique_names(["cat", "cat", "cat (id 2)"], [1, 2, 3])
    assert len(set(names)) == 3 and "cat (id 2)" in names


def test_report_dash_writes_the_page_to_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    coco(tmp_path)
    code, out, err = run_cli(["pred.json", "gt.json", "-q", "--report", "-"])
    assert code == 0, err
    assert out.startswith("<!DOCTYPE html>") and not (tmp_path / "-").exists()


def test_split_outside_the_root_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    yolo_root(tmp_path)
    w(tmp_path / "outside" / "images" / "a.png", png(100, 100))
    w(tmp_path / "y" / "data.yaml", "path: .\nval: ../outside/images\nnames: [cat, dog]\n")
    code, _out, err = run_cli(["p", "y"])
    assert code == 0, err
    assert "outside the dataset root" in err


def test_cvat_images_without_subset_are_said(tmp_path: Path) -> None:
    xml = (
        '<annotations><image id="0" name="a.jpg" width="100" height="100" subset="val">'
        '<box label="cat" xtl="10" ytl="10" xbr="30" ybr="30"/></image>'
        '<image id="1" name="b.jpg" width="100" height="100">'
        '<box label="cat" xtl="10" ytl="10" xbr="30" ybr="30"/></image></annotations>'
    )
    gt = w(tmp_path / "g.xml", xml)
    pred = w(tmp_path / "p.json", json.dumps([]))
    code, _out, err = run_cli([pred, gt, "-q"])
    assert code == 0, err
    assert "1 image(s) without a subset" in err


# ---------------------------------------------------------------- the Python API


GT_OBJ = {
    "images": [{"id": 1, "width": 10, "height": 10}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5], "area": 25, "iscrowd": 0}],
    "categories": [{"id": 1, "name": "a"}],
}  # fmt: skip


@pytest.mark.parametrize(
    "kw, text",
    [
        ({"image_size": (0, 0)}, "--image-size: 0 pixels is out of range"),
        ({"image_size": (-5, 10)}, "--image-size: -5 pixels is out of range"),
        ({"iou_thr": "0.5"}, "iou_thr: expected a number"),
        ({"max_dets": [1.5]}, "max_dets: expected a whole number, got 1.5"),
        ({"score_thr": True}, "score_thr: expected a number"),
    ],
    ids=[
        "image-size-0x0",
        "image-size-negative",
        "iou-thr-string",
        "max-dets-1.5",
        "score-thr-bool",
    ],
)
def test_api_checks_options_as_the_cli(kw: dict[str, Any], text: str) -> None:
    from iou_cli import evaluate
    from iou_cli.errors import UsageError

    with pytest.raises(UsageError, match=re.escape(text)):
        evaluate([], GT_OBJ, **kw)


def test_api_accepts_numpy_scalars_and_mappings() -> None:
    import collections

    import numpy as np

    from iou_cli import evaluate
    from iou_cli.errors import InputError

    rec = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5], "score": 0.9}
    want = evaluate([rec], GT_OBJ).summary["AP"]
    assert want == pytest.approx(1.0, abs=1e-12)
    for preds in (
        [collections.OrderedDict(rec)],
        [{**rec, "score": np.float32(0.9)}],
        [{**rec, "bbox": np.array([0, 0, 5, 5.0]), "score": np.array(0.9)}],
    ):
        assert evaluate(preds, GT_OBJ).summary["AP"] == want
    assert evaluate([rec], GT_OBJ, image_ids=1, iou_thr=np.float64(0.5)).summary["AP"] == want
    with pytest.raises(InputError, match="expected a finite number, got a boolean"):
        evaluate([{**rec, "score": True}], GT_OBJ)  # booleans stay refused


def test_reports_of_different_ground_truths_are_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    coco(tmp_path)
    a = report(tmp_path, "a.json")
    gt = json.loads(json.dumps(GT))
    gt["annotations"][0]["bbox"] = [11, 10, 20, 20]
    w(tmp_path / "gt.json", json.dumps(gt))
    b = report(tmp_path, "b.json")
    assert json.loads(Path(a).read_text())["meta"]["gt_fingerprint"] != json.loads(Path(b).read_text())["meta"]["gt_fingerprint"]  # fmt: skip
    code, _out, err = run_cli(["compare", a, b, "-q"])
    assert code == 0, err
    assert "made against different ground truths" in err
    code, _out, err = run_cli(["compare", a, a, "-q"])
    assert "different ground truths" not in err


def test_string_ids_1_and_01_meet_their_own_files(tmp_path: Path) -> None:
    # 01.txt has a box in the centre, 1.txt one in the corner; the predictions "01" (centre)
    # and "1" (centre) both scored 0.9: "01" is a TP, "1" an FP. By hand (101-point AP,
    # the TP first in image order): precision 1 up to recall 0.5 -> AP = 51/101. Joined
    # through int("01") both would go to 1.txt: AP 0.
    w(tmp_path / "y" / "classes.txt", "cat\n")
    w(tmp_path / "y" / "labels" / "01.txt", "0 0.5 0.5 0.2 0.2\n")
    w(tmp_path / "y" / "labels" / "1.txt", "0 0.2 0.2 0.2 0.2\n")
    rec = {"category_id": 0, "bbox": [0.4, 0.4, 0.2, 0.2], "score": 0.9}
    pred = w(tmp_path / "p.json", json.dumps([{"image_id": "1", **rec}, {"image_id": "01", **rec}]))
    code, out, err = run_cli([pred, str(tmp_path / "y"), "--image-size", "1x1", "-o", "json", "-q"])
    assert code == 0, err
    assert json.loads(out)["summary"]["AP"] == pytest.approx(51 / 101, abs=1e-12)
