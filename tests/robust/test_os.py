"""The OS can fail (issue 16): special files, where outputs go, and stdout that cannot be
written. The stdout cases run the real program in a subprocess, as a shell would: stdout
closed (``>&-``), ``/dev/full``, and a reader that closes the pipe early (``| head -1``).

Exit codes: a closed pipe is quiet with 141 (128 + SIGPIPE, what a shell reports for any
tool ended by it), never 1 (the ``--fail-under`` gate's code); a stdout that cannot be
written (closed, disk full) is exit 2 with one ``iou-eval: error:`` line.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import iou_cli.loaders.files as files
from tests.conftest import DATA
from tests.robust._cli import ERROR_LINE, assert_one_error_line, run_cli

GOOD = DATA / "bad" / "good"
GT = str(GOOD / "coco_gt.json")
PRED = str(GOOD / "coco_pred.json")
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux special files")


def cli(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "iou_cli", *args],
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        **kw,  # type: ignore[arg-type]
    )


def big_scene(folder: Path, n: int = 4000) -> list[str]:
    """n images, one exact prediction each: a --matches CSV of ~100 kB (> a pipe buffer)."""
    gt = {
        "images": [{"id": i + 1, "file_name": f"{i}.jpg"} for i in range(n)],
        "annotations": [
            {"id": i + 1, "image_id": i + 1, "category_id": 1, "bbox": [1, 1, 9, 9]}
            for i in range(n)
        ],
        "categories": [{"id": 1, "name": "cat"}],
    }
    pred = [
        {"image_id": i + 1, "category_id": 1, "bbox": [1, 1, 9, 9], "score": 0.5} for i in range(n)
    ]
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "pred.json").write_text(json.dumps(pred))
    return [str(folder / "pred.json"), str(folder / "gt.json")]


# ------------------------------------------------------------------ stdout that fails


def test_reader_closes_the_pipe_early_is_quiet_141(tmp_path: Path) -> None:
    args = big_scene(tmp_path, 20_000)  # ~600 kB: far more than a pipe buffer
    proc = subprocess.Popen(
        [sys.executable, "-m", "iou_cli", *args, "-q", "--matches", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # `| head -1`
    proc.stdout.close()
    err = proc.stderr.read()
    code = proc.wait(timeout=60)
    assert first.startswith(b"image,category,pred_id")
    assert code == 141 and err == b"", (code, err)


def test_shell_pipe_into_head(tmp_path: Path) -> None:
    # ~600 kB: far more than the pipe buffer and what head reads before it exits
    args = big_scene(tmp_path, 20_000)
    cmd = (
        f"{sys.executable} -m iou_cli {args[0]} {args[1]} -q --matches - | head -1; "
        'echo "status=${PIPESTATUS[0]}" >&2'
    )
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
    assert r.stdout.startswith("image,category,pred_id") and r.stdout.count("\n") == 1
    assert r.stderr == "status=141\n"


def test_stdout_closed_is_exit_2_with_one_line() -> None:
    r = subprocess.run(
        ["bash", "-c", f'exec "{sys.executable}" -m iou_cli {PRED} {GT} -q -o json >&-'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert r.stderr == "iou-eval: error: cannot write to stdout: Bad file descriptor\n"


@linux
def test_stdout_on_a_full_disk_is_exit_2_with_one_line() -> None:
    with open("/dev/full", "w") as full:
        r = cli([PRED, GT, "-q", "-o", "csv"], stdout=full)
    assert r.returncode == 2
    assert r.stderr == "iou-eval: error: cannot write to stdout: No space left on device\n"


@linux
def test_table_on_a_full_disk_is_exit_2(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        r = cli([PRED, GT, "-q", "-o", "table", "--per-class"], stdout=full)
    assert r.returncode == 2 and ERROR_LINE.match(r.stderr.rstrip("\n"))
    assert r.stderr.count("\n") == 1


def test_ascii_terminal_escapes_names_and_keeps_numbers() -> None:
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    names = DATA / "bad" / "ok" / "hostile_names"
    args = [str(names / "pred.json"), str(names / "gt.json"), "-q", "--per-class"]
    for fmt in ("csv", "table", "markdown"):
        r = cli([*args, "-o", fmt], env=env)
        assert r.returncode == 0 and r.stderr == "", r.stderr
        assert "\\xd6lkanne" in r.stdout  # escaped, not a UnicodeEncodeError
    r = cli([*args, "-o", "json"], env=env)
    assert r.returncode == 0 and r.stdout.isascii()
    doc = json.loads(r.stdout)  # \u escapes: still valid JSON with the same names
    assert "\u00d6lkanne" in [c["name"] for c in doc["per_class"]]
    assert doc["summary"]["AP50"] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("columns", ["0", "5"])
def test_columns_too_small_still_prints_the_table(columns: str) -> None:
    env = {**os.environ, "COLUMNS": columns}
    r = cli([PRED, GT, "-q", "-o", "table"], env=env)
    assert r.returncode == 0 and "AP50" in r.stdout and "1.0000" in r.stdout


# ------------------------------------------------------------------ special files as inputs


@linux
@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/urandom", "/dev/null"])
@pytest.mark.parametrize("forced", [False, True])
def test_a_device_as_input_is_refused(dev: str, forced: bool) -> None:
    args = [dev, GT] + (["--pred-format", "coco"] if forced else [])
    line = assert_one_error_line(*run_cli(args))
    assert line == (
        f"iou-eval: error: {dev}: not a regular file or a pipe (a character device), "
        f"expected {'a JSON file' if forced else 'a file'}"
    )


@linux
def test_proc_self_mem_is_one_error_line() -> None:
    line = assert_one_error_line(*run_cli(["/proc/self/mem", GT, "--pred-format", "coco"]))
    assert line == "iou-eval: error: /proc/self/mem: cannot read: Input/output error"


@linux
@pytest.mark.parametrize(
    "args",
    [
        [PRED, GT, "--names", "/dev/zero"],
        ["segment", "/dev/zero", "/dev/zero", "--num-classes", "2"],
        ["labels", "/dev/zero", "/dev/zero"],
        ["segment", str(DATA / "segment" / "pred"), str(DATA / "segment" / "gt")]
        + ["--num-classes", "3", "--ignore-index", "255", "--names", "/dev/zero"],
    ],
    ids=["names", "segment", "labels", "segment-names"],
)
def test_a_device_anywhere_is_refused(args: list[str]) -> None:
    if args[0] == PRED:  # YOLO needs names: use the good YOLO pair
        args = [str(GOOD / "yolo_pred"), str(GOOD / "yolo_gt"), "--names", "/dev/zero"]
    line = assert_one_error_line(*run_cli(args))
    assert "/dev/zero: not a regular file" in line


@pytest.mark.parametrize("fmt", ["voc", "yolo"])
def test_a_fifo_inside_a_folder_is_refused_by_name_not_opened(tmp_path: Path, fmt: str) -> None:
    src = GOOD / f"{fmt}_gt"
    shutil.copytree(src, tmp_path / "gt")
    ext = "xml" if fmt == "voc" else "txt"
    os.mkfifo(tmp_path / "gt" / f"c.{ext}")  # nobody ever writes: opening it would hang
    line = assert_one_error_line(*run_cli([str(GOOD / f"{fmt}_pred"), str(tmp_path / "gt")]))
    assert line == (
        f"iou-eval: error: {tmp_path / 'gt' / f'c.{ext}'}: not a regular file (a FIFO): "
        "iou-eval reads only regular files inside input folders"
    )


def test_a_fifo_among_label_maps_is_refused(tmp_path: Path) -> None:
    shutil.copytree(DATA / "segment" / "gt", tmp_path / "gt")
    os.mkfifo(tmp_path / "gt" / "c.png")
    args = ["segment", str(DATA / "segment" / "pred"), str(tmp_path / "gt")]
    line = assert_one_error_line(*run_cli([*args, "--num-classes", "3"]))
    assert "c.png: not a regular file (a FIFO)" in line


def test_a_fifo_without_writer_is_refused_after_a_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "FIFO_WAIT", 0.3)
    fifo = tmp_path / "gt.json"
    os.mkfifo(fifo)
    line = assert_one_error_line(*run_cli([PRED, str(fifo), "--gt-format", "coco"]))
    assert line == f"iou-eval: error: {fifo}: a FIFO that nobody writes to (waited 0.3 s)"


def _feed(fifo: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as fh:
            fh.write(data)  # the open blocks until the reader is there

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("forced", [False, True])
def test_a_pipe_with_a_writer_is_read(tmp_path: Path, forced: bool) -> None:
    # pipes stay readable (process substitution, issue 15's stdin): same summary as the file
    fifo = tmp_path / "gt.json"
    os.mkfifo(fifo)
    t = _feed(fifo, Path(GT).read_bytes())
    extra = ["--gt-format", "coco"] if forced else []
    code, out, err = run_cli([PRED, str(fifo), "-q", "-o", "json", *extra])
    t.join(5)
    assert code == 0, err
    want = json.loads(run_cli([PRED, GT, "-q", "-o", "json"])[1])
    assert json.loads(out)["summary"] == want["summary"]


def test_a_pipe_is_read_up_to_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_STREAM_BYTES", 1 << 16)
    fifo = tmp_path / "gt.json"
    os.mkfifo(fifo)
    t = _feed(fifo, b" " * (1 << 18))
    line = assert_one_error_line(*run_cli([PRED, str(fifo), "--gt-format", "coco"]))
    t.join(5)
    assert line == (
        f"iou-eval: error: {fifo}: more than 64 KiB from a pipe or a size-less file: "
        "refused (save it to a regular file first)"
    )


def test_a_pipe_that_is_not_json_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "gt"
    os.mkfifo(fifo)
    t = _feed(fifo, b"<annotation/>")
    line = assert_one_error_line(*run_cli([PRED, str(fifo)]))
    t.join(5)
    assert "only COCO JSON can be read from stdin or a pipe" in line


def test_a_pipe_without_writer_is_refused_when_sniffed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "FIFO_WAIT", 0.3)
    fifo = tmp_path / "gt"
    os.mkfifo(fifo)
    line = assert_one_error_line(*run_cli([PRED, str(fifo)]))
    assert line == f"iou-eval: error: {fifo}: a FIFO that nobody writes to (waited 0.3 s)"


# ------------------------------------------------------------------ where outputs go


@linux
def test_matches_into_a_device_writes_through_it(tmp_path: Path) -> None:
    # a link to /dev/null stands for `./null` made by mknod: the node must stay a device
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    code, out, err = run_cli([PRED, GT, "-q", "-o", "json", "--matches", str(link)])
    assert code == 0, err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and link.is_symlink()
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_matches_into_a_fifo_with_a_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "m.csv"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    for _ in range(100):  # the reader must be there first
        if t.is_alive():
            break
    import time

    time.sleep(0.2)
    code, _, err = run_cli([PRED, GT, "-q", "-o", "json", "--matches", str(fifo)])
    t.join(5)
    assert code == 0, err
    assert got and got[0].startswith(b"image,category,pred_id")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_matches_into_a_fifo_nobody_reads_is_an_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "m.csv"
    os.mkfifo(fifo)
    line = assert_one_error_line(*run_cli([PRED, GT, "-q", "--matches", str(fifo)]))
    assert line == f"iou-eval: error: {fifo}: cannot write: a FIFO that nobody reads"


@linux
def test_matches_dev_stdout_with_stdout_redirected_keeps_the_report(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with open(out, "w") as fh:
        r = cli([PRED, GT, "-q", "-o", "csv", "--matches", "/dev/stdout"], stdout=fh)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.startswith("category_id,name,AP")  # the report is there, then the matches
    assert "\nimage,category,pred_id,gt_id,score,iou,outcome" in text
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_names_file_the_loader_found_is_never_overwritten(tmp_path: Path) -> None:
    # ds/classes.txt is found by the YOLO loader next to ds/gt and ds/pred (their parent)
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        for f in ("a.txt", "b.txt"):
            shutil.copy(GOOD / f"yolo_{side}" / f, tmp_path / side / f)
    names = tmp_path / "classes.txt"
    shutil.copy(GOOD / "yolo_gt" / "classes.txt", names)
    before = names.read_bytes()
    for target in (names, tmp_path / "hardlink.txt"):
        if target != names:
            os.link(names, target)
        line = assert_one_error_line(
            *run_cli([str(tmp_path / "pred"), str(tmp_path / "gt"), "--matches", str(target)])
        )
        assert line == (
            f"iou-eval: error: {target}: refusing to overwrite {names}, which this run read"
        )
        assert names.read_bytes() == before


# ------------------------------------------------------------------ option ranges


def test_ten_thousand_iou_thresholds_is_a_short_usage_error() -> None:
    thrs = ",".join(f"{(i + 1) / 10001:.6f}" for i in range(10_000))
    line = assert_one_error_line(*run_cli([PRED, GT, "--iou-thrs", thrs]))
    assert line == "iou-eval: error: --iou-thrs: 10,000 thresholds, at most 1000 are allowed"


def test_a_fifo_among_the_images_is_refused(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    os.mkfifo(tmp_path / "images" / "a.jpg")
    args = [str(GOOD / "yolo_pred"), str(GOOD / "voc_gt"), "--images", str(tmp_path / "images")]
    line = assert_one_error_line(*run_cli(args))
    assert "a.jpg: not a regular file (a FIFO)" in line


def test_out_of_memory_says_what_asked_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from iou_cli.protocols import get_protocol

    coco = get_protocol("coco")

    def oom(*args: object, **kw: object) -> None:
        raise MemoryError

    import iou_cli.protocols.coco as module

    monkeypatch.setitem(module.PROTOCOLS, "coco", dataclasses.replace(coco, run=oom))
    line = assert_one_error_line(*run_cli([PRED, GT]))
    assert line == (
        "iou-eval: error: out of memory evaluating 2 images x 2 classes (2 ground truths, "
        "2 predictions): evaluate a subset, or use a machine with more memory"
    )


def test_open_input_reads_stdin_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # `-` for issue 15's stdin inputs: the same bound as any pipe, a terminal refused
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"[1, 2]")))
    assert files.open_input("-") == b"[1, 2]"
    monkeypatch.setattr(files, "MAX_STREAM_BYTES", 4)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"[1, 2]")))
    with pytest.raises(files.InputError, match="more than .* from a pipe"):
        files.open_input("-")
