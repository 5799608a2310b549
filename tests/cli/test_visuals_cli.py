"""--curves, --plots DIR and --report FILE.html through the command line (issue 13)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.analysis import curves as C
from tests.cli.helpers import run
from tests.cli.test_report_html import external_resources
from tests.conftest import DATA
from tests.oracle.pycoco import pycoco_eval

ROOT = Path(__file__).resolve().parents[2]
PRED = str(ROOT / "sample_data" / "coco" / "preds.json")
GT = str(ROOT / "sample_data" / "coco" / "gt.json")
REAL_GT = DATA / "coco" / "instances_val2014_100.json"
REAL_DT = DATA / "coco" / "instances_val2014_fakebbox100_results.json"


def _json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = run(args, capsys)
    assert code == 0, err
    return json.loads(out)


def test_plain_evaluation_imports_neither_matplotlib_nor_pandas() -> None:
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    p = subprocess.run(
        [sys.executable, "-m", "iou_cli", PRED, GT, "-o", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in p.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "numpy" in imported  # the profile really lists the imports
    assert "matplotlib" not in imported
    assert "pandas" not in imported


def test_curves_reproduce_the_summary_and_pycocotools(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json([str(REAL_DT), str(REAL_GT), "-o", "json", "--curves"], capsys)
    cv, s = doc["curves"], doc["summary"]
    # from the JSON alone, bit for bit
    assert C.mean_ap(cv, "0.5") == s["AP50"]
    assert C.mean_ap(cv, "0.75") == s["AP75"]
    assert C.mean_ap(cv) == s["AP"]
    # the very arrays pycocotools accumulates
    gt = json.loads(REAL_GT.read_text())
    ev = pycoco_eval(gt, json.loads(REAL_DT.read_text()))
    names = [c["name"] for c in gt["categories"]]
    prec, scores = ev.eval["precision"], ev.eval["scores"]
    for ti, key in enumerate(cv["precision"]):
        for k, n in enumerate(names):
            want = prec[ti, :, k, 0, -1]
            if (want == -1).all():
                assert cv["precision"][key][n] is None and cv["score"][key][n] is None
            else:
                assert cv["precision"][key][n] == want.tolist()
                assert cv["score"][key][n] == scores[ti, :, k, 0, -1].tolist()
    assert cv["area"] == "all" and cv["max_dets"] == 100


def test_confidence_curve_holds_the_operating_point(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json([PRED, GT, "-o", "json", "--curves", "--iou-thr", "0.75"], capsys)
    conf, s = doc["curves"]["confidence"], doc["summary"]
    assert conf["iou_thr"] == 0.75 and conf["score_thr"] == s["score_thr"]
    i = conf["score"].index(s["score_thr"])
    assert (conf["tp"][i], conf["fp"][i]) == (s["tp"], s["fp"])
    assert conf["precision"][i] == s["precision"]
    assert conf["recall"][i] == s["recall"]
    assert conf["f1"][i] == s["f1"] == max(conf["f1"])  # the default cut maximises F1
    assert conf["score"] == sorted(conf["score"], reverse=True)


def test_json_without_curves_has_no_curves(capsys: pytest.CaptureFixture[str]) -> None:
    assert "curves" not in _json([PRED, GT, "-o", "json"], capsys)


def test_plots_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "figs"
    code, _, err = run([PRED, GT, "-o", "csv", "--plots", str(out)], capsys)
    assert code == 0, err
    names = sorted(os.listdir(out))
    stems = ["ap_per_class", "confidence", "pr_curve", "pr_per_class"]
    assert names == sorted(f"{s}.{e}" for s in stems for e in ("png", "svg"))
    for s in stems:
        assert (out / f"{s}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"<svg" in (out / f"{s}.svg").read_bytes()[:2000]
    assert "wrote 8 figure files" in err


def test_plots_and_report_never_write_into_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text(Path(GT).read_text())
    before = gt.read_bytes()
    code, out, err = run([PRED, str(gt), "--report", str(gt)], capsys)
    assert code == 2 and out == "" and "refusing to overwrite the input file" in err
    assert gt.read_bytes() == before
    code, _, err = run([PRED, str(gt), "--plots", str(tmp_path / "missing" / "x")], capsys)
    assert code == 2 and "does not exist" in err
    code, _, err = run([PRED, str(gt), "--plots", str(gt)], capsys)
    assert code == 2 and err.startswith("iou-eval: error:")


def test_missing_matplotlib_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *a: Any) -> Any:
        return None if name == "matplotlib" else real(name, *a)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    code, out, err = run([PRED, GT, "--report", str(tmp_path / "r.html")], capsys)
    assert code == 2 and out == ""
    assert err == "iou-eval: error: --report needs matplotlib: pip install 'iou-eval[plots]'\n"
    assert not (tmp_path / "r.html").exists()


def test_report_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "report.html"
    code, out, err = run([PRED, GT, "-o", "json", "--report", str(target)], capsys)
    assert code == 0, err
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert external_resources(page) == []
    assert "curves" not in json.loads(out)  # --report alone leaves the JSON as it was
    for name in ("person", "car", "dog"):
        assert f'<td class="name">{name}</td>' in page
    assert page.count("data:image/svg+xml;base64,") == 4


def test_readme_figure_is_committed_and_referenced() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/pr_curve.png)" in readme
    png = (ROOT / "docs" / "pr_curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 200_000
    assert np.frombuffer(png[16:24], dtype=">u4").tolist()[0] > 300  # width in pixels


def _devkit_ap(rec: list[float], prec: list[float]) -> float:
    # VOC devkit (VOCevalcls/VOCevaldet) all-point AP, written out from its MATLAB source:
    # mrec=[0;rec;1]; mpre=[0;prec;0]; mpre(i)=max(mpre(i),mpre(i+1)) from the right;
    # i=find(mrec(2:end)~=mrec(1:end-1))+1; ap=sum((mrec(i)-mrec(i-1)).*mpre(i))
    mrec = [0.0, *rec, 1.0]
    mpre = [0.0, *prec, 0.0]
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    idx = [i + 1 for i in range(len(mrec) - 1) if mrec[i + 1] != mrec[i]]
    return float(np.sum([(mrec[i] - mrec[i - 1]) * mpre[i] for i in idx]))


def test_voc_curves_give_back_each_class_ap(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json([PRED, GT, "-o", "json", "--curves", "--protocol", "voc"], capsys)
    cv = doc["curves"]
    assert cv["protocol"] == "voc" and cv["iou_thrs"] == [0.5]
    aps = []
    for row in doc["per_class"]:
        c = cv["voc"][row["name"]]
        assert c["AP"] == row["AP"]
        assert _devkit_ap(c["recall"], c["precision"]) == pytest.approx(row["AP"], abs=1e-15)
        aps.append(c["AP"])
    assert float(np.mean(aps)) == doc["summary"]["mAP"]
    conf = cv["confidence"]
    i = conf["score"].index(doc["summary"]["score_thr"])
    assert (conf["tp"][i], conf["fp"][i]) == (doc["summary"]["tp"], doc["summary"]["fp"])
