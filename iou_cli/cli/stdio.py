"""Standard streams: one-line stderr messages, stdout writes that turn OS failures into a
defined exit, closed descriptors, and the progress bar."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from typing import Any

PROG = "iou-eval"


def stderr_line(text: str) -> None:
    """One line on stderr: control characters from inputs (ESC, newline) shown escaped, so a
    file or class name can neither split the line nor drive the terminal. A stderr that
    cannot be written (closed, full) loses the line; there is nowhere else to say it."""
    from ..text import term

    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(term(text) + "\n")
        sys.stderr.flush()


class StdoutFailed(Exception):
    """Writing to stdout failed (closed pipe, full disk, closed descriptor).

    Not an OSError on purpose: click turns an EPIPE OSError into exit 1 (the gate's code)."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(exc.strerror or str(exc))
        self.errno = exc.errno


_PIECE = 1 << 16


def write_stdout(text: str) -> None:
    """Write ``text`` to stdout and flush, turning an OS failure into :class:`StdoutFailed`."""
    try:
        # in 64 KiB pieces, each flushed: a reader that leaves mid-way (`| head -1`) is
        # then seen as EPIPE on the next piece, never as one short write taken for done
        for start in range(0, max(len(text), 1), _PIECE):
            sys.stdout.write(text[start : start + _PIECE])
            sys.stdout.flush()
    except OSError as exc:
        raise StdoutFailed(exc) from None


def console() -> Any:
    """A rich Console on stdout: no highlighting, a usable width (``COLUMNS=0`` would make
    rich print nothing; anything under 40 columns is taken as 40)."""
    from rich.console import Console

    from ..limits import console_width

    return Console(highlight=False, width=console_width(os.environ.get("COLUMNS")))


def warn(text: str) -> None:
    stderr_line(f"{PROG}: warning: {text}")


def stdout_is_unicode() -> bool:
    import codecs

    try:
        return codecs.lookup(getattr(sys.stdout, "encoding", None) or "utf-8").name.startswith(
            "utf"
        )
    except LookupError:
        return False


EXIT_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `cat big | head -1`'s cat


class ClosedStdout:
    """Stands for a stdout the shell closed (``>&-``): the first write fails with EBADF, as
    it does for every Unix tool, so the run ends with one line and exit 2."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


def setup_streams() -> None:
    """Make stdout/stderr safe for any text and any terminal before anything is printed.

    * a closed descriptor 1 or 2 (``>&-``) gets /dev/null underneath it, so no file this
      run opens can land on it; a closed stdout then fails on first write (exit 2);
    * a terminal that cannot encode a name (``PYTHONIOENCODING=ascii``, LANG=C) shows
      ``\\xd6`` escapes instead of raising: names are escaped, numbers stay as they are.
    """
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
            if name == "stdout":
                sys.stdout = ClosedStdout()
            elif sys.stderr is None:
                sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    if sys.stdout is None:
        sys.stdout = ClosedStdout()
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(errors="backslashreplace")


def silence_stdout() -> None:
    """After a failed write: drop what is buffered, so the exit flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115


class ProgressBar:
    """A rich progress bar on stderr, fed by the loaders' progress(side, done, total)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import Progress

        self._progress = Progress(console=Console(stderr=True), transient=True)
        self._tasks: dict[str, Any] = {}
        self._started = False

    def __call__(self, side: str, done: int, total: int) -> None:
        if not self._started:
            self._progress.start()
            self._started = True
        task = self._tasks.get(side)
        if task is None:
            task = self._tasks[side] = self._progress.add_task(f"reading {side}", total=total)
        self._progress.update(task, completed=done, total=total)

    def close(self) -> None:
        if self._started:
            self._progress.stop()
