"""The DOTA readers' bulk path (one split, one float conversion over the whole text) reads
exactly what the line readers read: same numbers bit for bit, same rows, same locations; and
anything not plain falls back to the line readers (which locate errors)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from iou_cli.data import Side
from iou_cli.loaders import dota
from iou_cli.loaders.bulktext import bulk_floats, token_rows


def test_token_rows() -> None:
    assert token_rows("a 1 2\nb 3 4\n", 3) == ["a", "1", "2", "b", "3", "4"]
    assert token_rows("a 1 2\nb\t3   4", 3) == ["a", "1", "2", "b", "3", "4"]  # no last newline
    assert token_rows("a 1 2\n\nb 3 4\n", 3) is None  # a blank line would shift line numbers
    assert token_rows("a 1\nb 3 4 5\n", 3) is None  # 2 + 4 tokens: right total, wrong lines
    assert token_rows("a 1 \x00\n", 3) is None
    assert token_rows("", 3) is None


def test_bulk_floats_is_float() -> None:
    rng = random.Random(7)
    toks = ["5.", "-.5", ".5", "-0", "0", "1e5", "1E-3", "+3", "1_0", "0.1", "123456789.123456789"]
    toks += [f"{rng.uniform(-5000, 5000):.{rng.randint(0, 17)}f}" for _ in range(2000)]
    got = bulk_floats(toks, len(toks))
    assert got is not None
    want = [float(t) for t in toks]
    assert got.tolist() == want and np.array_equal(np.signbit(got), np.signbit(want))
    for bad in ("nan", "inf", "1.2.3", "x", "-"):
        assert bulk_floats(["1", bad], 2) is None


def _scene(tmp_path: Path) -> tuple[Path, Path]:
    rng = random.Random(3)
    gt, t1 = tmp_path / "labelTxt", tmp_path / "task1"
    gt.mkdir()
    t1.mkdir()
    classes = ["plane", "ship", "small-vehicle"]
    rows: dict[str, list[str]] = {c: [] for c in classes}
    for i in range(12):
        lines = ["imagesource:GoogleEarth", "gsd:0.146"] if i % 3 else []
        for _ in range(rng.randint(0, 6)):
            x, y = rng.uniform(0, 900), rng.uniform(0, 900)
            q = [x, y, x + 30, y + 3, x + 27, y + 40, x - 3, y + 37]
            c = rng.choice(classes)
            lines.append(" ".join(f"{v:.1f}" for v in q) + f" {c} {rng.randint(0, 1)}")
            rows[c].append(f"P{i:03d} {rng.random():.6f} " + " ".join(f"{v + 1.5:.3f}" for v in q))
        (gt / f"P{i:03d}.txt").write_text("\n".join(lines) + ("\n" if i % 2 else ""))
    for c in classes:
        (t1 / f"Task1_{c}.txt").write_text("\n".join(rows[c]) + "\n")
    return gt, t1


def _same(a: Side, b: Side) -> None:
    assert a.images.keys == b.images.keys and a.categories.names == b.categories.names
    ba, bb = a.boxes, b.boxes
    assert ba.obb is not None and bb.obb is not None and ba.obb.tobytes() == bb.obb.tobytes()
    for col in ("image", "category", "difficult", "xyxy", "box_area"):
        assert np.array_equal(getattr(ba, col), getattr(bb, col)), col
    if ba.score is not None:
        assert bb.score is not None and ba.score.tobytes() == bb.score.tobytes()
    assert a.locator is not None and b.locator is not None
    assert [a.locator(r) for r in range(len(ba))] == [b.locator(r) for r in range(len(bb))]


def test_bulk_and_line_readers_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gt, t1 = _scene(tmp_path)
    fast_gt, fast_pr = dota.load_dota_gt(str(gt)), dota.load_dota_task1(str(t1))
    assert len(fast_gt.boxes) > 10 and len(fast_pr.boxes) > 10
    assert fast_gt.locator is not None and fast_gt.locator(0).startswith("P00")
    monkeypatch.setattr(dota, "_gt_bulk", lambda texts: None)
    monkeypatch.setattr(dota, "_task1_table", lambda text: None)
    monkeypatch.setattr(dota, "name_table_piece", lambda data: None)
    _same(fast_gt, dota.load_dota_gt(str(gt)))
    _same(fast_pr, dota.load_dota_task1(str(t1)))


def test_bulk_locations(tmp_path: Path) -> None:
    gt = tmp_path / "labelTxt"
    gt.mkdir()
    (gt / "A.txt").write_text("gsd:0.1\n0 0 4 0 4 4 0 4 plane 0\n")
    (gt / "B.txt").write_text(
        "imagesource:x\ngsd:0.1\n0 0 4 0 4 4 0 4 ship 1\n1 1 5 1 5 5 1 5 plane 0"
    )
    side = dota.load_dota_gt(str(gt))
    assert side.locator is not None
    assert [side.locator(r) for r in range(3)] == ["A.txt:2", "B.txt:3", "B.txt:4"]
    assert side.boxes.difficult.tolist() == [False, True, False]


def test_gt_byte_token_and_line_readers_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The byte reader (categories mixed line by line: more runs than ``_RUNS``, so names
    are found by sorting), the token reader and the line reader: the same side."""
    from iou_cli.loaders import bytetable

    rng = random.Random(8)
    gt = tmp_path / "labelTxt"
    gt.mkdir()
    classes = ["plane", "ship", "small-vehicle", "harbor", "a", "ab"]
    for i in range(30):
        lines = ["imagesource:GoogleEarth", "gsd:0.146"] if i % 2 else []
        for _ in range(rng.randint(0, 40)):
            q = [rng.uniform(-10, 3000) for _ in range(8)]
            lines.append(
                " ".join(f"{v:.{rng.randint(0, 3)}f}" for v in q)
                + f" {rng.choice(classes)} {rng.randint(0, 1)}"
            )
        (gt / f"P{i:03d}.txt").write_text("\n".join(lines) + ("\n" if i % 3 else ""))
    fast = dota.load_dota_gt(str(gt))
    assert len(fast.boxes) > bytetable._RUNS and fast.boxes.difficult.any()
    monkeypatch.setattr(dota, "_gt_bytes", lambda body, n: None)
    _same(fast, dota.load_dota_gt(str(gt)))
    monkeypatch.setattr(dota, "_gt_bulk", lambda texts: None)
    _same(fast, dota.load_dota_gt(str(gt)))


@pytest.mark.parametrize("flag", ["00", "1.0", "+1", "2"])
def test_gt_byte_reader_leaves_odd_flags_to_the_others(tmp_path: Path, flag: str) -> None:
    gt = tmp_path / "labelTxt"
    gt.mkdir()
    (gt / "A.txt").write_text(f"0 0 4 0 4 4 0 4 plane 0\n1 1 5 1 5 5 1 5 ship {flag}\n")
    assert dota._gt_bytes((gt / "A.txt").read_text(), 2) is None
