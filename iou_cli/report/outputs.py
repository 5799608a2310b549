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
import stat
import tempfile
from collections.abc import Iterable

from ..errors import OutputError


def is_stdout(path: str) -> bool:
    """True when ``path`` is the file or device this process's stdout already writes to."""
    try:
        a, b = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_target(path: str, inputs: Iterable[str], read_files: Iterable[str] = ()) -> None:
    """Refuse to write ``path`` over an input file or inside an input folder.

    ``read_files``: files the run has read besides its arguments (found by the loaders);
    compared by identity (device and inode), so a hard link or a symlink is caught too.
    """
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        me = (st.st_dev, st.st_ino)
        for f in read_files:
            with contextlib.suppress(OSError):
                r = os.stat(f)
                if (r.st_dev, r.st_ino) == me:
                    raise OutputError(f"{path}: refusing to overwrite {f}, which this run read")
    target = os.path.realpath(path)
    for inp in inputs:
        if not inp or not os.path.exists(inp):
            continue
        real = os.path.realpath(inp)
        if os.path.isdir(real):
            if target == real or target.startswith(real.rstrip(os.sep) + os.sep):
                raise OutputError(f"{path}: refusing to write into the input folder {inp}")
        elif target == real or (os.path.exists(target) and os.path.samefile(target, real)):
            raise OutputError(f"{path}: refusing to overwrite the input file {inp}")
    parent = os.path.dirname(target) or "."
    if not os.path.isdir(parent):
        raise OutputError(f"{path}: folder {os.path.dirname(path) or '.'} does not exist")
    if os.path.isdir(target):
        raise OutputError(f"{path}: is a folder")


def write_atomic(
    path: str, text: str | bytes, inputs: Iterable[str] = (), read_files: Iterable[str] = ()
) -> None:
    """Write ``text`` (str, or bytes for PNG/SVG) to a temporary file beside ``path`` and
    rename it into place.

    An existing file is replaced only when the whole text is written; on any failure
    (including Ctrl-C) the temporary file is removed and ``path`` is untouched. A device
    or a pipe is written directly (see the module doc).
    """
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
