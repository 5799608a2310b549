"""Former second input reader, now :mod:`iou_cli.loaders.files` (one reader, one limit).

Kept as names only for the modules that still import them; new code imports ``files``.
"""

from __future__ import annotations

from ..errors import InputError
from .files import MAX_STREAM_BYTES as LIMIT
from .files import is_gzip, is_stream, shown
from .files import read_input as _read_file

__all__ = ["LIMIT", "is_gzip", "is_stream", "read_input", "shown", "sniff"]


def read_input(path: str) -> bytes:
    """The bytes of ``path`` (file, ``-``, pipe), gunzipped when gzip, bounded."""
    return _read_file(path, expected="a JSON file", decompress=True)


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
