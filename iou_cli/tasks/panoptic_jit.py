"""The compiled pixel-pair counter of panoptic evaluation (numba, the ``jit`` extra).

Imported only by :mod:`.panoptic_match` when numba is installed and the run has enough
image pairs to pay for numba's start (about half a second: its import and the cached
machine code; the first run ever also compiles, a few seconds, cached in ``__pycache__``
beside this file or numba's user cache folder). Without numba the NumPy path
(:func:`.panoptic_match.pixel_runs` over pyspng's pixels) gives the same counts, and
:func:`.panoptic_match.score_counts` the same scores as :func:`rules` (panopticapi's rules
on the counts, compiled: the same float operations in the same order).

:func:`pair_counts` reads the two PNGs' inflated scanlines (still filtered,
:func:`iou_cli.loaders.png.inflated_rgb8`) one row at a time: it undoes the row's filter
into a two-row buffer per map and counts the row's (ground truth, prediction) pixel pairs as
a change from the row above: a pixel whose pair differs from the pixel above it moves
``h - r`` pixels (this row and every row below, until they change again) from the old pair
to the new one, and row 0 adds ``h`` per pixel. So only the pixels that change from the row
above are looked at one by one, in runs of one transition; the rows are compared 8 bytes at
a time. The sum over rows is exactly the pixel-pair count.

Paeth rows (every Pillow-written panoptic PNG has them) are decoded by guessing the Up value
everywhere (one vectorised pass) and decoding byte by byte only from a byte whose guess is
not proven right (the left byte right and ``a == b == c``, where Paeth predicts ``a = b``)
until three bytes in a row agree with their guess again; each byte's value is the one
the PNG filter defines (tests/unit/test_panoptic_jit.py checks every filter type against
Pillow, including noise where no guess holds).
"""

from __future__ import annotations

import numpy as np
from numba import njit

UNKNOWN = 0xFFFF  # the lookup tables' "not in segments_info"


@njit(inline="always", boundscheck=False)
def _paeth(a, b, c):
    pa = abs(b - c)
    pb = abs(a - c)
    pc = abs(a + b - 2 * c)
    if pa <= pb and pa <= pc:
        return a
    if pb <= pc:
        return b
    return c


@njit(inline="always", boundscheck=False)
def _unpaeth(src, row, above, bad, n):
    """The Paeth filter undone: the Up guess everywhere, then byte by byte only from a byte
    whose guess is not proven until three bytes in a row agree with their guess again."""
    # the Up guess; exact for the first pixel (a = c = 0: Paeth predicts b)
    for i in range(n):
        row[i] = src[i] + above[i]
    a3 = row[0 : n - 3]
    b3 = above[3:n]
    c3 = above[0 : n - 3]
    bd = bad[3:n]
    for i in range(n - 3):  # byte i + 3 may be wrong unless a == b == c
        bd[i] = (b3[i] != c3[i]) | (a3[i] != b3[i])
    bw = bad.view(np.uint64)
    nw = bw.size
    i = 3
    while i < n:
        if bad[i] == 0:  # proven: the left byte is final and a == b == c
            if (i & 7) == 0 and bw[i >> 3] == 0:
                j = (i >> 3) + 1
                while j < nw and bw[j] == 0:
                    j += 1
                i = j << 3
            else:
                i += 1
            continue
        agree = 0
        while i < n and agree < 3:
            b = above[i]
            if b == above[i - 3]:  # pa = 0: Paeth predicts a
                v = (np.int32(src[i]) + np.int32(row[i - 3])) & 255
            else:
                p = _paeth(np.int32(row[i - 3]), np.int32(b), np.int32(above[i - 3]))
                v = (np.int32(src[i]) + p) & 255
            if v == row[i]:
                agree += 1
            else:
                agree = 0
                row[i] = v
            i += 1


@njit(inline="always", boundscheck=False)
def _unfilter(src, ft, row, above, bad, n):
    """row[:n] <- the scanline ``src`` (filter type ``ft``, 3 bytes a pixel) unfiltered,
    given the unfiltered row above (zeros above row 0); stores into uint8 wrap mod 256."""
    if ft == 0:
        for i in range(n):
            row[i] = src[i]
    elif ft == 2:
        for i in range(n):
            row[i] = src[i] + above[i]
    elif ft == 1:
        for i in range(3):
            row[i] = src[i]
        for i in range(3, n):
            row[i] = src[i] + row[i - 3]
    elif ft == 3:
        for i in range(3):
            row[i] = src[i] + (above[i] >> 1)
        for i in range(3, n):
            row[i] = src[i] + ((np.int32(row[i - 3]) + np.int32(above[i])) >> 1)
    else:
        _unpaeth(src, row, above, bad, n)


@njit(inline="always", boundscheck=False)
def _id(row, q):
    return np.int64(row[q]) | (np.int64(row[q + 1]) << 8) | (np.int64(row[q + 2]) << 16)


@njit(inline="always", boundscheck=False)
def _move(counts, tg, tp, ncol, new, old, n):
    counts[np.int64(tg[new >> 24]) * ncol + tp[new & 0xFFFFFF]] += n
    counts[np.int64(tg[old >> 24]) * ncol + tp[old & 0xFFFFFF]] -= n


@njit(inline="always", boundscheck=False)
def _first_row(cg, cp, w, tg, tp, counts, ncol, wt):
    """Row 0: every pixel's pair gets ``wt`` (= h); False when an id is UNKNOWN."""
    last = -1
    at = 0
    for x in range(w):
        gid = _id(cg, 3 * x)
        pid = _id(cp, 3 * x)
        key = (gid << 24) | pid
        if key != last:
            gi = tg[gid]
            pi = tp[pid]
            if gi == UNKNOWN or pi == UNKNOWN:
                return False
            at = np.int64(gi) * ncol + pi
            last = key
        counts[at] += wt
    return True


@njit(inline="always", boundscheck=False)
def _changes(cg, ag, cp, ap, dw, nw, w, tg, tp, counts, ncol, wt):
    """A row below row 0: each pixel whose pair differs from the pixel above moves ``wt``
    from the old pair to the new one; False when a new id is UNKNOWN (an old one was
    checked where it appeared)."""
    cgw = cg.view(np.uint64)
    agw = ag.view(np.uint64)
    cpw = cp.view(np.uint64)
    apw = ap.view(np.uint64)
    changed = np.uint64(0)
    for j in range(nw):  # 8 bytes at a time, both maps
        d = (cgw[j] ^ agw[j]) | (cpw[j] ^ apw[j])
        dw[j] = d
        changed |= d
    if changed == 0:
        return True
    done = -1  # the last pixel looked at
    new_key = -1  # the current run of one transition: old pair -> new pair, run pixels
    old_key = -1
    run = 0
    for j in range(nw):
        if dw[j] == 0:
            continue
        x = max((8 * j) // 3, done + 1)
        x1 = min((8 * j + 7) // 3, w - 1)  # the pixels holding bytes 8j .. 8j + 7
        done = x1
        while x <= x1:
            q = 3 * x
            x += 1
            nk = (_id(cg, q) << 24) | _id(cp, q)
            ok = (_id(ag, q) << 24) | _id(ap, q)
            if nk == ok:
                continue
            if nk == new_key and ok == old_key:
                run += 1
                continue
            if run:
                _move(counts, tg, tp, ncol, new_key, old_key, run * wt)
            if tg[nk >> 24] == UNKNOWN or tp[nk & 0xFFFFFF] == UNKNOWN:
                return False
            new_key = nk
            old_key = ok
            run = 1
    if run:
        _move(counts, tg, tp, ncol, new_key, old_key, run * wt)
    return True


@njit(cache=True, nogil=True, boundscheck=False)
def pair_counts(fg, fp, h, w, tg, tp, counts, ncol, scratch):
    """Add the pixel-pair counts of two ``h x w`` RGB maps to ``counts`` (flat, index
    ``tg[gt id] * ncol + tp[pred id]``). ``fg``/``fp``: the inflated scanlines; ``tg``/``tp``:
    id -> index tables (``UNKNOWN`` where an id is not a segment); ``scratch``: uint8
    ``(6, n8)`` with ``n8 = 3 w`` rounded up to 8. Returns 0, 1 when a pixel's id is
    UNKNOWN, 2 when a row's filter type is not 0..4 (then ``counts`` is partial)."""
    n = 3 * w
    stride = n + 1
    scratch[:, :] = 0
    nw = scratch.shape[1] // 8
    bad = scratch[4]
    dw = scratch[5].view(np.uint64)
    for r in range(h):
        off = r * stride
        fa = fg[off]
        fb = fp[off]
        if fa > 4 or fb > 4:
            return 2
        k = r & 1
        cg = scratch[k]
        ag = scratch[1 - k]
        cp = scratch[2 + k]
        ap = scratch[3 - k]
        _unfilter(fg[off + 1 : off + stride], fa, cg, ag, bad, n)
        _unfilter(fp[off + 1 : off + stride], fb, cp, ap, bad, n)
        wt = h - r
        if r == 0:
            if not _first_row(cg, cp, w, tg, tp, counts, ncol, wt):
                return 1
        elif not _changes(cg, ag, cp, ap, dw, nw, w, tg, tp, counts, ncol, wt):
            return 1
    return 0


@njit(inline="always", boundscheck=False)
def _areas(counts, gt_area):
    """(status, ground-truth pixel counts, predicted areas, ground-truth areas, mismatches):
    status 1 or 2 when a ground-truth or predicted segment has no pixel."""
    kg = counts.shape[0] - 1
    kp = counts.shape[1] - 1
    gt_pixels = np.zeros(kg, dtype=np.int64)
    pred_area = np.zeros(kp, dtype=np.int64)
    for i in range(kg + 1):
        for j in range(kp):
            pred_area[j] += counts[i, j + 1]
    for i in range(kg):
        for j in range(kp + 1):
            gt_pixels[i] += counts[i + 1, j]
    ga = np.empty(kg, dtype=np.float64)
    status = 0
    if (gt_pixels == 0).any():
        status = 1
    elif (pred_area == 0).any():
        status = 2
    mismatch = 0
    for i in range(kg):
        ga[i] = gt_pixels[i] if np.isnan(gt_area[i]) else gt_area[i]
        if ga[i] != gt_pixels[i]:
            mismatch += 1
    return status, pred_area, ga, mismatch


@njit(inline="always", boundscheck=False)
def _false_positives(counts, pred_area, gt_crowd, gt_cat, pred_cat, pred_matched, out):
    """An unmatched prediction is a false positive unless more than half of it lies in VOID
    or in the crowd region of its category (the last crowd segment of it)."""
    crowd_row = np.full(out.shape[1], -1, dtype=np.int64)
    for r in range(len(gt_crowd)):
        if gt_crowd[r]:
            crowd_row[gt_cat[r]] = r
    for c in range(len(pred_cat)):
        if pred_matched[c]:
            continue
        ignored = counts[0, c + 1]
        row = crowd_row[pred_cat[c]]
        if row >= 0:
            ignored += counts[row + 1, c + 1]
        if not ignored / pred_area[c] > 0.5:
            out[1, pred_cat[c]] += 1


@njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")
def rules(counts, gt_area, gt_crowd, gt_cat, pred_cat, gt_order, pred_order, out, m_row, m_iou):
    """panopticapi's rules on one image's ``(G + 1) x (P + 1)`` pixel-pair ``counts``, as
    :func:`iou_cli.tasks.panoptic_match.score_counts` applies them (the same float
    operations in the same order: the same bits). ``gt_order``/``pred_order``: the rows and
    columns by segment id; ``out``: int64 ``(4, n_cat)`` zeros for tp, fp, fn and the
    touched flag; ``m_row``/``m_iou``: room for ``G * P`` matches. Returns (status, matches,
    area mismatches): status 1 or 2 when a ground-truth or predicted segment has no pixel
    (nothing else is done then: the NumPy path words the error)."""
    status, pred_area, ga, mismatch = _areas(counts, gt_area)
    if status:
        return status, 0, 0
    kg = len(ga)
    kp = len(pred_area)
    gt_matched = np.zeros(kg, dtype=np.bool_)
    pred_matched = np.zeros(kp, dtype=np.bool_)
    nm = 0
    for a in range(kg):  # by ground-truth id, then predicted id: panopticapi's order
        r = gt_order[a]
        if gt_crowd[r]:
            continue
        for b in range(kp):
            c = pred_order[b]
            inter = counts[r + 1, c + 1]
            if inter <= 0 or gt_cat[r] != pred_cat[c]:
                continue
            i_rc = np.float64(inter)
            iou = i_rc / (pred_area[c] + ga[r] - i_rc - counts[0, c + 1])  # VOID left out
            if iou > 0.5:
                m_row[nm] = r
                m_iou[nm] = iou
                nm += 1
                gt_matched[r] = True
                pred_matched[c] = True
                out[0, gt_cat[r]] += 1
    for r in range(kg):
        if not gt_matched[r] and not gt_crowd[r]:
            out[2, gt_cat[r]] += 1
    _false_positives(counts, pred_area, gt_crowd, gt_cat, pred_cat, pred_matched, out)
    for k in range(out.shape[1]):
        out[3, k] = (out[0, k] + out[1, k] + out[2, k]) > 0
    return 0, nm, mismatch


def scratch_for(width: int) -> np.ndarray:
    """The scratch rows :func:`pair_counts` needs for images ``width`` pixels wide."""
    return np.zeros((6, (3 * width + 7) & ~7), dtype=np.uint8)


def warm() -> None:
    """Compile or load the cached machine code now (in the parent before workers fork, so
    each worker does not load it again), with the argument types of the real calls."""
    raw = np.frombuffer(bytes(7), dtype=np.uint8)  # one row of 2 pixels, filter type 0
    table = np.zeros(1, dtype=np.uint16)
    pair_counts(raw, raw, 1, 2, table, table, np.zeros(1, dtype=np.int64), 1, scratch_for(2))
    one = np.zeros(1, dtype=np.int64)  # one segment a side, category 0
    counts = np.ones((2, 2), dtype=np.int64)
    crowd = np.zeros(1, dtype=np.bool_)
    out = np.zeros((4, 1), dtype=np.int64)
    rules(counts, np.zeros(1), crowd, one, one, one, one, out, one.copy(), np.zeros(1))


__all__ = ["UNKNOWN", "pair_counts", "rules", "scratch_for", "warm"]
