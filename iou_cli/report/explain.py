"""Reporters of an explanation (``iou-eval explain``): rich table, CSV, JSON, markdown.

One row per state: the source protocol's values, each step's effect (signed), the target
protocol's values, and the total. JSON and CSV carry full precision; the table and markdown
show six decimals (the steps are often below 1e-3).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..analysis.explain import Explanation
from ..text import json_text, md_cell
from .result import csv_value, json_ready


def _doc(ex: Explanation) -> dict[str, Any]:
    return {
        "from": ex.source,
        "to": ex.target,
        "keys": [{"from": a, "to": b} for a, b in ex.keys],
        "start": ex.start,
        "steps": [
            {
                "step": s.name,
                "before": s.before,
                "after": s.after,
                "effect": s.effect,
                "values": s.values,
            }
            for s in ex.steps
        ],
        "end": ex.end,
        "total": ex.total,
        "reading": ex.reading(),
    }


def to_json(ex: Explanation) -> str:
    text = json.dumps(json_ready(_doc(ex)), indent=2, allow_nan=False, ensure_ascii=False)
    return json_text(text) + "\n"


def _header(ex: Explanation) -> list[str]:
    keys = [a if a == b else f"{a} / {b}" for a, b in ex.keys]
    return ["step", "change", *keys]


def to_csv(ex: Explanation) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["step", "change", *[a for a, _ in ex.keys]])
    for r in ex.rows():
        w.writerow(
            [csv_value(r["step"]), csv_value(r["change"])]
            + [csv_value(r.get(a)) for a, _ in ex.keys]
        )
    return buf.getvalue()


def _cell(v: Any, signed: bool) -> str:
    if v is None:
        return "-"
    if signed and v == 0:
        return "0"
    return f"{v:+.6f}" if signed else f"{v:.6f}"


def _body(ex: Explanation) -> list[list[str]]:
    rows = ex.rows()
    out = []
    for i, r in enumerate(rows):
        signed = 0 < i < len(rows) - 2 or i == len(rows) - 1
        out.append([r["step"], r["change"]] + [_cell(r.get(a), signed) for a, _ in ex.keys])
    return out


def to_markdown(ex: Explanation) -> str:
    header = _header(ex)
    lines = [
        "| " + " | ".join(md_cell(h) for h in header) + " |",
        "|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|",
    ]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in _body(ex)]
    return "\n".join(lines) + "\n\n" + md_cell(ex.reading()) + "\n"


def render_table(ex: Explanation) -> Any:
    from rich import box
    from rich.table import Table

    t = Table(
        title=f"iou-eval explain: {ex.source} -> {ex.target}",
        caption=ex.reading(),
        show_header=True,
        header_style="bold",
        box=box.SIMPLE_HEAD,
        expand=False,
    )
    header = _header(ex)
    for i, h in enumerate(header):
        t.add_column(h, justify="right" if i >= 2 else "left")
    for row in _body(ex):
        t.add_row(*row)
    return t
