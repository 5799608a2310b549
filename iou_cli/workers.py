"""What every worker process of iou-eval starts with (``--jobs`` pools), and the threads
``--jobs`` may use inside one process (:func:`in_threads`)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

_OWN_PROCESS: list[bool] = []  # set once by the console script (see claim_process)


def claim_process() -> None:
    """Mark this process as iou-eval's own (the console script's: one command, then the
    process ends). Process-wide shortcuts that would change a library caller's process
    (:func:`own_process`) are taken only then."""
    if not _OWN_PROCESS:
        _OWN_PROCESS.append(True)


def own_process() -> bool:
    """Whether this process is iou-eval's own (:func:`claim_process`), not a caller's."""
    return bool(_OWN_PROCESS)


def init_worker() -> None:
    """Default signal handling in a forked worker: the parent's SIGTERM/SIGINT handlers
    (temporary files, exit codes) belong to the parent. A pool ends its workers with
    SIGTERM when its work is done; with the parent's handler inherited, each worker raised
    and printed a traceback. Ctrl-C is the parent's to handle (it ends the pool)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@cache
def libc() -> Any:
    """The C library (ctypes, errno kept) on Linux, for the calls Python does not wrap
    (``prctl``, ``process_vm_readv``); None elsewhere or where it cannot be loaded."""
    import sys

    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def die_with_parent(parent: int) -> bool:
    """In a forked worker: be killed (SIGKILL) when the parent process ends
    (``PR_SET_PDEATHSIG``, Linux), so that a worker blocked on its pipe or waiting for the
    parent's word never outlives a parent that was killed; False where that cannot be
    had, or the parent (pid ``parent``) is gone already."""
    prctl = getattr(libc(), "prctl", None)
    if prctl is None or prctl(1, int(signal.SIGKILL), 0, 0, 0) != 0:  # (1: PR_SET_PDEATHSIG)
        return False
    return os.getppid() == parent  # (the parent may have ended before the call)


def cores(jobs: int) -> int:
    """``--jobs`` as a process count: 0 means every core this process may use."""
    if jobs != 0:
        return jobs
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def fork_workers(
    target: Callable[..., None], args: Iterable[tuple[Any, ...]]
) -> list[tuple[Any, Any]]:
    """One forked process per ``args`` item, each running ``target(*item, send)`` with the
    sending end of its own pipe; returns ``(process, receiving end)`` pairs. Plain processes,
    not a Pool: nothing is shared but the pipe, so ending them never waits on a lock a
    worker holds (a Pool's ``terminate()`` does, and hung once in a test run). If starting
    one fails, those already started are ended and the error raised."""
    import multiprocessing  # (only to fork: one process needs none of it)

    ctx = multiprocessing.get_context("fork")
    procs: list[tuple[Any, Any]] = []
    try:
        for item in args:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=target, args=(*item, send), daemon=True)
            proc.start()
            send.close()
            procs.append((proc, recv))
    except BaseException:
        end_workers(procs)
        raise
    return procs


def end_workers(procs: list[tuple[Any, Any]], collected: bool = True) -> None:
    """End :func:`fork_workers`' processes. ``collected``: every part was read, so they are
    exiting (a moment's wait, then any that is not is killed: SIGKILL, no handler, no lock
    to wait on). Otherwise (the caller failed, or gave up on them) they are killed at once:
    a worker still writing to its pipe would wait for a reader forever (each worker holds a
    copy of the receiving ends: its writes never fail), never exit."""
    for proc, recv in procs:
        recv.close()
        if collected and own_process():
            # the console script's process ends soon: a worker whose every part was read
            # exits by itself, and waiting for the kernel to free its memory cost ~4 ms
            # on the critical path (a library caller's process waits: no stray child)
            continue
        proc.join(timeout=2.0 if collected else 0.0)
        if proc.exitcode is None:
            proc.kill()
            proc.join()


def in_threads(work: Callable[[int], None], items: list[int], threads: int) -> None:
    """``work(item)`` for every item, by up to ``threads`` threads taking the items in
    turn (this one among them); the first exception any raised is raised here once all
    are done."""
    threads = min(threads, len(items))
    if threads <= 1:
        for item in items:
            work(item)
        return
    import threading

    todo = list(reversed(items))  # (list.pop is atomic under the GIL)
    failed: list[BaseException] = []

    def take() -> None:
        while todo and not failed:
            try:
                item = todo.pop()
            except IndexError:
                return
            try:
                work(item)
            except BaseException as exc:  # (MemoryError): raised by the caller's thread
                failed.append(exc)

    helpers = [threading.Thread(target=take, daemon=True) for _ in range(threads - 1)]
    for t in helpers:
        t.start()
    take()
    for t in helpers:
        t.join()
    if failed:
        raise failed[0]
