"""The one bounded input reader: every byte iou-eval reads comes through here.

* ``-`` is standard input, bounded like a pipe (a terminal is refused);
* a regular file is read whole (procfs/sysfs files, whose size says 0, up to
  ``MAX_STREAM_BYTES``);
* a pipe (``<(cmd)``, a named FIFO, ``/dev/stdin`` redirected from a pipe) is read up to
  ``MAX_STREAM_BYTES``; a FIFO nobody writes to is waited for ``FIFO_WAIT`` seconds, then
  refused, never a hang;
* anything else (``/dev/zero``, a terminal, a socket, a block device) is refused before it is
  opened;
* a file found inside an input folder (``member=True``) must be a regular file: a FIFO
  among the XML files of a VOC folder is refused by name, never opened;
* gzip (``decompress=True``, by its magic bytes) is inflated while streaming, with a bound on
  the decompressed size (``MAX_DECOMPRESSED``) and on the ratio (``MAX_RATIO``, checked
  past ``RATIO_FLOOR`` bytes): a 6 MB bomb stops at the bound, not at an out-of-memory.

What was read is recorded in ONE place, the :class:`ReadSet` of the current
:func:`reading` context (one per evaluation): files, the folders walked, the image files
whose headers were read. Outputs are checked against it (``iou_cli.outguard``), so nothing
is ever written over a file the run read, whoever found it. A pipe can be read only once,
so its bytes are kept in the same context, for one evaluation and no longer (a FIFO read
again by a later evaluation in the same process is read again).
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import stat
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

from ..errors import InputError

MAX_STREAM_BYTES = 2 << 30  # bytes read from a pipe or a size-less (procfs) file
MAX_DECOMPRESSED = 2 << 30  # bytes a gzip input may inflate to
MAX_RATIO = 200  # decompressed / compressed, checked past RATIO_FLOOR
RATIO_FLOOR = 64 << 20
STDIN = "-"  # the path that means standard input
FIFO_WAIT = 10.0  # seconds to wait for a writer on a named FIFO
_CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"

_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


# ------------------------------------------------------------------ what the run read


@dataclass
class ReadSet:
    """Everything one run read: files (arguments and files found), folders walked, and the
    bytes of pipes (read once, kept for this run only)."""

    files: dict[str, None] = field(default_factory=dict)  # ordered set
    folders: dict[str, None] = field(default_factory=dict)
    pipes: dict[str, bytes] = field(default_factory=dict)

    def paths(self) -> list[str]:
        return [*self.files, *self.folders]


_CURRENT: contextvars.ContextVar[ReadSet | None] = contextvars.ContextVar(
    "iou_eval_read_set", default=None
)


@contextlib.contextmanager
def reading(read_set: ReadSet | None = None) -> Iterator[ReadSet]:
    """The read-set of one run: nested calls share the outer one (the CLI opens it, the
    library's ``evaluate`` joins it); the outermost call ends it, with its pipe bytes."""
    outer = _CURRENT.get()
    if outer is not None and read_set is None:
        yield outer
        return
    rs = read_set if read_set is not None else ReadSet()
    token = _CURRENT.set(rs)
    try:
        yield rs
    finally:
        _CURRENT.reset(token)


def current() -> ReadSet | None:
    return _CURRENT.get()


def note_read(path: str) -> None:
    """Record a file the run read (or will read): no output goes over it."""
    rs = _CURRENT.get()
    if rs is not None and path and path != STDIN:
        rs.files.setdefault(path, None)


def note_folder(path: str) -> None:
    """Record an input folder the run walked: no output goes into it."""
    rs = _CURRENT.get()
    if rs is not None and path and path != STDIN:
        rs.folders.setdefault(path, None)


# ------------------------------------------------------------------ what a path is


def kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a special file"


def shown(path: str) -> str:
    return "<stdin>" if path == STDIN else path


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


def is_stream(path: str) -> bool:
    """``-`` or an existing path that is neither a regular file nor a folder (a pipe)."""
    if path == STDIN:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def is_gzip(path: str) -> bool:
    return path.lower().endswith(".gz")


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


# ------------------------------------------------------------------ reading


def read_input(
    path: str, *, member: bool = False, expected: str = "a file", decompress: bool = False
) -> bytes:
    """The bytes of ``path`` (see the module doc for what is accepted and how much is read).

    ``member``: the file was found inside an input folder, so only a regular file will do.
    ``decompress``: gzip content (magic bytes) is inflated, bounded.
    """
    rs = _CURRENT.get()
    key = f"{path}\0gz" if decompress else path
    if rs is not None and key in rs.pipes:
        return rs.pipes[key]
    if path == STDIN and not member:
        pipe = True
        data = _collect(_stdin_chunks(expected), path, decompress)
    else:
        if member:
            is_readable_member(path)
            st = stat_input(path)
        else:
            st = check_file_arg(path, expected=expected)
        note_read(path)
        pipe = not stat.S_ISREG(st.st_mode)
        try:
            if pipe:
                data = _collect(_fifo_chunks(path), path, decompress)
            else:
                with open(path, "rb") as fh:
                    data = _collect(_file_chunks(fh, path, st.st_size), path, decompress)
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
    if pipe and rs is not None:
        rs.pipes[key] = data
    return data


open_input = read_input  # the name the other loaders' authors look for


def read_text(path: str, *, member: bool = False, expected: str = "a text file") -> str:
    """:func:`read_input` decoded as UTF-8 (a BOM is dropped; CRLF and CR become LF),
    with the first bad byte located."""
    return decode_text(read_input(path, member=member, expected=expected), path)


def decode_text(data: bytes, path: str) -> str:
    """Bytes read from ``path`` as :func:`read_text` decodes them."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, None, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def head(path: str, n: int = 256) -> bytes:
    """The first ``n`` bytes of a regular file (format detection), recorded as read."""
    note_read(path)
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None


def _size(n: int) -> str:
    if n >= 2**30:
        return f"{n / 2**30:.3g} GiB"
    return f"{n / 2**20:.3g} MiB" if n >= 2**20 else f"{n / 2**10:.3g} KiB"


def _too_big(path: str) -> InputError:
    return InputError(
        shown(path),
        None,
        f"more than {_size(MAX_STREAM_BYTES)} from a pipe or a size-less file: refused "
        "(save it to a regular file first)",
    )


def _collect(chunks: Iterator[bytes], path: str, decompress: bool) -> bytes:
    """Join ``chunks``; gzip content inflated on the way when ``decompress``."""
    first = next(chunks, b"")
    if decompress and first[:2] == GZIP_MAGIC:
        return _gunzip(_chain(first, chunks), path)
    rest = next(chunks, None)
    if rest is None:
        return first  # one read: no copy
    buf = bytearray(first)
    buf += rest
    for c in chunks:
        buf += c
    return cast(bytes, buf)  # no copy (see _gunzip)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _gunzip(chunks: Iterator[bytes], path: str) -> bytes:
    """Inflate gzip members while streaming; the size and ratio bounds are checked on every
    piece, so memory never exceeds the bound."""
    out = bytearray()
    consumed = 0
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    in_member = False
    try:
        for data in _slices(chunks):
            consumed += len(data)
            while True:
                in_member = True
                piece = d.decompress(data, _CHUNK)
                out += piece
                _check_inflation(path, len(out), consumed)
                if d.eof:  # a member ended: the next one (if any) starts in unused_data
                    in_member = False
                    data = d.unused_data
                    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    if data[:2] != GZIP_MAGIC:
                        break  # trailing bytes after a member: ignored, as gzip does
                    continue
                data = d.unconsumed_tail
                if not data and len(piece) < _CHUNK:
                    break  # this chunk is spent (a full piece may leave output pending)
        if in_member:
            raise InputError(shown(path), None, "not a valid gzip file: truncated")
    except zlib.error as e:
        raise InputError(shown(path), None, f"not a valid gzip file: {e}") from None
    return cast(bytes, out)  # no copy: a bytearray reads as bytes everywhere it goes


def _slices(chunks: Iterator[bytes], n: int = 1 << 16) -> Iterator[bytes]:
    """Compressed input in small pieces, so that the ratio is checked early."""
    for chunk in chunks:
        for i in range(0, len(chunk), n):
            yield chunk[i : i + n]


def _check_inflation(path: str, size: int, consumed: int) -> None:
    if size > MAX_DECOMPRESSED:
        raise InputError(
            shown(path), None, f"decompresses to more than {_size(MAX_DECOMPRESSED)}: refused"
        )
    if size > RATIO_FLOOR and size > MAX_RATIO * max(consumed, 1):
        raise InputError(
            shown(path),
            None,
            f"decompresses to more than {MAX_RATIO} times its size ({_size(size)} from "
            f"{_size(consumed)} so far): refused as a decompression bomb",
        )


def _file_chunks(fh: object, path: str, size: int) -> Iterator[bytes]:
    """A regular file: its stated size in one read; a size-less one (procfs) in chunks."""
    read = fh.read  # type: ignore[attr-defined]
    total = 0
    if size > 0:
        # one byte over the stated size: a short read is the end of the file, so no second
        # read (a read of _CHUNK at the end allocates a 1 MiB buffer: ~15 us per small file)
        data: bytes = read(size + 1)
        total = len(data)
        yield data
        if total <= size:
            return
    while True:
        chunk = read(_CHUNK)
        if not chunk:
            return
        total += len(chunk)
        if total > max(size, 0) + MAX_STREAM_BYTES:
            raise _too_big(path)
        yield chunk


def _stdin_chunks(expected: str) -> Iterator[bytes]:
    """``-``: standard input, bounded like a pipe; a terminal is refused (it would wait for
    typing, which is never what a user meant)."""
    import sys

    stream = sys.stdin
    if stream is None:
        raise InputError(STDIN, None, f"standard input is closed, expected {expected}")
    if stream.isatty():
        raise InputError(
            STDIN,
            None,
            f"standard input is a terminal, expected {expected} (pipe the file in: "
            "cat preds.json | iou-eval - gt.json)",
        )
    buf = getattr(stream, "buffer", None)
    total = 0
    try:
        while True:  # chunks: read(2 GiB) would reserve 2 GiB up front
            if buf is None:  # a text stream (tests): its characters as UTF-8
                chunk = stream.read(_CHUNK).encode("utf-8", "surrogateescape")
            else:
                chunk = buf.read(_CHUNK)
            if not chunk:
                return
            total += len(chunk)
            if total > MAX_STREAM_BYTES:
                raise _too_big(STDIN)
            yield chunk
    except OSError as exc:
        raise InputError(STDIN, None, f"cannot read: {exc.strerror or exc}") from None


def _fifo_chunks(path: str) -> Iterator[bytes]:
    """A pipe: opened without blocking (a FIFO without a writer cannot hang the open), then
    read to its end, bounded; with no writer after ``FIFO_WAIT`` seconds it is refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
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
                yield chunk
                continue
            # end of file: the writer closed, or no writer has opened the FIFO yet
            if writer_seen:
                return
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
