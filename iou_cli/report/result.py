"""Reporters: a Result (or the ``iou`` verb's IouMatrix) -> rich table, CSV, JSON or
markdown text (strings; no I/O here).

CSV and JSON carry full float precision (shortest round-trip repr); tables round to four
decimals for reading. Undefined values are empty in CSV, ``null`` in JSON, ``-`` in tables.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..result import Matches, Result, clean
from ..text import csv_cell, json_text, md_cell, rich_text

if TYPE_CHECKING:
    from ..tasks.pairwise import IouMatrix

OUTPUTS = ("table", "csv", "json", "markdown")


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


def _short(v: Any) -> str:
    v = clean(v)
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def columns(result: Result, per_class: bool) -> list[str]:
    """CSV columns: the same with or without ``--per-class`` (per-class keys included)."""
    del per_class  # the rows differ, never the columns
    cols = ["category_id", "name"] + list(result.summary)
    for row in result.per_class:
        for key in row:
            if key not in cols:
                cols.append(key)
    return cols


def _all_row_id(result: Result) -> Any:
    """``category_id`` of the ``all`` row: -1 when the ids are integers (so a spreadsheet or
    pandas keeps the column integer), empty otherwise."""
    ids = [r.get("category_id") for r in result.per_class]
    if ids and all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return -1
    return None


def rows(result: Result, per_class: bool) -> list[dict[str, Any]]:
    overall: dict[str, Any] = {
        "category_id": _all_row_id(result),
        "name": "all",
        **result.summary,
    }
    out = [overall]
    if per_class:
        out.extend(result.per_class)
    return out


def to_csv(result: Result, *, per_class: bool = False) -> str:
    cols = columns(result, per_class)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows(result, per_class):
        w.writerow([csv_value(row.get(c)) for c in cols])
    return buf.getvalue()


def json_ready(obj: Any) -> Any:
    if getattr(obj, "ndim", 0) > 0 and hasattr(obj, "tolist"):  # NumPy arrays
        obj = obj.tolist()
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    return clean(obj)


_THRESHOLD_PARAMS = ("iou_thrs", "op_iou_thr", "iou_thr")


def _setting(v: Any) -> Any:
    """A setting as the user would write it: 0.9, not linspace's 0.8999999999999999."""
    if isinstance(v, dict):
        return {k: _setting(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_setting(x) for x in v]
    v = clean(v)
    if isinstance(v, float):
        return float(f"{v:.12g}")
    return v


def to_json(result: Result, *, ascii_only: bool = False) -> str:
    """``ascii_only``: every non-ASCII character as a ``\\uXXXX`` escape (for a stdout
    that cannot encode UTF-8: the document stays valid JSON with the same strings)."""
    doc: dict[str, Any] = {
        "summary": json_ready(result.summary),
        "per_class": json_ready(result.per_class),
        "params": {
            k: _setting(v) if k in _THRESHOLD_PARAMS else v
            for k, v in json_ready(result.params).items()
        },
    }
    if result.meta:
        doc["meta"] = json_ready(result.meta)
    for key, section in result.extra.items():  # analyses' sections, in order
        doc[key] = json_ready(section)
    return json_text(json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=ascii_only)) + "\n"


def _md_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """A GitHub table of cells already escaped: names from inputs went through ``md_cell``,
    the rest (metric keys, numbers) is our own text."""
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for r in body:
        lines.append("| " + " | ".join(r) + " |")
    return "\n".join(lines) + "\n"


def summary_pairs(result: Result) -> list[tuple[str, str]]:
    return [(k, _short(v)) for k, v in result.summary.items()]


# per-class columns shown in tables and markdown (all of them are in CSV/JSON), under the
# same names as in CSV and JSON; a narrow terminal gets the short headers
_CLASS_TABLE_KEYS = (
    "frequency",  # LVIS: r, c or f
    "AP",
    "AP50",
    "AP75",
    "AR100",
    "mAP",
    "IoU",
    "n_gt",
    "n_det",
    "precision",
    "recall",
    "f1",
)
SHORT_HEADERS = {
    "frequency": "fq",
    "n_gt": "gt",
    "n_det": "det",
    "precision": "P",
    "recall": "R",
    "f1": "F1",
}
# when even short headers and narrow numbers do not fit, columns go in this order (the
# primary metric, AP / mAP / IoU, and the class name always stay)
DROP_ORDER = ("AR100", "AP75", "n_det", "f1", "AP50", "precision", "recall", "frequency", "n_gt")


def _short3(v: Any) -> str:
    v = clean(v)
    if isinstance(v, float):
        return f"{v:.3f}"
    return _short(v)


def _narrow3(v: Any) -> str:
    """Three decimals without the leading zero (``.657``; ``1.00`` stays readable)."""
    v = clean(v)
    if isinstance(v, float) and 0.0 <= v < 1.0:
        return f"{v:.3f}"[1:]
    if isinstance(v, float) and v == 1.0:
        return "1.00"
    return _short3(v)


def class_table_keys(result: Result) -> list[str]:
    present = [k for k in _CLASS_TABLE_KEYS if any(k in row for row in result.per_class)]
    if not present and result.per_class:
        present = [k for k in result.per_class[0] if k not in ("category_id", "name")][:8]
    return present


def to_markdown(result: Result, *, per_class: bool = False) -> str:
    out = _md_table(["metric", "value"], summary_pairs(result))
    if per_class and result.per_class:
        keys = class_table_keys(result)
        body = [
            [md_cell(r.get("name"))] + [_short(r.get(k)) for k in keys] for r in result.per_class
        ]
        out += "\n" + _md_table(["class"] + keys, body)
    return out


def _summary_table(result: Result, title: Any) -> Any:
    from rich.table import Table

    from ..metrics import OP_KEYS

    pairs = summary_pairs(result)
    left = [p for p in pairs if p[0] not in OP_KEYS]
    right = [p for p in pairs if p[0] in OP_KEYS]
    if not left or not right:
        half = (len(pairs) + 1) // 2
        left, right = pairs[:half], pairs[half:]
    if isinstance(title, str):
        title = rich_text(title)
    summary = Table(title=title, show_header=True, header_style="bold", expand=False)
    summary.add_column("metric", no_wrap=True)
    summary.add_column("value", justify="right", no_wrap=True)
    summary.add_column("metric", no_wrap=True)
    summary.add_column("value", justify="right", no_wrap=True)
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ("", "")
        b = right[i] if i < len(right) else ("", "")
        summary.add_row(*(rich_text(x) for x in (a[0], a[1], b[0], b[1])))
    return summary


def _class_table(result: Result, keys: list[str], short: bool, narrow: bool) -> Any:
    from rich import box
    from rich.table import Table

    fmt = _narrow3 if narrow else _short3
    t = Table(show_header=True, header_style="bold", expand=False, box=box.SIMPLE_HEAD)
    # the name column never wraps and is never dropped; only a name longer than the whole
    # terminal is cut with an ellipsis
    t.add_column("class", no_wrap=True, overflow="ellipsis")
    cells = [[fmt(r.get(k)) for k in keys] for r in result.per_class]
    for j, key in enumerate(keys):
        header = SHORT_HEADERS.get(key, key) if short else key
        width = max([len(header)] + [len(c[j]) for c in cells])
        t.add_column(header, justify="right", no_wrap=True, min_width=width)
    for r, c in zip(result.per_class, cells, strict=True):
        t.add_row(rich_text(r.get("name")), *c)
    return t


def _width_of(table: Any) -> int:
    from rich.console import Console
    from rich.measure import Measurement

    console = Console(width=100_000, file=io.StringIO())
    return int(Measurement.get(console, console.options, table).maximum)


def class_table_layouts(result: Result) -> list[tuple[list[str], bool, bool]]:
    """(columns, short headers, narrow numbers), widest first, in the order they degrade:
    full -> short headers -> narrow numbers -> drop columns one by one (``DROP_ORDER``)."""
    keys = class_table_keys(result)
    layouts = [(keys, False, False), (keys, True, False), (keys, True, True)]
    current = list(keys)
    for key in DROP_ORDER:
        if key in current and len(current) > 1:
            current = [k for k in current if k != key]
            layouts.append((current, True, True))
    return layouts


def full_width(result: Result, *, per_class: bool = False, title: Any = "iou-eval") -> int:
    """The width at which nothing is abbreviated (``-o table`` into a pipe or file)."""
    width = _width_of(_summary_table(result, title))
    if per_class and result.per_class:
        keys = class_table_keys(result)
        width = max(width, _width_of(_class_table(result, keys, False, False)))
    return max(width, 20)


def render_table(
    result: Result, *, per_class: bool = False, title: Any = "iou-eval", width: int | None = None
) -> Any:
    """A rich renderable (imported lazily: only the table output needs rich).

    ``width``: the terminal's columns; the per-class table then takes the widest layout of
    :func:`class_table_layouts` that fits (the class name column never wraps or goes).
    """
    from rich.console import Group

    parts: list[Any] = [_summary_table(result, title)]
    if per_class and result.per_class:
        layouts = class_table_layouts(result)
        table = None
        for keys, short, narrow in layouts:
            table = _class_table(result, keys, short, narrow)
            if width is None or _width_of(table) <= width:
                break
        parts.append(table)
    return Group(*parts)


MATCH_COLUMNS = ("image", "category", "pred_id", "gt_id", "score", "iou", "outcome")


# issue 11: a false positive's TIDE error and best-overlapping ground truth (when present)
ERROR_COLUMNS = ("error", "best_gt_id", "best_gt_class", "best_gt_iou")


def matches_csv(matches: Matches) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    names = list(MATCH_COLUMNS) + [c for c in ERROR_COLUMNS if c in matches.columns]
    w.writerow(names)
    cols = [matches.columns[c] for c in names]
    for i in range(len(matches)):
        cells = []
        for name, col in zip(names, cols, strict=True):
            v = clean(col[i])
            if name in ("pred_id", "gt_id", "best_gt_id") and v == -1:
                v = None
            cells.append(csv_value(v))
        w.writerow(cells)
    return buf.getvalue()


# ---------------------------------------------------------------- the iou verb's matrix


def iou_matrix_text(m: IouMatrix, output: str) -> str:
    """The IoU matrix as ``value`` (the bare number of two single boxes, full precision),
    ``json``, ``csv`` (full precision) or ``markdown`` (six decimals) text. Rows are the
    boxes of A (``a0``, ``a1``...), columns those of B (``b0``...)."""
    v = m.values
    if output == "value":
        return f"{float(v[0, 0])!r}\n"
    if output == "json":
        doc: Any = float(v[0, 0]) if m.single else [[float(x) for x in r] for r in v]
        return json.dumps({"iou": doc, "box_format": m.box_format, "crowd": m.crowd}) + "\n"
    header = [""] + [f"b{j}" for j in range(v.shape[1])]
    if output == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        for i in range(v.shape[0]):
            w.writerow([f"a{i}"] + [repr(float(x)) for x in v[i]])
        return buf.getvalue()
    if output == "markdown":
        body = [[f"a{i}"] + [f"{x:.6f}" for x in v[i]] for i in range(v.shape[0])]
        return _md_table(header, body)
    raise ValueError(f"no text form {output!r} of an IoU matrix")


def iou_matrix_table(m: IouMatrix) -> Any:
    """The IoU matrix as a rich table (six decimals)."""
    from rich.table import Table

    t = Table(title=f"IoU ({m.box_format}{', crowd' if m.crowd else ''})")
    t.add_column("")
    for j in range(m.values.shape[1]):
        t.add_column(f"b{j}", justify="right", no_wrap=True)
    for i in range(m.values.shape[0]):
        t.add_row(f"a{i}", *[f"{x:.6f}" for x in m.values[i]])
    return t
