"""Text drawn in figures from inputs (class names, file names): one line, bounded, never
markup (the figures' style turns math text off), never a missing glyph: characters the figure font lacks (CJK,
lone surrogates) are drawn escaped, and the figures say so once."""

from __future__ import annotations

import functools
from typing import Any, TypeVar

T = TypeVar("T")
MAX_BARS = 60  # per-class bars a figure draws: beyond, the best and the worst half each


def ends(items: list[T], n: int = MAX_BARS) -> list[T]:
    """The first and last ``n // 2`` of a sorted list longer than ``n`` (a figure of 10,000
    classes stays a figure, as the PR panels are capped)."""
    return items if len(items) <= n else items[: n // 2] + items[-(n // 2) :]


def short(name: Any, n: int = 28) -> str:
    """A class name for a figure: one line, at most ``n`` characters, drawn as text (the
    figures' style turns math markup off), and characters the figure's font lacks (CJK, lone surrogates) shown
    escaped (``\\u4e2d``) rather than as missing glyphs."""
    s = " ".join(str(name).split())
    s = s if len(s) <= n else s[: n - 1] + "\u2026"
    return _drawable(s)


_ESCAPED: list[str] = []  # names drawn escaped in the current figures() call


def _drawable(s: str) -> str:
    have = _charmap()
    out = []
    for ch in s:
        cp = ord(ch)
        if cp < 0x80 and ch.isprintable() or have is not None and cp in have and ch.isprintable():
            out.append(ch)
        else:
            out.append(f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}")
    t = "".join(out)
    if t != s:
        _ESCAPED.append(s)
    return t


@functools.lru_cache(maxsize=1)
def _charmap() -> frozenset[int] | None:
    """Code points the default figure font can draw (None: unknown, draw ASCII only)."""
    try:
        from matplotlib import font_manager
        from matplotlib.ft2font import FT2Font

        path = font_manager.findfont(font_manager.FontProperties())
        return frozenset(FT2Font(path).get_charmap())
    except Exception:  # noqa: BLE001 - any font trouble: escape everything non-ASCII
        return None
