"""The panoptic PNG fast path (iou_cli/loaders/png.py) against Pillow, the reference reader.

Every PNG the fast path accepts must give Pillow's pixels (RGB bytes), bit for bit, with
both of its unfilter back ends (libspng and Pillow on the re-wrapped stream); every PNG it
does not accept must give exactly what the Pillow-only reader gives (the same array or the
same error). The PNGs come from Pillow (as panopticapi writes them) and from a small writer
here that chooses each row's filter type (0-4), splits IDAT, adds chunks and interlaces.
"""

from __future__ import annotations

import functools
import io
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from iou_cli.errors import InputError
from iou_cli.loaders import png as fastpng
from iou_cli.loaders.panoptic import read_id_map, read_rgb, rgb_to_ids

pyspng = pytest.importorskip("pyspng", reason="the fast-png extra (pyspng) is in the test extra")
pytest.importorskip("zlib_ng", reason="zlib-ng is a dependency")


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def _filter_rows(img: np.ndarray, filters: list[int]) -> bytes:
    """PNG scanlines of an (H, W, C) uint8 image, row y filtered with filters[y]."""
    h, w, ch = img.shape
    out = bytearray()
    prev = np.zeros(w * ch, dtype=np.int64)
    for y in range(h):
        row = img[y].reshape(-1).astype(np.int64)
        left = np.concatenate([np.zeros(ch, dtype=np.int64), row[:-ch]])
        upleft = np.concatenate([np.zeros(ch, dtype=np.int64), prev[:-ch]])
        f = filters[y]
        if f == 0:
            pred = np.zeros_like(row)
        elif f == 1:
            pred = left
        elif f == 2:
            pred = prev
        elif f == 3:
            pred = (left + prev) // 2
        else:
            pred = np.array([_paeth(a, b, c) for a, b, c in zip(left, prev, upleft, strict=True)])
        out.append(f)
        out += ((row - pred) % 256).astype(np.uint8).tobytes()
        prev = row
    return bytes(out)


def write_png(
    img: np.ndarray,
    *,
    filters: list[int] | None = None,
    depth: int = 8,
    color: int = 2,
    idat_parts: int = 1,
    before: tuple[tuple[bytes, bytes], ...] = (),
    between: tuple[tuple[bytes, bytes], ...] = (),
    after: tuple[tuple[bytes, bytes], ...] = (),
    interlace: bool = False,
    level: int = 6,
) -> bytes:
    """A PNG of ``img`` (H, W, C) written chunk by chunk, for the variants Pillow never writes."""
    h, w = img.shape[:2]
    if interlace:
        raw = b""
        for x0, y0, dx, dy in (
            (0, 0, 8, 8),
            (4, 0, 8, 8),
            (0, 4, 4, 8),
            (2, 0, 4, 4),
            (0, 2, 2, 4),
            (1, 0, 2, 2),
            (0, 1, 1, 2),
        ):
            sub = img[y0::dy, x0::dx]
            if sub.size:
                raw += _filter_rows(sub, [0] * sub.shape[0])
    elif depth == 16:
        sub16 = img.astype(">u2") * 257
        raw = b"".join(b"\x00" + sub16[y].tobytes() for y in range(h))
    else:
        raw = _filter_rows(img, filters if filters is not None else [0] * h)
    z = zlib.compress(raw, level)
    cut = np.linspace(0, len(z), idat_parts + 1).astype(int)
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, int(interlace))
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr)
    out += b"".join(_chunk(k, b) for k, b in before)
    for i in range(idat_parts):
        out += _chunk(b"IDAT", z[cut[i] : cut[i + 1]])
        if i == 0:
            out += b"".join(_chunk(k, b) for k, b in between)
    out += b"".join(_chunk(k, b) for k, b in after)
    return out + _chunk(b"IEND", b"")


def pillow_rgb(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        assert im.mode == "RGB"
        return np.asarray(im)


def fast(data: bytes, max_pixels: int | None = None) -> np.ndarray | None:
    """The fast path's pixels, checked for the layout the scorer relies on."""
    got = fastpng.fast_rgb(data, max_pixels)
    if got is not None:
        assert got.dtype == np.uint8 and got.ndim == 3 and got.shape[2] == 3
        assert got.flags.c_contiguous
    return got


@pytest.fixture(params=["pyspng", "pillow"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Both unfilter back ends of the fast path (libspng; Pillow on the stored stream)."""
    b = fastpng._backend()
    assert b is not None
    if request.param == "pillow":
        monkeypatch.setattr(fastpng, "_BACKEND", (*b[:3], None))
    yield request.param


def _panoptic_like(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    ids = np.zeros((h, w), dtype=np.uint32)
    for _ in range(12):
        y0, x0 = rng.integers(0, h), rng.integers(0, w)
        ids[y0 : y0 + rng.integers(1, h + 1), x0 : x0 + rng.integers(1, w + 1)] = rng.integers(
            1, 1 << 24
        )
    return ids


def _rgb(ids: np.ndarray) -> np.ndarray:
    return np.stack([ids & 255, (ids >> 8) & 255, ids >> 16], axis=-1).astype(np.uint8)


@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (37, 53), (120, 160), (3, 30000)])
def test_pillow_written_pngs_match_pillow(shape: tuple[int, int], backend: str) -> None:
    """As panopticapi writes them (Image.fromarray(...).save): Up, Sub and Paeth rows; the
    3 x 30000 image has rows longer than one stored block (65535 bytes)."""
    rng = np.random.default_rng(sum(shape))
    for ids in (_panoptic_like(rng, *shape), rng.integers(0, 1 << 24, shape, dtype=np.uint32)):
        buf = io.BytesIO()
        Image.fromarray(_rgb(ids), mode="RGB").save(buf, format="PNG")
        got = fast(buf.getvalue())
        assert got is not None
        assert np.array_equal(got, _rgb(ids))
        assert np.array_equal(got, pillow_rgb(buf.getvalue()))
        assert np.array_equal(rgb_to_ids(got), ids)


@pytest.mark.parametrize("filt", [0, 1, 2, 3, 4, "mixed"])
def test_every_filter_type_matches_pillow(filt: int | str, backend: str) -> None:
    rng = np.random.default_rng(7)
    img = _rgb(_panoptic_like(rng, 23, 31))
    img[5:9] = rng.integers(0, 256, (4, 31, 3), dtype=np.uint8)  # noise rows: every branch
    h = img.shape[0]
    mixed = [int(rng.integers(0, 5)) for _ in range(h)]
    filters = mixed if filt == "mixed" else [int(filt)] * h
    data = write_png(img, filters=filters, idat_parts=3, level=9)
    got = fast(data)
    assert got is not None
    assert np.array_equal(got, pillow_rgb(data))


def test_harmless_chunks_are_read_through(backend: str) -> None:
    img = _rgb(_panoptic_like(np.random.default_rng(3), 16, 16))
    data = write_png(
        img,
        filters=[4] * 16,
        idat_parts=2,
        before=((b"gAMA", struct.pack(">I", 45455)), (b"pHYs", b"\0\0\x0b\x13\0\0\x0b\x13\1")),
        after=((b"tEXt", b"Comment\0panoptic"), (b"tIME", b"\x07\xea\x0b\x19\x17\x00\x00")),
    )
    got = fast(data)
    assert got is not None and np.array_equal(got, pillow_rgb(data))


def _past_the_end(img: np.ndarray) -> bytes:
    """Valid rows, then 20 MB more in the same zlib stream (a bomb's shape): the fast path
    stops one byte past the image and leaves the file to Pillow."""
    h, w = img.shape[:2]
    raw = _filter_rows(img, [0] * h) + bytes(20 << 20)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"IDAT", zlib.compress(raw, 9))
        + _chunk(b"IEND", b"")
    )


@functools.lru_cache(maxsize=1)
def _variants() -> dict[str, bytes]:
    """PNGs the fast path leaves to Pillow (which reads or refuses them as before)."""
    rng = np.random.default_rng(11)
    img = _rgb(_panoptic_like(rng, 12, 10))
    good = write_png(img, filters=[2] * 12)
    buf = io.BytesIO()
    Image.fromarray(img[..., 0], mode="L").convert("P").save(buf, format="PNG")
    rgba = io.BytesIO()
    Image.fromarray(img, mode="RGB").convert("RGBA").save(rgba, format="PNG")
    first_idat = good.index(b"IDAT")
    bad_crc = bytearray(good)
    bad_crc[first_idat + 6] ^= 0xFF  # a byte of the compressed data: the CRC no longer holds
    short = write_png(img[:11])  # 11 rows of data under a header that says 12
    return {
        "interlaced": write_png(img, interlace=True),
        "16-bit": write_png(img, depth=16),
        "palette": buf.getvalue(),
        "rgba": rgba.getvalue(),
        "truncated": good[: len(good) // 2],
        "no IEND": good[:-12],
        "after IEND": good + b"junk",
        "bad CRC": bytes(bad_crc),
        "bad filter byte": write_png(img, filters=[2] * 11 + [5]),
        "iCCP chunk": write_png(img, before=((b"iCCP", b"x\0\0" + zlib.compress(b"p")),)),
        "unknown critical chunk": write_png(img, before=((b"ABCD", b"?"),)),
        "IDAT split by tEXt": write_png(img, idat_parts=2, between=((b"tEXt", b"a\0b"),)),
        "short stream": short.replace(
            _chunk(b"IHDR", struct.pack(">IIBBBBB", 10, 11, 8, 2, 0, 0, 0)),
            _chunk(b"IHDR", struct.pack(">IIBBBBB", 10, 12, 8, 2, 0, 0, 0)),
        ),
        "not a PNG": b"GIF89a" + good[6:],
        "inflates far past the image": _past_the_end(img),
    }


@pytest.mark.parametrize("name", list(_variants()))
def test_variants_left_to_pillow_read_as_before(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not accepted by the fast path, so read_rgb gives what the Pillow reader gives:
    the same array (interlaced, 16-bit, chunks Pillow reads) or the same located error."""
    data = _variants()[name]
    assert fast(data) is None
    path = tmp_path / "x.png"
    path.write_bytes(data)

    def read() -> np.ndarray | str:
        try:
            return read_rgb(str(path))
        except InputError as exc:
            return f"{exc.path}:{exc.where}:{exc.reason}"

    with_fast = read()
    monkeypatch.setattr(fastpng, "fast_rgb", lambda data, max_pixels: None)
    pillow_only = read()
    if isinstance(pillow_only, str):
        assert with_fast == pillow_only
    else:
        assert isinstance(with_fast, np.ndarray) and np.array_equal(with_fast, pillow_only)
        assert with_fast.flags.c_contiguous and with_fast.dtype == np.uint8
        assert np.array_equal(read_id_map(str(path)), rgb_to_ids(pillow_only))


def test_large_images_stay_with_pillows_bomb_rule() -> None:
    data = write_png(_rgb(np.ones((4, 5), dtype=np.uint32)))
    assert fast(data, 19) is None
    got = fast(data, 20)
    assert got is not None and (rgb_to_ids(got) == 1).all()


def test_without_zlib_ng_the_reader_is_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastpng, "_BACKEND", None)
    monkeypatch.setattr(fastpng, "_LOADED", True)
    data = write_png(_rgb(np.ones((4, 5), dtype=np.uint32)))
    assert fast(data) is None
    assert fastpng.decoder_name() == "pillow"


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (1, 2), (2, 1), (5, 7)])
def test_rgb_to_ids_by_hand(shape: tuple[int, int]) -> None:
    """The one-pass window trick against R + 256 G + 65536 B written out, also on a
    non-contiguous (mirrored) array."""
    rgb = np.random.default_rng(5).integers(0, 256, (*shape, 3), dtype=np.uint8)
    for a in (rgb, rgb[:, ::-1]):
        r, g, b = (a[..., k].astype(np.int64) for k in range(3))
        want = r + 256 * g + 65536 * b
        got = rgb_to_ids(a)
        assert got.dtype == np.uint32 and got.shape == shape
        assert np.array_equal(got, want)
