"""Opening inputs safely: one place for what kind of file may be read, and how much of it.

Every loader reads its bytes through :func:`read_input` (alias ``open_input``) or
:func:`read_text`:

* ``-`` is standard input, bounded like a pipe (a terminal is refused);

* a regular file is read whole (procfs/sysfs files, whose size says 0, up to
  ``MAX_STREAM_BYTES``);
* a pipe (``<(cmd)``, a named FIFO, ``/dev/stdin`` redirected from a pipe) is read up to
  ``MAX_STREAM_BYTES``; a FIFO nobody writes to is waited for ``FIFO_WAIT`` seconds, then
  refused, never a hang;
* anything else (``/dev/zero``, a terminal, a socket, a block device) is refused before it is
  opened;
* a file found inside an input folder (``member=True``) must be a regular file: a FIFO
  among the XML files of a VOC folder is refused by name, never opened.

:func:`kind` names what a path is for the messages. Loaders keep the list of paths they
read on their :class:`~iou_cli.data.Side` (``read_paths``), so that no output is ever
written over a file the run has read, including files it found by itself.
"""

from __future__ import annotations

import errno
import os
import stat
import time

from ..errors import InputError

MAX_STREAM_BYTES = 2 << 30  # bytes read from a pipe or a size-less (procfs) file
STDIN = "-"  # the path that means standard input
FIFO_WAIT = 10.0  # seconds to wait for a writer on a named FIFO
_CHUNK = 1 << 20

_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a special file"


def stat_input(path: str) -> os.stat_result:
    """``os.stat`` with the failures said as located input errors."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise InputError(path, None, "no such file or folder") from None
    except PermissionError:
        raise InputError(path, None, "permission denied") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None


def is_readable_member(path: str) -> bool:
    """True for a regular file (following links); False for folders. Raises for a FIFO,
    device or socket found inside an input folder: it is named, never opened."""
    st = stat_input(path)
    if stat.S_ISDIR(st.st_mode):
        return False
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            path,
            None,
            f"not a regular file ({kind(st.st_mode)}): iou-eval reads only regular files "
            "inside input folders",
        )
    return True


def check_file_arg(path: str, *, expected: str = "a file") -> os.stat_result:
    """A file named on the command line: a regular file or a pipe, else refused."""
    st = stat_input(path)
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise InputError(path, None, f"is a folder, expected {expected}")
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise InputError(
            path, None, f"not a regular file or a pipe ({kind(mode)}), expected {expected}"
        )
    return st


def read_input(path: str, *, member: bool = False, expected: str = "a file") -> bytes:
    """The bytes of ``path`` (see the module doc for what is accepted and how much is read).

    ``member``: the file was found inside an input folder, so only a regular file will do.
    """
    if path == STDIN and not member:
        return _read_stdin(expected)
    if member:
        is_readable_member(path)
        st = stat_input(path)
    else:
        st = check_file_arg(path, expected=expected)
    try:
        if stat.S_ISFIFO(st.st_mode):
            return _read_fifo(path)
        with open(path, "rb") as fh:
            return _read_bounded(fh, path, st.st_size)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(path, None, "no such file or folder") from None
    except PermissionError:
        raise InputError(path, None, "permission denied") from None
    except IsADirectoryError:
        raise InputError(path, None, f"is a folder, expected {expected}") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None


def _read_stdin(expected: str) -> bytes:
    """``-``: standard input, bounded like a pipe; a terminal is refused (it would wait for
    typing, which is never what a user meant)."""
    import sys

    stream = sys.stdin
    if stream is None:
        raise InputError(STDIN, None, f"standard input is closed, expected {expected}")
    if stream.isatty():
        raise InputError(STDIN, None, f"standard input is a terminal, expected {expected}")
    buf = getattr(stream, "buffer", None)
    parts: list[bytes] = []
    total = 0
    try:
        while True:  # chunks: read(2 GiB) would reserve 2 GiB up front
            if buf is None:  # a text stream (tests): its characters as UTF-8
                chunk = stream.read(_CHUNK).encode("utf-8", "surrogateescape")
            else:
                chunk = buf.read(_CHUNK)
            if not chunk:
                return b"".join(parts)
            total += len(chunk)
            if total > MAX_STREAM_BYTES:
                raise _too_big(STDIN)
            parts.append(chunk)
    except OSError as exc:
        raise InputError(STDIN, None, f"cannot read: {exc.strerror or exc}") from None


def _size(n: int) -> str:
    return f"{n / 2**30:g} GiB" if n >= 2**30 else f"{n / 2**20:g} MiB"


def _too_big(path: str) -> InputError:
    return InputError(
        path,
        None,
        f"more than {_size(MAX_STREAM_BYTES)} from a pipe or a size-less file: refused "
        "(save it to a regular file first)",
    )


def _read_bounded(fh: object, path: str, size: int) -> bytes:
    """A regular file: its stated size in one read; a size-less one (procfs) in chunks."""
    read = fh.read  # type: ignore[attr-defined]
    if size > 0:
        data: bytes = read(size)
        more: bytes = read(_CHUNK)
        if not more:
            return data
        parts = [data, more]  # the file grew while we read it: keep reading, bounded
        total = len(data) + len(more)
    else:
        parts, total = [], 0
    while True:
        chunk = read(_CHUNK)
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > max(size, 0) + MAX_STREAM_BYTES:
            raise _too_big(path)
        parts.append(chunk)


def _read_fifo(path: str) -> bytes:
    """A pipe: opened without blocking (a FIFO without a writer cannot hang the open), then
    read to its end, bounded; with no writer after ``FIFO_WAIT`` seconds it is refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        parts: list[bytes] = []
        total = 0
        deadline = time.monotonic() + FIFO_WAIT
        writer_seen = False
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:  # a writer is there, no data yet: wait for it
                writer_seen = True
                _wait_readable(fd)
                continue
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise
            if chunk:
                writer_seen = True
                total += len(chunk)
                if total > MAX_STREAM_BYTES:
                    raise _too_big(path)
                parts.append(chunk)
                continue
            # end of file: the writer closed, or no writer has opened the FIFO yet
            if writer_seen or parts:
                return b"".join(parts)
            if time.monotonic() >= deadline:
                raise InputError(
                    path,
                    None,
                    f"a FIFO that nobody writes to (waited {FIFO_WAIT:g} s)",
                )
            time.sleep(0.05)
    finally:
        os.close(fd)


def _wait_readable(fd: int) -> None:
    import select

    select.select([fd], [], [], 1.0)


open_input = read_input  # the name the other loaders' authors look for


def read_text(path: str, *, member: bool = False, expected: str = "a text file") -> str:
    """:func:`read_input` decoded as UTF-8 (a BOM is dropped; CRLF and CR become LF),
    with the first bad byte located."""
    data = read_input(path, member=member, expected=expected)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, None, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
