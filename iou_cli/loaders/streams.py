"""Inputs that are not plain files: ``-`` (stdin), pipes (FIFOs, ``/dev/stdin``, ``<(...)``)
and gzip-compressed JSON (``.json.gz``, or gzip bytes on a pipe).

A pipe can be read only once, so it is read whole into memory the first time (at most
``LIMIT`` bytes, decompressed included) and kept for the rest of the run: format detection
looks at its first bytes, the loader parses the same bytes. Only formats that are one file
can come through a pipe (COCO JSON); a VOC or YOLO folder cannot.
"""

from __future__ import annotations

import gzip
import os
import stat
import sys
import zlib
from typing import BinaryIO

from ..errors import InputError

LIMIT = 4 << 30  # 4 GiB: a COCO results file ten times the size of COCO val's
_CHUNK = 1 << 20
_read: dict[str, bytes] = {}


def shown(path: str) -> str:
    return "<stdin>" if path == "-" else path


def is_stream(path: str) -> bool:
    """``-`` or an existing path that is neither a regular file nor a folder (a pipe)."""
    if path == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def is_gzip(path: str) -> bool:
    return path.lower().endswith(".gz")


def _bounded(fh: BinaryIO, path: str) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > LIMIT:
            raise InputError(shown(path), None, f"more than {LIMIT >> 30} GiB: refused")
        parts.append(chunk)


def _gunzip(path: str, data: bytes) -> bytes:
    import io

    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            return _bounded(fh, path)  # type: ignore[arg-type]
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(shown(path), None, f"not a valid gzip file: {e}") from None


def read_input(path: str) -> bytes:
    """The bytes of ``path``: a file, ``-``, a pipe (read once, kept), gunzipped when gzip."""
    if path in _read:
        return _read[path]
    if path == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError(
                "-",
                None,
                "stdin is a terminal: pipe the file in (cat preds.json | iou-eval - gt.json)",
            )
        data = _bounded(sys.stdin.buffer, path)
    else:
        from .files import read_input as read_file

        # a regular file or a pipe, bounded; a device refused; a FIFO nobody writes to is
        # waited for, then refused (files.py), never a hang
        data = read_file(path, expected="a JSON file")
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(path, data)
    if is_stream(path):
        _read[path] = data
    return data


def sniff(path: str) -> str:
    """The format of a pipe's content: ``coco`` (JSON), else a located error."""
    head = read_input(path)[:256].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] in (b"{", b"["):
        return "coco"
    if not head:
        raise InputError(shown(path), None, "empty input, expected COCO JSON")
    what = "XML (VOC)" if head[:1] == b"<" else "not JSON"
    raise InputError(
        shown(path),
        None,
        f"{what}: only COCO JSON can be read from stdin or a pipe (VOC and YOLO are folders "
        "of files: pass the folder)",
    )
