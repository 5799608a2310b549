"""Reporters: typed results -> text (tables, CSV, JSON, markdown), HTML pages and figures.

``result`` (a Result, the ``iou`` verb's matrix), ``compare`` (a Comparison), ``explain`` (an Explanation), ``analyses``
(the analysis sections), ``html`` (self-contained pages), ``plots`` (matplotlib, imported
only there) and ``outputs`` (atomic writes that never go over an input)."""

from __future__ import annotations

from typing import Any

FORMATS = ("table", "csv", "json", "markdown")


def render(
    obj: Any,
    fmt: str,
    *,
    per_class: bool = False,
    title: Any = "iou-eval",
    width: int | None = None,
    ascii_only: bool = False,
) -> Any:
    """One entry for every report: ``obj`` is a Result (any verb), a Comparison (compare) or
    the ``iou`` verb's IouMatrix; ``fmt`` one of :data:`FORMATS` (the matrix also takes
    ``value``, the bare number). Text formats return a string; ``table`` returns the rich
    renderables to print, in order (the main table, then the analyses' tables)."""
    kind = type(obj).__name__
    if kind == "Comparison":
        from . import compare as rc

        if fmt == "table":
            return [rc.render_table(obj, per_class=per_class)]
        if fmt == "json":
            return rc.to_json(obj)
        return (
            rc.to_csv(obj, per_class=per_class)
            if fmt == "csv"
            else rc.to_markdown(obj, per_class=per_class)
        )
    from . import result as rr

    if kind == "IouMatrix":
        return [rr.iou_matrix_table(obj)] if fmt == "table" else rr.iou_matrix_text(obj, fmt)
    sections = getattr(obj, "analyses", None) or {}
    if fmt == "json":
        return rr.to_json(obj, ascii_only=ascii_only)
    if fmt == "csv":
        from .analyses import csv_of

        chosen = csv_of(sections)
        return chosen if chosen is not None else rr.to_csv(obj, per_class=per_class)
    if fmt == "markdown":
        text = rr.to_markdown(obj, per_class=per_class)
        if sections:
            from .analyses import to_markdown

            text += to_markdown(sections)
        return text
    parts = [rr.render_table(obj, per_class=per_class, title=title, width=width)]
    if sections:
        from .analyses import renderables

        parts.extend(renderables(sections))
    return parts
