"""Figures: PR curves, P/R/F1 against confidence, per-class AP bars, confusion, TIDE, compare.

matplotlib is imported here and only here, and only when a figure is drawn (``--plots``,
``--report``): a plain evaluation never pays its import. Figures are built with the
object-oriented API on Agg canvases (no pyplot, no global state, no display), inside an
``rc_context`` that turns mathtext off (a class named ``$x$`` is shown as typed) and makes the
SVG output reproducible (fixed hash salt, no date).

Every function takes plain data (the ``curves`` dict of :mod:`iou_cli.analysis.curves`, a Result's
rows, the ``confusion`` / ``tide`` JSON sections) and returns a ``Figure``; :func:`svg`,
:func:`png` and :func:`write_plots` turn figures into bytes and files.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..analysis import curves as C
from ..errors import UsageError
from .figtext import _ESCAPED, MAX_BARS, ends, short

BLUE = "#2563eb"
ORANGE = "#ea580c"
INK = "#111827"
GREEN = "#16a34a"
RED = "#dc2626"
GREY = "#6b7280"
PURPLE = "#7c3aed"
MAX_CLASS_PANELS = 48
MAX_CONFUSION_CLASSES = 30

_RC = {
    "text.parse_math": False,
    "svg.fonttype": "path",
    "svg.hashsalt": "iou-eval",
    "font.size": 9,
    "font.family": "DejaVu Sans",
    "axes.titlesize": 10.5,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "axes.labelsize": 9,
    "axes.labelcolor": "#374151",
    "axes.edgecolor": "#9ca3af",
    "axes.linewidth": 0.8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#e5e7eb",
    "grid.linewidth": 0.7,
    "xtick.color": "#4b5563",
    "ytick.color": "#4b5563",
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.08,
}


def _require() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UsageError(
            "drawing figures needs matplotlib: pip install 'iou-eval[plots]'"
        ) from None
    return matplotlib


@contextlib.contextmanager
def _style() -> Iterator[None]:
    mpl = _require()
    with mpl.rc_context(_RC):
        yield


@contextlib.contextmanager
def _mpl_rc(rc: dict[str, Any]) -> Iterator[None]:
    mpl = _require()
    with mpl.rc_context(rc):
        yield


def _figure(w: float, h: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def _legend(ax: Any, handles: list[Any], labels: list[str], **kw: Any) -> None:
    # explicit labels: matplotlib would drop a label that starts with "_"
    ax.legend(handles, labels, **kw)


def _pr_axes(ax: Any) -> None:
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_aspect("equal", adjustable="box")


def _thr_series(curves: dict[str, Any]) -> list[tuple[str | None, str, str, str]]:
    """(threshold key or None for the average, label, colour, linestyle) present in curves."""
    keys = list(curves["precision"])
    out: list[tuple[str | None, str, str, str]] = []
    if "0.5" in keys:
        out.append(("0.5", "IoU 0.50", BLUE, "-"))
    if "0.75" in keys:
        out.append(("0.75", "IoU 0.75", ORANGE, "-"))
    if len(keys) > 1 or not out:
        lo, hi = min(curves["iou_thrs"]), max(curves["iou_thrs"])
        span = f"IoU {lo:.2f}:{hi:.2f}" if len(keys) > 1 else f"IoU {lo:.2f}"
        out.append((None, span, INK, "--"))
    return out


def _ap_label(key: str | None) -> str:
    return {"0.5": "AP50", "0.75": "AP75"}.get(key or "", "AP" if key is None else f"AP@{key}")


# --------------------------------------------------------------------------- single evaluation


def pr_overall(curves: dict[str, Any], title: str = "Precision-recall, all classes") -> Any:
    """Class-mean precision against recall at 0.5, 0.75 and averaged over the thresholds;
    the legend gives each curve's AP (its mean, exactly the summary's)."""
    with _style():
        fig = _figure(5.0, 4.3)
        ax = fig.add_subplot()
        r = np.asarray(curves["recall"])
        handles, labels = [], []
        for key, label, colour, ls in _thr_series(curves):
            y = C.mean_curve(curves, key)
            if y is None:
                continue
            (h,) = ax.plot(r, y, color=colour, lw=2.0, ls=ls)
            if key == "0.5":
                ax.fill_between(r, 0, y, color=colour, alpha=0.07, lw=0)
            handles.append(h)
            labels.append(f"{label}   {_ap_label(key)} {_fmt(C.mean_ap(curves, key))}")
        _pr_axes(ax)
        ax.set_title(title)
        if handles:
            _legend(ax, handles, labels, loc="lower left")
        else:
            ax.text(0.5, 0.5, "no ground truth", ha="center", va="center", color=GREY)
        return fig


def pr_voc(curves: dict[str, Any], max_coloured: int = 10) -> Any:
    """VOC: each class's devkit PR curve as its monotone envelope (the curve its all-point
    AP integrates), coloured with its AP when few, grey when many."""
    per = {k: v for k, v in curves.get("voc", {}).items() if v is not None}
    palette = [BLUE, ORANGE, GREEN, RED, PURPLE, INK, "#0891b2", "#ca8a04", "#db2777", GREY]
    aps = [v["AP"] for v in per.values()]
    with _style():
        fig = _figure(5.6, 4.3)
        ax = fig.add_subplot()
        handles, labels = [], []
        many = len(per) > max_coloured
        for i, (name, c) in enumerate(per.items()):
            rec = np.asarray(c["recall"], dtype=float)
            prec = np.asarray(c["precision"], dtype=float)
            if rec.size == 0:
                continue
            env = np.maximum.accumulate(prec[::-1])[::-1]  # the devkit's mpre
            # on (rec[i-1], rec[i]] the envelope is env[i]; nothing is drawn past the last
            x, y = np.r_[0.0, rec], np.r_[env[0], env]
            colour = "#9ca3af" if many else palette[i % len(palette)]
            (h,) = ax.plot(x, y, color=colour, lw=0.9 if many else 1.6, drawstyle="steps-pre")
            if not many:
                handles.append(h)
                labels.append(f"{short(name, 20)}  AP {c['AP']:.3f}")
        _pr_axes(ax)
        m = float(np.mean(aps)) if aps else None
        thr = curves.get("iou_thrs", [None])[0]
        ax.set_title(f"Precision-recall per class (VOC, IoU {thr:g})  mAP {_fmt(m)}")
        if handles:
            _legend(ax, handles, labels, loc="center left", bbox_to_anchor=(1.02, 0.5))
        elif many:
            ax.text(0.02, 0.04, f"{len(per)} classes", transform=ax.transAxes, color=GREY)
        return fig


def pr_per_class(
    curves: dict[str, Any], rows: Sequence[dict[str, Any]], max_panels: int = MAX_CLASS_PANELS
) -> Any:
    """Small multiples: one panel per class (most ground truths first), three curves each.

    Fixed margins and shared axes instead of a layout engine: 48 panels draw in about a
    second rather than ten.
    """
    names = list(next(iter(curves["precision"].values()), {}))
    n_gt = {n: (rows[i].get("n_gt") or 0) if i < len(rows) else 0 for i, n in enumerate(names)}
    order = sorted(range(len(names)), key=lambda i: -n_gt[names[i]])[:max_panels]
    n = max(len(order), 1)
    cols = min(6 if n > 16 else 4, n)
    nrows = (n + cols - 1) // cols
    series = _thr_series(curves)
    panel = 1.9
    top_in, bottom_in, left_in, right_in = 0.95, 0.55, 0.6, 0.15
    w = left_in + right_in + panel * cols
    h = top_in + bottom_in + (panel + 0.12) * nrows
    rc = {"savefig.bbox": None, "axes.titlelocation": "left"}
    with _style(), _mpl_rc(rc):
        fig = _figure(w, h)
        fig.subplots_adjust(
            left=left_in / w,
            right=1 - right_in / w,
            bottom=bottom_in / h,
            top=1 - top_in / h,
            wspace=0.12,
            hspace=0.32,
        )
        axes = fig.subplots(nrows, cols, squeeze=False)
        r = np.asarray(curves["recall"])
        handles: list[Any] = []
        labels: list[str] = []
        for slot, ax in enumerate(axes.flat):
            if slot >= len(order):
                ax.set_visible(False)
                continue
            name = names[order[slot]]
            for key, label, colour, ls in series:
                y = C.class_curve(curves, name, key)
                if y is None:
                    continue
                (h_,) = ax.plot(r, y, color=colour, lw=1.3, ls=ls)
                if not handles or len(handles) < len(series) and slot == 0:
                    handles.append(h_)
                    labels.append(label)
            ap50 = C.class_curve(curves, name, "0.5") if "0.5" in curves["precision"] else None
            sub = "  (no gt)" if C.class_curve(curves, name, None) is None else ""
            if ap50 is not None:
                sub = f"  {float(np.mean(ap50)):.2f}"
            ax.set_title(short(name, 16) + sub, fontsize=8, fontweight="normal")
            ax.tick_params(labelsize=7, length=2)
        last_row = {(len(order) - 1 - c) // cols for c in range(min(cols, len(order)))}
        for slot, ax in enumerate(axes.flat[: len(order)]):
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1.02)
            ax.set_xticks(
                [0, 0.5, 1],
                ["0", ".5", "1"] if slot // cols in last_row or slot + cols >= len(order) else [],
            )
            ax.set_yticks([0, 0.5, 1], ["0", ".5", "1"] if slot % cols == 0 else [])
        more = f" (the {len(order)} of {len(names)} classes with most ground truths)"
        fig.suptitle(
            "Precision-recall per class, AP50 beside the name"
            + (more if len(names) > len(order) else ""),
            x=left_in / w,
            y=1 - 0.12 / h,
            ha="left",
            va="top",
            fontweight="bold",
            fontsize=10.5,
        )
        if handles:
            fig.legend(
                handles,
                labels,
                loc="upper left",
                bbox_to_anchor=(left_in / w, 1 - 0.38 / h),
                ncol=len(labels),
                fontsize=8,
            )
        fig.text(0.5, 0.1 / h, "recall", ha="center", va="bottom", fontsize=9)
        fig.text(0.1 / w, 0.5, "precision", rotation=90, ha="left", va="center", fontsize=9)
        fig.iou_eval_layout_fixed = True  # saved as laid out: no second "tight" draw
        return fig


def confidence(conf: dict[str, Any], title: str | None = None) -> Any:
    """Precision, recall and F1 against the confidence cut, the operating point marked."""
    with _style():
        fig = _figure(5.8, 4.0)
        ax = fig.add_subplot()
        s = np.asarray(conf["score"], dtype=float)[::-1]
        lo = hi = 0.0
        if s.size:
            lo, hi = float(s.min()), float(s.max())
            if lo >= 0 and hi <= 1:
                lo, hi = 0.0, 1.0
        x = np.r_[lo, s] if s.size and lo < s[0] else s  # below the lowest score: all kept
        handles, labels = [], []
        for key, colour, lw in (
            ("f1", INK, 2.2),
            ("precision", BLUE, 1.6),
            ("recall", ORANGE, 1.6),
        ):
            y = np.asarray([np.nan if v is None else v for v in conf[key]], dtype=float)[::-1]
            if s.size == 0 or np.all(np.isnan(y)):
                continue
            y = np.r_[y[0], y] if x.size > s.size else y
            (h,) = ax.plot(x, y, color=colour, lw=lw, drawstyle="steps-pre")
            handles.append(h)
            labels.append({"f1": "F1"}.get(key, key))
        thr = conf.get("score_thr")
        if thr is not None and s.size:
            at = int(np.searchsorted(-np.asarray(conf["score"]), -thr, side="right")) - 1
            if 0 <= at < s.size and conf["f1"][at] is not None:
                f1 = conf["f1"][at]
                ax.axvline(thr, color=GREY, lw=1, ls=":")
                (h,) = ax.plot([thr], [f1], "o", color=RED, ms=7, zorder=5)
                p, rc = conf["precision"][at], conf["recall"][at]
                handles.append(h)
                labels.append(
                    f"operating point: confidence \u2265 {thr:.3g}\n"
                    f"P {_fmt(p)}   R {_fmt(rc)}   F1 {_fmt(f1)}"
                )
        if s.size:
            pad = (hi - lo) * 0.02 or 0.01
            ax.set_xlim(lo - pad, hi + pad)
        else:
            ax.text(0.5, 0.5, "no predictions", ha="center", va="center", color=GREY)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("confidence threshold (predictions with score \u2265 x)")
        ax.set_ylabel("value")
        ax.set_title(
            title or f"Precision, recall and F1 against confidence (IoU {conf['iou_thr']:g})"
        )
        if handles:
            _legend(ax, handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4)
        return fig


def _ap_key(rows: Sequence[dict[str, Any]]) -> str:
    for key in ("AP", "mAP", "IoU"):
        if any(key in r for r in rows):
            return key
    return "AP"


def ap_bars(rows: Sequence[dict[str, Any]], key: str | None = None) -> Any:
    """Per-class AP as horizontal bars, best first; AP50 as a lighter bar behind when known
    (beyond ``MAX_BARS`` classes, the best and the worst: see ``figtext.ends``)."""
    key = key or _ap_key(rows)
    items = [(r.get("name"), r.get(key), r.get("AP50") if key == "AP" else None) for r in rows]
    items.sort(key=lambda x: (x[1] is None, -(x[1] or 0.0)))
    total, items = len(items), ends(items)
    n = max(len(items), 1)
    with _style():
        fig = _figure(6.0, 0.8 + 0.24 * n)
        ax = fig.add_subplot()
        y = np.arange(len(items))
        v = [0.0 if a is None else a for _, a, _ in items]
        if any(b is not None for _, _, b in items):
            v50 = [0.0 if b is None else b for _, _, b in items]
            ax.barh(y, v50, color=BLUE, alpha=0.22, height=0.72, label="AP50")
        ax.barh(y, v, color=BLUE, height=0.72, label=key)
        for i, (_, a, _) in enumerate(items):
            ax.text(
                (a or 0.0) + 0.01, i, "n/a" if a is None else f"{a:.3f}", va="center", fontsize=7.5
            )
        ax.set_yticks(y)
        ax.set_yticklabels([short(nm) for nm, _, _ in items])
        ax.invert_yaxis()
        ax.set_xlim(0, 1.08)
        ax.set_ylim(len(items) - 0.5, -0.5)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(key)
        cap = f" (best and worst {MAX_BARS // 2} of {total:,})" if total > len(items) else ""
        ax.set_title(f"{key} per class{cap}")
        handles, labels = ax.get_legend_handles_labels()
        if len(handles) > 1:
            _legend(ax, handles[::-1], labels[::-1], loc="lower right")
        return fig


def confusion(section: dict[str, Any], max_classes: int = MAX_CONFUSION_CLASSES) -> Any:
    """Confusion matrix heatmap (rows ground truth, columns prediction, ``background`` last),
    each row normalised by its ground-truth count; counts written in the cells when small."""
    labels = [str(x) for x in section["labels"]]
    m = np.asarray(section["matrix"], dtype=float)
    if len(labels) - 1 > max_classes:  # keep the classes with most ground truths + background
        tot = m[:-1].sum(axis=1) + m[:-1, :-1].sum(axis=0)
        keep = sorted(np.argsort(-tot, kind="stable")[:max_classes].tolist()) + [len(labels) - 1]
        m = m[np.ix_(keep, keep)]
        labels = [labels[i] for i in keep]
    n = len(labels)
    row_sum = m.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        norm = np.where(row_sum > 0, m / row_sum, 0.0)
    side = min(max(3.6, 0.42 * n + 1.6), 14)
    with _style():
        fig = _figure(side + 0.8, side)
        ax = fig.add_subplot()
        im = ax.imshow(norm, cmap="Blues", vmin=0, vmax=1, aspect="equal")
        ax.grid(False)
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xticklabels([short(x, 16) for x in labels], rotation=45, ha="right")
        ax.set_yticklabels([short(x, 16) for x in labels])
        ax.set_xlabel("prediction")
        ax.set_ylabel("ground truth")
        if n <= 16:
            for i in range(n):
                for j in range(n):
                    if m[i, j]:
                        ax.text(
                            j,
                            i,
                            f"{int(m[i, j])}" if float(m[i, j]).is_integer() else f"{m[i, j]:.2g}",
                            ha="center",
                            va="center",
                            fontsize=7.5,
                            color="white" if norm[i, j] > 0.55 else INK,
                        )
        cb = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
        cb.set_label("share of the ground-truth row", fontsize=8)
        cb.ax.tick_params(labelsize=7)
        ax.set_title("Confusion matrix")
        return fig


TIDE_MAIN = ("Cls", "Loc", "Both", "Dupe", "Bkg", "Miss")
TIDE_SPECIAL = ("FalsePos", "FalseNeg")
_TIDE_NAMES = {
    "Cls": "classification",
    "Loc": "localisation",
    "Both": "cls + loc",
    "Dupe": "duplicate",
    "Bkg": "background",
    "Miss": "missed",
    "FalsePos": "all false positives",
    "FalseNeg": "all false negatives",
}


def tide(section: dict[str, Any]) -> Any:
    """TIDE: the AP each error type costs (dAP), main errors then the two special ones."""
    d = section.get("dAP", {})
    keys = [k for k in TIDE_MAIN + TIDE_SPECIAL if k in d]
    vals = [0.0 if d[k] is None else float(d[k]) for k in keys]
    colours = [PURPLE if k in TIDE_SPECIAL else ORANGE for k in keys]
    with _style():
        fig = _figure(5.6, 0.9 + 0.3 * max(len(keys), 1))
        ax = fig.add_subplot()
        y = np.arange(len(keys))
        ax.barh(y, vals, color=colours, height=0.66)
        top = max(vals + [0.0]) or 1.0
        fmt = "{:.3f}" if top <= 1 else "{:.2f}"  # dAP as a fraction or in AP points
        for i, v in enumerate(vals):
            ax.text(v + top * 0.01, i, fmt.format(v), va="center", fontsize=8)
        ax.set_yticks(y)
        ax.set_yticklabels([f"{_TIDE_NAMES.get(k, k)} ({k})" for k in keys])
        ax.invert_yaxis()
        ax.set_xlim(0, top * 1.15)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("dAP: AP gained if this error were fixed")
        base = section.get("baseline")
        ax.set_title("TIDE error breakdown" + (f" (AP {base:.3g})" if base is not None else ""))
        return fig


def calibration(section: dict[str, Any]) -> Any:
    """Reliability diagram: accuracy (share of true positives) against mean confidence per
    score bin, the diagonal for perfect calibration, ECE in the title."""
    overall = section.get("overall", {}) or {}
    bins = [b for b in overall.get("bins", []) if b.get("count")]
    with _style():
        fig = _figure(4.6, 4.3)
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1], color=GREY, lw=1, ls="--")
        if bins:
            lo = np.array([b["lo"] for b in bins])
            hi = np.array([b["hi"] for b in bins])
            acc = np.array([b["accuracy"] for b in bins], dtype=float)
            conf = np.array([b["confidence"] for b in bins], dtype=float)
            ax.bar(lo, acc, width=hi - lo, align="edge", color=BLUE, alpha=0.75, ec="white")
            ax.plot(conf, acc, "o", color=INK, ms=4)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel("confidence")
        ax.set_ylabel(f"share correct (TP at IoU {section.get('iou_thr', '')})")
        ece = overall.get("ece")
        ax.set_title("Calibration" + (f" (ECE {ece:.3f})" if ece is not None else ""))
        return fig


# --------------------------------------------------------------------------- two evaluations


def pr_compare(
    curves_a: dict[str, Any], curves_b: dict[str, Any], label_a: str = "A", label_b: str = "B"
) -> Any:
    """Overlaid class-mean PR curves of two evaluations (IoU 0.5 solid, average dashed)."""
    with _style():
        fig = _figure(5.0, 4.3)
        ax = fig.add_subplot()
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
    rows: Sequence[dict[str, Any]], key: str = "AP", label_a: str = "A", label_b: str = "B"
) -> Any:
    """Per-class change of ``key`` (B minus A), largest gain first, with the bootstrap CI as
    an error bar when known. ``rows`` as ``compare``'s ``per_class``: ``name``, ``delta``
    (and ``ci_low`` / ``ci_high``); classes whose delta is undefined are left out."""
    items = [r for r in rows if r.get("delta") is not None]
    items.sort(key=lambda r: -float(r["delta"]))
    items = ends(items)  # the largest gains and losses, as ap_bars
    n = max(len(items), 1)
    with _style():
        fig = _figure(6.0, 0.9 + 0.24 * n)
        ax = fig.add_subplot()
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


# --------------------------------------------------------------------------- output


def _save_rc(fig: Any) -> dict[str, Any]:
    return {"savefig.bbox": "standard" if getattr(fig, "iou_eval_layout_fixed", False) else "tight"}


def svg(fig: Any) -> bytes:
    with _style(), _mpl_rc(_save_rc(fig)):
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        return buf.getvalue()


def png(fig: Any, dpi: int = 144) -> bytes:
    with _style(), _mpl_rc(_save_rc(fig)):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
        return buf.getvalue()


def figures(result: Any, curves: dict[str, Any] | None) -> list[tuple[str, str, Any]]:
    """(file stem, caption, figure) of every figure this result supports, in report order.
    Names the font cannot draw are drawn escaped, said once in ``result.warnings``."""
    out: list[tuple[str, str, Any]] = []
    _ESCAPED.clear()
    extra = getattr(result, "extra", None) or {}
    if curves is not None and curves.get("precision"):
        out.append(("pr_curve", "Class-mean precision-recall curves", pr_overall(curves)))
    elif curves is not None and curves.get("voc"):
        out.append(("pr_curve", "Precision-recall per class (VOC)", pr_voc(curves)))
    conf = (curves or {}).get("confidence")
    if conf is not None:
        out.append(("confidence", "Precision, recall and F1 against confidence", confidence(conf)))
    if result.per_class:
        out.append(("ap_per_class", "AP per class", ap_bars(result.per_class)))
    if curves is not None and curves.get("precision"):
        out.append(
            ("pr_per_class", "Precision-recall per class", pr_per_class(curves, result.per_class))
        )
    if isinstance(extra.get("confusion"), dict) and extra["confusion"].get("labels"):
        out.append(("confusion", "Confusion matrix", confusion(extra["confusion"])))
    if isinstance(extra.get("tide"), dict) and extra["tide"].get("dAP"):
        out.append(("tide", "TIDE error breakdown", tide(extra["tide"])))
    cal = extra.get("calibration")
    if isinstance(cal, dict) and isinstance(cal.get("overall"), dict):
        out.append(("calibration", "Reliability of the confidence scores", calibration(cal)))
    if _ESCAPED and isinstance(getattr(result, "warnings", None), list):
        line = (
            f"figures: {len(set(_ESCAPED))} class name(s) have characters the figure font "
            "cannot draw; they are drawn escaped (e.g. \\u4e2d)"
        )
        if line not in result.warnings:
            result.warnings.append(line)
    return out


def write_plots(
    result: Any, curves: dict[str, Any] | None, out_dir: str, inputs: Sequence[str] = ()
) -> list[str]:
    """Write every figure as ``DIR/<name>.png`` and ``DIR/<name>.svg``; returns the paths.

    ``DIR`` is created when missing (its parent must exist); nothing is written into an
    input's folder or over an input.
    """
    from .outputs import write_folder

    def files() -> Iterator[tuple[str, bytes]]:
        for stem, _caption, fig in figures(result, curves):
            yield f"{stem}.png", png(fig)
            yield f"{stem}.svg", svg(fig)

    # rendered into a temporary folder, then moved in: old figures or new, never a mix
    return write_folder(out_dir, files(), inputs)
