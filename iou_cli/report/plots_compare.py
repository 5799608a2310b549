"""Figures of two runs (``compare --report``): A's and B's class-mean PR curves overlaid, and
per-class deltas with their intervals. Drawn with the helpers of :mod:`.plots` (matplotlib
is imported there, when a figure is drawn)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..analysis import curves as C
from .figtext import ends, short
from .plots import (
    BLUE,
    GREEN,
    GREY,
    INK,
    RED,
    _ap_label,
    _canvas,
    _fmt,
    _legend,
    _pr_axes,
    _style,
)


def pr_compare(
    curves_a: dict[str, Any],
    curves_b: dict[str, Any],
    label_a: str = "A",
    label_b: str = "B",
    *,
    ax: Any = None,
) -> Any:
    """Overlaid class-mean PR curves of two evaluations (IoU 0.5 solid, average dashed)."""
    with _style():
        fig, ax = _canvas(5.0, 4.3, ax)
        handles, labels = [], []
        for cv, lab, colour in ((curves_a, label_a, BLUE), (curves_b, label_b, RED)):
            r = np.asarray(cv["recall"])
            for key, ls in (("0.5", "-"), (None, "--")):
                if key is not None and key not in cv["precision"]:
                    continue
                y = C.mean_curve(cv, key)
                if y is None:
                    continue
                (h,) = ax.plot(r, y, color=colour, lw=2.0 if key else 1.6, ls=ls)
                handles.append(h)
                labels.append(f"{short(lab, 18)}  {_ap_label(key)} {_fmt(C.mean_ap(cv, key))}")
        _pr_axes(ax)
        ax.set_title("Precision-recall: A against B")
        if handles:
            _legend(ax, handles, labels, loc="lower left")
        return fig


def delta_bars(
    rows: Sequence[dict[str, Any]],
    key: str = "AP",
    label_a: str = "A",
    label_b: str = "B",
    *,
    ax: Any = None,
) -> Any:
    """Per-class change of ``key`` (B minus A), largest gain first, with the bootstrap CI as
    an error bar when known. ``rows`` as ``compare``'s ``per_class``: ``name``, ``delta``
    (and ``ci_low`` / ``ci_high``); classes whose delta is undefined are left out."""
    items = [r for r in rows if r.get("delta") is not None]
    items.sort(key=lambda r: -float(r["delta"]))
    items = ends(items)  # the largest gains and losses, as ap_bars
    n = max(len(items), 1)
    with _style():
        fig, ax = _canvas(6.0, 0.9 + 0.24 * n, ax)
        y = np.arange(len(items))
        d = [float(r["delta"]) for r in items]
        ax.barh(y, d, color=[GREEN if v >= 0 else RED for v in d], height=0.7)
        lo = [r.get("ci_low") for r in items]
        hi = [r.get("ci_high") for r in items]
        has_ci = [a is not None and b is not None for a, b in zip(lo, hi, strict=True)]
        if any(has_ci):
            yi = [i for i, h in enumerate(has_ci) if h]
            err = np.array(
                [[d[i] - float(lo[i]) for i in yi], [float(hi[i]) - d[i] for i in yi]]  # type: ignore[arg-type]
            )
            ax.errorbar(
                [d[i] for i in yi],
                yi,
                xerr=np.maximum(err, 0),
                fmt="none",
                ecolor=INK,
                elinewidth=0.9,
                capsize=2.5,
            )
        ax.axvline(0, color=GREY, lw=0.8)
        extent = d + [float(v) for v in lo + hi if v is not None]
        lim = max([abs(v) for v in extent] + [0.01]) * 1.3
        for i, v in enumerate(d):
            ax.text(
                v + (lim * 0.02 if v >= 0 else -lim * 0.02),
                i - 0.22,
                f"{v:+.3f}",
                va="center",
                ha="left" if v >= 0 else "right",
                fontsize=7,
                color="#374151",
            )
        ax.set_xlim(-lim, lim)
        ax.set_yticks(y)
        ax.set_yticklabels([short(r.get("name")) for r in items])
        ax.set_ylim(len(items) - 0.5, -0.5)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(f"{key}({short(label_b, 16)}) - {key}({short(label_a, 16)})")
        ci = " (bars: confidence interval)" if any(has_ci) else ""
        ax.set_title(f"{key} change per class{ci}")
        return fig
