"""The keypoint CLI: the sample equals pycocotools; bad input and bad sigmas are one located
line and exit 2."""

from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers import run
from tests.oracle.pycoco import pycoco_eval, stats_of

ROOT = Path(__file__).resolve().parents[2]
KP = ROOT / "sample_data" / "keypoints"
KEYS = ["AP", "AP50", "AP75", "APm", "APl", "AR", "AR50", "AR75", "ARm", "ARl"]


def test_sample_equals_pycocotools(capsys: pytest.CaptureFixture[str]) -> None:
    preds, gt = KP / "coco" / "preds.json", KP / "coco" / "gt.json"
    code, out, err = run(
        [str(preds), str(gt), "--iou-type", "keypoints", "-o", "json", "--per-class"], capsys
    )
    assert code == 0, err
    doc = json.loads(out)
    ref = stats_of(
        pycoco_eval(json.loads(gt.read_text()), json.loads(preds.read_text()), "keypoints")
    )
    assert [doc["summary"][k] for k in KEYS] == ref
    assert "OKS sigmas: COCO's 17" in err
    assert doc["params"]["max_dets"] == [20]


def _write(tmp: Path, gt: object, dets: object) -> tuple[str, str]:
    (tmp / "gt.json").write_text(json.dumps(gt))
    (tmp / "dt.json").write_text(json.dumps(dets))
    return str(tmp / "dt.json"), str(tmp / "gt.json")


@pytest.mark.parametrize(
    ("edit", "extra", "line"),
    [
        (
            lambda g, d: g["annotations"][0]["keypoints"].__setitem__(5, 3),
            [],
            "gt.json:annotations[0].keypoints[5]: visibility flag 3 of keypoint 2",
        ),
        (
            lambda g, d: d[0].pop("keypoints"),
            [],
            "dt.json:[0]: missing key 'keypoints'",
        ),
        (
            lambda g, d: None,
            ["--sigmas", "0.1,0.2"],
            "--sigmas: 2 sigmas, but the keypoints have K = 3",
        ),
        (lambda g, d: None, [], "the keypoints have K = 3, and OKS needs one sigma per keypoint"),
    ],
)
def test_bad_input_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: object, extra: list[str], line: str
) -> None:
    gt = {
        "images": [{"id": 1}],
        "categories": [{"id": 1, "name": "p"}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [0, 0, 9, 9],
                "area": 50,
                "iscrowd": 0,
                "num_keypoints": 3,
                "keypoints": [1, 1, 2, 2, 2, 2, 3, 3, 2],
            }
        ],
    }
    dets = [{"image_id": 1, "category_id": 1, "score": 0.5, "keypoints": [1, 1, 1] * 3}]
    edit(gt, dets)  # type: ignore[operator]
    d, g = _write(tmp_path, gt, dets)
    code, _out, err = run([d, g, "--iou-type", "keypoints", *extra], capsys)
    assert code == 2
    errors = [ln for ln in err.splitlines() if ln.startswith("iou-eval: error:")]
    assert len(errors) == 1 and line in errors[0], err
    assert "Traceback" not in err


def test_per_keypoint_needs_keypoints(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(
        [
            str(ROOT / "sample_data/coco/preds.json"),
            str(ROOT / "sample_data/coco/gt.json"),
            "--per-keypoint",
        ],
        capsys,
    )
    assert code == 2 and "--per-keypoint needs --iou-type keypoints" in err


def test_sigmas_file_and_yolo_pose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "sigmas.txt"
    f.write_text("0.05 0.08\n0.08, 0.1 0.1\n")
    yolo = KP / "yolo"
    args = [
        str(yolo / "preds"),
        str(yolo / "labels"),
        "--iou-type",
        "keypoints",
        "--image-size",
        "640,480",
        "-o",
        "json",
    ]
    code, out, err = run([*args, "--sigmas", str(f)], capsys)
    assert code == 0, err
    code2, out2, err2 = run(args, capsys)  # the data.yaml's kpt_oks_sigmas: the same values
    assert code2 == 0 and json.loads(out)["summary"] == json.loads(out2)["summary"]
    assert "kpt_oks_sigmas" in err2 and "0.53" in err2


def test_compare_under_ultralytics_keypoints_has_no_box_intervals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Ultralytics' intervals re-run the devkit matching by box IoU: on keypoints that would
    # be intervals of another matching, so there are none (said on stderr)
    a, g = str(KP / "coco" / "preds.json"), str(KP / "coco" / "gt.json")
    args = ["compare", a, a, g, "--iou-type", "keypoints", "--protocol", "ultralytics"]
    code, out, err = run([*args, "-o", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["metrics"]["metrics/mAP50-95(P)"]["delta"] == 0.0
    assert all(m.get("ci_low") is None for m in doc["metrics"].values())
    assert "no bootstrap for protocol ultralytics on keypoints" in err


def test_compare_on_keypoints_with_sigmas(capsys: pytest.CaptureFixture[str]) -> None:
    yolo = KP / "yolo"
    common = [
        "--iou-type",
        "keypoints",
        "--image-size",
        "640,480",
        "--sigmas",
        "0.1,0.1,0.1,0.1,0.1",
    ]
    code, out, err = run([str(yolo / "preds"), str(yolo / "labels"), *common, "-o", "json"], capsys)
    assert code == 0, err
    ap = json.loads(out)["summary"]["AP"]
    code, out, err = run(
        [
            "compare",
            str(yolo / "preds"),
            str(yolo / "preds"),
            str(yolo / "labels"),
            *common,
            "-o",
            "json",
        ],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["metrics"]["AP"]["a"] == ap == doc["metrics"]["AP"]["b"]
    assert doc["metrics"]["AR75"]["delta"] == 0.0


def test_ultralytics_pose_predictions_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ultralytics' pose predictions.json (image_id = file stem, file_name, bbox, keypoints
    # [x, y, conf] * K in pixels, score) against YOLO-pose labels: the same numbers as the
    # same predictions written as YOLO-pose txt
    yolo = KP / "yolo"
    rows = []
    for f in sorted((yolo / "preds").glob("*.txt")):
        for line in f.read_text().splitlines():
            v = [float(x) for x in line.split()]
            c, cx, cy, w, h, kp, s = v[0], v[1], v[2], v[3], v[4], v[5:-1], v[-1]
            px = [
                x * (640.0 if i % 3 == 0 else 480.0) if i % 3 < 2 else x for i, x in enumerate(kp)
            ]
            rows.append(
                {
                    "image_id": f.stem,
                    "file_name": f.stem + ".jpg",
                    "category_id": int(c),
                    "bbox": [(cx - w / 2) * 640, (cy - h / 2) * 480, w * 640, h * 480],
                    "keypoints": px,
                    "score": s,
                }
            )
    pj = tmp_path / "predictions.json"
    pj.write_text(json.dumps(rows))
    common = ["--iou-type", "keypoints", "--image-size", "640,480", "-o", "json"]
    code, out, err = run([str(pj), str(yolo / "labels"), *common], capsys)
    assert code == 0, err
    code2, out2, err2 = run([str(yolo / "preds"), str(yolo / "labels"), *common], capsys)
    assert code2 == 0, err2
    a, b = json.loads(out)["summary"], json.loads(out2)["summary"]
    assert [a[k] for k in KEYS[:3]] == [b[k] for k in KEYS[:3]]


def test_matches_rows_carry_oks(capsys: pytest.CaptureFixture[str]) -> None:
    preds, gt = KP / "coco" / "preds.json", KP / "coco" / "gt.json"
    code, out, err = run([str(preds), str(gt), "--iou-type", "keypoints", "--matches", "-"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].endswith(",iou,outcome,error,best_gt_id,best_gt_class,best_gt_iou,oks")
    tp = [ln.split(",") for ln in lines[1:] if ",TP," in ln]
    assert tp and all(r[5] == r[-1] and 0.5 <= float(r[-1]) <= 1 for r in tp)


def test_html_report_has_the_keypoint_section_escaped() -> None:
    from iou_cli.api import evaluate
    from iou_cli.report.html import evaluation_report

    gt = json.loads((KP / "coco" / "gt.json").read_text())
    gt["categories"][0]["keypoints"][0] = "<b>nose</b>"
    dets = json.loads((KP / "coco" / "preds.json").read_text())
    r = evaluate(dets, gt, iou_type="keypoints", per_keypoint=True)
    page = evaluation_report(r, None, figures=False)
    assert "Keypoint evaluation report" in page and "Per keypoint:" in page
    assert "&lt;b&gt;nose&lt;/b&gt;" in page and "<b>nose</b>" not in page
    plain = evaluation_report(evaluate(dets, gt, iou_type="keypoints"), None, figures=False)
    assert "Per keypoint:" not in plain
    # the skeleton figure: an SVG image (no script can run in <img>), valid XML, the name
    # escaped in it too, one dot per placed keypoint and one line per edge
    svg = _skeleton_svg(page)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    texts = [t.text or "" for t in root.iter(ns + "text")]
    assert any(t.startswith("<b>nose</b> ") for t in texts)  # the parsed text: escaped in XML
    kp = r.analyses["per_keypoint"]
    placed = sum(p is not None for p in kp["layout"])
    assert len(list(root.iter(ns + "circle"))) == placed == 17
    assert (
        len(list(root.iter(ns + "line")))
        == len(kp["skeleton"])
        == len(gt["categories"][0]["skeleton"])
    )
    # without a skeleton in the categories: the table only
    del gt["categories"][0]["skeleton"]
    page = evaluation_report(
        evaluate(dets, gt, iou_type="keypoints", per_keypoint=True), None, figures=False
    )
    assert "Per keypoint:" in page and 'class="skeleton"' not in page


def _skeleton_svg(page: str) -> str:
    m = re.search(r'<figure class="skeleton"><img src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert m is not None
    return base64.b64decode(m.group(1)).decode("utf-8")


def test_skeleton_colours_by_share_within() -> None:
    from iou_cli.report.html_keypoints import colour, skeleton_svg

    assert colour(0.0) == "hsl(0,75%,42%)" and colour(1.0) == "hsl(120,75%,42%)"
    assert colour(None) == colour(float("nan")) == "#9aa0a6"
    kp = {
        "keypoints": [{"name": "a", "within": 0.0}, {"name": "b", "within": 1.0}, {"name": "c"}],
        "layout": [[0.0, -1.0], [0.0, 1.0], None],
        "skeleton": [[1, 2], [2, 3]],
    }
    svg = skeleton_svg(kp)
    assert svg is not None
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    fills = [c.get("fill") for c in root.iter(ns + "circle")]
    assert fills == ["hsl(0,75%,42%)", "hsl(120,75%,42%)"]  # c has no place: not drawn
    (line,) = root.iter(ns + "line")  # the edge to the unplaced keypoint is left out
    assert line.get("stroke") == "hsl(0,75%,42%)"  # an edge takes its worse end
    assert skeleton_svg(dict(kp, skeleton=[])) is None


@pytest.mark.skipif(
    __import__("tests.browser", fromlist=["find_chromium"]).find_chromium() is None,
    reason="chromium is not installed (make report-check)",
)
def test_skeleton_figure_renders_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the CLI's report with --per-keypoint in a real browser: the skeleton's SVG data URI is
    # decoded and drawn (its green, hsl(120,75%,42%) = rgb(27,188,27), on the page)
    import numpy as np
    from PIL import Image

    from tests.browser import judge, screenshot

    html = tmp_path / "report.html"
    args = [str(KP / "coco" / "preds.json"), str(KP / "coco" / "gt.json"), "--iou-type"]
    code, _, err = run([*args, "keypoints", "--per-keypoint", "-q", "--report", str(html)], capsys)
    assert code == 0, err
    png = tmp_path / "report.png"
    screenshot(html, png, height=2800)
    assert judge(png) == []
    rgb = np.asarray(Image.open(png).convert("RGB"), dtype=np.int32)
    green = (
        (abs(rgb[..., 0] - 27) < 30) & (abs(rgb[..., 1] - 188) < 30) & (abs(rgb[..., 2] - 27) < 30)
    )
    assert int(green.sum()) > 500
