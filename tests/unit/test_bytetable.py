"""The byte-table reader (DOTA Task1 files' fast path) reads exactly what ``float()`` reads,
bit for bit, names in first-appearance order; anything not plain answers None so that the
format's readers (which locate errors) take over."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from iou_cli.loaders import bytetable, dota
from iou_cli.loaders.bytetable import name_table, token_floats


def _ref(text: str) -> tuple[list[str], np.ndarray]:
    rows = [line.split() for line in text.splitlines()]
    return [r[0] for r in rows], np.array([[float(v) for v in r[1:]] for r in rows])


def _check(text: str, ncols: int) -> None:
    got = name_table(text.encode(), ncols)
    assert got is not None
    codes, names, values = got
    want_names, want = _ref(text)
    assert [names[c] for c in codes] == want_names
    assert names == list(dict.fromkeys(want_names))
    assert values.shape == want.shape
    assert values.tobytes() == want.tobytes()  # bit for bit, -0.0 included


def test_numbers_are_float_bit_for_bit() -> None:
    rng = random.Random(11)
    odd = ["5.", "-.5", ".5", "-0", "+0.0", "0", "1e5", "1E-3", "+3", "1_0", "007.50", "-12"]
    odd += ["123456789012345", "1234567890123456", "0.1000000000000000055511151231257827"]
    odd += ["999999999999999.", "-.000000000000001", "4.9e-324", "1.7976931348623157e308"]
    # one 64-bit word: 8 characters after the sign, the dot anywhere, none, or two
    odd += ["12345678", "1234.567", "-1234.567", ".1234567", "1234567.", "00000000", "9"]
    odd += ["123456789", "-12345678", "+.1234567", "1.2.3".replace(".", "") + "."]
    toks = odd + [
        f"{rng.uniform(-1e4, 1e4):.{rng.randint(0, 17)}f}" for _ in range(6000 - len(odd))
    ]
    rng.shuffle(toks)
    lines = []
    for i in range(0, len(toks), 4):
        lines.append(f"img{rng.randint(0, 40)} " + " ".join(toks[i : i + 4]))
    _check("\n".join(lines) + "\n", 5)
    _check("\n".join(lines), 5)  # no last newline


def test_names_runs_and_first_appearance() -> None:
    text = "b 1\nb 2\na 3\nb 4\nab 5\na 6\nP0001__1024__0___0 7\n"
    got = name_table(text.encode(), 2)
    assert got is not None
    codes, names, values = got
    assert names == ["b", "a", "ab", "P0001__1024__0___0"]
    assert codes.tolist() == [0, 0, 1, 0, 2, 1, 3]
    assert values.ravel().tolist() == [1, 2, 3, 4, 5, 6, 7]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a 1 2\n\nb 3 4\n",  # a blank line (line numbers would shift)
        "a 1 2\nb 3 4 5\n",  # a line of 4 tokens
        "a 1\nb 3 4 5\n",  # 2 + 4 tokens: the right total, the wrong lines
        "a  1 2\n",  # two spaces
        " a 1 2\n",  # a leading space
        "a 1 2 \n",  # a trailing space
        "a\t1 2\n",  # a tab (pandas' reader takes it)
        "a 1 2\r\n",  # CRLF
        "\ufeffa 1 2\n",  # a BOM
        "é 1 2\n",  # not ASCII
        "a 1 \x00\n",
        "a 1 nan\n",
        "a 1 inf\n",
        "a 1 1.2.3\n",
        "a 1 -\n",
        "a 1 .\n",
        "a 1 x\n",
        "a 1 +-3\n",
        "a 1 1e999\n",
        "x" * 65 + " 1 2\n",  # a very long name
    ],
)
def test_not_plain_is_none(text: str) -> None:
    assert name_table(text.encode(), 3) is None


def test_task1_fast_pandas_and_line_readers_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    rows = []
    for _ in range(500):
        q = [rng.uniform(-50, 5000) for _ in range(8)]
        digits = rng.choice([1, 3, 6, 17])
        rows.append(
            f"P{rng.randint(0, 30):04d} {rng.random():.{digits}f} "
            + " ".join(f"{v:.{rng.randint(0, 4)}f}" for v in q)
        )
    (tmp_path / "Task1_ship.txt").write_text("\n".join(rows) + "\n")
    (tmp_path / "Task1_plane.txt").write_text("\n".join(rows[::-3]))
    fast = dota.load_dota_task1(str(tmp_path))
    monkeypatch.setattr(dota, "name_table_piece", lambda data: None)
    mid = dota.load_dota_task1(str(tmp_path))
    monkeypatch.setattr(dota, "_task1_table", lambda text: None)
    slow = dota.load_dota_task1(str(tmp_path))
    for other in (mid, slow):
        assert other.images.keys == fast.images.keys
        assert other.categories.names == fast.categories.names
        for col in ("image", "category", "score", "obb"):
            assert getattr(other.boxes, col).tobytes() == getattr(fast.boxes, col).tobytes()
        assert other.locator is not None and fast.locator is not None
        assert [other.locator(r) for r in range(0, 600, 7)] == [
            fast.locator(r) for r in range(0, 600, 7)
        ]


def test_token_floats_is_float(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(2)
    toks = ["5.", "-.5", "-0", "1e5", "1_0", "+3", "0.1000000000000000055511151231257827"]
    toks += [f"{rng.uniform(-5000, 5000):.{rng.randint(0, 17)}f}" for _ in range(3000)]
    got = token_floats(toks)
    want = np.array([float(t) for t in toks])
    assert got is not None and got.tobytes() == want.tobytes()
    monkeypatch.setattr(bytetable, "_TOKENS", 7)  # blocks of tokens: the same values
    got = token_floats(toks)
    assert got is not None and got.tobytes() == want.tobytes()
    assert token_floats(toks[:20] + ["x"]) is None
    arabic = ["\u0661\u0662", "3"]  # non-ASCII digits: float() reads them (the other path)
    got = token_floats(arabic)
    assert got is not None and got.tolist() == [12.0, 3.0]
    assert token_floats([]) is not None
    for bad in ("nan", "-inf", "1.2.3", "x", "-", "1e400"):
        assert token_floats(["1", bad]) is None
        assert token_floats(["\u0661", bad]) is None


def test_task1_pieces_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files cut into pieces of whole lines (tiny ones here: a piece, then a file, not
    plain) give the rows, names and line numbers of one piece per file."""
    rng = random.Random(9)
    for c in ("plane", "ship", "harbor"):
        rows = [
            f"P{rng.randint(0, 9)} {rng.random():.3f} "
            + " ".join(f"{rng.uniform(0, 900):.1f}" for _ in range(8))
            for _ in range(rng.randint(50, 300))
        ]
        (tmp_path / f"Task1_{c}.txt").write_text("\n".join(rows) + "\n")
    # not plain in its second piece only (a tab): pandas' reader takes the whole file
    rows = [f"P1 0.5 1 1 9 1 9 9 1 {k}" for k in range(40)] + ["P1\t0.5 1 1 9 1 9 9 1 9"]
    (tmp_path / "Task1_bridge.txt").write_text("\n".join(rows))
    monkeypatch.setattr(dota, "_PIECE", 1 << 40)
    one = dota.load_dota_task1(str(tmp_path))
    monkeypatch.setattr(dota, "_PIECE", 300)
    many = dota.load_dota_task1(str(tmp_path))
    assert many.images.keys == one.images.keys
    for col in ("image", "category", "score", "obb"):
        assert getattr(many.boxes, col).tobytes() == getattr(one.boxes, col).tobytes()
    assert one.locator is not None and many.locator is not None
    assert [many.locator(r) for r in range(len(one.boxes))] == [
        one.locator(r) for r in range(len(one.boxes))
    ]


def test_task1_errors_in_file_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad line in an earlier file is reported before a later file that cannot be read
    (files are read first, then parsed, then checked in their order)."""
    from iou_cli.errors import InputError

    (tmp_path / "Task1_a.txt").write_text("P1 0.5 1 1 9 1 9 9 1\n")
    (tmp_path / "Task1_b.txt").write_text("P1 0.5 1 1 9 1 9 9 1 9\n")
    real = dota.read_input

    def refuse(path: str, *, member: bool = False) -> bytes:
        if path.endswith("Task1_b.txt"):
            raise InputError(path, None, "permission denied")
        return real(path, member=member)

    monkeypatch.setattr(dota, "read_input", refuse)
    with pytest.raises(InputError) as e:
        dota.load_dota_task1(str(tmp_path))
    assert str(e.value.path).endswith("Task1_a.txt") and e.value.where == "1"
    (tmp_path / "Task1_a.txt").write_text("P1 0.5 1 1 9 1 9 9 1 9\n")
    with pytest.raises(InputError) as e:
        dota.load_dota_task1(str(tmp_path))
    assert str(e.value.path).endswith("Task1_b.txt") and "permission" in e.value.reason


def test_name_column_anywhere_and_many_runs() -> None:
    """A name in another column (DOTA labelTxt: the category 9th of 10) and names mixed
    line by line (more runs than ``_RUNS``: found by sorting): first-appearance codes, the
    other columns' numbers in their order, bit for bit."""
    rng = random.Random(4)
    names = ["ship", "plane", "a", "ab", "small-vehicle"]
    rows = [
        [f"{rng.uniform(-99, 999):.{rng.randint(0, 3)}f}" for _ in range(3)]
        for _ in range(4 * bytetable._RUNS)
    ]
    for r in rows:
        r.insert(2, rng.choice(names))
    got = name_table(("\n".join(" ".join(r) for r in rows) + "\n").encode(), 4, name_col=2)
    assert got is not None
    codes, found, values = got
    assert found == list(dict.fromkeys(r[2] for r in rows))
    assert [found[c] for c in codes] == [r[2] for r in rows]
    want = np.array([[float(v) for k, v in enumerate(r) if k != 2] for r in rows])
    assert values.tobytes() == want.tobytes()


_FAULTS = """
import resource, sys
import numpy as np
from iou_cli.loaders import bytetable
if sys.argv[1] == "roomy":
    bytetable.roomy_malloc()
    bytetable.roomy_malloc()  # once per process: the second call does nothing
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for k in range(1, 16):  # temporaries growing by 256 KiB (below numpy's huge-page size)
    a = np.ones(k << 15)  # written (faulted in), then freed
    del a
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(
    __import__("platform").libc_ver()[0] != "glibc", reason="glibc malloc's mmap threshold"
)
def test_roomy_malloc_keeps_freed_temporaries() -> None:
    """After ``roomy_malloc`` freed temporaries of a few MiB are reused from the heap, not
    mapped and faulted in again each (a fresh process each way: malloc's state starts
    known; without it each temporary, larger than the last one freed, is a new mapping)."""
    import subprocess
    import sys

    def faults(mode: str) -> int:
        run = [sys.executable, "-c", _FAULTS, mode]
        return int(subprocess.run(run, capture_output=True, text=True, check=True).stdout)

    plain, roomy = faults("plain"), faults("roomy")
    assert plain > 100 * 64  # each temporary faulted in anew (k * 64 pages of 4 KiB)
    assert roomy < plain / 3
