"""Plain whitespace tables parsed from bytes with array operations: one name column, the
others decimal numbers (DOTA's Task1 result files: 300k lines of ``image score x1 y1 ...
y4``; its labelTxt files: ``x1 y1 ... y4 category difficult``).

Python's ``float()`` costs ~100 ns a token and pandas' C reader ~0.2 s to import; here a
number is its digits gathered column by column from the byte buffer. Exactness: a token of
at most 15 digits (an optional sign, at most one ``.``, no exponent) is ``m / 10**f`` with
``m`` an integer below 2**53 and ``10**f`` exact (f <= 15), both exact in float64, so the
one IEEE division rounds the exact decimal value correctly: the double ``float()`` returns
(Clinger's fast path). Every other token (exponents, longer digit strings, ``1_0``,
``inf``) goes through ``float()`` itself. The table must be plain (ASCII; single spaces
between tokens, one newline after each line, no blank line, no leading space): anything
else answers None and the format's own readers take over (and locate errors).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_POW10 = 10.0 ** np.arange(16)
_MAX_DIGITS = 15  # 10**15 - 1 < 2**53: the mantissa is exact
_NAME_WIDTH = 64  # longer names: not plain here (the readers take them)


def _names(padded: bytes, starts: IntArray, lens: IntArray) -> tuple[IntArray, list[str]] | None:
    """Codes (first appearance order) and the names of one column's tokens (``padded``:
    the text and 8 zero bytes after it). Each name is read as 64-bit little-endian words
    (8 characters a word, the bytes past its end masked off: no name holds a zero byte,
    so equal words are equal names)."""
    n = starts.shape[0]
    w = int(lens.max())
    if w > _NAME_WIDTH:
        return None
    view = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    keys = np.empty((n, (w + 7) // 8), dtype=np.uint64)
    for j in range(keys.shape[1]):
        rest = np.minimum(np.maximum(lens - 8 * j, 0), 8)
        keys[:, j] = view[np.minimum(starts + 8 * j, len(padded) - 8)] & _MASKS[rest]
    # runs of equal names (files are usually written image by image): one name per run
    same = np.zeros(n, dtype=bool)
    same[1:] = (keys[1:] == keys[:-1]).all(axis=1)
    heads = np.flatnonzero(~same)
    if heads.shape[0] > max(_RUNS, n // 4):  # mixed names (a class column): by sorting
        return _distinct_names(keys, lens)
    index: dict[str, int] = {}
    head_codes = np.fromiter(
        (index.setdefault(_text(keys[h], lens[h]), len(index)) for h in heads),
        np.int64,
        heads.shape[0],
    )
    codes = np.repeat(head_codes, np.diff(np.r_[heads, n]))
    return codes, list(index)


def _text(key: npt.NDArray[np.uint64], length: np.int64) -> str:
    """The name held by one row of :func:`_names`' words."""
    return key.tobytes()[: int(length)].decode("ascii")


_RUNS = 256  # more runs of equal names than this: names found by sorting instead


def _distinct_names(keys: npt.NDArray[np.uint64], lens: IntArray) -> tuple[IntArray, list[str]]:
    """:func:`_names` by one sort of the names' words: codes in first-appearance order."""
    n = keys.shape[0]
    order = np.lexsort(keys.T[::-1])  # stable: the first of equal names comes first
    sw = keys[order]
    new = np.ones(n, dtype=bool)
    new[1:] = (sw[1:] != sw[:-1]).any(axis=1)
    group = np.cumsum(new) - 1
    first = order[new]  # each distinct name's first row
    rank = np.argsort(first)  # the distinct names in first-appearance order
    code = np.empty(rank.shape[0], dtype=np.int64)
    code[rank] = np.arange(rank.shape[0], dtype=np.int64)
    codes = np.empty(n, dtype=np.int64)
    codes[order] = code[group]
    return codes, [_text(keys[first[r]], lens[first[r]]) for r in rank]


_U = np.uint64
_ONES = _U(0x0101010101010101)
_HIGH = _U(0x8080808080808080)
_LOW7 = _U(0x7F7F7F7F7F7F7F7F)
_ZEROS = _U(0x3030303030303030)  # '0' in every byte
_NINES = _U(0x3939393939393939)
_DOTS = _U(0x2E2E2E2E2E2E2E2E)
_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(9)], dtype=np.uint64)  # low i bytes
_SHIFTS = np.array([8 * (8 - i) for i in range(9)], dtype=np.uint64)  # left-pad to 8 digits


def _short(data: bytes | memoryview, body: IntArray, m: IntArray) -> tuple[FloatArray, BoolArray]:
    """Tokens of 1 to 8 characters after the sign, each read as one little-endian 64-bit
    word (SWAR, SIMD within a register): (unsigned values, which tokens were read); a
    token with anything but digits and at most one dot is left to the caller.

    Per word: the dot is the byte equal to '.' (an exact zero-byte test on ``w ^ '....'``);
    the digits are the bytes in '0'..'9' (two borrow-free byte subtractions); the dot is cut
    out with two masks, and the digits (at most 8, the first in the lowest byte, padded
    with leading zeros) become the integer in three multiply-and-shift steps. The value is
    that integer over a power of ten: Clinger's exact case, as below."""
    n_bytes, n = len(data), body.shape[0]
    if n_bytes < 8 or n == 0:
        return np.zeros(n), np.zeros(n, dtype=bool)
    words = np.ndarray((n_bytes - 7,), dtype="<u8", buffer=data, strides=(1,))
    read = (m >= 1) & (m <= 8) & (body <= n_bytes - 8)
    mi = np.clip(m, 0, 8)  # int64 indexes into the tables (uint64 ones are cast: slow)
    mask_m = _MASKS[mi]
    w = words[np.minimum(body, n_bytes - 8)] & mask_m
    x = w ^ _DOTS
    z = ~(((x & _LOW7) + _LOW7) | x | _LOW7)  # the high bit of each byte that was '.'
    ones = z >> _U(7)
    n_dot = ((ones * _ONES) >> _U(56)).view(np.int64)
    before = ((((ones - _U(1)) & _ONES) * _ONES) >> _U(56)).view(np.int64)  # before the dot
    has_dot = n_dot > 0
    k = np.where(has_dot, before, mi)
    digit = ((w | _HIGH) - _ZEROS) & ((_NINES | _HIGH) - w) & _HIGH
    nd = mi - has_dot
    read &= (n_dot <= 1) & ((digit | z) == (mask_m & _HIGH)) & (nd >= 1)
    low = _MASKS[np.minimum(k, 8)]
    d = (((w & low) | ((w >> _U(8)) & ~low)) - _ZEROS) & _MASKS[nd]
    v = d << _SHIFTS[np.where(read, nd, 8)]
    v = v * _U(10) + (v >> _U(8))
    pair = _U(0x000000FF000000FF)
    v = (
        (v & pair) * _U(100 + (1000000 << 32)) + ((v >> _U(16)) & pair) * _U(1 + (10000 << 32))
    ) >> _U(32)
    frac = np.where(read, nd - np.minimum(k, nd), 0)
    return v.astype(np.float64) / _POW10[frac], read


def _numbers(
    buf: npt.NDArray[np.uint8],
    data: bytes | memoryview,
    starts: IntArray,
    lens: IntArray,
    padded: bytes | None = None,
) -> FloatArray | None:
    """``float()`` of each token (see the module docstring), or None if one is not a finite
    number: short tokens a word at a time (:func:`_short`), the others by :func:`_longer`."""
    first = buf[starts]
    sign = ((first == 45) | (first == 43)).astype(np.int64)  # '-' or '+'
    # 8 zero bytes after the text (``padded``, when the caller has it): the last tokens
    # are read a word at a time too (the bytes after a token are masked off)
    if padded is None:
        padded = bytes(data) + bytes(8)
    val, read = _short(padded, starts + sign, lens - sign)
    out = np.where(first == 45, -val, val)
    left = np.flatnonzero(~read)
    if left.size:
        rest = _longer(buf, data, starts[left], lens[left])
        if rest is None:
            return None
        out[left] = rest
    return out if np.isfinite(out).all() else None


def _longer(
    buf: npt.NDArray[np.uint8], data: bytes | memoryview, starts: IntArray, lens: IntArray
) -> FloatArray | None:
    """:func:`_numbers` one digit position at a time over groups of one length and dot
    offset (tokens of up to 15 digits), ``float()`` for anything else."""
    first = buf[starts]
    sign = ((first == 45) | (first == 43)).astype(np.int64)  # '-' or '+'
    body, m = starts + sign, lens - sign
    # where the dot is (offset in the body; m when there is none), and how many there are
    w = int(m.max()) if m.size else 0
    dot = m.copy()
    n_dot = np.zeros(m.shape[0], dtype=np.int64)
    for k in range(min(w, _MAX_DIGITS + 1)):
        at = np.flatnonzero(m > k)
        is_dot = buf[body[at] + k] == 46
        hit = at[is_dot]
        n_dot[hit] += 1
        dot[hit] = k
    digits = m - (n_dot > 0)
    fast = (n_dot <= 1) & (digits >= 1) & (digits <= _MAX_DIGITS)
    out = np.empty(m.shape[0], dtype=np.float64)
    # one group per (length, dot offset): each digit position is then one gathered column
    key = np.where(fast, m * 32 + dot, -1)
    order = np.argsort(key.astype(np.int16), kind="stable")
    sk = key[order]
    bounds = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1], True])
    slow = [order[: bounds[1]]] if sk.size and sk[0] < 0 else []
    for g0, g1 in zip(bounds[:-1], bounds[1:], strict=True):
        kk = int(sk[g0])
        if kk < 0:
            continue
        rows = order[g0:g1]
        mm, dd = divmod(kk, 32)
        base = body[rows]
        v = np.zeros(rows.shape[0], dtype=np.int64)
        bad = np.zeros(rows.shape[0], dtype=bool)
        for k in range(mm):
            if k == dd:
                continue
            d = buf[base + k] - np.uint8(48)
            bad |= d > 9
            v = v * 10 + d
        frac = mm - dd - 1 if dd < mm else 0
        val = v / _POW10[frac]
        out[rows] = np.where(first[rows] == 45, -val, val)
        if bad.any():
            slow.append(rows[bad])
    for part in slow:
        for r in part.tolist():
            s = int(starts[r])
            try:
                out[r] = float(data[s : s + int(lens[r])])
            except ValueError:
                return None
    return out


_ROOMY: list[bool] = []
ROOMY_BYTES = 16 << 20


def roomy_malloc() -> None:
    """Once per process: let the C allocator keep the array temporaries it frees. glibc's
    malloc serves a block above its mmap threshold (128 KiB at start) with a fresh mapping,
    faulted in page by page and unmapped again on free, so every temporary of a few MB
    costs its page faults anew (half the reading time on a 300k-line Task1 folder).
    Freeing such a block raises the threshold to its size (malloc's own dynamic rule): one
    16 MiB block, allocated and freed untouched (no page is faulted in), puts smaller
    blocks on the heap, where freed memory is reused. Elsewhere (other allocators) this
    is one allocation and its free: harmless."""
    if not _ROOMY:
        _ROOMY.append(True)
        block = np.empty(ROOMY_BYTES, dtype=np.uint8)
        del block


Table = tuple[IntArray, list[str], FloatArray]
CHUNK = 1 << 17  # bytes of whole lines parsed at once: temporaries stay small (in cache,
# and below the sizes malloc maps and unmaps afresh: 1 MB pieces faulted 5x the pages)


def line_spans(data: bytes, size: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of pieces of ``data`` cut after a newline about every ``size``
    bytes (default :data:`CHUNK`; whole lines per piece; no empty piece unless ``data`` is
    empty)."""
    size = CHUNK if size is None else size
    out, at = [], 0
    while len(data) - at > size:
        end = data.find(b"\n", at + size)
        if end < 0 or end + 1 == len(data):
            break
        out.append((at, end + 1))
        at = end + 1
    out.append((at, len(data)))
    return out


def line_chunks(data: bytes, size: int | None = None) -> list[bytes]:
    """``data`` cut after a newline about every ``size`` bytes (:func:`line_spans`)."""
    return [data[s:e] for s, e in line_spans(data, size)]


def join_tables(parts: list[Table | None]) -> Table | None:
    """One table of consecutive pieces' tables (names renumbered in first-appearance
    order over the whole); None if a piece is not plain."""
    if any(p is None for p in parts):
        return None
    done = [p for p in parts if p is not None]
    if len(done) == 1:
        return done[0]
    index: dict[str, int] = {}
    codes = []
    for c, names, _ in done:
        to_global = np.fromiter((index.setdefault(n, len(index)) for n in names), np.int64)
        codes.append(to_global[c])
    return np.concatenate(codes), list(index), np.concatenate([v for _, _, v in done])


def name_table(data: bytes, ncols: int, name_col: int = 0) -> Table | None:
    """A plain table of ``ncols`` tokens a line, a name then numbers: (name codes in first
    appearance order, the names, the ``(lines, ncols - 1)`` numbers as ``float()`` reads
    them); None where the text is not plain or a number is not a finite number. Large
    texts are read a piece of whole lines at a time (:func:`line_chunks`). ``name_col``:
    the name's column (the numbers are the other columns, in their order)."""
    pieces = line_chunks(data)
    if len(pieces) > 1:
        return join_tables([chunk_table(p, ncols, name_col) for p in pieces])
    return chunk_table(data, ncols, name_col)


def chunk_table(data: bytes | memoryview, ncols: int, name_col: int = 0) -> Table | None:
    """:func:`name_table` of one piece."""
    if not data:
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf[-1] != 10:
        data = bytes(data) + b"\n"
        buf = np.frombuffer(data, dtype=np.uint8)
    if buf.max() >= 127:
        return None
    seps = np.flatnonzero(buf <= 32)
    sep = buf[seps]
    newline = sep == 10
    if (~newline & (sep != 32)).any():
        return None  # a control character, a tab, a carriage return
    n_tok = seps.shape[0]
    if n_tok % ncols or seps[0] == 0 or (np.diff(seps) < 2).any():
        return None  # a leading space, a blank line or a double space: not plain
    lines = n_tok // ncols
    newline = newline.reshape(lines, ncols)
    if not newline[:, -1].all() or newline[:, :-1].any():
        return None
    flat = np.empty(n_tok, dtype=np.int64)
    flat[0] = 0
    flat[1:] = seps[:-1] + 1
    lens = (seps - flat).reshape(lines, ncols)
    starts = flat.reshape(lines, ncols)
    padded = bytes(data) + bytes(8)  # (one copy of the piece: words read past its end)
    named = _names(padded, starts[:, name_col], lens[:, name_col])
    if named is None:
        return None
    if name_col:
        cols = [c for c in range(ncols) if c != name_col]
        starts, lens = starts[:, cols], lens[:, cols]
    else:
        starts, lens = starts[:, 1:], lens[:, 1:]
    values = _numbers(buf, data, starts.ravel(), lens.ravel(), padded)
    if values is None:
        return None
    return named[0], named[1], values.reshape(lines, ncols - 1)


_TOKENS = 1 << 14


def token_floats(tokens: list[str]) -> FloatArray | None:
    """``float()`` of whitespace-free tokens (``str.split()`` output) as float64, or None
    if one is not a finite number: the array path above over the joined tokens (ASCII),
    ``float()`` itself otherwise."""
    if len(tokens) > _TOKENS:  # a block at a time: small temporaries (as CHUNK)
        out = np.empty(len(tokens), dtype=np.float64)
        for s in range(0, len(tokens), _TOKENS):
            part = token_floats(tokens[s : s + _TOKENS])
            if part is None:
                return None
            out[s : s + _TOKENS] = part
        return out
    if not tokens:
        return np.zeros(0, dtype=np.float64)
    try:
        data = (" ".join(tokens) + " ").encode("ascii")
    except UnicodeEncodeError:
        data = b""
    buf = np.frombuffer(data, dtype=np.uint8)
    seps = np.flatnonzero(buf == 32)
    if seps.shape[0] != len(tokens) or (buf < 32).any():
        try:
            v = np.fromiter(map(float, tokens), np.float64, len(tokens))
        except ValueError:
            return None
        return v if np.isfinite(v).all() else None
    starts = np.empty(seps.shape[0], dtype=np.int64)
    starts[0] = 0
    starts[1:] = seps[:-1] + 1
    return _numbers(buf, data, starts, seps - starts)
