"""Checks of COCO run-length encoded (RLE) masks, before pycocotools sees them.

pycocotools' C decoder trusts its input: a malformed ``counts`` string reads past its end,
a run that does not cover ``h * w`` pixels gives a wrong mask, a bad ``size`` crashes. These
checks turn each of those into a reason string the caller locates (``masks.prepare_masks``
for files, ``masks.mask_iou`` for in-memory masks).

Compressed RLE strings are validated in one vectorised pass over all of a side's strings
(:func:`strings_ok`: decode the LEB128-like counts, undo the delta coding, check that every
run is >= 0 and that the runs cover ``h * w`` pixels); only when that finds a bad string does
the slow per-string decoder (:func:`explain_string`) say what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import kind_of

_MAX_TOKEN = 7  # 7 x 5 bits: enough for any run of an image below 2**31 pixels
_CHUNK_CHARS = 1 << 18  # 256k characters at a time: the temporaries stay small (and are
# reused by the allocator: chunks of a million spent more time in page faults than in work;
# 64k-character chunks paid 12 % more in per-call overhead on 84k masks)


def strings_ok(strings: Sequence[bytes], pixels: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """For each COCO compressed RLE string, whether it decodes (as ``maskApi.c:rleFrString``
    does) to runs of 0 to 2**32 - 1 pixels summing to ``pixels`` (``h * w``). Vectorised
    over strings, in chunks of about 256k characters.
    """
    return check_strings(strings, pixels)[0]


def check_strings(
    strings: Sequence[bytes], pixels: npt.ArrayLike
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
    """:func:`strings_ok` and each string's mask area (the sum of its odd runs, as
    ``pycocotools.mask.area``; meaningful where the string is ok)."""
    n = len(strings)
    ok = np.ones(n, dtype=bool)
    area = np.zeros(n, dtype=np.int64)
    if n == 0:
        return ok, area
    need = np.asarray(pixels, dtype=np.int64).reshape(n)
    lens = np.fromiter(map(len, strings), dtype=np.int64, count=n)
    ends = np.cumsum(lens)
    lo = 0
    while lo < n:
        # strings lo..hi-1 hold at most _CHUNK_CHARS characters (at least one string)
        base = int(ends[lo - 1]) if lo else 0
        hi = max(int(np.searchsorted(ends, base + _CHUNK_CHARS, side="right")), lo + 1)
        ok[lo:hi], area[lo:hi] = _chunk(strings[lo:hi], need[lo:hi], lens[lo:hi])
        lo = hi
    return ok, area


_RUN_LIMIT = 1 << 32  # pycocotools keeps runs as 32-bit unsigned integers


# complexity: one vectorised decoder; each step is commented where it happens
def _chunk(  # noqa: C901
    strings: Sequence[bytes], need: npt.NDArray[np.int64], lens: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
    """:func:`check_strings` of one chunk.

    Characters stay one byte wide; a token (one value: 1 to 7 characters, mostly 1 or 2) is
    assembled by one gather per character position, over only the tokens that long. The
    delta coding (``cnts[j] = x[j] + cnts[j - 2]`` for ``j > 2``) makes each string two
    chains of running sums (``j = 1, 3, ...`` and ``j = 2, 4, ...``; ``j = 0`` alone). The
    chunk's tokens are split by the parity of their position in the chunk, and each half is
    summed once (``H``); a string's chain is a contiguous stretch of one half, and its runs
    are ``H - base`` (``base``: the half's sum before the chain). So the checks (every run in
    ``[0, 2**32)``, runs adding up to ``h * w``) and the area need only per-string
    reductions over the halves, never a per-token pass per chain. Runs in range keep every
    sum below 2**48, so int64 wrap-around in an intermediate sum cannot hide a wrong total.
    """
    ok = lens > 0
    area = np.zeros(lens.shape[0], dtype=np.int64)
    total = int(lens.sum())
    if total == 0:
        return ok & (need == 0), area
    ends = np.cumsum(lens)
    c = np.frombuffer(b"".join(strings), dtype=np.uint8) - np.uint8(48)  # wraps below '0'
    bad_char = c > 63
    if bad_char.any():
        ok[np.unique(np.searchsorted(ends, np.flatnonzero(bad_char), side="right"))] = False
        c = np.where(bad_char, np.uint8(0), c)
    more = (c & 0x20).astype(bool)
    nonempty = np.flatnonzero(lens > 0)
    str_end = ends[nonempty] - 1
    truncated = more[str_end]  # the last character says "more follows"
    if truncated.any():
        ok[nonempty[truncated]] = False
    more[str_end] = False  # never let a token run into the next string
    last = ~more
    tok_last = np.flatnonzero(last)
    # 5-bit digits, the last one of a token signed (bit 4): the token's value is then
    # sum(v[k] << 5k), as rleFrString's "x |= -1 << 5k" gives it
    sign = ((c >> 4) & 1) & last.view(np.uint8)
    v = (c & 0x1F).astype(np.int8) - (sign << 5).astype(np.int8)
    del last, sign
    tok_first = np.empty_like(tok_last)
    tok_first[0] = 0
    tok_first[1:] = tok_last[:-1] + 1
    n_tok = tok_first.shape[0]
    # tokens never cross strings: a non-empty string's tokens run from the one at its first
    # character to the next string's
    f = np.searchsorted(tok_first, ends[nonempty] - lens[nonempty])
    m = np.diff(np.append(f, n_tok))
    x = v[tok_first].astype(np.int64)
    sel = np.flatnonzero(more[tok_first])  # tokens of 2 characters or more
    for k in range(1, _MAX_TOKEN):
        if sel.size == 0:
            break
        at = tok_first[sel] + k
        x[sel] += v[at].astype(np.int64) << (5 * k)
        sel = sel[more[at]]
    if sel.size:  # longer than _MAX_TOKEN characters
        ok[nonempty[np.searchsorted(f, sel, side="right") - 1]] = False
    del tok_first, tok_last, v, c, more
    run0 = x[f]
    good = (run0 >= 0) & (run0 < _RUN_LIMIT)
    covered = run0.copy()
    odd_sum = np.zeros(f.shape[0], dtype=np.int64)
    for q in (0, 1):
        h = np.cumsum(np.ascontiguousarray(x[q::2]))  # (a strided cumsum is 3x slower)
        even_here = (f & 1) == q  # the chain j = 2, 4, ... lies in this half, else j = 1, 3, ...
        start = np.where(even_here, (f >> 1) + 1, (f + 1) >> 1)
        count = np.where(even_here, (m - 1) // 2, m // 2)
        before = np.where(even_here, f >> 1, ((f + 1) >> 1) - 1)
        hp = np.append(h, 0)  # reduceat's indices stay below the length
        base = np.where(before >= 0, hp[np.maximum(before, 0)], 0)
        bounds = np.empty(2 * start.shape[0], dtype=np.int64)
        bounds[0::2] = start
        bounds[1::2] = start + count
        has = count > 0
        lowest = np.minimum.reduceat(hp, bounds)[0::2] - base
        highest = np.maximum.reduceat(hp, bounds)[0::2] - base
        good &= ~has | ((lowest >= 0) & (highest < _RUN_LIMIT))
        chain = np.where(has, np.add.reduceat(hp, bounds)[0::2] - count * base, 0)
        covered += chain
        odd_sum += np.where(even_here, 0, chain)
    ok[nonempty] &= good & (covered == need[nonempty])
    area[nonempty] = odd_sum
    return ok, area


def explain_string(s: bytes, h: int, w: int) -> str:
    """Why one compressed RLE string is malformed (the slow path of :func:`strings_ok`)."""
    cnts: list[int] = []
    p = 0
    while p < len(s):
        x = 0
        k = 0
        more = True
        while more:
            if p >= len(s):
                return "malformed RLE counts: the string ends inside a run length"
            ch = s[p] - 48
            if not 0 <= ch <= 63:
                shown = chr(s[p]) if 32 <= s[p] < 127 else f"\\x{s[p]:02x}"
                return f"malformed RLE counts: character {shown!r} at position {p}"
            if k >= _MAX_TOKEN:
                return f"malformed RLE counts: run length too long at position {p}"
            x |= (ch & 0x1F) << (5 * k)
            more = bool(ch & 0x20)
            p += 1
            k += 1
            if not more and ch & 0x10:
                x -= 1 << (5 * k)
        if len(cnts) > 2:
            x += cnts[-2]
        if x < 0:
            return f"malformed RLE counts: run {len(cnts)} has negative length {x}"
        if x >= _RUN_LIMIT:
            return f"malformed RLE counts: run {len(cnts)} of {x} pixels (at most 2**32 - 1)"
        cnts.append(x)
    covered = sum(cnts)
    if covered != h * w:
        return (
            f"malformed RLE counts: the runs cover {covered} pixels, expected {h} x {w} = {h * w}"
        )
    return "malformed RLE counts"  # pragma: no cover (the batch check and this one agree)


def rle_size(segm: dict[str, Any]) -> tuple[int, int] | str:
    size = segm.get("size")
    if (
        not isinstance(size, (list, tuple))
        or len(size) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in size)
    ):
        return f"RLE 'size' must be [height, width], got {kind_of(size)}"
    return int(size[0]), int(size[1])


def check_counts_list(counts: list[Any], h: int, w: int) -> str | None:
    arr = np.asarray(counts) if counts else np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        bad = next(
            (
                i
                for i, v in enumerate(counts)
                if not (isinstance(v, int) and not isinstance(v, bool))
            ),
            0,
        )
        return f"uncompressed RLE counts[{bad}]: expected an integer, got {kind_of(counts[bad])}"
    if (arr < 0).any():
        bad = int(np.flatnonzero(arr < 0)[0])
        return f"uncompressed RLE counts[{bad}]: negative run length {int(arr[bad])}"
    covered = int(arr.sum())
    if covered != h * w:
        return f"uncompressed RLE counts cover {covered} pixels, expected {h} x {w} = {h * w}"
    return None


__all__ = ["check_counts_list", "check_strings", "explain_string", "rle_size", "strings_ok"]
