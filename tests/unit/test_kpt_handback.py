"""A ``--jobs`` worker's keypoint numbers reach the parent read from the worker's memory
(``process_vm_readv``, :func:`iou_cli.loaders.sharedcols.vm_read`) while it waits for the
parent's word, else through its pipe: the same columns either way, and no worker outlives
its parent or waits forever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.loaders import fastcoco, sharedcols
from tests.unit.test_fastkpt import KEYS, _kpt_file

ROOT = Path(__file__).resolve().parents[2]
needs_vm = pytest.mark.skipif(
    not sharedcols.vm_capable(), reason="no process_vm_readv here (not Linux, or Yama forbids)"
)


def _split(data: bytes, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any] | None:
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    pending = fastcoco.Pending(data, 2, "keypoints", 0)
    assert pending.pool is not None
    cols = pending.get()
    assert pending.procs == [] and pending.release == []  # workers ended, pipes closed
    return cols


def _assert_serial(cols: dict[str, Any] | None, data: bytes) -> None:
    serial = fastcoco.read_results(data, 1, field="keypoints")
    assert cols is not None and serial is not None
    for key in KEYS:
        assert cols[key].tobytes() == serial[key].tobytes(), key


@needs_vm
def test_a_worker_numbers_are_read_from_its_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    real = fastcoco.vm_read

    def spy(*args: Any) -> bool:
        calls.append(real(*args))
        return calls[-1]

    monkeypatch.setattr(fastcoco, "vm_read", spy)
    data = _kpt_file(300, seed=11)
    _assert_serial(_split(data, monkeypatch), data)
    assert calls == [True]


@pytest.mark.parametrize("refused", ["read", "hold", "capable", "die_with_parent"])
def test_the_pipe_carries_them_when_the_read_cannot_be_had(
    monkeypatch: pytest.MonkeyPatch, refused: str
) -> None:
    """The read refused (EPERM from a security module or a seccomp filter), no pipe for
    the word, the machine not capable, or a worker that cannot be tied to its parent's
    life: the numbers come through the pipe, the same columns."""
    if refused == "read":
        monkeypatch.setattr(fastcoco, "vm_read", lambda *args: False)
    elif refused == "hold":
        monkeypatch.setattr(fastcoco, "hold_pipes", lambda n: None)
    elif refused == "capable":
        monkeypatch.setattr(sharedcols, "vm_capable", lambda: False)
    else:
        monkeypatch.setattr("iou_cli.workers.die_with_parent", lambda parent: False)
    piped: list[int] = []
    real = sharedcols.recv_raw

    def spy(fd: int, count: int, into: Any = None) -> Any:
        piped.append(count)
        return real(fd, count, into)

    monkeypatch.setattr(sharedcols, "recv_raw", spy)
    data = _kpt_file(300, seed=12)
    _assert_serial(_split(data, monkeypatch), data)
    assert piped and sum(piped) > 0


def test_vm_read_refuses_what_does_not_fit() -> None:
    a = np.arange(1000, dtype=np.float64)
    out = np.zeros(1000)
    if sharedcols.vm_capable():
        assert sharedcols.vm_read(os.getpid(), [(a.ctypes.data, a.nbytes)], [out])
        assert np.array_equal(out, a)
    assert not sharedcols.vm_read(os.getpid(), [(a.ctypes.data, a.nbytes)], [np.zeros(999)])
    assert not sharedcols.vm_read(os.getpid(), [(a.ctypes.data, a.nbytes)], [])
    assert not sharedcols.vm_read(os.getpid(), [(a.ctypes.data, 8000)], [np.zeros(2000)[::2]])
    assert not sharedcols.vm_read(2**22 + 12345, [(a.ctypes.data, a.nbytes)], [out])  # no such


_ORPHAN = """
import sys
from iou_cli.loaders import fastcoco
fastcoco._PARALLEL_MIN = 0
if sys.argv[2] == "pipe":
    fastcoco.hold_pipes = lambda n: None
data = open(sys.argv[1], "rb").read()
pending = fastcoco.Pending(data, 2, "keypoints", 0)
print(pending.procs[0][0].pid, flush=True)
import os, time
time.sleep(float(sys.argv[3]))
os._exit(0)  # the parent ends without reading anything
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie no one reaps
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PDEATHSIG: Linux")
@pytest.mark.parametrize(("how", "wait"), [("held", "1.0"), ("pipe", "1.0"), ("held", "0")])
def test_no_worker_outlives_its_parent(tmp_path: Any, how: str, wait: str) -> None:
    """A parent that ends without reading (killed, ``os._exit``): its worker ends too,
    whether it holds its numbers for the parent or blocks on a full pipe (several MB of
    numbers: more than a pipe holds), or is still decoding."""
    path = tmp_path / "p.json"
    path.write_bytes(_kpt_file(20_000, k=17, seed=13))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = tmp_path / "out.txt"
    with open(out, "w") as fh:  # (a file: an orphan holding a pipe would keep run() waiting)
        code = subprocess.run(
            [sys.executable, "-c", _ORPHAN, str(path), how, wait],
            stdout=fh,
            timeout=120,
            env=env,
            cwd=ROOT,
        ).returncode
    assert code == 0
    pid = int(out.read_text().split()[0])
    deadline = time.monotonic() + 20
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    gone = _gone(pid)
    if not gone:
        os.kill(pid, signal.SIGKILL)
    assert gone


def _slow_exit(send: Any) -> None:
    send.send("done")
    time.sleep(1.0)  # (what is left of its exit: the kernel freeing its memory, say)


@pytest.mark.parametrize("own", [False, True])
def test_read_workers_are_waited_for_only_in_a_library_callers_process(
    monkeypatch: pytest.MonkeyPatch, own: bool
) -> None:
    """Every part of a worker read: the console script's own process does not wait for it
    to finish exiting (it ends soon; its exit reaps it), a library caller's process does
    (no stray child left behind)."""
    from iou_cli import workers

    monkeypatch.setattr(workers, "own_process", lambda: own)
    procs = workers.fork_workers(_slow_exit, [()])
    assert procs[0][1].recv() == "done"
    workers.end_workers(procs, collected=True)
    proc = procs[0][0]
    assert proc.exitcode == (None if own else 0)  # (still exiting, or waited for)
    proc.join()


def test_the_decoder_is_made_once_before_the_fork(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What every process needs to decode keypoint results (msgspec, the decoder, the OKS
    module) is made before the workers are forked, not in each of them."""
    from iou_cli.loaders import fastkpt

    fastkpt._decoder.cache_clear()
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    made: list[int] = []
    real = fastcoco.fork_workers

    def spy(*args: Any) -> Any:
        made.append(fastkpt._decoder.cache_info().currsize)
        return real(*args)

    monkeypatch.setattr(fastcoco, "fork_workers", spy)
    path = tmp_path / "p.json"
    path.write_bytes(_kpt_file(200, seed=14))
    fastcoco.prefetch(str(path), 2, "keypoints", 0)
    raw, cols = fastcoco.read_path(str(path), 2, "keypoints")
    assert made == [1] and cols is not None


def test_the_score_order_is_started_ahead_for_the_evaluation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The joined columns' score order is sorted in a thread while this process goes on;
    the evaluation's by_score takes it (the same order a sort gives)."""
    from iou_cli.matching import accumulate as acc

    data = _kpt_file(300, seed=15)
    cols = _split(data, monkeypatch)
    assert cols is not None and acc._LATER and acc._LATER[0][0] is cols["score"]
    got = acc.by_score(cols["score"])
    assert acc._LATER == []
    assert np.array_equal(got, np.argsort(-cols["score"], kind="stable"))
