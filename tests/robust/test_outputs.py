"""Output safety: --matches is written beside its target and renamed into place, an existing
file is replaced only on success, Ctrl-C leaves no partial file (exit 130), inputs are never
overwritten and nothing is written into an input folder."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import iou_cli.report.outputs
from tests.conftest import DATA
from tests.robust._cli import assert_one_error_line, run_cli

GOOD = DATA / "bad" / "good"
OLD = "previous results, must survive\n"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with the small good COCO pair and an existing out.csv."""
    shutil.copy(GOOD / "coco_gt.json", tmp_path / "gt.json")
    shutil.copy(GOOD / "coco_pred.json", tmp_path / "pred.json")
    (tmp_path / "out.csv").write_text(OLD)
    return tmp_path


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
    }


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".iou-eval-")]


def test_matches_goes_through_a_temporary_file_in_the_same_folder(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        renames.append((src, dst))
        real_replace(src, dst)

    monkeypatch.setattr(iou_cli.report.outputs.os, "replace", spy)
    out = work / "out.csv"
    code, _, _ = run_cli(
        [str(work / "pred.json"), str(work / "gt.json"), "-q", "--matches", str(out)]
    )
    assert code == 0
    [(src, dst)] = renames
    assert os.path.dirname(src) == os.path.dirname(dst) == os.path.realpath(work)
    assert os.path.basename(src).startswith(".iou-eval-") and dst == os.path.realpath(out)
    text = out.read_text()
    assert text != OLD and text.count("\n") == 3  # header + 2 predictions
    assert leftovers(work) == []


def test_existing_file_survives_a_bad_input(work: Path) -> None:
    (work / "pred.json").write_text("[{]")
    code, out, err = run_cli(
        [str(work / "pred.json"), str(work / "gt.json"), "--matches", str(work / "out.csv")]
    )
    assert_one_error_line(code, out, err)
    assert (work / "out.csv").read_text() == OLD and leftovers(work) == []


def test_failed_write_leaves_the_old_file_and_no_temporary(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(iou_cli.report.outputs.os, "fsync", full)
    out = work / "out.csv"
    code, _, err = run_cli(
        [str(work / "pred.json"), str(work / "gt.json"), "-q", "--matches", str(out)]
    )
    # (the report is already on stdout: the matches file is written after it)
    assert code == 2 and err == f"iou-eval: error: {out}: cannot write: No space left on device\n"
    assert out.read_text() == OLD and leftovers(work) == []


def test_ctrl_c_while_writing_leaves_the_old_file(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(iou_cli.report.outputs.os, "fsync", interrupted)
    out = work / "out.csv"
    code, _, err = run_cli(
        [str(work / "pred.json"), str(work / "gt.json"), "-q", "--matches", str(out)]
    )
    assert code == 130 and err.endswith("iou-eval: interrupted\n")
    assert out.read_text() == OLD and leftovers(work) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_is_one_error_line(work: Path) -> None:
    ro = work / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        line = assert_one_error_line(
            *run_cli(
                [str(work / "pred.json"), str(work / "gt.json"), "--matches", str(ro / "m.csv")]
            )
        )
        assert "cannot write: Permission denied" in line
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize("which", ["pred.json", "gt.json"])
def test_refuses_to_overwrite_an_input(work: Path, which: str) -> None:
    before = (work / which).read_bytes()
    line = assert_one_error_line(
        *run_cli([str(work / "pred.json"), str(work / "gt.json"), "--matches", str(work / which)])
    )
    assert line.endswith(f"refusing to overwrite the input file {work / which}")
    assert (work / which).read_bytes() == before


def test_refuses_an_input_reached_through_a_link(work: Path) -> None:
    (work / "link.json").symlink_to(work / "gt.json")
    os.link(work / "pred.json", work / "hard.json")
    for target in ("link.json", "hard.json"):
        line = assert_one_error_line(
            *run_cli(
                [str(work / "pred.json"), str(work / "gt.json"), "--matches", str(work / target)]
            )
        )
        assert "refusing to overwrite the input file" in line


def test_nothing_is_written_into_an_input_folder(tmp_path: Path) -> None:
    shutil.copytree(GOOD / "voc_gt", tmp_path / "gt")
    shutil.copytree(GOOD / "voc_pred", tmp_path / "pred")
    before = listing(tmp_path)
    for target in ("gt/matches.csv", "pred/matches.csv", "pred/sub/../matches.csv"):
        line = assert_one_error_line(
            *run_cli(
                [str(tmp_path / "pred"), str(tmp_path / "gt"), "--matches", str(tmp_path / target)]
            )
        )
        assert "refusing to write into the input folder" in line
    assert listing(tmp_path) == before
    # a run that succeeds writes its one file, and nothing else anywhere
    code, _, _ = run_cli(
        [str(tmp_path / "pred"), str(tmp_path / "gt"), "-q", "--matches", str(tmp_path / "m.csv")]
    )
    assert code == 0
    after = listing(tmp_path)
    assert set(after) - set(before) == {"m.csv"}
    assert {k: v for k, v in after.items() if k != "m.csv"} == before


# ------------------------------------------------------------------ a real Ctrl-C


def _big_scene(folder: Path, n_img: int = 3000, n_gt: int = 20, n_det: int = 60) -> None:
    rng = np.random.default_rng(7)
    k_gt, k_det = n_img * n_gt, n_img * n_det
    xy = rng.integers(0, 400, size=(k_gt, 2)).tolist()
    wh = rng.integers(5, 80, size=(k_gt, 2)).tolist()
    anns = [
        {
            "id": k + 1,
            "image_id": k // n_gt + 1,
            "category_id": k % 5 + 1,
            "bbox": [*xy[k], *wh[k]],
            "area": wh[k][0] * wh[k][1],
            "iscrowd": 0,
        }
        for k in range(k_gt)
    ]
    gt = {
        "images": [
            {"id": i + 1, "file_name": f"{i}.jpg", "width": 640, "height": 480}
            for i in range(n_img)
        ],
        "annotations": anns,
        "categories": [{"id": c, "name": f"c{c}"} for c in range(1, 6)],
    }
    dxy = rng.integers(0, 400, size=(k_det, 2)).tolist()
    dwh = rng.integers(5, 80, size=(k_det, 2)).tolist()
    sc = rng.random(k_det).round(4).tolist()
    dets = [
        {
            "image_id": k // n_det + 1,
            "category_id": k % 5 + 1,
            "bbox": [*dxy[k], *dwh[k]],
            "score": sc[k],
        }
        for k in range(k_det)
    ]
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "dt.json").write_text(json.dumps(dets))


def _numpy_loaded(pid: int) -> bool:
    """The CLI imports NumPy only inside the evaluate command (after the entry point's
    try: block is entered), so a mapped NumPy extension means Ctrl-C is ours to handle."""
    try:
        with open(f"/proc/{pid}/maps") as fh:
            return "_multiarray_umath" in fh.read()
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/maps")
def test_real_ctrl_c_exits_130_and_leaves_no_partial_file(tmp_path: Path) -> None:
    _big_scene(tmp_path)
    out = tmp_path / "out.csv"
    out.write_text(OLD)
    before = listing(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "iou_cli", "dt.json", "gt.json", "-q", "--matches", "out.csv"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not _numpy_loaded(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.2)  # well inside reading / evaluating (the whole run takes ~2 s here)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, stderr)
    assert stderr == "iou-eval: interrupted\n" and stdout == ""
    assert out.read_text() == OLD
    assert leftovers(tmp_path) == [] and listing(tmp_path) == before
