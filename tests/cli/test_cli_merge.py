"""``--partial`` / ``--shard``, ``merge`` and ``--jobs`` through the CLI: the merged report is
what ``iou-eval PRED GT`` prints (stdout byte for byte, JSON apart from the run's seconds), and
every refusal is exit 2 with one located line."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.helpers import run

DATA = Path(__file__).resolve().parents[1] / "data"
ROOT = DATA.parent.parent
COCO = (
    DATA / "coco" / "instances_val2014_fakebbox100_results.json",
    DATA / "coco" / "instances_val2014_100.json",
)
SEGM = (DATA / "segm" / "instances_val2014_fakesegm100_results.json", COCO[1])
LVIS = (ROOT / "sample_data" / "lvis" / "preds.json", ROOT / "sample_data" / "lvis" / "gt.json")
CASES = {
    "coco": (COCO, []),
    "segm": (SEGM, ["--iou-type", "segm"]),
    "lvis": (LVIS, ["--protocol", "lvis"]),
    "voc": (COCO, ["--protocol", "voc"]),
}


def shards(
    tmp: Path,
    inputs: tuple[Path, Path],
    extra: list[str],
    n: int,
    capsys: pytest.CaptureFixture[str],
) -> list[str]:
    parts = []
    for k in range(1, n + 1):
        out = tmp / f"part{k}.iou"
        code, stdout, err = run(
            [str(inputs[0]), str(inputs[1]), *extra, "--shard", f"{k}/{n}", "--partial", str(out)],
            capsys,
        )
        assert code == 0, err
        assert stdout == "" and f"(shard {k}/{n})" in err
        parts.append(str(out))
    return parts


def _no_seconds(text: str) -> dict[str, object]:
    doc = json.loads(text)
    doc["meta"].pop("seconds")
    return doc


@pytest.mark.parametrize("case", list(CASES))
def test_merge_prints_what_the_one_shot_run_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    inputs, extra = CASES[case]
    parts = shards(tmp_path, inputs, extra, 3, capsys)
    for out in (["-o", "csv", "--per-class"], ["-o", "markdown"]):
        one = run([str(inputs[0]), str(inputs[1]), *extra, *out, "-q"], capsys)
        merged = run(["merge", *parts[::-1], *out, "-q"], capsys)
        assert merged[:2] == one[:2]
    one = run([str(inputs[0]), str(inputs[1]), *extra, "-o", "json", "--curves", "-q"], capsys)
    merged = run(["merge", *parts, "-o", "json", "--curves", "-q"], capsys)
    assert merged[0] == one[0] == 0
    assert _no_seconds(merged[1]) == _no_seconds(one[1])


@pytest.mark.parametrize("case", list(CASES))
def test_jobs_equal_one_process(capsys: pytest.CaptureFixture[str], case: str) -> None:
    inputs, extra = CASES[case]
    args = [str(inputs[0]), str(inputs[1]), *extra, "-o", "json", "--per-class", "-q"]
    one = run(args, capsys)
    for jobs in ("2", "0") if case == "coco" else ("2",):
        code, out, err = run([*args, "--jobs", jobs], capsys)
        assert code == 0, err
        assert _no_seconds(out) == _no_seconds(one[1])


def test_jobs_with_an_analysis_run_in_one_process(capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(COCO[0]), str(COCO[1]), "-o", "json", "--tide"]
    code, out, err = run([*args, "--jobs", "2"], capsys)
    assert code == 0 and "--jobs: analyses and --matches read the whole match table" in err
    assert _no_seconds(out) == _no_seconds(run([*args, "-q"], capsys)[1])


def test_gates_on_the_merged_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = shards(tmp_path, COCO, [], 2, capsys)
    code, _, err = run(["merge", *parts, "--fail-under", "AP=0.99", "-q", "-o", "csv"], capsys)
    assert code == 1 and "AP" in err
    code, _, err = run(["merge", *parts, "--fail-under", "APx=0.5", "-q"], capsys)
    assert code == 2


def _refused(args: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> None:
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iou-eval: error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = shards(tmp_path, COCO, [], 2, capsys)
    data = Path(parts[0]).read_bytes()
    # the same shard twice (under two names): overlapping images
    copy = tmp_path / "copy.iou"
    copy.write_bytes(data)
    _refused(["merge", parts[0], str(copy)], capsys, "copy.iou:images[0]", "also in")
    # another ground truth / other parameters / another protocol
    other_gt = tmp_path / "gt2.json"
    gt = json.loads(COCO[1].read_text())
    gt["annotations"] = gt["annotations"][1:]
    other_gt.write_text(json.dumps(gt))
    other = tmp_path / "other.iou"
    assert (
        run([str(COCO[0]), str(other_gt), "--shard", "2/2", "--partial", str(other), "-q"], capsys)[
            0
        ]
        == 0
    )
    _refused(["merge", parts[0], str(other)], capsys, "other.iou:header", "different ground truth")
    assert (
        run(
            [
                str(COCO[0]),
                str(COCO[1]),
                "--max-dets",
                "1,10,50",
                "--shard",
                "2/2",
                "--partial",
                str(other),
                "-q",
            ],
            capsys,
        )[0]
        == 0
    )
    _refused(["merge", parts[0], str(other)], capsys, "different parameters (max_dets")
    # a newer format, a truncated file, a flipped bit, not a partial file at all
    newer = tmp_path / "newer.iou"
    newer.write_bytes(data[:8] + struct.pack("<I", 99) + data[12:])
    _refused(["merge", str(newer)], capsys, "newer.iou:version", "newer")
    cut = tmp_path / "cut.iou"
    cut.write_bytes(data[:-100])
    _refused(["merge", str(cut), parts[1]], capsys, "cut.iou", "truncated")
    flip = tmp_path / "flip.iou"
    flip.write_bytes(data[:-50] + bytes([data[-50] ^ 0x10]) + data[-49:])
    _refused(["merge", str(flip), parts[1]], capsys, "flip.iou:checksum", "corrupt")
    _refused(
        ["merge", str(COCO[1])],
        capsys,
        "instances_val2014_100.json",
        "not an iou-eval partial file",
    )
    _refused(["merge", str(tmp_path / "missing.iou")], capsys, "missing.iou", "no such file")


def test_partial_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p, g = str(COCO[0]), str(COCO[1])
    out = str(tmp_path / "x.iou")
    _refused([p, g, "--partial", out, "--per-class"], capsys, "--per-class", "merge")
    _refused([p, g, "--partial", out, "--fail-under", "AP=0.1"], capsys, "--fail-under")
    _refused([p, g, "--shard", "1/2"], capsys, "--shard K/N goes with --partial")
    _refused([p, g, "--shard", "3/2", "--partial", out], capsys, "--shard", "'3/2'")
    _refused([p, g, "--partial", g], capsys, "refusing to overwrite")
    _refused([p, g, "--jobs", "-1"], capsys, "--jobs")
    _refused(["merge", out, out], capsys, "given twice")


def test_rotated_boxes_merge_and_dota(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DOTA has a mergeable state (issue 24, item 2): ``--jobs`` runs in workers, ``--partial``
    parts merge into the one-run report (more in tests/cli/test_cli_merge_tasks.py)."""
    from tests.cli.test_cli_obb import GT, TASK1, write_tree

    gt = str(write_tree(tmp_path / "val" / "labelTxt", GT))
    pred = str(write_tree(tmp_path / "results", TASK1))
    parts = []
    for k in (1, 2):
        out = str(tmp_path / f"obb{k}.iou")
        assert run([pred, gt, "--shard", f"{k}/2", "--partial", out, "-q"], capsys)[0] == 0
        parts.append(out)
    one = run([pred, gt, "-o", "csv", "--per-class", "-q"], capsys)
    assert run(["merge", *parts, "-o", "csv", "--per-class", "-q"], capsys)[:2] == one[:2]
    args = [pred, gt, "--protocol", "dota", "-o", "csv", "--per-class"]
    code, out, err = run([*args, "--jobs", "2"], capsys)
    assert code == 0 and "no mergeable state" not in err
    assert out == run([*args, "-q"], capsys)[1]
    _refused([*args, "--partial", str(tmp_path / "d.iou")], capsys, "--per-class")
    dparts = []
    for k in (1, 2):
        out = str(tmp_path / f"dota{k}.iou")
        assert (
            run([pred, gt, "--protocol", "dota", "--shard", f"{k}/2", "--partial", out], capsys)[0]
            == 0
        )
        dparts.append(out)
    assert (
        run(["merge", *dparts[::-1], "-o", "csv", "--per-class", "-q"], capsys)[:2]
        == run([*args, "-q"], capsys)[:2]
    )
