"""The ``--per-keypoint`` section of the HTML report: which joints fail, one row per keypoint
(names from the categories or data.yaml, escaped by the table renderer it is given), and,
where the categories give a skeleton, a figure of it: each keypoint at its mean place in the
ground truths' boxes, coloured by the share of it within the OKS tolerance (red 0%, green
100%, grey unlabelled), its edges coloured by their worse end. The figure is an SVG inside
``<img>`` (it can run no script); every name in it is escaped."""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Sequence
from typing import Any

from ..text import html_text as esc

COLUMNS = (
    "name",
    "n_labelled",
    "within",
    "mean_error",
    "mean_similarity",
    "visible_not_labelled",
    "labelled_not_visible",
    "oks_lost",
    "share_of_loss",
)

_W, _H, _PAD = 420.0, 460.0, 46.0
_GREY = "#9aa0a6"


def keypoint_section(
    extra: dict[str, Any], rows_table: Callable[[Sequence[dict[str, Any]], Sequence[str]], str]
) -> str:
    """The section ("" without ``extra["per_keypoint"]``); ``rows_table`` renders the rows."""
    kp = extra.get("per_keypoint")
    if not isinstance(kp, dict) or not kp.get("keypoints"):
        return ""
    head = (
        f"Per keypoint: {esc(kp.get('n_pairs'))} true-positive pairs at OKS &ge; "
        f"{esc(kp.get('oks_thr'))}"
    )
    note = (
        "within: share of labelled keypoints whose own similarity reaches that OKS; "
        "mean_error: distance over sqrt(area); oks_lost: the keypoint's part of 1 - OKS "
        f"(share_of_loss: of all of it). Predicted visible: third value &ge; "
        f"{esc(kp.get('visible_thr'))}. Sigmas: {esc(kp.get('sigmas'))}."
    )
    table = rows_table(kp["keypoints"], COLUMNS)
    svg = skeleton_svg(kp)
    if svg is None:
        return f'<section><h2>{head}</h2>{table}<p class="note">{note}</p></section>'
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
    caption = (
        "Skeleton: each keypoint at its mean place in the ground truths' boxes, coloured by "
        "the share within the OKS tolerance (red 0%, green 100%, grey: never labelled)"
    )
    fig = (
        f'<figure class="skeleton"><img src="{uri}" alt="{esc(caption)}" '
        f'style="width:{_W:.0f}px;max-width:100%">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )
    return f'<section><h2>{head}</h2>{fig}{table}<p class="note">{note}</p></section>'


def colour(within: Any) -> str:
    """Red (0) through yellow to green (1); grey when undefined."""
    if not isinstance(within, (int, float)) or not math.isfinite(within):
        return _GREY
    hue = 120.0 * min(max(float(within), 0.0), 1.0)
    return f"hsl({hue:.0f},75%,42%)"


def skeleton_svg(kp: dict[str, Any]) -> str | None:
    """The skeleton figure of a ``per_keypoint`` section, or None when the section has no
    skeleton edges or fewer than two placed keypoints."""
    rows = kp.get("keypoints") or []
    layout = kp.get("layout") or []
    edges = kp.get("skeleton") or []
    pts = {
        j: (float(p[0]), float(p[1]))
        for j, p in enumerate(layout)
        if isinstance(p, (list, tuple)) and len(p) == 2 and all(map(math.isfinite, p))
    }
    if not edges or len(pts) < 2 or len(rows) != len(layout):
        return None
    xs, ys = [p[0] for p in pts.values()], [p[1] for p in pts.values()]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    scale = min((_W - 2 * _PAD) / max(x1 - x0, 1e-9), (_H - 2 * _PAD) / max(y1 - y0, 1e-9))

    def at(j: int) -> tuple[float, float]:
        x, y = pts[j]
        cx = _W / 2 + (x - (x0 + x1) / 2) * scale
        cy = _H / 2 + (y - (y0 + y1) / 2) * scale
        return cx, cy

    def within(j: int) -> Any:
        return rows[j].get("within") if 0 <= j < len(rows) else None

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W:.0f}" height="{_H:.0f}" '
        f'viewBox="0 0 {_W:.0f} {_H:.0f}" font-family="sans-serif" font-size="11">',
        f'<rect width="{_W:.0f}" height="{_H:.0f}" fill="#ffffff"/>',
    ]
    for e in edges:
        if not (isinstance(e, (list, tuple)) and len(e) == 2):
            continue
        a, b = int(e[0]) - 1, int(e[1]) - 1
        if a not in pts or b not in pts:
            continue
        wa, wb = within(a), within(b)
        worse = min((w for w in (wa, wb) if isinstance(w, (int, float))), default=None)
        (ax, ay), (bx, by) = at(a), at(b)
        out.append(
            f'<line x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" '
            f'stroke="{colour(worse)}" stroke-width="4" stroke-linecap="round" opacity="0.8"/>'
        )
    for j in sorted(pts):
        cx, cy = at(j)
        w = within(j)
        name = rows[j].get("name", f"k{j + 1}")
        pct = f"{100 * w:.0f}%" if isinstance(w, (int, float)) else "-"
        out.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="7" fill="{colour(w)}" stroke="#202124" '
            'stroke-width="1"/>'
        )
        out.append(
            f'<text x="{cx + 10:.1f}" y="{cy + 4:.1f}" fill="#202124">{esc(name)} {pct}</text>'
        )
    out.append("</svg>")
    return "".join(out)
