"""What every worker process of iou-eval starts with (``--jobs`` pools)."""

from __future__ import annotations

import signal


def init_worker() -> None:
    """Default signal handling in a forked worker: the parent's SIGTERM/SIGINT handlers
    (temporary files, exit codes) belong to the parent. A pool ends its workers with
    SIGTERM when its work is done; with the parent's handler inherited, each worker raised
    and printed a traceback. Ctrl-C is the parent's to handle (it ends the pool)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
