"""Issue 15: a new user's five traps and the friction list, tested as the user meets them.

In-process runs (``run``) where only stdout/stderr/exit code matter; a subprocess where a real
pipe, a FIFO, stdin, the current folder or a terminal of a given width matters.
"""

from __future__ import annotations

import csv
import fcntl
import gzip
import io
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

from .helpers import run

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
GT = str(DATA / "coco" / "instances_val2014_100.json")
DT = str(DATA / "coco" / "instances_val2014_fakebbox100_results.json")
AP = 0.5045806987249628  # pycocotools on this set (tests/oracle/test_coco_real.py)
SAMPLE = ROOT / "sample_data"
# the small sample set (README: pycocotools gives the same AP on it)
SDT = str(SAMPLE / "coco" / "preds.json")
SGT = str(SAMPLE / "coco" / "gt.json")
SAP = 0.4861250337487961
# sample_data/yolo against itself: the README's pinned value (YOLO preds vs YOLO labels)
YOLO_AP = 0.6531184189847555


def cli(
    args: list[str], *, cwd: Path | str | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "iou_cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )


def summary(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code, out, err = run([*args, "-o", "json", "-q"], capsys)
    assert code in (0, 1), err
    return json.loads(out)["summary"]  # type: ignore[no-any-return]


# ------------------------------------------------------------------ trap 1: --matches -


def test_matches_dash_gives_one_csv_on_stdout() -> None:
    p = cli([SDT, SGT, "--matches", "-"])
    assert p.returncode == 0, p.stderr
    rows = list(csv.reader(io.StringIO(p.stdout.decode())))
    assert rows[0][:7] == ["image", "category", "pred_id", "gt_id", "score", "iou", "outcome"]
    assert all(len(r) == len(rows[0]) for r in rows)  # one table: no report rows mixed in
    assert {r[6] for r in rows[1:]} <= {"TP", "FP", "FN", "ignored"}


@pytest.mark.parametrize("fmt", ["json", "csv", "table", "markdown"])
def test_matches_dash_with_a_report_format_is_refused(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([DT, GT, "-o", fmt, "--matches", "-"], capsys)
    assert code == 2 and out == ""
    assert "--matches -" in err and "--matches matches.csv" in err


def test_matches_file_keeps_stdout_json(tmp_path: Path) -> None:
    p = cli([SDT, SGT, "-o", "json", "-q", "--matches", str(tmp_path / "m.csv")])
    assert p.returncode == 0
    assert json.loads(p.stdout)["summary"]["AP"] == SAP  # what jq would read
    assert (tmp_path / "m.csv").read_text().startswith("image,category,")


# ------------------------------------------------------------------ trap 2: gates


def test_fail_under_on_a_lower_is_better_key_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run([DT, GT, "-q", "--fail-under", "fp=700"], capsys)
    assert code == 2 and out == ""
    assert "fp is lower-is-better" in err and "--fail-over fp=700" in err


def test_fail_over_points_the_right_way(capsys: pytest.CaptureFixture[str]) -> None:
    fp = summary([DT, GT], capsys)["fp"]
    assert isinstance(fp, int) and fp > 0
    code, out, err = run([DT, GT, "-o", "json", "-q", "--fail-over", f"fp={fp - 1}"], capsys)
    assert code == 1 and json.loads(out)["summary"]["fp"] == fp  # report still printed
    assert f"fail-over: fp = {fp} > {fp - 1}" in err
    code, _, _ = run([DT, GT, "-o", "json", "-q", "--fail-over", f"fp={fp}"], capsys)
    assert code == 0


def test_fail_over_on_a_higher_is_better_key_names_fail_under(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run([DT, GT, "-q", "--fail-over", "AP=0.5"], capsys)
    assert code == 2 and "--fail-under AP=0.5" in err


@pytest.mark.parametrize("gate", ["--fail-under", "--fail-over"])
@pytest.mark.parametrize("key", ["iou_thr", "score_thr"])
def test_gates_on_settings_are_usage_errors(
    gate: str, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["nope.json", "nope2.json", gate, f"{key}=0.5"], capsys)
    assert code == 2 and out == "" and f"{key} is a setting" in err


def test_map_gate_means_coco_ap(capsys: pytest.CaptureFixture[str]) -> None:
    # COCO: "AP and mAP are the same" (cocodataset.org/#detection-eval)
    code, _, err = run([DT, GT, "-o", "csv", "-q", "--fail-under", f"mAP={AP + 1e-9}"], capsys)
    assert code == 1 and "AP (as mAP) =" in err
    code, _, _ = run([DT, GT, "-o", "csv", "-q", "--fail-under", f"mAP={AP}"], capsys)
    assert code == 0
    # torchmetrics' name for the same stat
    code, _, _ = run([DT, GT, "-o", "csv", "-q", "--fail-under", f"map={AP + 1e-9}"], capsys)
    assert code == 1
    # Ultralytics' mAP50-95 is another number: refused under coco, named under ultralytics
    code, _, err = run([DT, GT, "-q", "--fail-under", "mAP50-95=0.1"], capsys)
    assert code == 2 and "--protocol ultralytics" in err
    code, _, err = run(
        [DT, GT, "--protocol", "ultralytics", "-o", "csv", "-q", "--fail-under", "mAP50-95=0.99"],
        capsys,
    )
    assert code == 1 and "metrics/mAP50-95(B) (as mAP50-95) =" in err


def test_ap50_gate_means_voc_map_at_that_iou(capsys: pytest.CaptureFixture[str]) -> None:
    pred, gt = str(SAMPLE / "yolo" / "preds"), str(SAMPLE / "voc" / "annotations")
    m = summary([pred, gt, "--protocol", "voc"], capsys)["mAP"]
    assert m == 0.875  # README: the devkit's all-point AP on sample_data
    code, _, err = run([pred, gt, "--protocol", "voc", "-q", "--fail-under", "AP50=0.9"], capsys)
    assert code == 1 and "mAP (as AP50) = 0.875 < 0.9" in err
    # AP (COCO's .50:.95) has no VOC counterpart: the error names the key to use
    code, _, err = run([pred, gt, "--protocol", "voc", "-q", "--fail-under", "AP=0.5"], capsys)
    assert code == 2 and "use mAP" in err
    # AP75 is the VOC mAP only at --tp-iou 0.75
    code, _, err = run([pred, gt, "--protocol", "voc", "-q", "--fail-under", "AP75=0.5"], capsys)
    assert code == 2 and "--tp-iou 0.75" in err
    code, _, _ = run(
        [pred, gt, "--protocol", "voc", "--tp-iou", "0.75", "-o", "csv", "-q"]
        + ["--fail-under", "AP75=0.1"],
        capsys,
    )
    assert code == 0


def test_unknown_gate_key_suggests_the_close_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["nope.json", "nope2.json", "--fail-under", "ap50=0.5"], capsys)
    assert code == 2 and "did you mean AP50?" in err


def test_segment_and_labels_gates(capsys: pytest.CaptureFixture[str]) -> None:
    seg = SAMPLE / "segment"
    args = ["segment", str(seg / "pred"), str(seg / "gt"), "--num-classes", "4"]
    args += ["--ignore-index", "255", "-o", "csv", "-q"]
    code, _, err = run([*args, "--fail-over", "mIoU=0.5"], capsys)
    assert code == 2 and "--fail-under mIoU=0.5" in err
    code, _, _ = run([*args, "--fail-under", "mIoU=0.69"], capsys)
    assert code == 1  # README: mIoU 0.6859
    lab = SAMPLE / "labels"
    code, _, err = run(
        ["labels", str(lab / "preds.csv"), str(lab / "gt.csv"), "-q", "--fail-under", "fp=1"],
        capsys,
    )
    assert code == 2 and "unknown summary key 'fp'" in err


# ------------------------------------------------------------------ trap 3: verbs vs folders


def _yolo_project(tmp_path: Path) -> None:
    """Ultralytics' predict output `labels/` beside a ground-truth folder `gt/`."""
    shutil.copytree(SAMPLE / "yolo" / "preds", tmp_path / "labels")
    shutil.copytree(SAMPLE / "yolo" / "labels", tmp_path / "gt")
    shutil.copy(SAMPLE / "yolo" / "classes.txt", tmp_path / "classes.txt")  # as in sample_data


def test_a_folder_named_like_a_verb_is_the_predictions(tmp_path: Path) -> None:
    _yolo_project(tmp_path)
    p = cli(["labels", "gt", "-o", "csv"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout.decode())))
    assert float(rows[0]["AP"]) == YOLO_AP
    assert "'labels' is a folder here, so it is read as the predictions" in p.stderr.decode()


def test_verb_still_runs_where_no_such_folder_is(tmp_path: Path) -> None:
    lab = SAMPLE / "labels"
    p = cli(["labels", str(lab / "preds.csv"), str(lab / "gt.csv"), "-o", "csv", "-q"])
    assert p.returncode == 0 and p.stdout.startswith(b"category_id,name,IoU,")


def test_mistyped_verb_suggests_the_verb(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["segmnet", "pred", "gt"], capsys)
    assert code == 2 and out == "" and "did you mean 'segment'?" in err


@pytest.mark.parametrize(("opt", "hint"), [("--json", "-o json"), ("--csv", "-o csv")])
def test_other_tools_options_name_ours(
    opt: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run([DT, GT, opt], capsys)
    assert code == 2 and f"(use {hint})" in err


# ------------------------------------------------------------------ trap 4: YOLO column order


def _darknet_copy(src: Path, dst: Path) -> None:
    """The same predictions as globox writes YOLO with confidence: class conf cx cy w h."""
    dst.mkdir()
    for f in src.iterdir():
        if f.name == "classes.txt":
            shutil.copy(f, dst / f.name)
            continue
        lines = []
        for line in f.read_text().splitlines():
            c, cx, cy, w, h, conf = line.split()
            lines.append(" ".join([c, conf, cx, cy, w, h]))
        (dst / f.name).write_text("\n".join(lines) + "\n")


def test_darknet_order_is_detected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _darknet_copy(SAMPLE / "yolo" / "preds", tmp_path / "dk")
    gt = str(SAMPLE / "yolo" / "labels")
    code, out, err = run([str(tmp_path / "dk"), gt, "-o", "json"], capsys)
    assert code == 0 and json.loads(out)["summary"]["AP"] == YOLO_AP
    assert "darknet order (class conf cx cy w h)" in err
    # and the Ultralytics order is still read as such
    assert summary([str(SAMPLE / "yolo" / "preds"), gt], capsys)["AP"] == YOLO_AP


def test_forced_wrong_order_warns_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _darknet_copy(SAMPLE / "yolo" / "preds", tmp_path / "dk")
    gt = str(SAMPLE / "yolo" / "labels")
    code, out, err = run([str(tmp_path / "dk"), gt, "--pred-format", "yolo", "-o", "json"], capsys)
    assert code == 0 and json.loads(out)["summary"]["AP"] == 0.0
    assert "the file looks like --pred-format yolo-darknet" in err
    assert "warning: AP is 0, yet" in err and "column order" in err
    code, out, err = run(
        [str(SAMPLE / "yolo" / "preds"), gt, "--pred-format", "yolo-darknet", "-o", "json"], capsys
    )
    assert "the file looks like --pred-format yolo" in err
    assert json.loads(out)["meta"]["warnings"][0].startswith("--pred-format yolo-darknet reads")


def test_ap0_without_overlap_does_not_warn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = json.loads(Path(GT).read_text())
    ann = gt["annotations"][0]
    w, h = next((i["width"], i["height"]) for i in gt["images"] if i["id"] == ann["image_id"])
    far = [{"image_id": ann["image_id"], "category_id": ann["category_id"], "score": 0.9,
            "bbox": [w - 1, h - 1, 1, 1]}]  # fmt: skip
    (tmp_path / "p.json").write_text(json.dumps(far))
    code, _, err = run([str(tmp_path / "p.json"), GT, "-o", "csv"], capsys)
    assert code == 0 and "AP is 0, yet" not in err


# ------------------------------------------------------------------ trap 5: the table's width


def _on_terminal(args: list[str], columns: int) -> str:
    """stdout of iou-eval on a pseudo-terminal ``columns`` wide (what a user sees)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(PYTHONPATH=str(ROOT), TERM="xterm", NO_COLOR="1")
    p = subprocess.Popen(
        [sys.executable, "-m", "iou_cli", *args], stdout=slave, stderr=subprocess.PIPE, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=60)
    os.close(master)
    text = b"".join(chunks).decode()
    import re

    return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", text).replace("\r\n", "\n")


@pytest.fixture(scope="module")
def long_names(tmp_path_factory: pytest.TempPathFactory) -> str:
    gt = json.loads((SAMPLE / "coco" / "gt.json").read_text())
    for c, name in zip(
        gt["categories"], ["motorcycle", "traffic light", "fire hydrant"], strict=False
    ):
        c["name"] = name
    path = tmp_path_factory.mktemp("names") / "gt.json"
    path.write_text(json.dumps(gt))
    return str(path)


@pytest.mark.parametrize("columns", [80, 60])
def test_class_names_never_wrap_or_vanish(long_names: str, columns: int) -> None:
    out = _on_terminal(
        [str(SAMPLE / "coco" / "preds.json"), long_names, "--per-class", "-q"], columns
    )
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= columns
    for name in ("motorcycle", "traffic light", "fire hydrant"):
        assert sum(name in ln for ln in lines) == 1, out  # whole, on one line
    header = next(ln for ln in lines if ln.strip().startswith("class"))
    assert "AP" in header.split()


def test_table_degrades_in_the_stated_order(long_names: str) -> None:
    from iou_cli.report.result import DROP_ORDER

    args = [str(SAMPLE / "coco" / "preds.json"), long_names, "--per-class", "-q"]
    wide = _on_terminal(args, 200)
    header = lambda s: next(ln for ln in s.splitlines() if ln.strip().startswith("class")).split()  # noqa: E731
    assert header(wide) == ["class", "AP", "AP50", "AP75", "AR100", "n_gt", "n_det", "precision", "recall", "f1"]  # fmt: skip
    narrow = header(_on_terminal(args, 60))
    short = {"n_gt": "gt", "n_det": "det", "precision": "P", "recall": "R", "f1": "F1"}
    dropped = [k for k in header(wide)[1:] if k not in narrow and short.get(k) not in narrow]
    assert dropped and set(dropped) == set(DROP_ORDER[: len(dropped)])


def test_piped_table_is_full_width(long_names: str) -> None:
    p = cli([str(SAMPLE / "coco" / "preds.json"), long_names, "--per-class", "-o", "table", "-q"])
    text = p.stdout.decode()
    assert "precision" in text and "n_det" in text and "…" not in text
    assert "preds.json vs" in text  # the file names are the title


# ------------------------------------------------------------------ help


def test_root_help_shows_the_default_verbs_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    for text in ("--tp-iou", "--fail-over", "table|csv|json|markdown", "Gates", "Inputs",
                 "Examples", "--install-completion", "segment"):  # fmt: skip
        assert text in out, text
    assert "--iou-thr " not in out  # the old name is a hidden alias


@pytest.mark.parametrize("verb", ["evaluate", "iou", "segment", "labels", "compare"])
def test_every_verb_has_examples(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([verb, "--help"], capsys)
    assert (
        code == 0 and "Examples" in out and f"iou-eval {'' if verb == 'evaluate' else verb}" in out
    )


def test_shell_completion_script() -> None:
    # the shell is detected from the parent process (shellingham), as for a user in bash
    p = subprocess.run(
        ["bash", "-c", f"'{sys.executable}' -m iou_cli --show-completion; true"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert "_IOU_EVAL_COMPLETE" in p.stdout.upper(), (p.stdout, p.stderr)


def test_old_iou_thr_is_the_same_setting(capsys: pytest.CaptureFixture[str]) -> None:
    a = summary([DT, GT, "--iou-thr", "0.75"], capsys)
    b = summary([DT, GT, "--tp-iou", "0.75"], capsys)
    assert a == b and a["iou_thr"] == 0.75
    code, _, err = run([DT, GT, "--tp-iou", "0.5", "--iou-thr", "0.75"], capsys)
    assert code == 2 and "give one" in err


# ------------------------------------------------------------------ JSON meta


def test_json_meta(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([DT, GT, "-o", "json", "-q"], capsys)
    meta = json.loads(out)["meta"]
    from iou_cli import __version__

    assert list(meta) == [
        "version",
        "predictions",
        "ground_truth",
        "protocol",
        "seconds",
        "warnings",
        "gt_fingerprint",
    ]
    assert meta["version"] == __version__ and meta["predictions"] == DT
    assert meta["ground_truth"] == GT and meta["protocol"] == "coco"
    assert isinstance(meta["seconds"], float) and meta["seconds"] >= 0
    shown = [ln.removeprefix("iou-eval: warning: ") for ln in err.splitlines()]
    assert meta["warnings"] == shown and "fire hydrant" in shown[0]  # names the first few


def test_json_thresholds_read_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([DT, GT, "-o", "json", "-q"], capsys)
    assert json.loads(out)["params"]["iou_thrs"] == [
        0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95
    ]  # fmt: skip
    assert "0.8999999999999999" not in json.dumps(json.loads(out)["params"])


# ------------------------------------------------------------------ inputs


def test_stdin_gzip_fifo_and_dev_stdin(tmp_path: Path) -> None:
    raw = Path(SDT).read_bytes()
    want = cli([SDT, SGT, "-o", "csv", "-q"]).stdout
    assert float(list(csv.DictReader(io.StringIO(want.decode())))[0]["AP"]) == SAP
    assert cli(["-", SGT, "-o", "csv", "-q"], stdin=raw).stdout == want
    assert cli(["/dev/stdin", SGT, "-o", "csv", "-q"], stdin=gzip.compress(raw)).stdout == want
    gz = tmp_path / "preds.json.gz"
    gz.write_bytes(gzip.compress(raw))
    assert cli([str(gz), SGT, "-o", "csv", "-q"]).stdout == want
    fifo = tmp_path / "preds.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(raw)

    t = threading.Thread(target=feed)
    t.start()
    p = cli([str(fifo), SGT, "-o", "csv", "-q"])
    t.join(timeout=60)
    assert p.stdout == want, p.stderr


def test_pipe_of_xml_names_the_limit() -> None:
    p = cli(["-", GT, "-q"], stdin=b"<annotation/>")
    assert p.returncode == 2 and b"only COCO JSON can be read from stdin" in p.stderr


def test_segm_results_as_bbox_hint(capsys: pytest.CaptureFixture[str]) -> None:
    segm = str(DATA / "segm" / "instances_val2014_fakesegm100_results.json")
    code, _, err = run([segm, GT, "-q"], capsys)
    assert code == 2 and "--iou-type segm" in err


def test_swapped_yolo_folders_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([str(SAMPLE / "yolo" / "labels"), str(SAMPLE / "yolo" / "preds")], capsys)
    assert code == 2 and "predictions come first" in err


# ------------------------------------------------------------------ ranges


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--score-thr", "1.5"], "--score-thr: expected a confidence in [0, 1], got 1.5"),
        (["--score-thr", "-0.1"], "--score-thr: expected a confidence in [0, 1]"),
        (["--tp-iou", "0"], "--tp-iou: expected an IoU in (0, 1], got 0"),
        (["--iou-thr", "0"], "--tp-iou: expected an IoU in (0, 1], got 0"),
        (["--iou-thr", "1.5"], "--tp-iou: expected an IoU in (0, 1]"),
    ],
)
def test_out_of_range_is_a_usage_error(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["nope.json", "nope2.json", *args], capsys)
    assert code == 2 and out == "" and message in err


def test_segment_counts_classes_from_names(capsys: pytest.CaptureFixture[str]) -> None:
    seg = SAMPLE / "segment"
    base = ["segment", str(seg / "pred"), str(seg / "gt"), "--ignore-index", "255"]
    a = summary([*base, "--names", str(seg / "names.txt")], capsys)
    b = summary([*base, "--num-classes", "4"], capsys)
    assert a == b and a["mIoU"] is not None


def test_label_255_suggests_ignore_index(capsys: pytest.CaptureFixture[str]) -> None:
    seg = SAMPLE / "segment"
    code, _, err = run(
        ["segment", str(seg / "pred"), str(seg / "gt"), "--num-classes", "4"], capsys
    )
    assert code == 2 and "add --ignore-index 255" in err


# ------------------------------------------------------------------ output consistency


def test_csv_columns_do_not_depend_on_per_class(capsys: pytest.CaptureFixture[str]) -> None:
    _, a, _ = run([DT, GT, "-o", "csv", "-q"], capsys)
    _, b, _ = run([DT, GT, "-o", "csv", "-q", "--per-class"], capsys)
    assert a.splitlines()[0] == b.splitlines()[0]
    assert a.splitlines()[1] == b.splitlines()[1]


def test_csv_in_pandas_keeps_integer_ids(capsys: pytest.CaptureFixture[str]) -> None:
    import pandas as pd

    _, out, _ = run([DT, GT, "-o", "csv", "-q", "--per-class"], capsys)
    df = pd.read_csv(io.StringIO(out))
    assert str(df["category_id"].dtype) == "int64" and df["category_id"].iloc[0] == -1
    assert str(df["n_gt"].dtype) == "float64"  # empty on the all row (not a per-class count)
    assert df["AP"].iloc[0] == AP


def test_same_column_names_in_table_csv_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    p = cli([SDT, SGT, "-o", "table", "-q", "--per-class"])
    header = next(ln for ln in p.stdout.decode().splitlines() if ln.strip().startswith("class"))
    _, out, _ = run([SDT, SGT, "-o", "json", "-q"], capsys)
    row = json.loads(out)["per_class"][0]
    _, text, _ = run([SDT, SGT, "-o", "csv", "-q"], capsys)
    cols = text.splitlines()[0].split(",")
    for name in header.split()[1:]:
        assert name in row and name in cols, name


def test_info_line_thousands_and_timing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    images = [
        {"id": i, "file_name": f"{i}.jpg", "width": 100, "height": 100} for i in range(1, 1201)
    ]
    anns = [{"id": i, "image_id": i, "category_id": 1, "bbox": [10, 10, 20, 20], "area": 400,
             "iscrowd": 0} for i in range(1, 1201)]  # fmt: skip
    gt = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "cat"}]}
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    dets = [{"image_id": i, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9}
            for i in range(1, 1201)]  # fmt: skip
    (tmp_path / "p.json").write_text(json.dumps(dets))
    code, out, err = run(
        [str(tmp_path / "p.json"), str(tmp_path / "gt.json"), "-o", "csv", "-v"], capsys
    )
    assert code == 0
    assert (
        "read ground truth: 1,200 boxes, 1,200 images, 1 classes; predictions: 1,200 boxes" in err
    )
    assert re.search(r"^iou-eval: time: total \d+\.\d{3} s$", err, re.M)
    assert float(out.splitlines()[1].split(",")[2]) == 1.0  # every box found: AP 1 by hand


def test_warnings_name_the_first_offending_boxes(capsys: pytest.CaptureFixture[str]) -> None:
    bad = DATA / "bad"
    args = [str(bad / "warn" / "scores_outside.json"), str(bad / "good" / "coco_gt.json")]
    code, out, err = run([*args, "-o", "json", "-q"], capsys)
    assert code == 0
    want = f"(first: {args[0]}:[0], {args[0]}:[1])"
    assert want in err and want in json.loads(out)["meta"]["warnings"][0]


def test_names_in_the_table_are_text_not_markup(tmp_path: Path) -> None:
    pred = tmp_path / "[red]p.json"
    shutil.copy(SAMPLE / "coco" / "preds.json", pred)
    gt = json.loads((SAMPLE / "coco" / "gt.json").read_text())
    gt["categories"][0]["name"] = "[bold]person"
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    p = cli([str(pred), str(tmp_path / "gt.json"), "-o", "table", "--per-class", "-q"])
    text = p.stdout.decode()
    assert p.returncode == 0 and "[red]p.json vs gt.json" in text and "[bold]person" in text


def test_plain_evaluation_does_not_import_rich_or_pandas() -> None:
    code = (
        "import sys; from iou_cli.cli import main\n"
        "try:\n    main([sys.argv[1], sys.argv[2], '-o', 'csv', '-q'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in ('rich', 'pandas', 'pycocotools') if m in sys.modules))"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(SAMPLE / "coco" / "preds.json"), str(SAMPLE / "coco" / "gt.json")],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60,
    )  # fmt: skip
    assert p.stdout.strip().endswith("[]"), p.stdout + p.stderr


def test_real_darknet_detections_are_detected(capsys: pytest.CaptureFixture[str]) -> None:
    # the VOC-100 set's 452 detections as darknet txt (class conf cx cy w h; tests/data/NOTICE):
    # detected without --pred-format, they give the peer-published all-point mAP
    v100 = DATA / "peers_voc" / "voc100"
    args = [str(v100 / "dets" / "rel_xywh"), str(v100 / "gts" / "pascalvoc_format")]
    args += ["--protocol", "voc", "--pred-names", str(v100 / "voc.names")]
    code, out, err = run([*args, "-o", "json"], capsys)
    assert code == 0 and json.loads(out)["summary"]["mAP"] == 0.6138747922842811
    assert "darknet order" in err
    code, out, err = run([*args, "-o", "json", "--pred-format", "yolo"], capsys)
    assert "197 of 452 predicted boxes do not fit" in err and "yolo-darknet" in err


def test_stdin_for_both_sides_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["-", "-"], capsys)
    assert code == 2 and "only one of PREDICTIONS and GROUND_TRUTH can be -" in err


def test_close_verb_typos(capsys: pytest.CaptureFixture[str]) -> None:
    for typo, verb in (("evalute", "evaluate"), ("label", "labels"), ("segmnet", "segment")):
        code, _, err = run([typo, "a", "b"], capsys)
        assert code == 2 and f"did you mean '{verb}'?" in err


def test_max_dets_warning_names_the_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    bad = DATA / "bad"
    args = [str(bad / "warn" / "many_dets.json"), str(bad / "good" / "coco_gt.json")]
    code, _, err = run([*args, "--max-dets", "1,2", "-o", "csv", "-q"], capsys)
    assert code == 0 and "(--max-dets) (first: image 1 / " in err


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["-", str(SAMPLE / "yolo" / "labels"), "--pred-format", "yolo"], b"0 .5 .5 .1 .1 .9\n"),
        ([str(SAMPLE / "yolo" / "preds"), "/dev/stdin", "--gt-format", "voc"], b"<a/>"),
        (["-", GT], b""),
        (["-", GT], b"\x1f\x8b not gzip"),
    ],
)
def test_pipes_that_cannot_be_read_are_one_line(args: list[str], stdin: bytes) -> None:
    p = cli([*args, "-q"], stdin=stdin)
    err = p.stderr.decode()
    assert p.returncode == 2 and p.stdout == b"" and "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.startswith("iou-eval: error: ")
