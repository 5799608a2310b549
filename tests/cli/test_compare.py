"""`iou-eval compare`: two models on one ground truth (paired bootstrap CIs), two saved
reports (deltas only), and the --fail-if-worse gate."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import run

ROOT = Path(__file__).resolve().parents[2]
GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PRED = str(ROOT / "sample_data" / "coco" / "preds.json")


def _worse_preds(tmp_path: Path) -> str:
    """B: the sample predictions without the four best-scored person detections."""
    dets = json.loads(Path(PRED).read_text())
    person = sorted((d for d in dets if d["category_id"] == 1), key=lambda d: -d["score"])
    drop = {id(d) for d in person[:4]}
    path = tmp_path / "pred_b.json"
    path.write_text(json.dumps([d for d in dets if id(d) not in drop]))
    return str(path)


def _report(args: list[str], path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, _ = run([*args, "-o", "json", "-q"], capsys)
    assert code == 0
    path.write_text(out)
    return str(path)


@pytest.fixture
def reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    b = _worse_preds(tmp_path)
    return (
        _report([PRED, GT], tmp_path / "a.json", capsys),
        _report([b, GT], tmp_path / "b.json", capsys),
    )


def _json(out: str) -> dict[str, Any]:
    doc = json.loads(out)
    assert set(doc) >= {"metrics", "per_class", "params"}
    return doc


# --------------------------------------------------------------------------- two reports


def test_reports_give_exact_deltas_without_ci(
    reports: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    ra, rb = (json.loads(Path(p).read_text()) for p in reports)
    code, out, err = run(["compare", *reports, "-o", "json"], capsys)
    assert code == 0, err
    doc = _json(out)
    assert list(doc["metrics"]) == list(ra["summary"])
    for key, m in doc["metrics"].items():
        a, b = ra["summary"][key], rb["summary"][key]
        assert m["a"] == a and m["b"] == b
        assert m["delta"] == (b - a)  # exactly b - a
        assert m["ci_low"] is None and m["ci_high"] is None and m["significant"] is None
    assert doc["metrics"]["AP"]["delta"] < 0  # B is worse by construction
    rows = {r["name"]: r for r in doc["per_class"]}
    for rc in ra["per_class"]:
        rb_row = next(r for r in rb["per_class"] if r["name"] == rc["name"])
        assert rows[rc["name"]]["delta"] == rb_row["AP"] - rc["AP"]


def test_report_against_itself_is_all_zero(
    reports: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["compare", reports[0], reports[0], "-o", "json"], capsys)
    assert code == 0
    for m in _json(out)["metrics"].values():
        assert m["delta"] in (0, None)


def test_gate_fails_with_the_report_printed(
    reports: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["compare", *reports, "-o", "csv", "--fail-if-worse", "AP=0.001"], capsys)
    assert code == 1
    assert out.startswith("scope,key,")  # the report is still printed
    assert "fail-if-worse: AP dropped by" in err
    # a margin larger than the drop passes; the other direction never fails
    code, _, _ = run(["compare", *reports, "-o", "csv", "--fail-if-worse", "AP=0.5"], capsys)
    assert code == 0
    code, _, _ = run(
        ["compare", reports[1], reports[0], "-o", "csv", "--fail-if-worse", "AP=0"], capsys
    )
    assert code == 0


def test_gate_on_lower_is_better_keys_points_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for i, (fp, fn) in enumerate(((3, 2), (5, 1))):
        p = tmp_path / f"r{i}.json"
        p.write_text(
            json.dumps({"summary": {"AP": 0.5, "fp": fp, "fn": fn}, "per_class": [], "params": {}})
        )
        paths.append(str(p))
    code, out, err = run(["compare", *paths, "-o", "csv", "--fail-if-worse", "fp=1"], capsys)
    assert code == 1 and "fp rose by 2 (A 3 -> B 5), allowed 1" in err
    assert "summary,fp,,all,3,5,2,,," in out
    code, _, _ = run(["compare", *paths, "-o", "csv", "--fail-if-worse", "fp=2"], capsys)
    assert code == 0  # not worse by MORE than the margin
    code, _, _ = run(["compare", *paths, "-o", "csv", "--fail-if-worse", "fn=0"], capsys)
    assert code == 0  # fewer misses is better
    code, _, _ = run(
        ["compare", paths[1], paths[0], "-o", "csv", "--fail-if-worse", "fn=0"], capsys
    )
    assert code == 1


@pytest.mark.parametrize(
    "gate, words",
    [
        ("score_thr=0.1", "setting"),
        ("iou_thr=0", "setting"),
        ("APx=0.1", "unknown summary key"),
        ("AP", "KEY=MARGIN"),
        ("AP=-1", "KEY=MARGIN"),
        ("AP=nan", "KEY=MARGIN"),
    ],
)
def test_bad_gates_are_usage_errors(
    reports: tuple[str, str], capsys: pytest.CaptureFixture[str], gate: str, words: str
) -> None:
    code, out, err = run(["compare", *reports, "-o", "csv", "--fail-if-worse", gate], capsys)
    assert code == 2 and out == ""
    assert err.startswith("iou-eval: error:") and words in err
    assert len(err.strip().splitlines()) == 1


def test_significant_only_needs_a_bootstrap(
    reports: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["compare", *reports, "--fail-if-worse", "AP=0", "--significant-only", "-o", "csv"],
        capsys,
    )
    assert code == 2 and "needs confidence intervals" in err and out == ""


def test_bad_inputs_exit_2_with_one_located_line(
    tmp_path: Path, reports: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"summary": {"AP": 0.5}, "per_class": [], \n "params": {')
    code, out, err = run(["compare", reports[0], str(broken), "-o", "csv"], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"iou-eval: error: {broken}:") and "not valid JSON" in err
    bad_value = tmp_path / "bad.json"
    bad_value.write_text('{"summary": {"AP": "high"}, "per_class": [], "params": {}}')
    code, _, err = run(["compare", reports[0], str(bad_value), "-o", "csv"], capsys)
    assert code == 2 and f"{bad_value}:summary.AP:" in err
    # two prediction files without ground truth
    code, _, err = run(["compare", PRED, PRED, "-o", "csv"], capsys)
    assert code == 2 and "GROUND_TRUTH" in err
    code, _, err = run(["compare", PRED, "-o", "csv"], capsys)
    assert code == 2
    # a VOC report against a COCO one
    voc = json.loads(Path(reports[0]).read_text())
    voc["params"]["protocol"] = "voc"
    other = tmp_path / "voc.json"
    other.write_text(json.dumps(voc))
    code, _, err = run(["compare", reports[0], str(other), "-o", "csv"], capsys)
    assert code == 2 and "different protocols" in err


# --------------------------------------------------------------------------- names are data


def _named_reports(tmp_path: Path, name: str) -> tuple[str, str]:
    docs = []
    for i, ap in enumerate((0.5, 0.25)):
        doc = {
            "summary": {"AP": ap, "fp": 3},
            "per_class": [
                {"category_id": 1, "name": name, "AP": ap},
                {"category_id": 2, "name": "plain", "AP": 0.5 - i * 0.01},
            ],
            "params": {"protocol": "coco"},
        }
        p = tmp_path / f"r{i}.json"
        p.write_text(json.dumps(doc))
        docs.append(str(p))
    return docs[0], docs[1]


def test_class_names_are_escaped_in_every_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ra, rb = _named_reports(tmp_path, '=HYPERLINK("x")|[bold]\x1b[31m')
    code, out, _ = run(["compare", ra, rb, "-o", "csv", "--per-class"], capsys)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    names = [r["name"] for r in rows if r["scope"] == "class"]
    assert names[0].startswith("'=")  # formula rule
    code, out, _ = run(["compare", ra, rb, "-o", "markdown", "--per-class"], capsys)
    line = next(ln for ln in out.splitlines() if "HYPERLINK" in ln)
    assert line.count("|") - line.count("\\|") == 6  # class, n_gt, A, B, delta: one cell
    code, out, _ = run(["compare", ra, rb, "-o", "table", "--per-class"], capsys)
    assert "\x1b[31m" not in out and "\\x1b" in out and "[bold]" in out


def test_terminal_lists_classes_by_size_of_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ra, rb = _named_reports(tmp_path, "big")
    code, out, _ = run(["compare", ra, rb, "-o", "markdown", "--per-class"], capsys)
    lines = [ln for ln in out.splitlines() if ln.startswith("| big") or ln.startswith("| plain")]
    assert lines[0].startswith("| big")  # -0.25 before -0.01
    code, out, _ = run(["compare", rb, ra, "-o", "markdown", "--per-class"], capsys)
    lines = [ln for ln in out.splitlines() if ln.startswith("| big") or ln.startswith("| plain")]
    assert lines[0].startswith("| big")  # +0.25 (improvement) also first


# --------------------------------------------------------------------------- predictions + GT

PRED_B = str(ROOT / "sample_data" / "coco" / "preds_b.json")
PROTOCOLS = ["coco", "voc", "voc07"]


def _single(pred: str, protocol: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, _ = run([pred, GT, "--protocol", protocol, "-o", "json", "-q"], capsys)
    assert code == 0
    return json.loads(out)


def _compare(
    capsys: pytest.CaptureFixture[str], *extra: str, a: str = PRED, b: str = PRED_B
) -> tuple[int, dict[str, Any], str]:
    code, out, err = run(["compare", a, b, GT, "-o", "json", "-q", *extra], capsys)
    return code, (json.loads(out) if out else {}), err


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_and_b_are_the_single_runs_bit_for_bit(
    protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ra, rb = _single(PRED, protocol, capsys), _single(PRED_B, protocol, capsys)
    code, doc, err = _compare(capsys, "--protocol", protocol, "--bootstrap", "200")
    assert code == 0, err
    assert list(doc["metrics"]) == list(ra["summary"])
    for key, m in doc["metrics"].items():
        assert m["a"] == ra["summary"][key] and m["b"] == rb["summary"][key], key
        if m["a"] is not None and m["b"] is not None:
            assert m["delta"] == m["b"] - m["a"]
    main_key = "AP" if protocol == "coco" else "mAP"
    m = doc["metrics"][main_key]
    assert m["delta"] < 0  # B dropped four good person detections
    assert m["ci_low"] <= m["delta"] <= m["ci_high"]  # the CI contains the delta
    assert doc["params"]["bootstrap"] == 200 and doc["params"]["seed"] == 0
    for row, ca, cb in zip(doc["per_class"], ra["per_class"], rb["per_class"], strict=True):
        assert row["name"] == ca["name"] and row["a"] == ca["AP"] and row["b"] == cb["AP"]
        if row["ci_low"] is not None:
            assert row["ci_low"] <= row["delta"] <= row["ci_high"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_identical_inputs_give_zero_delta_and_zero_ci(
    protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc, _ = _compare(capsys, "--protocol", protocol, "--bootstrap", "100", b=PRED)
    assert code == 0
    for key, m in doc["metrics"].items():
        assert m["delta"] in (0, None), key
        if m["ci_low"] is not None:
            assert m["ci_low"] == 0 and m["ci_high"] == 0 and m["significant"] is False, key
    assert doc["metrics"]["precision"]["ci_low"] == 0  # operating point resampled too
    for row in doc["per_class"]:
        assert row["delta"] == 0 and row["ci_low"] == 0 and row["ci_high"] == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_seed_reproduces_the_cis(protocol: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--protocol", protocol, "--bootstrap", "150")
    _, d1, _ = _compare(capsys, *args, "--seed", "3")
    _, d2, _ = _compare(capsys, *args, "--seed", "3")
    _, d3, _ = _compare(capsys, *args, "--seed", "4")
    assert d1["metrics"] == d2["metrics"] and d1["per_class"] == d2["per_class"]
    key = "AP" if protocol == "coco" else "mAP"
    assert d1["metrics"][key]["ci_low"] != d3["metrics"][key]["ci_low"] or (
        d1["metrics"][key]["ci_high"] != d3["metrics"][key]["ci_high"]
    )


def test_bootstrap_0_gives_deltas_only(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, _ = _compare(capsys, "--bootstrap", "0")
    assert code == 0 and doc["params"]["bootstrap"] == 0
    assert all(m["ci_low"] is None for m in doc["metrics"].values())


def test_significant_only_gate(capsys: pytest.CaptureFixture[str]) -> None:
    """The mAP drop is significant (its CI excludes 0), the fp rise is not."""
    base = ("--protocol", "voc", "--bootstrap", "500")
    _, doc, _ = _compare(capsys, *base)
    assert doc["metrics"]["mAP"]["significant"] is True
    assert doc["metrics"]["fp"]["delta"] > 0 and doc["metrics"]["fp"]["significant"] is False
    code, _, err = _compare(capsys, *base, "--fail-if-worse", "mAP=0.01", "--significant-only")
    assert code == 1 and "mAP dropped by" in err
    code, doc, err = _compare(capsys, *base, "--fail-if-worse", "fp=0", "--significant-only")
    assert code == 0 and doc["gates"][0]["failed"] is False
    code, _, err = _compare(capsys, *base, "--fail-if-worse", "fp=0")
    assert code == 1 and "fp rose by 2" in err


@pytest.mark.parametrize(
    "args, words",
    [
        (["--bootstrap", "-1"], "--bootstrap"),
        (["--confidence", "1.5"], "--confidence"),
        (["--confidence", "0"], "--confidence"),
        (["--protocol", "lvis2"], "--protocol"),
        (["--fail-if-worse", "mAP=0.1"], "unknown summary key"),
    ],
)
def test_bad_options_exit_2(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["compare", PRED, PRED_B, GT, "-o", "json", *args], capsys)
    assert code == 2 and out == "" and words in err and err.startswith("iou-eval: error:")


def test_a_bad_prediction_file_exits_2_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1], "score": 0.5}]')
    code, out, err = run(["compare", PRED, str(bad), GT, "-o", "json"], capsys)
    assert code == 2 and out == "" and str(bad) in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "pred, gt, extra",
    [
        (
            "sample_data/yolo/preds",
            "sample_data/voc/annotations",
            ["--protocol", "voc07", "--plus-one"],
        ),
        (
            "sample_data/yolo/preds",
            "sample_data/voc/annotations",
            ["--protocol", "voc", "--voc-origin", "1"],
        ),
        ("sample_data/yolo/preds", "sample_data/yolo/labels", ["--image-size", "640,480"]),
        (
            "tests/data/segm/detectron2_case/detections.json",
            "tests/data/segm/detectron2_case/gt_annotations.json",
            ["--iou-type", "segm"],
        ),
    ],
)
def test_every_input_format_and_option_of_the_default_verb(
    pred: str, gt: str, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    pred, gt = str(ROOT / pred), str(ROOT / gt)
    code, out, _ = run([pred, gt, "-o", "json", "-q", *extra], capsys)
    assert code == 0
    single = json.loads(out)["summary"]
    code, out, err = run(
        ["compare", pred, pred, gt, "-o", "json", "-q", "--bootstrap", "50", *extra], capsys
    )
    assert code == 0, err
    doc = json.loads(out)
    for key, m in doc["metrics"].items():
        assert m["a"] == single[key] and m["b"] == single[key]
        assert m["delta"] in (0, None)
        if m["ci_low"] is not None:
            assert m["ci_low"] == 0 and m["ci_high"] == 0


def test_reports_of_other_verbs_compare_on_their_class_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seg = ROOT / "sample_data" / "segment"
    args = ["segment", str(seg / "pred"), str(seg / "gt"), "--num-classes", "4"]
    path = _report([*args, "--ignore-index", "255"], tmp_path / "s.json", capsys)
    code, out, _ = run(["compare", path, path, "-o", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["per_class"][0]["key"] == "IoU" and doc["per_class"][0]["delta"] == 0


def test_lvis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--protocol lvis: a and b are the single runs (13 values), B's dropped predictions give
    a CI that contains the delta, identical inputs give zeros."""
    from tests.oracle.lvisgen import random_lvis_scene

    gt, dets = random_lvis_scene(3, n_images=30)
    g, a, b = tmp_path / "gt.json", tmp_path / "a.json", tmp_path / "b.json"
    g.write_text(json.dumps(gt))
    a.write_text(json.dumps(dets))
    b.write_text(json.dumps(dets[::2]))
    single = {}
    for p in (a, b):
        code, out, _ = run([str(p), str(g), "--protocol", "lvis", "-o", "json", "-q"], capsys)
        assert code == 0
        single[p] = json.loads(out)["summary"]
    args = ["--protocol", "lvis", "-o", "json", "-q", "--bootstrap", "200"]
    code, out, err = run(["compare", str(a), str(b), str(g), *args], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert {"APr", "APc", "APf", "AR300"} <= set(doc["metrics"])
    for key, m in doc["metrics"].items():
        assert m["a"] == single[a][key] and m["b"] == single[b][key], key
    m = doc["metrics"]["AP"]
    assert m["ci_low"] <= m["delta"] <= m["ci_high"]
    code, out, _ = run(["compare", str(a), str(a), str(g), *args], capsys)
    for key, m in json.loads(out)["metrics"].items():
        assert m["delta"] in (0, None)
        if m["ci_low"] is not None:
            assert m["ci_low"] == 0 == m["ci_high"], key


def test_compare_report_is_self_contained_and_escapes_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a class named as markup stays text in the page; the page loads nothing from outside
    gt = json.loads(Path(GT).read_text())
    gt["categories"][0]["name"] = "<script>alert(1)</script>"
    g = tmp_path / "gt.json"
    g.write_text(json.dumps(gt))
    page = tmp_path / "cmp.html"
    code, _, err = run(
        [
            "compare",
            PRED,
            _worse_preds(tmp_path),
            str(g),
            "-o",
            "json",
            "-q",
            "--bootstrap",
            "50",
            "--report",
            str(page),
        ],
        capsys,
    )
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "http://" not in html and "https://" not in html.replace("https://www.w3.org", "")
    assert html.count("data:image/svg+xml") == 2  # overlaid PR curves and delta bars


def test_compare_takes_tp_iou_and_its_old_name(capsys: pytest.CaptureFixture[str]) -> None:
    # the default verb's --tp-iou (old name --iou-thr) works the same for compare
    outs = []
    for flag in ("--tp-iou", "--iou-thr"):
        code, out, err = run(
            ["compare", PRED, PRED, GT, flag, "0.75", "--bootstrap", "0", "-o", "json", "-q"],
            capsys,
        )
        assert code == 0, err
        outs.append(json.loads(out)["metrics"]["iou_thr"]["a"])
    assert outs == [0.75, 0.75]
