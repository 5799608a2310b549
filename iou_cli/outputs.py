"""Writing output files safely: atomic replace, never over an input, never into an input folder."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable

from .errors import OutputError


def check_target(path: str, inputs: Iterable[str]) -> None:
    """Refuse to write ``path`` over an input file or inside an input folder."""
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


def write_atomic(path: str, text: str, inputs: Iterable[str] = ()) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it into place.

    An existing file is replaced only when the whole text is written; on any failure
    (including Ctrl-C) the temporary file is removed and ``path`` is untouched.
    """
    check_target(path, inputs)
    try:
        _write_replace(path, text)
    except OSError as e:  # read-only folder, disk full, ...: one line, not a traceback
        raise OutputError(f"{path}: cannot write: {e.strerror or e}") from None


def write_atomic_bytes(path: str, data: bytes, inputs: Iterable[str] = ()) -> None:
    """:func:`write_atomic` for binary content (PNG, SVG)."""
    check_target(path, inputs)
    try:
        _write_replace(path, data)
    except OSError as e:
        raise OutputError(f"{path}: cannot write: {e.strerror or e}") from None


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
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
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
