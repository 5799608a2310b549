"""``--partial`` / ``merge`` and ``--jobs`` on the newer tasks (issue 24, item 2): rotated
boxes (COCO on OBB, VOC on OBB, the DOTA protocol on COCO-OBB files and on DOTA txt / Task1
folders) and keypoints (COCO OKS, the file's sigmas or ``--sigmas``). The merged report is
what one run prints (JSON apart from the run's seconds; CSV per class byte for byte)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli_merge import _no_seconds
from tests.helpers import run
from tests.oracle.kptgen import random_kpt_scene
from tests.oracle.test_obb_hotcoco import scene as obb_scene
from tests.state.test_tasks_exact import SCORES

CASES: dict[str, list[str]] = {
    "coco-obb": ["--iou-type", "obb"],
    "voc-obb": ["--protocol", "voc", "--iou-type", "obb"],
    "dota-coco-files": ["--protocol", "dota"],
    "dota-task1": ["--protocol", "dota", "--all-point"],
    "keypoints": ["--iou-type", "keypoints"],
    "keypoints-sigmas": ["--iou-type", "keypoints", "--sigmas", "0.05,0.06,0.07,0.08,0.09"],
}


def dota_tree(tmp: Path) -> tuple[Path, Path]:
    """A DOTA folder pair: six images, one class with many tied scores (the devkit's sort
    over the whole class decides), hits, duplicates, difficult objects and misses."""
    gt, task1 = tmp / "val" / "labelTxt", tmp / "results"
    gt.mkdir(parents=True)
    task1.mkdir()
    lines: list[str] = []
    for k in range(6):
        x = 40 + 30 * k
        objects = [f"{x} 40 {x + 20} 40 {x + 20} 60 {x} 60 ship {int(k == 3)}"]
        objects.append(f"{x} 140 {x + 20} 140 {x + 20} 160 {x} 160 plane 0")
        (gt / f"P{k:04d}.txt").write_text("\n".join(objects) + "\n")
        for j in range(4):
            s = SCORES[(4 * k + j) % len(SCORES)]
            dx = j % 2
            lines.append(f"P{k:04d} {s} {x + dx} 40 {x + 20 + dx} 40 {x + 20 + dx} 60 {x + dx} 60")
    (task1 / "Task1_ship.txt").write_text("\n".join(lines) + "\n")
    (task1 / "Task1_plane.txt").write_text("P0001 0.9 70 140 90 140 90 160 70 160\n")
    return task1, gt


def inputs(tmp: Path, case: str) -> tuple[str, str]:
    if case == "dota-task1":
        pred, gt = dota_tree(tmp)
        return str(pred), str(gt)
    data: tuple[dict[str, Any], list[dict[str, Any]]]
    if case.startswith("keypoints"):
        data = random_kpt_scene(4, k=5 if "sigmas" in case else 17)
    else:
        data = obb_scene(7)
    (tmp / "gt.json").write_text(json.dumps(data[0]))
    (tmp / "pred.json").write_text(json.dumps(data[1]))
    return str(tmp / "pred.json"), str(tmp / "gt.json")


@pytest.mark.parametrize("case", list(CASES))
def test_merge_and_jobs_print_what_one_run_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    pred, gt = inputs(tmp_path, case)
    extra = CASES[case]
    parts = []
    for k in (1, 2, 3):
        out = tmp_path / f"part{k}.iou"
        code, _, err = run([pred, gt, *extra, "--shard", f"{k}/3", "--partial", str(out)], capsys)
        assert code == 0, err
        parts.append(str(out))
    one = run([pred, gt, *extra, "-o", "json", "--per-class", "-q"], capsys)
    assert one[0] == 0, one[2]
    merged = run(["merge", *parts[::-1], "-o", "json", "--per-class", "-q"], capsys)
    assert merged[0] == 0, merged[2]
    assert _no_seconds(merged[1]) == _no_seconds(one[1])
    csv = ["-o", "csv", "--per-class", "-q"]
    assert run(["merge", *parts, *csv], capsys)[:2] == run([pred, gt, *extra, *csv], capsys)[:2]
    code, text, err = run(
        [pred, gt, *extra, "-o", "json", "--per-class", "-q", "--jobs", "2"], capsys
    )
    assert code == 0, err
    assert _no_seconds(text) == _no_seconds(one[1])


def test_parts_with_other_sigmas_do_not_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred, gt = inputs(tmp_path, "keypoints-sigmas")
    a, b = tmp_path / "a.iou", tmp_path / "b.iou"
    sig = CASES["keypoints-sigmas"]
    assert run([pred, gt, *sig, "--shard", "1/2", "--partial", str(a)], capsys)[0] == 0
    other = [*sig[:-1], "0.05,0.06,0.07,0.08,0.1"]
    assert run([pred, gt, *other, "--shard", "2/2", "--partial", str(b)], capsys)[0] == 0
    code, out, err = run(["merge", str(a), str(b)], capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"iou-eval: error: {b}:header: cannot merge with {a}: different parameters "
        "(oks_sigmas: [[0.05, 0.06, 0.07, 0.08, 0.1]] here, [[0.05, 0.06, 0.07, 0.08, 0.09]] "
        "there)"
    ]
