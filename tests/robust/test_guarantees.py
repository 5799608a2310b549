"""The structural guarantees of issue 22, as properties rather than single cases.

1. One output guard: for every writer option and every kind of input path (arguments,
   files the loaders found, split lists, image headers, links of all kinds, /dev/fd),
   writing over it is refused with exit 2 and the input is unchanged.
2. One bounded reader: gzip round-trips exactly, and stops at the bound while streaming; a
   FIFO found by any folder walk is refused by name; a FIFO read by two evaluations in one
   process is read twice (the pipe cache lives for one evaluation).
3. One JSON rule: any document parses to what json.loads gives; a duplicate key anywhere
   is refused, located.
4. SIGTERM: exit 143, no temporary file, the old figures or the new ones.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iou_cli.errors import InputError
from iou_cli.loaders import files
from iou_cli.loaders.jsonio import parse_json
from tests.conftest import DATA
from tests.helpers import assert_one_error_line, run_cli

GOOD = DATA / "bad" / "good"


def _png(w: int, h: int) -> bytes:
    ihdr = struct.pack(">II", w, h) + b"\x08\x02\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0" * 4


def _layout(d: Path) -> None:
    (d / "p").mkdir()
    (d / "p" / "a.txt").write_text("0 0.5 0.5 0.2 0.2 0.9\n")
    (d / "y" / "labels").mkdir(parents=True)
    (d / "y" / "labels" / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    (d / "y" / "classes.txt").write_text("cat\ndog\n")
    (d / "y" / "images").mkdir()
    (d / "y" / "images" / "a.jpg").write_bytes(b"")
    (d / "y" / "val.txt").write_text("images/a.jpg\n")
    (d / "y" / "data.yaml").write_text("path: .\nval: val.txt\nnames: [cat, dog]\n")
    (d / "imgs").mkdir()
    (d / "imgs" / "a.png").write_bytes(_png(100, 100))
    (d / "names.txt").write_text("cat\ndog\n")
    (d / "gt.json").write_bytes((GOOD / "coco_gt.json").read_bytes())
    (d / "pred.json").write_bytes((GOOD / "coco_pred.json").read_bytes())


# kind -> (arguments, the input file the target resolves to, the target)
def _kinds(d: Path) -> dict[str, tuple[list[str], str, str]]:
    os.symlink(d / "pred.json", d / "link.out")
    os.link(d / "gt.json", d / "hard.out")
    os.link(d / "y" / "classes.txt", d / "hard_found.out")
    os.link(d / "imgs" / "a.png", d / "hard_header.out")
    os.link(d / "y" / "val.txt", d / "hard_split.out")
    coco = ["pred.json", "gt.json"]
    return {
        "prediction-file": (coco, "pred.json", "pred.json"),
        "ground-truth-file": (coco, "gt.json", "gt.json"),
        "inside-input-folder": (["p", "y/labels"], "y/labels/a.txt", "y/labels/a.txt"),
        "names-file": (["p", "y/labels", "--names", "names.txt"], "names.txt", "names.txt"),
        "found-classes-hard-link": (["p", "y/labels"], "y/classes.txt", "hard_found.out"),
        "split-list-hard-link": (["p", "y/data.yaml"], "y/val.txt", "hard_split.out"),
        "image-header-hard-link": (
            ["p", "y/labels", "--images", "imgs"],
            "imgs/a.png",
            "hard_header.out",
        ),
        "symlink-to-input": (coco, "pred.json", "link.out"),
        "hard-link-to-input": (coco, "gt.json", "hard.out"),
    }


KINDS = [
    "prediction-file",
    "ground-truth-file",
    "inside-input-folder",
    "names-file",
    "found-classes-hard-link",
    "split-list-hard-link",
    "image-header-hard-link",
    "symlink-to-input",
    "hard-link-to-input",
]


@pytest.mark.parametrize("writer", ["--matches", "--report", "--plots"])
@pytest.mark.parametrize("kind", KINDS)
def test_no_writer_goes_over_any_kind_of_input(
    writer: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _layout(tmp_path)
    monkeypatch.chdir(tmp_path)
    args, source, target = _kinds(tmp_path)[kind]
    before = Path(source).read_bytes()
    code, out, err = run_cli([*args, writer, target, "-q"])
    line = assert_one_error_line(code, out, err)
    assert "refusing" in line or "not a folder" in line, line
    assert Path(source).read_bytes() == before
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".iou-eval-")]


def test_dev_fd_of_an_input_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _layout(tmp_path)
    monkeypatch.chdir(tmp_path)
    fd = os.open("gt.json", os.O_RDONLY)
    try:
        code, out, err = run_cli(["pred.json", "gt.json", "--matches", f"/dev/fd/{fd}"])
    finally:
        os.close(fd)
    assert "refusing to overwrite" in assert_one_error_line(code, out, err)


def test_two_outputs_at_one_path_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _layout(tmp_path)
    monkeypatch.chdir(tmp_path)
    Path("out.csv").write_text("")
    os.symlink("out.csv", "alias.html")
    code, out, err = run_cli(["pred.json", "gt.json", "--matches", "out.csv", "--report", "alias.html"])  # fmt: skip
    assert "would write the same file" in assert_one_error_line(code, out, err)


# ---------------------------------------------------------------- 2. one bounded reader


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=st.lists(st.binary(max_size=3000), min_size=1, max_size=4))
def test_gzip_members_round_trip(parts: list[bytes], tmp_path: Path) -> None:
    f = tmp_path / "x.gz"
    f.write_bytes(b"".join(gzip.compress(p) for p in parts))
    assert files.read_input(str(f), decompress=True) == b"".join(parts)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(size=st.integers(0, 1 << 17))
def test_gzip_stops_at_the_bound(size: int, tmp_path: Path) -> None:
    f = tmp_path / "x.gz"
    f.write_bytes(gzip.compress(os.urandom(size)))  # random bytes: no ratio, size only
    old = files.MAX_DECOMPRESSED
    files.MAX_DECOMPRESSED = 1 << 16
    try:
        if size > 1 << 16:
            with pytest.raises(InputError, match="decompresses to more than 64 KiB"):
                files.read_input(str(f), decompress=True)
        else:
            assert len(files.read_input(str(f), decompress=True)) == size
    finally:
        files.MAX_DECOMPRESSED = old


@pytest.mark.parametrize(
    "layout",
    ["voc", "yolo-labels", "labelme", "images"],
)
def test_a_fifo_found_by_a_walk_is_refused_by_name(
    layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "FIFO_WAIT", 30.0)  # a hang would show as a timeout
    monkeypatch.chdir(tmp_path)
    _layout(tmp_path)
    if layout == "voc":
        (tmp_path / "v").mkdir()
        os.mkfifo(tmp_path / "v" / "a.xml")
        args = ["v", "v"]
    elif layout == "yolo-labels":
        os.mkfifo(tmp_path / "y" / "labels" / "b.txt")
        args = ["p", "y/labels"]
    elif layout == "labelme":
        (tmp_path / "lm").mkdir()
        os.mkfifo(tmp_path / "lm" / "a.json")
        args = ["lm", "lm"]
    else:
        (tmp_path / "imgs" / "a.png").unlink()
        os.mkfifo(tmp_path / "imgs" / "a.png")  # the image whose size is needed
        args = ["p", "y/labels", "--images", "imgs"]
    started = time.monotonic()
    line = assert_one_error_line(*run_cli(args))
    assert "not a regular file (a FIFO)" in line
    assert time.monotonic() - started < 10


def test_a_fifo_read_by_two_evaluations_is_read_twice(tmp_path: Path) -> None:
    from iou_cli import evaluate

    gt = json.loads((GOOD / "coco_gt.json").read_text())
    fifo = tmp_path / "pred.json"
    os.mkfifo(fifo)
    summaries = []
    preds: Any
    for preds in ([], json.loads((GOOD / "coco_pred.json").read_text())):

        def feed(data: bytes = json.dumps(preds).encode()) -> None:
            with open(fifo, "wb") as fh:
                fh.write(data)

        t = threading.Thread(target=feed, daemon=True)
        t.start()
        summaries.append(evaluate(str(fifo), gt).summary["AP"])
        t.join(5)
    assert summaries[0] == 0.0 or summaries[0] is None
    assert summaries[1] == pytest.approx(1.0, abs=1e-12)


def test_gzip_bomb_stays_bounded_in_a_child(tmp_path: Path) -> None:
    """The bomb as a user meets it: a child process under a 4 GiB address-space limit."""
    member = gzip.compress(b" " * (64 << 20), compresslevel=9)
    (tmp_path / "bomb.json.gz").write_bytes(member * 100)  # 6.4 MB -> 6.7 GB
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
        "from iou_cli.cli import main\n"
        f"main(['{tmp_path / 'bomb.json.gz'}', '{GOOD / 'coco_gt.json'}'])\n"
    )
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    assert proc.returncode == 2, proc.stderr
    assert "decompresses to more than 200 times its size" in proc.stderr
    assert elapsed < 60


# ---------------------------------------------------------------- 3. one JSON rule

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_docs = st.recursive(
    _scalars,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4)
    ),
    max_leaves=25,
)


def _dump(v: Any, dup: Any) -> str:
    """JSON text of ``v``; the dict ``dup`` (by identity) gets its first key twice."""
    if isinstance(v, dict):
        items = [f"{json.dumps(k)}: {_dump(x, dup)}" for k, x in v.items()]
        if v is dup and v:
            k, x = next(iter(v.items()))
            items.append(f"{json.dumps(k)}: {_dump(x, dup)}")
        return "{" + ", ".join(items) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_dump(x, dup) for x in v) + "]"
    return json.dumps(v)


def _dicts(v: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if x:
                out.append(x)
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out


@settings(max_examples=150, deadline=None)
@given(doc=_docs)
def test_any_document_parses_as_json_loads(doc: Any) -> None:
    text = json.dumps(doc)
    assert parse_json("f.json", text.encode()) == json.loads(text)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(st.sampled_from('0123456789.eE+-, x"[]'), max_size=60)
    | st.lists(st.sampled_from(["1" * 15, "1" * 16, "9" * 20, "e", "E+", ".", "-", " ", "12"])).map(
        "".join
    )
)
def test_the_suspicious_number_prefilter_is_the_regex(text: str) -> None:
    # the fast prefilter of the number check never disagrees with the regex it guards
    from iou_cli.loaders.jsonio import _NUM, _suspicious_number

    data = text.encode()
    assert _suspicious_number(data) == (_NUM.search(data) is not None)


@settings(max_examples=150, deadline=None)
@given(doc=_docs, pick=st.integers(0, 1000), depth=st.integers(0, 90))
def test_a_duplicate_key_at_any_depth_is_refused(doc: Any, pick: int, depth: int) -> None:
    targets = _dicts(doc)
    if not targets:
        doc = {"k": doc}
        targets = [doc]
    dup = targets[pick % len(targets)]
    text = "[" * depth + _dump(doc, dup) + "]" * depth  # nesting must not switch it off
    with pytest.raises(InputError, match="duplicate"):
        parse_json("f.json", text.encode())


# ---------------------------------------------------------------- 4. SIGTERM


def test_sigterm_during_plots_exits_143_and_keeps_the_old_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import iou_cli.report.plots as plots

    _layout(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli(["pred.json", "gt.json", "-q", "--plots", "figs"])
    assert code == 0, err
    old = {n: (tmp_path / "figs" / n).read_bytes() for n in os.listdir(tmp_path / "figs")}
    real_svg = plots.svg
    calls = {"n": 0}

    def svg_then_term(fig: Any) -> bytes:
        calls["n"] += 1
        if calls["n"] == 2:  # half-way through the new set
            os.kill(os.getpid(), signal.SIGTERM)
        return real_svg(fig)

    monkeypatch.setattr(plots, "svg", svg_then_term)
    code, _out, err = run_cli(["pred.json", "gt.json", "-q", "--plots", "figs"])
    assert code == 143, err
    assert "terminated" in err
    assert {n: (tmp_path / "figs" / n).read_bytes() for n in os.listdir(tmp_path / "figs")} == old
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".iou-eval-")]


def test_sigterm_while_waiting_on_a_fifo_exits_143(tmp_path: Path) -> None:
    fifo = tmp_path / "gt.json"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "iou_cli", str(GOOD / "coco_pred.json"), str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)  # started, waiting for a writer (FIFO_WAIT is 10 s)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "iou-eval: terminated"
