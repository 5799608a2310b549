"""Reporters of a comparison (``iou-eval compare``): rich table, CSV, JSON, markdown strings.

JSON and CSV carry full precision and keep the classes in the ground truth's order; the
table and markdown round for reading and list classes by the size of their change (biggest
regressions and improvements first). Class names from inputs go through ``text.py``.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..analysis.compare import Comparison, key_direction
from ..result import clean
from ..text import csv_cell, json_text, md_cell, rich_text
from .result import csv_value, json_ready

ENTRY_KEYS = ("a", "b", "delta", "ci_low", "ci_high", "significant")


def to_json(c: Comparison) -> str:
    doc: dict[str, Any] = {
        "metrics": c.metrics,
        "per_class": c.per_class,
        "params": c.params,
        "gates": c.gates,
        "warnings": c.warnings,
    }
    return (
        json_text(json.dumps(json_ready(doc), indent=2, allow_nan=False, ensure_ascii=False)) + "\n"
    )


CSV_COLUMNS = ("scope", "key", "category_id", "name", *ENTRY_KEYS, "n_gt")


def to_csv(c: Comparison, *, per_class: bool = False) -> str:
    """One row per summary key (scope ``summary``), then with ``per_class`` one row per class
    (scope ``class``)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for key, e in c.metrics.items():
        w.writerow(["summary", key, "", "all", *[csv_value(e.get(k)) for k in ENTRY_KEYS], ""])
    if per_class:
        for r in c.per_class:
            cid = r.get("category_id")
            w.writerow(
                [
                    "class",
                    r.get("key", ""),
                    csv_cell(str(cid)) if isinstance(cid, str) else csv_value(cid),
                    csv_cell(str(r.get("name"))),
                    *[csv_value(r.get(k)) for k in ENTRY_KEYS],
                    csv_value(r.get("n_gt")),
                ]
            )
    return buf.getvalue()


def by_change(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Classes by |delta| descending (biggest regressions and improvements first), ties in
    class order; classes without a delta last."""
    indexed = list(enumerate(rows))
    indexed.sort(
        key=lambda ir: (
            ir[1].get("delta") is None,
            -abs(ir[1]["delta"]) if ir[1].get("delta") is not None else 0.0,
            ir[0],
        )
    )
    return [r for _, r in indexed]


def _fmt(v: Any, digits: int = 4) -> str:
    v = clean(v)
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    return f"{v:.{digits}f}"


def _fmt_delta(v: Any, digits: int = 4) -> str:
    v = clean(v)
    if v is None:
        return "-"
    if isinstance(v, int):
        return f"{v:+d}"
    return f"{v:+.{digits}f}"


def _ci(e: dict[str, Any], digits: int = 3) -> str:
    lo, hi = clean(e.get("ci_low")), clean(e.get("ci_high"))
    if lo is None or hi is None:
        return "-"
    if isinstance(e.get("a"), int) and float(lo).is_integer() and float(hi).is_integer():
        return f"[{int(lo):+d}, {int(hi):+d}]"  # counts (tp, fp, fn)
    return f"[{lo:+.{digits}f}, {hi:+.{digits}f}]"


def _sig(e: dict[str, Any]) -> str:
    s = e.get("significant")
    return "-" if s is None else ("yes" if s else "no")


def _verdict(key: str, e: dict[str, Any]) -> str:
    """better / worse / same for the table's last column (direction-aware)."""
    d = clean(e.get("delta"))
    if d is None:
        return "-"
    direction = key_direction(key)
    if direction == "setting" or d == 0:
        return "same" if d == 0 else ""
    better = d > 0 if direction == "higher" else d < 0
    word = "better" if better else "worse"
    if e.get("significant") is False:
        word += " (n.s.)"
    return word


def _has_ci(c: Comparison) -> bool:
    return bool(c.params.get("bootstrap"))


def _summary_rows(c: Comparison) -> list[list[str]]:
    return [
        [key, _fmt(e.get("a")), _fmt(e.get("b")), _fmt_delta(e.get("delta"))]
        + ([_ci(e)] if _has_ci(c) else [])
        + [_verdict(key, e)]
        for key, e in c.metrics.items()
    ]


def _summary_header(c: Comparison) -> list[str]:
    ci = f"{round(100 * float(c.params.get('confidence', 0.95)), 2):g}% CI"
    return ["metric", "A", "B", "delta"] + ([ci] if _has_ci(c) else []) + [""]


def _class_header(c: Comparison) -> list[str]:
    key = str(c.params.get("class_key", "AP"))
    head = ["class", "n_gt", f"{key} A", f"{key} B", "delta"]
    return head + (["CI", "sig."] if _has_ci(c) else [])


def _class_cells(c: Comparison, r: dict[str, Any]) -> list[str]:
    n_gt = r.get("n_gt")
    return [
        "-" if n_gt is None else str(n_gt),
        _fmt(r.get("a"), 3),
        _fmt(r.get("b"), 3),
        _fmt_delta(r.get("delta"), 3),
    ] + ([_ci(r, 3), _sig(r)] if _has_ci(c) else [])


def to_markdown(c: Comparison, *, per_class: bool = False) -> str:
    def table(header: list[str], body: list[list[str]]) -> str:
        lines = ["| " + " | ".join(h if h else " " for h in header) + " |"]
        lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        lines += ["| " + " | ".join(x if x else " " for x in row) + " |" for row in body]
        return "\n".join(lines) + "\n"

    out = table(_summary_header(c), _summary_rows(c))
    if per_class and c.per_class:
        body = [[md_cell(r.get("name"))] + _class_cells(c, r) for r in by_change(c.per_class)]
        out += "\n" + table(_class_header(c), body)
    return out


def render_table(c: Comparison, *, per_class: bool = False, title: str = "iou-eval compare") -> Any:
    """A rich renderable; every input-derived string goes through ``rich_text``."""
    from rich import box
    from rich.console import Group
    from rich.table import Table

    summary = Table(title=title, show_header=True, header_style="bold", expand=False)
    for i, h in enumerate(_summary_header(c)):
        summary.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)
    for row in _summary_rows(c):
        style = ""
        if row[-1].startswith("worse"):
            style = "red" if "n.s." not in row[-1] else "yellow"
        elif row[-1].startswith("better"):
            style = "green" if "n.s." not in row[-1] else ""
        summary.add_row(*[rich_text(x) for x in row[:-1]], rich_text(row[-1], style=style))
    parts: list[Any] = [summary]
    if per_class and c.per_class:
        t = Table(show_header=True, header_style="bold", expand=False, box=box.SIMPLE_HEAD)
        t.add_column("class", overflow="fold", min_width=8)
        for h in _class_header(c)[1:]:
            t.add_column(h, justify="right", no_wrap=True)
        for r in by_change(c.per_class):
            d = clean(r.get("delta"))
            style = "" if d is None or d == 0 else ("red" if d < 0 else "green")
            cells = _class_cells(c, r)
            t.add_row(
                rich_text(r.get("name")),
                *[rich_text(x, style=style if j == 3 else "") for j, x in enumerate(cells)],
            )
        parts.append(t)
    return Group(*parts)
