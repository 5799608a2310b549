"""--jobs workers end quietly: a pool ends its workers with SIGTERM, and a worker that had
inherited the CLI's SIGTERM handler printed a traceback on stderr at every run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_jobs_two_leaves_stderr_clean() -> None:
    # the traceback came when SIGTERM found a worker between tasks: about one run in three
    # on these 100 images before the fix, so six runs
    data = ROOT / "tests" / "data" / "coco"
    args = [str(data / "instances_val2014_fakebbox100_results.json")]
    args += [str(data / "instances_val2014_100.json"), "-o", "json", "-q", "--jobs", "2"]
    for _ in range(6):
        proc = subprocess.run(
            [sys.executable, "-m", "iou_cli", *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr
        assert '"summary"' in proc.stdout


CHILD = """
import multiprocessing, signal, sys, time
class Terminated(Exception):
    pass
def raise_terminated(signum, frame):
    raise Terminated()
signal.signal(signal.SIGTERM, raise_terminated)  # as the CLI installs it
init = None
if sys.argv[1] == "init":
    from iou_cli.workers import init_worker as init
pool = multiprocessing.get_context("fork").Pool(2, init)
pool.map(abs, range(4))
time.sleep(0.5)  # the workers wait for the next task
pool.terminate()
"""


def test_terminated_worker_prints_nothing() -> None:
    def run(mode: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=60
        )
        return proc.stderr

    # without the initializer ("inherit") the workers print a traceback most of the time on an
    # idle machine, but not always under load, so only the fixed case is asserted
    assert "Traceback" not in run("init")


def test_every_pool_starts_its_workers_with_init_worker() -> None:
    import re

    for path in (ROOT / "iou_cli").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"(Pool\(|ProcessPoolExecutor\()([^\n]*)", text):
            assert "init_worker" in m.group(2), f"{path}: {m.group(0)}"
