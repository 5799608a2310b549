"""One formatter for the text reports (result, compare, analyses): a number or a cell for
reading (tables, markdown), a value for CSV (full precision), values prepared for JSON, and
the one markdown table. Undefined values (None, NaN, infinities) are ``-`` for reading,
empty in CSV, ``null`` in JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..result import clean
from ..text import csv_cell


def number(v: Any, digits: int = 4) -> str:
    """A value for reading: floats to ``digits`` decimals, integers as they are, booleans
    yes/no, undefined ``-``, anything else as its text."""
    v = clean(v)
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def number3(v: Any) -> str:
    """:func:`number` with three decimals (the narrow per-class tables)."""
    return number(v, 3)


def signed(v: Any, digits: int = 4) -> str:
    """A difference for reading: always signed (``+0.0120``, ``-3``), undefined ``-``."""
    v = clean(v)
    if v is None:
        return "-"
    if isinstance(v, int):
        return f"{v:+d}"
    return f"{v:+.{digits}f}"


def csv_value(v: Any) -> str:
    """Numbers as numbers (full precision); text as text a spreadsheet never evaluates."""
    v = clean(v)
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, int):
        return str(v)
    return csv_cell(str(v))


def json_ready(obj: Any) -> Any:
    if hasattr(obj, "to_json"):  # a typed analysis section
        obj = obj.to_json()
    if getattr(obj, "ndim", 0) > 0 and hasattr(obj, "tolist"):  # NumPy arrays
        obj = obj.tolist()
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    return clean(obj)


def md_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """A GitHub table of cells already escaped: names from inputs went through ``md_cell``,
    the rest (metric keys, numbers) is our own text. The first column left, the others
    right-aligned."""
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines) + "\n"
