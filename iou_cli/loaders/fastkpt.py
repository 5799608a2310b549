"""The typed reader of COCO keypoint *results* (``keypoints`` ``[x, y, score] * K`` per row)
straight to NumPy columns, for :mod:`.fastcoco` (one process, or a byte range of the file
in a forked worker).

The list is decoded a piece of records at a time (:func:`kpt_columns`), each row's
``keypoints`` as a list of floats, copied into one float64 array. msgspec's float parsing
is correctly rounded: every value is ``float()``'s of its text
(``tests/unit/test_fastkpt.py``). Anything the schema does not describe (a row that is not
a flat list of numbers, rows of different K, ``bbox`` on some rows only, a non-finite
number) returns ``None``: the validating loader then says what is wrong and where.

(An array parser of the numbers' bytes, as :mod:`.bytetable` does for DOTA's text, was
measured here: ~160 ns a number against msgspec's ~40 ns including the copy.)
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from .filesource import big_floats

FloatArray = npt.NDArray[np.float64]
Alloc = Callable[[int], FloatArray]  # the flat keypoint array for n numbers


@cache
def _decoder() -> Any:
    import msgspec
    from msgspec import UNSET

    kpt_result = msgspec.defstruct(
        "KptResult",
        [
            ("image_id", int),
            ("category_id", int),
            ("keypoints", list[float]),
            ("score", float),
            ("bbox", tuple[float, float, float, float] | None, None),
            ("file_name", Any, UNSET),  # (Ultralytics' rows: only whether there is one)
        ],
        gc=False,
    )
    return msgspec.json.Decoder(list[kpt_result])  # type: ignore[valid-type]


def warm() -> None:
    """Import what decoding keypoint results needs (msgspec, the OKS module for the
    extents) and build the decoder: with ``--jobs``, once before the fork, where each
    forked worker paid ~10 ms for it on its part of the critical path."""
    from ..geometry import oks  # noqa: F401

    _decoder()


BOUNDARY = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*\{")  # between two records (white space)
_HEAD = re.compile(rb"[ \t\n\r]*\[")
_TAIL = re.compile(rb"\][ \t\n\r]*\Z")
PIECE = 1 << 18  # bytes of records decoded at once (~600 rows: their floats stay in cache)


def pieces(data: bytes | memoryview, size: int | None = None) -> list[tuple[int, int]] | None:
    """Byte ranges of about ``size`` bytes of whole records of the JSON list ``data``
    (white space around it allowed), each cut at a ``},{``; None when ``data`` does not
    look like one list. A cut found inside a string or a nested value makes a piece that
    does not decode: the caller declines the list then."""
    size = size or PIECE
    head = _HEAD.match(data)
    tail = _TAIL.search(data, max(0, len(data) - 4096))
    if head is None or tail is None or tail.start() < head.end():
        return None
    return split_range(data, head.end(), tail.start(), size)


def split_range(data: bytes | memoryview, pos: int, end: int, size: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``size`` bytes of the whole records from ``pos`` (a record's
    start) to ``end``, each cut at a ``},{`` (the comma left out)."""
    out: list[tuple[int, int]] = []
    while True:
        m = BOUNDARY.search(data, pos + size, end) if end - pos > size else None
        stop = m.start() + 1 if m is not None else end
        out.append((pos, stop))
        if m is None:
            return out
        pos = m.end() - 1  # at the next record's "{"


def id_score_columns(
    recs: list[Any],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], FloatArray] | None:
    """``image_id``, ``category_id`` (int64) and ``score`` (float64) of decoded records;
    ``None`` for ids beyond 64 bits (the validating loader judges them)."""
    n = len(recs)
    try:
        image_id = np.fromiter(map(attrgetter("image_id"), recs), np.int64, n)
        category_id = np.fromiter(map(attrgetter("category_id"), recs), np.int64, n)
    except OverflowError:
        return None
    return image_id, category_id, np.fromiter(map(attrgetter("score"), recs), np.float64, n)


def kpt_columns(
    data: bytes | memoryview, alloc: Alloc | None = None, named: list[bool] | None = None
) -> dict[str, npt.NDArray[np.generic]] | None:
    """Columns of a keypoint results list without a BOM (also a slice of a bigger one):
    ``image_id``, ``category_id``, ``bbox`` (n, 4; NaN where the rows give none),
    ``score``, ``keypoints`` (n, K, 3) and ``kpt_box`` (n, 4: each row's keypoint extent,
    :func:`iou_cli.geometry.oks.kpt_corners`, made here: with ``--jobs``, in the forked
    workers' part of the time), or ``None``. ``alloc(size)``: where the flat keypoint
    numbers go (with ``--jobs``, this process's part of :class:`.sharedcols.KeypointRoom`;
    ``size`` bounds them: a number and its comma take two bytes or more); a huge-page
    array by default (:func:`.filesource.big_floats`).

    The list is decoded a piece of records at a time (:func:`pieces`), each row's numbers
    as Python floats that are copied into the array and freed before the next piece: the
    peak is one piece's floats (~50 a row), and they stay in the cache. (Measured: a row's
    numbers kept as raw JSON and decoded in a second pass cost ~10 % more.)

    ``named`` (a one-item list): set True when a row has a ``file_name`` (Ultralytics'
    rows: the whole file is parsed for their names; the decoder sees them, where a search
    of the bytes for the key took ~12 ms at COCO val's size)."""
    spans = pieces(data)
    if spans is None:
        return None
    return _decode_pieces(_copied_pieces(data, spans), len(data) // 2 + 1, alloc, named)


def kpt_file_columns(
    path: str,
    start: int,
    end: int,
    alloc: Alloc | None = None,
    named: list[bool] | None = None,
) -> dict[str, npt.NDArray[np.generic]] | None:
    """:func:`kpt_columns` of the records between the byte offsets ``start`` (a record's
    ``{``, or just after the list's ``[``) and ``end`` (just after a record's ``}``, or at
    the list's ``]``) of the file at ``path``, read a piece at a time into one small
    buffer (:func:`file_pieces`): the text never lies whole in memory (a 40 MB file read
    into fresh memory cost ~30-100 ms of page zeroing and copying on a virtual machine);
    ``None`` also when the file no longer has those bytes."""
    # (the bound: the numbers are in end - start bytes, two or more each with its comma)
    return _decode_pieces(file_pieces(path, start, end), (end - start) // 2 + 2, alloc, named)


def _copied_pieces(data: bytes | memoryview, spans: list[tuple[int, int]]) -> Iterator[memoryview]:
    """Each span of ``data`` as ``[`` + its records + ``]`` in one reused buffer."""
    view = memoryview(data)
    buf = bytearray(PIECE + (1 << 16))
    for a, b in spans:
        n = b - a + 2
        if len(buf) < n:
            buf = bytearray(n)
        buf[0] = 0x5B  # [
        buf[1 : n - 1] = view[a:b]
        buf[n - 1] = 0x5D  # ]
        yield memoryview(buf)[:n]


def file_pieces(path: str, start: int, end: int, size: int | None = None) -> Iterator[memoryview]:
    """The records from ``start`` to ``end`` of the file at ``path`` (as
    :func:`kpt_file_columns` says) as lists of about ``size`` bytes (:data:`PIECE`):
    ``[`` + whole records + ``]`` in one reused buffer, each cut at its last ``},{``, the
    rest carried to the next piece; a record longer than the buffer doubles it. An empty view (which no decoder takes) when the file is short of ``end``
    or cannot be read. (A cut found inside a string makes a piece that does not decode,
    as with :func:`pieces`.)"""
    try:
        with open(path, "rb", buffering=0) as fh:
            fh.seek(start)
            yield from _read_pieces(fh, start, end, size or PIECE)
    except OSError:
        yield memoryview(b"")


def _read_pieces(fh: Any, pos: int, end: int, size: int) -> Iterator[memoryview]:
    """:func:`file_pieces` from the open file ``fh`` at ``pos``."""
    buf = bytearray(size + 1)  # + the closing "]"
    buf[0] = 0x5B  # [
    fill = 1
    while True:
        want = min(end - pos, len(buf) - 1 - fill)
        view = memoryview(buf)
        while want:
            got = fh.readinto(view[fill : fill + want])
            if not got:  # the file changed since its parts were planned
                yield memoryview(b"")
                return
            fill += got
            pos += got
            want -= got
        if pos >= end:
            buf[fill] = 0x5D  # ]
            yield view[: fill + 1]
            return
        m = _last_boundary(buf, fill)
        if m is None:  # no record ends in the buffer: a bigger one
            del view
            buf = buf + bytes(len(buf))
            continue
        cut = m.start() + 1
        buf[cut] = 0x5D  # ] (over the separator)
        yield view[: cut + 1]
        rest = m.end() - 1  # the next record's "{"
        del view
        buf[1 : 1 + fill - rest] = buf[rest:fill]
        fill = 1 + fill - rest


def _last_boundary(buf: bytearray, fill: int) -> re.Match[bytes] | None:
    """The last ``},{`` (:data:`BOUNDARY`) that ends before ``fill`` in ``buf``."""
    j = fill
    while True:
        j = buf.rfind(b"}", 1, j)
        if j < 0:
            return None
        m = BOUNDARY.match(buf, j, fill)
        if m is not None:
            return m


def _decode_pieces(
    lists: Iterable[memoryview], cap: int, alloc: Alloc | None, named: list[bool] | None
) -> dict[str, npt.NDArray[np.generic]] | None:
    """:func:`kpt_columns` of the pieces ``lists`` (each a JSON list of records, decoded
    and freed in turn); ``cap`` bounds the number of keypoint numbers."""
    import msgspec

    from ..geometry.oks import kpt_corners

    out: FloatArray | None
    try:  # (virtual memory: only the pages written are taken)
        out = alloc(cap) if alloc is not None else big_floats(cap)
    except MemoryError:  # no room for the bound: each piece's numbers apart, joined once
        out = None
    chunks: list[FloatArray] = []
    dec = _decoder()
    at = m = 0
    row: struct.Struct | None = None
    raw: memoryview | None = None
    parts: list[tuple[Any, ...]] = []
    boxes: list[Any] = []
    for piece in lists:
        try:
            recs = dec.decode(piece)
        except msgspec.DecodeError:
            return None
        if not recs:
            return None
        kps = list(map(attrgetter("keypoints"), recs))
        if named is not None and not named[0]:
            named[0] = has_file_name(recs)
        m = m or len(kps[0])
        if m == 0 or m % 3 or set(map(len, kps)) != {m}:
            return None
        k = len(recs) * m
        if out is not None:  # each row's numbers packed straight into place
            if row is None or raw is None:
                row, raw = struct.Struct(f"{m}d"), out.data.cast("B")
            pack_rows(row, raw, at, kps)
        else:
            chunks.append(np.fromiter(chain.from_iterable(kps), np.float64, k))
        at += k
        cols = id_score_columns(recs)
        if cols is None:
            return None
        parts.append(cols)
        boxes += map(attrgetter("bbox"), recs)
        del recs, kps
    if not parts:
        return None
    n = len(boxes)
    image_id, category_id, score = (np.concatenate(c) for c in zip(*parts, strict=True))
    kp = (out[:at] if out is not None else np.concatenate(chunks)).reshape(n, m // 3, 3)
    bbox = _boxes(boxes)
    if bbox is None or not (np.isfinite(kp).all() and np.isfinite(score).all()):
        return None
    return {
        "image_id": image_id,
        "category_id": category_id,
        "bbox": bbox,
        "score": score,
        "keypoints": kp,
        "kpt_box": kpt_corners(kp),
    }


def _boxes(boxes: list[Any]) -> FloatArray | None:
    """The rows' ``bbox`` (n, 4), NaN when no row gives one; None when only some do, or
    one is not finite or has a negative size (the validating loader says which)."""
    n = len(boxes)
    has = [b is not None for b in boxes]
    if any(has) and not all(has):
        return None
    if not all(has):
        return np.full((n, 4), np.nan)
    bbox = np.fromiter(chain.from_iterable(boxes), np.float64, 4 * n).reshape(n, 4)
    if not np.isfinite(bbox).all() or (bbox[:, 2:] < 0).any():
        return None
    return bbox


def has_file_name(recs: list[Any]) -> bool:
    """Whether a decoded record has a ``file_name`` (of any value)."""
    from msgspec import UNSET

    names = list(map(attrgetter("file_name"), recs))
    return names.count(UNSET) != len(names)


def pack_rows(row: struct.Struct, out: memoryview, at: int, rows: list[Any]) -> None:
    """Rows of ``row.size // 8`` numbers each (Python floats, or ints within 2**53) written
    as float64 into the bytes ``out`` from number ``at`` on: ``struct``'s pack of a row's
    arguments copies each float's double (~8 ns a number; ``np.fromiter`` over the chained
    rows took ~15, plus a copy into place)."""
    pack, size = row.pack_into, row.size
    pos = 8 * at
    for values in rows:
        pack(out, pos, *values)
        pos += size


def same_kind(parts: list[dict[str, Any]]) -> bool:
    """Keypoint slices agree: one K in all, and a ``bbox`` on every row or on none (a slice
    without one has NaN boxes); otherwise the validating loader reads the file and says
    which row differs."""
    k = {p["keypoints"].shape[1] for p in parts}
    boxed = {bool(np.isnan(p["bbox"][:1]).all()) for p in parts}
    return len(k) == 1 and len(boxed) == 1
