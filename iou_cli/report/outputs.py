"""Writing output files safely: atomic replace, never over an input, never into an input folder.

* a regular file (or a new one) is written to a temporary file beside it and renamed into
  place, so an existing file is replaced only by a complete one;
* a device (``/dev/null``, a terminal) or a pipe is written directly: renaming over it would
  replace the device node with a regular file;
* a path that is the run's own stdout (``/dev/stdout``, ``/proc/self/fd/1``) is written
  through stdout by the caller (:func:`is_stdout`), so it cannot truncate or replace the
  file the report goes to;
* never over a file the run has read: the input arguments and every file the loaders
  found by themselves (a YOLO ``classes.txt``, ``Dataset.read_paths``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterable, Iterator

from ..errors import OutputError


def is_stdout(path: str) -> bool:
    """True when ``path`` is stdout (``-``, ``/dev/stdout``, ``/dev/fd/1``, or the file or
    device this process's stdout already writes to)."""
    from ..outguard import is_stdout as _is_stdout

    return _is_stdout(path)


def _read_now() -> list[str]:
    """The read-set of the current run (every file and folder the loaders read)."""
    from ..loaders.files import current

    rs = current()
    return rs.paths() if rs is not None else []


def check_target(
    path: str, inputs: Iterable[str], read_files: Iterable[str] = (), *, folder: bool = False
) -> None:
    """Refuse to write ``path`` over an input file or inside an input folder (the one
    guard, :mod:`iou_cli.outguard`, with the run's read-set added)."""
    from ..outguard import check_target as guard

    guard(path, inputs, [*read_files, *_read_now()], folder=folder)


def write_atomic(
    path: str, text: str | bytes, inputs: Iterable[str] = (), read_files: Iterable[str] = ()
) -> None:
    """Write ``text`` (str, or bytes for PNG/SVG) to a temporary file beside ``path`` and
    rename it into place.

    An existing file is replaced only when the whole text is written; on any failure
    (including Ctrl-C) the temporary file is removed and ``path`` is untouched. A device
    or a pipe is written directly (see the module doc).
    """
    if is_stdout(path):  # "-", /dev/stdout: the CLI has checked stdout carries nothing else
        _write_stdout(text)
        return
    check_target(path, inputs, read_files)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    try:
        if mode is not None and not stat.S_ISREG(mode):
            _write_direct(path, text, mode)
        else:
            _write_replace(path, text)
    except OSError as e:  # read-only folder, disk full, ...: one line, not a traceback
        raise OutputError(f"{path}: cannot write: {e.strerror or e}") from None


def _write_stdout(text: str | bytes) -> None:
    import sys

    out = sys.stdout
    if out is None:
        raise OutputError("-: stdout is closed")
    try:
        if isinstance(text, bytes):
            out.flush()
            buf = getattr(out, "buffer", None)
            if buf is None:
                out.write(text.decode("utf-8", "replace"))
            else:
                buf.write(text)
        else:
            out.write(text)
        out.flush()
    except (OSError, ValueError) as e:
        raise OutputError(f"-: cannot write to stdout: {e}") from None


def write_atomic_bytes(
    path: str, data: bytes, inputs: Iterable[str] = (), read_files: Iterable[str] = ()
) -> None:
    """:func:`write_atomic` for binary content (PNG, SVG)."""
    write_atomic(path, data, inputs, read_files)


def _write_direct(path: str, text: str | bytes, mode: int) -> None:
    """A character device or a pipe: opened for writing as it is, never replaced. A FIFO
    nobody reads is an error at once (ENXIO), not a hang."""
    if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        raise OSError(errno.EINVAL, "not a regular file, a character device or a pipe")
    flags = os.O_WRONLY | (os.O_NONBLOCK if stat.S_ISFIFO(mode) else 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise OSError(e.errno, "a FIFO that nobody reads") from None
        raise
    if stat.S_ISFIFO(mode):
        os.set_blocking(fd, True)
    if isinstance(text, bytes):
        with os.fdopen(fd, "wb") as bh:
            bh.write(text)
            bh.flush()
        return
    with os.fdopen(fd, "w", encoding="utf-8", newline="", errors="backslashreplace") as fh:
        fh.write(text)
        fh.flush()


def _write_replace(path: str, text: str | bytes) -> None:
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(prefix=".iou-eval-", suffix=".tmp", dir=folder)
    try:
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as bh:
                bh.write(text)
                bh.flush()
                os.fsync(bh.fileno())
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="", errors="backslashreplace") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        if os.path.exists(target):
            with contextlib.suppress(OSError):
                os.chmod(tmp, os.stat(target).st_mode & 0o777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_folder(
    out_dir: str, files: Iterable[tuple[str, bytes]], inputs: Iterable[str] = ()
) -> list[str]:
    """Write ``(name, bytes)`` files into ``out_dir`` so that an interrupted run leaves the
    old set or the new one, never a mix: everything is written into a temporary folder
    beside it first; then the folder is renamed into place (new) or its files are moved in
    with SIGINT and SIGTERM held back (existing). Returns the paths written."""
    ins = list(inputs)
    check_target(out_dir, ins, folder=True)
    parent = os.path.dirname(os.path.abspath(out_dir)) or "."
    try:
        tmp = tempfile.mkdtemp(prefix=".iou-eval-", suffix=".tmp", dir=parent)
    except OSError as e:
        raise OutputError(f"{out_dir}: cannot create: {e.strerror or e}") from None
    names: list[str] = []
    try:
        for name, data in files:
            with open(os.path.join(tmp, name), "wb") as fh:
                fh.write(data)
            names.append(name)
        check_target(out_dir, ins, folder=True)  # again: the loaders may have read more
        with _signals_held():
            if not os.path.lexists(out_dir):
                os.chmod(tmp, 0o777 & ~_umask())
                os.rename(tmp, out_dir)
            else:
                for name in names:
                    os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))
    except OSError as e:
        raise OutputError(f"{out_dir}: cannot write: {e.strerror or e}") from None
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return [os.path.join(out_dir, n) for n in names]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done (a few renames)."""
    held = {signal.SIGINT, signal.SIGTERM}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (AttributeError, ValueError, OSError):  # no signal masks here: just run it
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
