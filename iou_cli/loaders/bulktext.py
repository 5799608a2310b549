"""Whitespace-separated text tables read in bulk (one split of the whole text, one float
conversion over all the tokens): the fast path of line-oriented formats (DOTA's labelTxt and
Task1 files). Each function answers None where the text is not plain, so that the format's
line reader, which locates every error, takes over: the fast path never decides an error."""

from __future__ import annotations

import numpy as np

_MARK = "\x00"  # not whitespace for str.split(), so it survives as a token of its own


def token_rows(text: str, ncols: int) -> list[str] | None:
    """The tokens of ``text``, row after row, when every line has exactly ``ncols``
    whitespace-separated tokens (no blank line; the last newline optional); else None.

    Tokens are what ``line.split()`` makes of each ``text.split("\\n")`` line."""
    body = text if text.endswith("\n") else text + "\n"
    n = body.count("\n")
    if not text or _MARK in body:
        return None
    tok = body.replace("\n", f" {_MARK} ").split()
    w = ncols + 1
    # n marks and every (ncols+1)-th token a mark: each line has exactly ncols tokens
    if len(tok) != w * n or tok[ncols::w].count(_MARK) != n:
        return None
    del tok[ncols::w]
    return tok


def bulk_floats(tokens: list[str], n: int) -> np.ndarray | None:
    """``float()`` of each token, exactly (bit for bit), as a float64 array; None if one is
    not a number or not finite.

    Plain decimals (``-?digits[.digits]`` with at most 15 digits, what annotation tools
    write) are read at once: their digits as an integer ``m`` (< 10**15, exact in float64)
    over ``10**k`` (exact for k <= 22), and one IEEE division of two exact numbers is the
    correctly rounded quotient, which is what ``float()`` returns. Any other token (an
    exponent, more digits, ``inf``, a stray character) goes through ``float()`` itself."""
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    chars = np.array(tokens)
    if chars.dtype.kind != "U" or chars.shape != (n,):
        return None
    w = chars.dtype.itemsize // 4
    c = chars.view(np.uint32).reshape(n, w)
    d = c - np.uint32(48)  # a digit is 0..9; every other character wraps around to > 9
    digit = d < 10
    dot = c == 46
    neg = c[:, 0] == 45
    plain = (digit | dot | (c == 0)).all(axis=1) | (
        neg & (digit | dot | (c == 0))[:, 1:].all(axis=1)
    )
    nd = digit.sum(axis=1)
    plain &= (dot.sum(axis=1) <= 1) & (nd >= 1) & (nd <= 15)
    m = np.zeros(n, dtype=np.int64)
    k = np.zeros(n, dtype=np.int64)
    seen = np.zeros(n, dtype=bool)  # past the dot
    for j in range(w):
        dj = digit[:, j]
        m = np.where(dj, m * 10 + d[:, j], m)
        k += dj & seen
        seen |= dot[:, j]
    v = m.astype(np.float64) / _POW10[np.minimum(k, 22)]
    v = np.where(neg, -v, v)
    other = np.flatnonzero(~plain)
    if other.size:
        try:
            v[other] = np.fromiter(map(float, chars[other].tolist()), np.float64, other.size)
        except ValueError:
            return None
    return v if np.isfinite(v).all() else None


_POW10 = 10.0 ** np.arange(23)
