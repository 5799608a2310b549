"""What every worker process of iou-eval starts with (``--jobs`` pools)."""

from __future__ import annotations

import os
import signal


def init_worker() -> None:
    """Default signal handling in a forked worker: the parent's SIGTERM/SIGINT handlers
    (temporary files, exit codes) belong to the parent. A pool ends its workers with
    SIGTERM when its work is done; with the parent's handler inherited, each worker raised
    and printed a traceback. Ctrl-C is the parent's to handle (it ends the pool)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def cores(jobs: int) -> int:
    """``--jobs`` as a process count: 0 means every core this process may use."""
    if jobs != 0:
        return jobs
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
