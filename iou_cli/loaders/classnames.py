"""Class names compared as Unicode text: one normal form (NFC) for every loader's names.

``café`` written with a precomposed ``é`` and with ``e`` + a combining accent look the same
and are the same class to a reader; left apart they would join nothing and split one class
in two. Every side's names are normalised to NFC when loaded, and the change is said.
"""

from __future__ import annotations

import unicodedata
from dataclasses import replace

from ..data import Side
from ..text import term


def nfc_names(side: Side) -> Side:
    """``side`` with its class names in NFC; an info line says how many changed."""
    names = side.categories.names
    fixed = [None if n is None else unicodedata.normalize("NFC", n) for n in names]
    changed = [n for n, f in zip(names, fixed, strict=True) if n != f]
    if not changed:
        return side
    side = replace(side, categories=replace(side.categories, names=fixed))
    side.notes.setdefault("info", []).append(
        f"{term(side.path)}: {len(changed)} class name(s) normalised to Unicode NFC "
        f"(e.g. {term(str(changed[0]))!s}), so that names that look the same are the same"
    )
    return side
