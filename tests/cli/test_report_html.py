"""The HTML report: self-contained (no external resource), names escaped, renders in chromium."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from iou_cli.analysis import curves as C
from iou_cli.report import html as report_html
from tests.browser import find_chromium, judge, screenshot

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "coco"
EVIL = "<script>alert(1)</script>"


def _evaluate(pred: Path, gt: Path) -> tuple[Any, dict[str, Any]]:
    from iou_cli import evaluate

    result = evaluate(str(pred), str(gt))
    cv = C.for_result(result)
    assert cv is not None
    return result, cv


def _evil_inputs(tmp_path: Path) -> tuple[Path, Path]:
    """The sample data with one class renamed to a script tag (and a quote-laden one)."""
    gt = json.loads((SAMPLE / "gt.json").read_text())
    gt["categories"][0]["name"] = EVIL
    gt["categories"][1]["name"] = "\"quoted' & <b>bold</b>"
    g = tmp_path / "gt.json"
    g.write_text(json.dumps(gt))
    p = tmp_path / "preds.json"
    p.write_text((SAMPLE / "preds.json").read_text())
    return p, g


EXTERNAL = [
    re.compile(r"""\b(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.I),
    re.compile(r"@import", re.I),
    re.compile(r"url\(\s*[\"']?\s*(?:https?:)?//", re.I),
    re.compile(r"<link\b", re.I),
    re.compile(r"<script[^>]*\bsrc\s*=", re.I),
]


def external_resources(html: str) -> list[str]:
    found = []
    for pat in EXTERNAL:
        found += [m.group(0) for m in pat.finditer(html)]
    # inside the embedded SVG figures too
    for b64 in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", html):
        svg = base64.b64decode(b64).decode("utf-8")
        for pat in EXTERNAL:
            found += [m.group(0) for m in pat.finditer(svg) if "www.w3.org" not in m.group(0)]
        found += re.findall(r"xlink:href=\"(?!#|data:)[^\"]*\"", svg)
    return found


def test_external_resource_detector_is_not_blind() -> None:
    for bad in (
        '<img src="https://x/y.png">',
        "<script src=//cdn/x.js></script>",
        '<link rel="stylesheet" href="a.css">',
        "<style>@import 'x.css'</style>",
        "<style>body{background:url(http://x/y.png)}</style>",
    ):
        assert external_resources(bad), bad


@pytest.fixture(scope="module")
def evil_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("evil")
    pred, gt = _evil_inputs(tmp)
    result, cv = _evaluate(pred, gt)
    result.extra = {  # type: ignore[attr-defined]
        "confusion": {
            "labels": [EVIL, "car", "dog", "background"],
            "matrix": [[8, 0, 0, 1], [0, 5, 1, 0], [0, 1, 5, 2], [1, 3, 1, 0]],
        },
        "tide": {"baseline": 48.6, "dAP": {"Cls": 3.1, "Loc": 8.2, "Miss": 6.0}, "count": {}},
        "per_image": [{"image": EVIL, "n_gt": 3, "n_pred": 4, "tp": 1, "fp": 3, "fn": 2}],
        "label_errors": [
            {"kind": "wrong_label", "image": EVIL, "category": "dog", "score": 0.9, "iou": 0.8}
        ],
        "calibration": {
            "iou_thr": 0.5,
            "overall": {
                "ece": 0.1,
                "bins": [
                    {"lo": 0.5, "hi": 0.6, "count": 3, "confidence": 0.55, "accuracy": 0.3},
                    {"lo": 0.9, "hi": 1.0, "count": 0, "confidence": None, "accuracy": None},
                ],
            },
        },
    }
    result.warnings.append(f"warning about {EVIL}")
    return report_html.evaluation_report(
        result, cv, inputs={"predictions": str(pred), "ground truth": EVIL}
    )


def test_report_has_no_external_resource(evil_report: str) -> None:
    assert external_resources(evil_report) == []
    assert "<script>" in evil_report  # the one inline sorting script
    assert evil_report.count("<script") == 1


def test_names_from_inputs_are_text_not_markup(evil_report: str) -> None:
    assert "alert(1)" in evil_report
    assert EVIL not in evil_report
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in evil_report
    assert "<b>bold</b>" not in evil_report
    assert "&quot;quoted&#x27; &amp; &lt;b&gt;bold&lt;/b&gt;" in evil_report


def test_report_sections(evil_report: str) -> None:
    for heading in (
        "Per class",
        "Error breakdown (TIDE)",
        "Worst images",
        "Label-error candidates",
        "Inputs",
        "Parameters",
    ):
        assert f">{heading}<" in evil_report
    # pr, confidence, ap bars, pr per class, confusion, tide, calibration
    assert evil_report.count("data:image/svg+xml;base64,") == 7
    assert 'class="sortable"' in evil_report


def test_compare_report_escapes_and_is_self_contained(tmp_path: Path) -> None:
    pred, gt = _evil_inputs(tmp_path)
    a, cva = _evaluate(pred, gt)
    worse = json.loads((SAMPLE / "preds.json").read_text())[::2]  # drop half the predictions
    (tmp_path / "b.json").write_text(json.dumps(worse))
    b, cvb = _evaluate(tmp_path / "b.json", gt)
    cmp = report_html.comparison_of(a, b)
    assert cmp["metrics"]["AP"]["delta"] == b.summary["AP"] - a.summary["AP"]
    page = report_html.compare_report(cmp, curves_a=cva, curves_b=cvb, label_a=EVIL)
    assert EVIL not in page and "&lt;script&gt;" in page
    assert external_resources(page) == []
    assert page.count("data:image/svg+xml;base64,") == 2  # overlaid PR curves, delta bars
    assert "delta (B - A)" in page and "CI low" not in page
    # the compare verb's JSON shape, with bootstrap CIs
    cmp["metrics"]["AP"].update(ci_low=-0.2, ci_high=-0.01, significant=True)
    cmp["per_class"][0].update(ci_low=-0.3, ci_high=0.1, significant=False)
    page = report_html.compare_report(cmp, label_a="A", label_b="B")
    assert "CI low" in page and page.count("data:image/svg+xml;base64,") == 1


@pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (make report-check)")
def test_report_renders_in_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # what `make report-check` does, on the sample data with a class named <script>...: the
    # CLI's report in a real browser. An executed alert() would block the headless
    # screenshot; markup swallowed by a stray tag would leave the page blank.
    from tests.cli.helpers import run

    pred, gt = _evil_inputs(tmp_path)
    html = tmp_path / "report.html"
    code, _, err = run([str(pred), str(gt), "-q", "--report", str(html)], capsys)
    assert code == 0, err
    assert EVIL not in html.read_text(encoding="utf-8")
    png = tmp_path / "report.png"
    screenshot(html, png, height=1600)
    assert judge(png) == []


def test_judge_flags_a_blank_page(tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "blank.png"
    Image.new("RGB", (400, 400), "white").save(png)
    assert judge(png)


def test_curves_of_a_result_or_a_saved_report(capsys: pytest.CaptureFixture[str]) -> None:
    # compare's two modes: Results (predictions) or saved -o json reports (with --curves)
    from tests.cli.helpers import run

    result, cv = _evaluate(SAMPLE / "preds.json", SAMPLE / "gt.json")
    assert C.curves_of(result) == cv
    code, out, _ = run(
        [str(SAMPLE / "preds.json"), str(SAMPLE / "gt.json"), "-o", "json", "--curves"], capsys
    )
    doc = json.loads(out)
    assert code == 0 and C.curves_of(doc) == json.loads(json.dumps(cv))
    assert C.curves_of({"summary": {}}) is None


@pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (make report-check)")
def test_per_class_table_sorts_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the inline script, run by a real browser: click headers, read the row order back
    from tests.browser import dump_dom
    from tests.cli.helpers import run

    html = tmp_path / "report.html"
    code, _, err = run(
        [str(SAMPLE / "preds.json"), str(SAMPLE / "gt.json"), "-q", "--report", str(html)], capsys
    )
    assert code == 0, err
    probe = """<script>
var t=document.querySelector("table.sortable"),h=t.tHead.rows[0].cells,out=[];
function names(){return Array.prototype.map.call(t.tBodies[0].rows,
  function(r){return r.cells[0].textContent;}).join(",");}
out.push(names());h[3].click();out.push(names());h[3].click();out.push(names());
h[0].click();out.push(names());document.body.setAttribute("data-probe",out.join("|"));
</script></body>"""
    page = html.read_text(encoding="utf-8").replace("</body>", probe)
    html.write_text(page, encoding="utf-8")
    m = re.search(r'data-probe="([^"]*)"', dump_dom(html))
    assert m is not None
    # file order; AP (column 3) descending, then ascending; class names A-Z
    # (AP: person 0.657, dog 0.466, car 0.335)
    assert m.group(1).split("|") == [
        "person,car,dog",
        "person,dog,car",
        "car,dog,person",
        "car,dog,person",
    ]


def test_write_compare_report_for_the_compare_verb(tmp_path: Path) -> None:
    # the hook `iou-eval compare --report` calls: a Comparison-like object whose sources are
    # A's Result and B's saved report (with curves)
    from types import SimpleNamespace

    from iou_cli.cli.visuals import write_compare_report

    a, _ = _evaluate(SAMPLE / "preds.json", SAMPLE / "gt.json")
    b, cvb = _evaluate(SAMPLE / "preds.json", SAMPLE / "gt.json")
    cmp = SimpleNamespace(**report_html.comparison_of(a, b), info=[], sources=(a, {"curves": cvb}))
    target = tmp_path / "cmp.html"
    write_compare_report(cmp, str(target), [str(SAMPLE / "preds.json"), "b.json", "gt.json"])
    page = target.read_text(encoding="utf-8")
    assert page.count("data:image/svg+xml;base64,") == 2 and external_resources(page) == []
    assert cmp.info == [f"wrote the report {target}"]
