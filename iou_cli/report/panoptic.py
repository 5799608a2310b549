"""The HTML report of a panoptic evaluation (``iou-eval panoptic ... --report FILE.html``).

Cards for PQ, SQ and RQ (All, Things, Stuff), a sortable per-class table whose PQ, SQ and RQ
cells are bars, the worst images by PQ (from ``extra["per_image"]``), inputs and parameters.
Self-contained and offline like the detection report (same style sheet and helpers); needs
no matplotlib. Text from the inputs is escaped; nothing is written here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..text import html_text as esc
from .html import _header, _kv, _page, _rows_table, _summary_table, _td, fmt

_CLASS_KEYS = ("isthing", "PQ", "SQ", "RQ", "tp", "fp", "fn", "iou_sum")
_BARS = {"PQ", "SQ", "RQ"}


def _cards(summary: dict[str, Any]) -> str:
    out = ['<section class="bare"><div class="cards">']
    for suffix, label in (("", "all"), ("_th", "things"), ("_st", "stuff")):
        for m in ("PQ", "SQ", "RQ"):
            key = f"{m}{suffix}"
            n = summary.get(f"N{suffix}")
            main = " main" if key == "PQ" else ""
            out.append(
                f'<div class="card{main}"><div class="k">{esc(key)}</div>'
                f'<div class="v">{fmt(summary.get(key))}</div>'
                f'<div class="n">{esc(label)} \u00b7 {fmt(n)} classes</div></div>'
            )
    out.append("</div></section>")
    return "".join(out)


def _class_table(rows: Sequence[dict[str, Any]]) -> str:
    head = "<th>class</th>" + "".join(f"<th>{esc(k)}</th>" for k in _CLASS_KEYS)
    body = []
    for r in rows:
        cells = [f'<td class="name">{esc(r.get("name"))}</td>']
        cells += [_td(r.get(k), bar=k in _BARS, digits=3) for k in _CLASS_KEYS]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        '<div class="scroll"><table class="sortable"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


def panoptic_report(
    result: Any,
    *,
    inputs: dict[str, str] | None = None,
    rows: list[dict[str, Any]] | None = None,
    worst: int = 20,
) -> str:
    """The page, as a string (``rows``: the per-image rows, default ``extra["per_image"]``)."""
    inputs = inputs or {}
    title = "Panoptic segmentation report"
    subtitle = " vs ".join(esc(v) for v in inputs.values())
    parts = [_header(title, subtitle), _cards(result.summary)]
    if result.warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in result.warnings)
        parts.append(f'<section class="warn"><h2>Warnings</h2><ul>{items}</ul></section>')
    parts.append(
        "<section><h2>Per class</h2>"
        + _class_table(result.per_class)
        + '<p class="note">PQ = IoU sum / (TP + FP/2 + FN/2), SQ = IoU sum / TP, RQ = TP / '
        "(TP + FP/2 + FN/2), as panopticapi. Classes with no TP, FP or FN are not averaged "
        "(shown as -). Click a column header to sort.</p></section>"
    )
    per_image = (
        rows if rows is not None else (getattr(result, "extra", None) or {}).get("per_image")
    )
    if isinstance(per_image, list) and per_image:
        rows = [r for r in per_image if r.get("PQ") is not None][:worst]
        if rows:
            keys = ["image_id", "file_name", "PQ", "tp", "fp", "fn"]
            parts.append(
                f"<section><h2>Worst images</h2>{_rows_table(rows, keys)}"
                f'<p class="note">The {len(rows)} images with the lowest PQ (of '
                f"{len(per_image)}); an image's PQ averages its classes with a TP, FP or FN."
                "</p></section>"
            )
    left = (
        "<div><h2>Inputs</h2>" + _kv(list(inputs.items())) + '<h2 style="margin-top:16px">'
        "Parameters</h2>" + _kv(list(result.params.items())) + "</div>"
    )
    right = "<div><h2>Summary</h2>" + _summary_table(result.summary) + "</div>"
    parts.append(f'<section><div class="grid2">{left}{right}</div></section>')
    return _page(title, "\n".join(parts))


__all__ = ["panoptic_report"]
