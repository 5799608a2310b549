"""Image sizes from file headers (PNG, JPEG, BMP, GIF, WebP), standard library only.

Only the first bytes of each file are read: ``--images DIR`` on a folder of large photos costs
one small read per image, never a decode.
"""

from __future__ import annotations

import os
import struct
from typing import BinaryIO

from ..errors import InputError
from .files import is_readable_member, note_folder, note_read

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp")


def _jpeg_size(f: BinaryIO, path: str) -> tuple[int, int]:
    f.seek(2)
    while True:
        byte = f.read(1)
        while byte and byte != b"\xff":
            byte = f.read(1)
        while byte == b"\xff":
            byte = f.read(1)
        if not byte:
            raise InputError(path, None, "JPEG without a size (SOF) marker")
        marker = byte[0]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            continue  # markers without a length
        seg = f.read(2)
        if len(seg) != 2:
            raise InputError(path, None, "truncated JPEG header")
        (length,) = struct.unpack(">H", seg)
        # SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC)
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            data = f.read(5)
            if len(data) != 5:
                raise InputError(path, None, "truncated JPEG header")
            h, w = struct.unpack(">HH", data[1:5])
            return w, h
        f.seek(length - 2, 1)


def image_size(path: str) -> tuple[int, int]:
    """``(width, height)`` of a PNG, JPEG, BMP, GIF or WebP file, read from its header
    (a regular file only: a FIFO named ``a.jpg`` is refused by name, never opened), in the
    range ``--image-size`` accepts (1 to 1e9 pixels: 0 x 0 or 4e9 x 4e9 are refused)."""
    from ..limits import MAX_IMAGE_SIDE, MIN_IMAGE_SIDE

    is_readable_member(path)
    note_read(path)
    w, h = _header_size(path)
    for side, v in (("width", w), ("height", h)):
        if not (MIN_IMAGE_SIDE <= v <= MAX_IMAGE_SIDE):
            raise InputError(
                path,
                None,
                f"the image header says {side} {v}: out of range "
                f"({MIN_IMAGE_SIDE:g} to {MAX_IMAGE_SIDE:g} pixels)",
            )
    return w, h


def _header_size(path: str) -> tuple[int, int]:
    try:
        with open(path, "rb") as f:
            head = f.read(32)
            if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
                w, h = struct.unpack(">II", head[16:24])
                return int(w), int(h)
            if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
                w, h = struct.unpack("<HH", head[6:10])
                return int(w), int(h)
            if head.startswith(b"BM") and len(head) >= 26:
                w, h = struct.unpack("<ii", head[18:26])
                return abs(int(w)), abs(int(h))
            if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
                kind = head[12:16]
                if kind == b"VP8X":
                    w = int.from_bytes(head[24:27], "little") + 1
                    h = int.from_bytes(head[27:30], "little") + 1
                    return w, h
                if kind == b"VP8 ":
                    w, h = struct.unpack("<HH", head[26:30])
                    return w & 0x3FFF, h & 0x3FFF
                if kind == b"VP8L":
                    b = head[21:25]
                    w = 1 + (((b[1] & 0x3F) << 8) | b[0])
                    h = 1 + (((b[3] & 0xF) << 10) | (b[2] << 2) | ((b[1] & 0xC0) >> 6))
                    return w, h
            if head.startswith(b"\xff\xd8"):
                return _jpeg_size(f, path)
    except OSError as e:
        raise InputError(path, None, f"cannot read image: {e.strerror or e}") from None
    raise InputError(path, None, "not a PNG, JPEG, BMP, GIF or WebP image (cannot read its size)")


def scan_sizes(folder: str, stems: set[str] | None = None) -> dict[str, tuple[int, int]]:
    """Sizes of the images under ``folder`` (recursively), keyed by file stem.

    With ``stems``, only those images are read. Two images with one stem: the first in name
    order wins (``a.jpg`` before ``a.png``).
    """
    if not os.path.isdir(folder):
        raise InputError(folder, None, "--images: no such folder")
    found: dict[str, str] = {}
    note_folder(folder)
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            stem, ext = os.path.splitext(name)
            if ext.lower() not in IMAGE_EXTS or (stems is not None and stem not in stems):
                continue
            p = os.path.join(root, name)
            if is_readable_member(p):  # a FIFO named a.jpg is refused, never opened
                found.setdefault(stem, p)
    return {stem: image_size(p) for stem, p in found.items()}
