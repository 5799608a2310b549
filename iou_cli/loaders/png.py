"""A fast path for reading 8-bit RGB PNGs as 24-bit ids (the COCO panoptic PNGs).

Pillow spends most of a panoptic PNG's decode time in zlib's inflate: these files are long
runs of a few colours, which the stock zlib inflates a byte at a time (about 1.5 ms for a
640 x 480 image, 20 times what zlib-ng takes on the same stream). So the fast path

1. parses the chunks itself and accepts only a plain, well-formed file: 8-bit RGB, not
   interlaced, every chunk's CRC right, consecutive IDATs, an IEND, and no chunk besides
   a few fixed-size ancillary ones that carry no pixels;
2. inflates the IDAT stream with zlib-ng (``zlib-ng`` from PyPI; without it the fast path
   is off);
3. hands the inflated scanlines, still filtered, to a C PNG decoder as a PNG whose zlib
   stream is made of *stored* (uncompressed) blocks, which inflate at memcpy speed: pyspng
   (libspng, the ``fast-png`` extra) when installed, else Pillow. That decoder undoes the
   row filters (Paeth rows, which every Pillow-written panoptic PNG has, cannot be undone
   in NumPy without a loop per row), so the pixels are those of the same decoder on the
   original file.

Anything the fast path does not accept returns None and the caller reads the file with
Pillow as before, which also words every error.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

SIGNATURE = b"\x89PNG\r\n\x1a\n"
# ancillary chunks that carry no pixels, with the only length Pillow accepts for each
_HARMLESS = {b"pHYs": 9, b"gAMA": 4, b"cHRM": 32, b"sRGB": 1, b"tIME": 7}
_STORED_BLOCK = 0xFFFF  # bytes per stored deflate block
_MAX_CHUNK = (1 << 31) - 1
_FILTER_TYPES = bytes(range(5))  # None, Sub, Up, Average, Paeth

Backend = tuple[Callable[..., Any], Callable[..., int], Callable[..., int], Any]
_BACKEND: Backend | None = None
_LOADED = False


def _backend() -> Backend | None:
    """(decompressobj, crc32, adler32, pyspng or None), or None when zlib-ng is missing."""
    global _BACKEND, _LOADED
    if not _LOADED:
        _LOADED = True
        try:
            from zlib_ng import zlib_ng
        except ImportError:
            _BACKEND = None
        else:
            try:
                import pyspng
            except ImportError:
                pyspng = None
            _BACKEND = (zlib_ng.decompressobj, zlib_ng.crc32, zlib_ng.adler32, pyspng)
    return _BACKEND


def decoder_name() -> str:
    """Which path panoptic PNGs take here (for docs, tests and the bench)."""
    b = _backend()
    if b is None:
        return "pillow"
    return "zlib-ng+pyspng" if b[3] is not None else "zlib-ng+pillow"


def _chunks(data: bytes) -> tuple[bytes, list[memoryview]] | None:
    """The IHDR body and the IDAT bodies of a plain, well-formed PNG; None otherwise."""
    if not data.startswith(SIGNATURE):
        return None
    view = memoryview(data)
    pos, n = len(SIGNATURE), len(data)
    ihdr: bytes | None = None
    idat: list[memoryview] = []
    idat_done = False
    while pos + 12 <= n:
        length, kind = struct.unpack_from(">I4s", data, pos)
        end = pos + 8 + length
        if length > _MAX_CHUNK or end + 4 > n:
            return None
        (crc,) = struct.unpack_from(">I", data, end)
        if zlib.crc32(view[pos + 4 : end]) != crc:
            return None
        body = view[pos + 8 : end]
        pos = end + 4
        if ihdr is None:
            if kind != b"IHDR" or length != 13:
                return None
            ihdr = bytes(body)
        elif kind == b"IDAT":
            if idat_done:
                return None
            idat.append(body)
        elif kind == b"IEND":
            return (ihdr, idat) if idat and length == 0 and pos == n else None
        elif _HARMLESS.get(kind) == length or (kind == b"tEXt" and length <= 1 << 16):
            idat_done = bool(idat)
        else:
            return None
    return None


def _stored_png(
    ihdr: bytes,
    raw: bytes,
    sums: tuple[Callable[..., int], Callable[..., int]] | None,
) -> bytes | None:
    """A PNG with the same header and the inflated scanlines in stored deflate blocks.
    ``sums``: (crc32, adler32) to write the IDAT CRC and the zlib Adler-32; None writes
    zeros (for libspng, which pyspng runs with CRC checks off and which does not check the
    Adler-32 either: should a later build check it, the decode fails and Pillow reads the
    file, slower but never different)."""
    n = len(raw)
    blocks = (n + _STORED_BLOCK - 1) // _STORED_BLOCK
    size = 2 + 5 * blocks + n + 4
    if size > _MAX_CHUNK:
        return None
    view = memoryview(raw)
    parts: list[bytes | memoryview] = [b"\x78\x01"]
    for i in range(0, n, _STORED_BLOCK):
        m = min(_STORED_BLOCK, n - i)
        parts.append(struct.pack("<BHH", i + m >= n, m, m ^ 0xFFFF))
        parts.append(view[i : i + m])
    crc = 0
    if sums is None:
        parts.append(b"\0\0\0\0")
    else:
        crc32, adler32 = sums
        parts.append(struct.pack(">I", adler32(raw)))
        crc = crc32(b"IDAT")
        for p in parts:
            crc = crc32(p, crc)
    head = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"".join(
        [
            SIGNATURE,
            head,
            struct.pack(">I", size),
            b"IDAT",
            *parts,
            struct.pack(">I", crc),
            b"\x00\x00\x00\x00IEND\xaeB`\x82",
        ]
    )


def inflated_rgb8(data: bytes, max_pixels: int | None) -> tuple[int, int, bytes] | None:
    """Steps 1 and 2 alone: ``(width, height, scanlines)`` of a plain 8-bit RGB PNG, the
    scanlines still filtered (``height`` rows of a filter-type byte and ``3 * width`` bytes),
    or None where :func:`fast_rgb` would return None. The filter-type bytes are not checked
    here (a reader of these scanlines checks them as it undoes the filters)."""
    backend = _backend()
    if backend is None:
        return None
    parsed = _chunks(data)
    if parsed is None:
        return None
    ihdr, idat = parsed
    w, h, depth, color, method, filt, interlace = struct.unpack(">IIBBBBB", ihdr)
    if (depth, color, method, filt, interlace) != (8, 2, 0, 0, 0) or not w or not h:
        return None
    if max_pixels is not None and w * h > max_pixels:
        return None
    size = h * (3 * w + 1)
    try:
        # bounded: a stream that inflates past the image (a bomb) stops one byte over
        unpack = backend[0]()
        raw = unpack.decompress(idat[0] if len(idat) == 1 else b"".join(idat), size + 1)
    except Exception:  # zlib_ng.error: a broken stream is Pillow's to report
        return None
    if len(raw) != size or not unpack.eof:
        return None
    return w, h, raw


def fast_rgb(data: bytes, max_pixels: int | None) -> npt.NDArray[np.uint8] | None:
    """An 8-bit RGB PNG's pixels as a C-contiguous (H, W, 3) uint8 array (Pillow's
    ``np.asarray(im)``, bit for bit), or None when the fast path does not apply (then read it
    with Pillow). ``max_pixels``: above it, None (Pillow's decompression-bomb rule stays
    Pillow's). RGB, not RGBA: libspng then only copies the unfiltered rows (RGBA output
    costs a third more per PNG); the scorer reads the 3-byte pixels as they are."""
    inflated = inflated_rgb8(data, max_pixels)
    if inflated is None:
        return None
    w, h, raw = inflated
    backend = _backend()
    assert backend is not None  # inflated_rgb8 returned scanlines
    _inflate, crc32, adler32, spng = backend
    # every row's filter type byte is 0..4 (deleting those leaves nothing): a C-speed check
    if raw[:: 3 * w + 1].translate(None, _FILTER_TYPES):
        return None
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    png = _stored_png(ihdr, raw, None if spng is not None else (crc32, adler32))
    del raw, inflated
    if png is None:
        return None
    try:
        rgb = spng.load(png, format="RGB") if spng is not None else _pillow_rgb(png)
    except Exception:  # never expected on a checked stream; Pillow reads it again then
        return None
    if rgb.shape != (h, w, 3) or rgb.dtype != np.uint8 or not rgb.flags.c_contiguous:
        return None
    out: npt.NDArray[np.uint8] = rgb
    return out


def _pillow_rgb(png: bytes) -> npt.NDArray[np.uint8]:
    import io

    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        im.load()
        return np.ascontiguousarray(np.asarray(im))


__all__ = ["decoder_name", "fast_rgb", "inflated_rgb8"]
