"""Whitespace-separated text tables read in bulk (one split of the whole text, one float
conversion over all the tokens): a fast path of line-oriented formats (DOTA's labelTxt files
when the byte reader, ``bytetable``, does not take them: tabs, runs of spaces, non-ASCII).
Each function answers None where the text is not plain, so that the format's line reader,
which locates every error, takes over: the fast path never decides an error."""

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
    """``float()`` of each token (so exactly what the line readers compute) as a float64
    array, or None if one is not a number or not finite. (Vectorised decimal parsers over
    the characters were tried: no faster than this C-level loop once the tokens exist.)"""
    try:
        v = np.fromiter(map(float, tokens), np.float64, n)
    except ValueError:
        return None
    return v if np.isfinite(v).all() else None
