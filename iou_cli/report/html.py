"""The HTML report: one self-contained file (``--report FILE.html``) that opens offline.

Everything is inline: the style sheet, a few lines of script that sort the per-class table,
and the figures as ``data:image/svg+xml`` images (an SVG inside ``<img>`` can run no script
and cannot clash with the page's ids). No external script, font, style sheet or image.

Every string that came from an input (class names, file names, image keys, parameter values)
goes through :func:`iou_cli.text.html_text`; numbers are formatted here. The functions return
the page as a string and write nothing.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..text import html_text as esc

_CSS = """
:root{--ink:#111827;--muted:#6b7280;--line:#e5e7eb;--bg:#f5f7fb;--card:#fff;--accent:#2563eb;
--good:#16a34a;--bad:#dc2626}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.5 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,"DejaVu Sans",sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 28px 48px}
header{display:flex;justify-content:space-between;align-items:flex-end;gap:24px;
border-bottom:1px solid var(--line);padding-bottom:16px;margin-bottom:22px}
h1{font-size:24px;margin:0 0 4px;letter-spacing:-.01em}
h2{font-size:16px;margin:0 0 12px}
.sub{color:var(--muted);font-size:13px;word-break:break-all}
.brand{color:var(--muted);font-size:12px;text-align:right;white-space:nowrap}
.brand b{color:var(--accent)}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;
padding:18px 20px;margin:0 0 18px;box-shadow:0 1px 2px rgba(16,24,40,.04)}
section.bare{background:none;border:0;box-shadow:none;padding:0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px}
.card .k{color:var(--muted);font-size:13px;font-weight:600;letter-spacing:.02em}
.card .v{font-size:26px;font-weight:650;font-variant-numeric:tabular-nums;margin-top:2px}
.card .n{color:var(--muted);font-size:12px}
.card.main{border-top:3px solid var(--accent)}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:18px}
@media (max-width:900px){.grid2{grid-template-columns:1fr}}
figure{margin:0}
figure img{display:block;max-width:100%;height:auto;margin:0 auto}
.grid2 figure img{width:100%}
.capped figure img{max-height:430px;object-fit:contain}
figcaption{color:var(--muted);font-size:12px;margin-top:8px;text-align:center}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:6px 9px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{font-size:12.5px;color:var(--muted);font-weight:600;
letter-spacing:.03em;background:#fafbfc;position:sticky;top:0}
th:first-child,td:first-child,td.k,th.k{text-align:left}
td.k{font-weight:500}
td.name{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:110px;max-width:320px;font-weight:500}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:hover{color:var(--ink)}
th[aria-sort=ascending]::after{content:" \\25B2";font-size:9px}
th[aria-sort=descending]::after{content:" \\25BC";font-size:9px}
tbody tr:hover{background:#f9fafb}
td.bar{background:linear-gradient(90deg,rgba(37,99,235,.16) calc(var(--v)*100%),transparent 0)
no-repeat center/100% 70%;font-weight:600}
td.na{color:#9ca3af}
td.pos,.v.pos{color:var(--good)}td.neg,.v.neg{color:var(--bad)}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;font-size:13px}
.kv dt{color:var(--muted)}.kv dd{margin:0;word-break:break-all;font-family:ui-monospace,
SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12.5px}
.note{color:var(--muted);font-size:12px;margin:8px 0 0}
.warn{background:#fffbeb;border-color:#fde68a}
.warn li{margin:2px 0}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:24px}
.scroll{max-height:560px;overflow:auto;border:1px solid var(--line);border-radius:8px}
.scroll table th{box-shadow:0 1px 0 var(--line)}
"""

# sorts a table.sortable by the clicked column (numbers by data-v, text otherwise)
_JS = """
document.querySelectorAll("table.sortable").forEach(function(t){
  var hs=t.tHead.rows[0].cells;
  Array.prototype.forEach.call(hs,function(h,i){h.addEventListener("click",function(){
    var cur=h.getAttribute("aria-sort"),c0=t.tBodies[0].rows[0];
    var text=c0&&c0.cells[i]&&c0.cells[i].getAttribute("data-v")===null;
    var asc=cur?cur==="descending":text;
    Array.prototype.forEach.call(hs,function(x){x.removeAttribute("aria-sort");});
    h.setAttribute("aria-sort",asc?"ascending":"descending");
    var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);
    function key(r){var c=r.cells[i],v=c.getAttribute("data-v");
      return v===null?c.textContent.toLowerCase():(v===""?null:parseFloat(v));}
    rows.sort(function(a,c){var x=key(a),y=key(c);
      if(x===y)return 0;if(x===null)return 1;if(y===null)return -1;
      return (x<y?-1:1)*(asc?1:-1);});
    rows.forEach(function(r){b.appendChild(r);});
  });});
});
"""

_LABELS = {
    "AP": "AP",
    "AP50": "AP50",
    "AP75": "AP75",
    "mAP": "mAP",
    "precision": "precision",
    "recall": "recall",
    "f1": "F1",
    "mean_iou": "mean IoU",
    "n_gt": "gt",
    "n_det": "det",
}


# --------------------------------------------------------------------------- small pieces


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def fmt(v: Any, digits: int = 3) -> str:
    """A number for reading: ints as is, floats to ``digits`` decimals, undefined as ``-``."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}".replace(",", "\u2009")
    f = _num(v)
    if f is None:
        return esc(v)
    return f"{f:.{digits}f}"


_LOWER_IS_BETTER = {"fp", "fn"}
_SETTINGS = {"iou_thr", "score_thr"}


def _td(
    v: Any,
    *,
    bar: bool = False,
    signed: bool = False,
    digits: int = 3,
    key: str = "",
    colour: bool = True,
) -> str:
    f = _num(v)
    if f is None and v is not None and not isinstance(v, bool):
        return f'<td class="name">{esc(v)}</td>'
    dv = "" if f is None else repr(f)
    cls = []
    if f is None:
        cls.append("na")
    elif bar and 0 <= f <= 1:
        cls.append("bar")
    if colour and signed and f is not None and f != 0 and key not in _SETTINGS:
        cls.append("pos" if (f > 0) != (key in _LOWER_IS_BETTER) else "neg")
    style = f' style="--v:{f:.4f}"' if "bar" in cls and f is not None else ""
    text = fmt(v, digits)
    if signed and f is not None:
        text = f"{v:+d}" if isinstance(v, int) and not isinstance(v, bool) else f"{f:+.{digits}f}"
    c = f' class="{" ".join(cls)}"' if cls else ""
    return f'<td data-v="{dv}"{c}{style}>{text}</td>'


def svg_data_uri(data: bytes) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")


def figure_html(data: bytes, caption: str, alt: str | None = None) -> str:
    """An SVG figure as an ``<img>`` with a data: URI and a caption."""
    return (
        f'<figure><img src="{svg_data_uri(data)}" alt="{esc(alt or caption)}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta name="generator" content="iou-eval ' + esc(__version__) + '">'
        f"<title>{esc(title)}</title><style>{_CSS}</style></head>\n"
        f"<body><main>\n{body}\n"
        f"<footer>Generated by iou-eval {esc(__version__)} \u00b7 a self-contained report: "
        "no network access needed.</footer>\n"
        f"</main><script>{_JS}</script></body></html>\n"
    )


def _header(title: str, subtitle: str) -> str:
    import datetime

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f'<header><div><h1>{esc(title)}</h1><div class="sub">{subtitle}</div></div>'
        f'<div class="brand"><b>iou-eval</b> {esc(__version__)}<br>{now}</div></header>'
    )


def _cards(summary: dict[str, Any], params: dict[str, Any]) -> str:
    items: list[tuple[str, Any, str, bool]] = []
    for key, note in (
        ("AP", "IoU .50:.95"),
        ("mAP", f"IoU {params.get('iou_thr', summary.get('iou_thr', ''))}"),
        ("AP50", "IoU .50"),
        ("AP75", "IoU .75"),
    ):
        if key in summary:
            items.append((key, summary[key], note, key in ("AP", "mAP")))
    ar = [k for k in summary if k.startswith("AR") and k[2:].isdigit()]
    if ar:
        items.append((ar[-1], summary[ar[-1]], f"max {ar[-1][2:]} detections", False))
    if "f1" in summary:
        thr = summary.get("score_thr")
        note = f"IoU {summary.get('iou_thr', '')}" + (
            f" \u00b7 conf \u2265 {thr:.3g}" if isinstance(thr, float) else ""
        )
        items.append(("F1", summary["f1"], note, False))
        items.append(("precision", summary.get("precision"), note, False))
        items.append(("recall", summary.get("recall"), note, False))
    if not items:  # other verbs: the first few keys
        items = [(k, v, "", i == 0) for i, (k, v) in enumerate(list(summary.items())[:6])]
    out = ['<section class="bare"><div class="cards">']
    for key, v, note, main in items:
        out.append(
            f'<div class="card{" main" if main else ""}"><div class="k">{esc(key)}</div>'
            f'<div class="v">{fmt(v)}</div><div class="n">{esc(note)}</div></div>'
        )
    out.append("</div></section>")
    return "".join(out)


def _round_floats(v: Any) -> Any:
    if isinstance(v, float):
        return float(f"{v:.10g}")
    if isinstance(v, dict):
        return {k: _round_floats(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_round_floats(x) for x in v]
    return v


def _value_text(v: Any) -> str:
    if isinstance(v, (dict, list, tuple, bool)) or v is None:
        return json.dumps(_round_floats(v), ensure_ascii=False, default=str)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _kv(pairs: Sequence[tuple[str, Any]]) -> str:
    body = "".join(f"<dt>{esc(k)}</dt><dd>{esc(_value_text(v))}</dd>" for k, v in pairs)
    return f'<dl class="kv">{body}</dl>'


def _summary_table(summary: dict[str, Any]) -> str:
    """Two metric/value column pairs: AP/AR keys left, the operating point right."""
    from ..metrics import OP_KEYS

    items = list(summary.items())
    left = [kv for kv in items if kv[0] not in OP_KEYS]
    right = [kv for kv in items if kv[0] in OP_KEYS]
    if not left or not right:
        half = (len(items) + 1) // 2
        left, right = items[:half], items[half:]
    rows = []
    for i in range(max(len(left), len(right))):
        cells = ""
        for side in (left, right):
            if i < len(side):
                k, v = side[i]
                cells += f'<td class="k">{esc(k)}</td>{_td(v, digits=4)}'
            else:
                cells += "<td></td><td></td>"
        rows.append(f"<tr>{cells}</tr>")
    return (
        '<table><thead><tr><th>metric</th><th>value</th><th class="k">metric</th><th>value</th>'
        "</tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


_CLASS_KEYS = ("n_gt", "n_det", "AP", "mAP", "IoU", "AP50", "AP75", "APs", "APm", "APl")
_CLASS_KEYS_OP = ("tp", "fp", "fn", "precision", "recall", "f1")
_BAR_KEYS = {"AP", "mAP", "IoU"}


def class_keys(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The per-class table's columns: the headline metrics, the last AR, the operating point
    (all columns of a result that has none of those)."""

    def present(k: str) -> bool:
        return any(k in r for r in rows)

    ar = [k for r in rows[:1] for k in r if k.startswith("AR") and k[2:].isdigit()]
    keys = [k for k in _CLASS_KEYS if present(k)]
    keys += [ar[-1]] if ar else []
    keys += [k for k in _CLASS_KEYS_OP if present(k)]
    if len(keys) <= 2:
        skip = {"category_id", "name", "iou_thr", "score_thr"}
        keys = [k for r in rows[:1] for k in r if k not in skip]
    return keys


def _class_table(rows: Sequence[dict[str, Any]]) -> str:
    keys = class_keys(rows)
    head = "<th>class</th>" + "".join(f"<th>{esc(_LABELS.get(k, k))}</th>" for k in keys)
    body = []
    for r in rows:
        cells = [f'<td class="name">{esc(r.get("name"))}</td>']
        cells += [_td(r.get(k), bar=k in _BAR_KEYS) for k in keys]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        '<div class="scroll"><table class="sortable"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


_TEXT_KEYS = {"image", "name", "kind", "category", "gt_category", "file_name", "class"}


def _rows_table(rows: Sequence[dict[str, Any]], keys: Sequence[str], sortable: bool = True) -> str:
    """A table of rows from an analysis: text columns (image keys, names, kinds) as text,
    the rest as numbers."""
    text = [
        i == 0
        or k in _TEXT_KEYS
        or any(r.get(k) is not None and _num(r.get(k)) is None for r in rows)
        for i, k in enumerate(keys)
    ]
    head = "".join(
        f'<th class="k">{esc(k)}</th>' if t else f"<th>{esc(k)}</th>"
        for k, t in zip(keys, text, strict=True)
    )
    body = []
    for r in rows:
        cells = []
        for k, t in zip(keys, text, strict=True):
            v = r.get(k)
            cells.append(f'<td class="name">{esc("" if v is None else v)}</td>' if t else _td(v))
        body.append("<tr>" + "".join(cells) + "</tr>")
    cls = ' class="sortable"' if sortable else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _tide_section(tide: dict[str, Any], fig: str | None) -> str:
    from .plots import _TIDE_NAMES, TIDE_MAIN, TIDE_SPECIAL

    d = tide.get("dAP", {}) or {}
    count = tide.get("count", {}) or {}
    vals = [abs(v) for v in d.values() if _num(v) is not None]
    digits = 3 if max(vals + [0.0]) <= 1 else 2  # dAP as a fraction or in AP points
    rows = []
    for k in TIDE_MAIN + TIDE_SPECIAL:
        if k in d:
            c = count.get(k) if isinstance(count, dict) else None
            count_td = _td(c) if isinstance(c, int) else '<td class="na">-</td>'
            rows.append(
                f"<tr><td>{esc(_TIDE_NAMES.get(k, k))} ({esc(k)})</td>{_td(d[k], digits=digits)}"
                f"{count_td}</tr>"
            )
    table = (
        "<table><thead><tr><th>error</th><th>dAP</th><th>count</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    base = tide.get("baseline")
    note = (
        f'<p class="note">Baseline AP {fmt(base, digits)}. dAP is the AP gained if that error type '
        "were fixed (TIDE, Bolya et al. 2020).</p>"
    )
    inner = f'<div class="grid2"><div>{table}{note}</div><div>{fig or ""}</div></div>'
    return f"<section><h2>Error breakdown (TIDE)</h2>{inner}</section>"


def _worst_images(rows: Sequence[dict[str, Any]], n: int = 15) -> str:
    def badness(r: dict[str, Any]) -> float:
        return float((r.get("fp") or 0) + (r.get("fn") or 0))

    worst = sorted(rows, key=lambda r: -badness(r))[:n]
    if not worst:
        return ""
    pref = ["image", "n_gt", "n_pred", "n_det", "tp", "fp", "fn"]
    keys = [k for k in pref if any(k in r for r in worst)]
    keys += [k for k in worst[0] if k not in keys][: max(0, 13 - len(keys))]
    return (
        f"<section><h2>Worst images</h2>{_rows_table(worst, keys)}"
        f'<p class="note">The {len(worst)} images with the most false positives plus false '
        f"negatives (of {len(rows)}).</p></section>"
    )


def _figures(
    items: Sequence[tuple[str, str, bytes]], wide: Sequence[str] = (), capped: bool = False
) -> str:
    """Figures two by two; the ``wide`` ones alone on a row (``capped``: pairs at most
    430 px high)."""
    grid = "grid2 capped" if capped else "grid2"
    out = []
    pair: list[str] = []
    for stem, caption, data in items:
        f = figure_html(data, caption)
        if stem in wide:
            out.append(f'<section class="wide">{f}</section>')
        else:
            pair.append(f)
            if len(pair) == 2:
                out.append(f'<section><div class="{grid}">{"".join(pair)}</div></section>')
                pair = []
    if pair:
        out.append(f'<section><div class="{grid}">{"".join(pair)}</div></section>')
    return "".join(out)


# --------------------------------------------------------------------------- reports


def evaluation_report(
    result: Any,
    curves: dict[str, Any] | None = None,
    *,
    inputs: dict[str, str] | None = None,
    title: str | None = None,
    figures: bool = True,
) -> str:
    """The report of one evaluation: a ``Result`` (with ``extra`` confusion / tide /
    per_image sections when present) and its ``curves`` dict (``None``: no curve figures)."""
    extra = getattr(result, "extra", None) or {}
    inputs = inputs or {}
    if title is None:
        kind = "Instance segmentation" if result.params.get("iou_type") == "segm" else "Detection"
        title = f"{kind} evaluation report"
    subtitle = " vs ".join(esc(v) for v in inputs.values()) if inputs else ""
    parts = [_header(title, subtitle), _cards(result.summary, result.params)]
    warnings = list(getattr(result, "warnings", []) or [])
    if warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in warnings)
        parts.append(f'<section class="warn"><h2>Warnings</h2><ul>{items}</ul></section>')
    figs: list[tuple[str, str, bytes]] = []
    if figures:
        from . import plots

        for stem, caption, fig in plots.figures(result, curves):
            figs.append((stem, caption, plots.svg(fig)))
    by_stem = {s: (c, d) for s, c, d in figs}
    main_figs = [f for f in figs if f[0] in ("pr_curve", "confidence")]
    if main_figs:
        parts.append(_figures(main_figs, capped=True))
    if result.per_class:
        parts.append(
            "<section><h2>Per class</h2>"
            + _class_table(result.per_class)
            + '<p class="note">Click a column header to sort. Undefined values (no ground '
            "truth in range) are shown as -.</p></section>"
        )
    order = ("ap_per_class", "confusion", "pr_per_class")
    rest = sorted((f for f in figs if f[0] in order), key=lambda f: order.index(f[0]))
    if rest:
        # AP bars beside the confusion matrix when both are small; otherwise one per row
        pair = len(result.per_class) <= 12 and "confusion" in by_stem
        wide = ("pr_per_class",) if pair else ("pr_per_class", "ap_per_class", "confusion")
        parts.append(_figures(rest, wide=wide))
    tide = extra.get("tide")
    if isinstance(tide, dict) and tide.get("dAP"):
        t = by_stem.get("tide")
        parts.append(_tide_section(tide, figure_html(t[1], t[0]) if t else None))
    per_image = extra.get("per_image")
    if isinstance(per_image, list) and per_image and isinstance(per_image[0], dict):
        parts.append(_worst_images(per_image))
    lab = extra.get("label_errors")
    if isinstance(lab, list) and lab and isinstance(lab[0], dict):
        keys = [
            k for k in ("kind", "image", "category", "score", "gt_category", "iou") if k in lab[0]
        ]
        parts.append(
            f"<section><h2>Label-error candidates</h2>{_rows_table(lab[:15], keys)}"
            f'<p class="note">The {min(15, len(lab))} most confident of {len(lab)}: a '
            "confident prediction with the wrong class on a ground truth, or on nothing.</p>"
            "</section>"
        )
    cal = by_stem.get("calibration")
    if cal:
        parts.append(f'<section><div class="grid2">{figure_html(cal[1], cal[0])}</div></section>')
    left = (
        "<div><h2>Inputs</h2>" + _kv(list(inputs.items())) + '<h2 style="margin-top:16px">'
        "Parameters</h2>" + _kv(list(result.params.items())) + "</div>"
    )
    right = "<div><h2>Summary</h2>" + _summary_table(result.summary) + "</div>"
    parts.append(f'<section><div class="grid2">{left}{right}</div></section>')
    return _page(title, "\n".join(parts))


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def comparison_of(result_a: Any, result_b: Any, key: str = "AP") -> dict[str, Any]:
    """A ``compare``-shaped dict (``metrics``, ``per_class``; no CIs) from two Results, for
    callers without the compare verb's analysis."""

    def entry(a: Any, b: Any) -> dict[str, Any]:
        fa, fb = _num(a), _num(b)
        return {"a": a, "b": b, "delta": fb - fa if fa is not None and fb is not None else None}

    metrics = {
        k: entry(result_a.summary.get(k), result_b.summary.get(k))
        for k in result_a.summary
        if k in result_b.summary
    }
    by_b = {str(r.get("name")): r for r in result_b.per_class}
    per_class = [
        {
            "name": r.get("name"),
            "key": key,
            **entry(r.get(key), by_b.get(str(r.get("name")), {}).get(key)),
        }
        for r in result_a.per_class
    ]
    return {"metrics": metrics, "per_class": per_class, "params": {}, "warnings": []}


def compare_report(
    comparison: Any,
    *,
    curves_a: dict[str, Any] | None = None,
    curves_b: dict[str, Any] | None = None,
    label_a: str = "A",
    label_b: str = "B",
    inputs: dict[str, str] | None = None,
    title: str = "Comparison report",
) -> str:
    """The page of ``iou-eval compare``: summary with deltas (and bootstrap CIs when the
    comparison has them), overlaid PR curves of A and B (when both curves are given),
    per-class delta bars and a sortable per-class table.

    ``comparison``: the compare verb's ``Comparison`` or its JSON dict (``metrics``:
    key -> ``{a, b, delta, ci_low, ci_high, significant}``; ``per_class``: rows with
    ``name, key, a, b, delta, ci_low, ci_high, significant``), or :func:`comparison_of` two
    Results. ``curves_a`` / ``curves_b``: :func:`iou_cli.analysis.curves.for_result` of each run, or
    the ``curves`` section of saved ``--curves`` reports.
    """
    from . import plots

    inputs = inputs or {}
    metrics = _field(comparison, "metrics") or {}
    per_class = list(_field(comparison, "per_class") or [])
    key = str(per_class[0].get("key") or "AP") if per_class else "AP"
    has_ci = any(_num((m or {}).get("ci_low")) is not None for m in metrics.values())
    subtitle = f"{esc(label_a)} (A) vs {esc(label_b)} (B)"
    parts = [_header(title, subtitle)]
    warnings = list(_field(comparison, "warnings") or [])
    if warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in warnings)
        parts.append(f'<section class="warn"><h2>Warnings</h2><ul>{items}</ul></section>')
    cards = []
    for k in [k for k in ("AP", "mAP", "AP50", "AP75", "f1") if k in metrics][:4]:
        m = metrics[k]
        d = _num(m.get("delta"))
        sign = "" if d is None else ("pos" if d > 0 else "neg" if d < 0 else "")
        cards.append(
            f'<div class="card{" main" if k in ("AP", "mAP") else ""}"><div class="k">{esc(k)}</div>'
            f'<div class="v {sign}">{"-" if d is None else f"{d:+.3f}"}</div>'
            f'<div class="n">{fmt(m.get("a"))} \u2192 {fmt(m.get("b"))}</div></div>'
        )
    if cards:
        parts.append(f'<section class="bare"><div class="cards">{"".join(cards)}</div></section>')
    figs: list[str] = []
    if curves_a and curves_b and curves_a.get("precision") and curves_b.get("precision"):
        fig = plots.pr_compare(curves_a, curves_b, label_a, label_b)
        figs.append(figure_html(plots.svg(fig), "Class-mean precision-recall, A and B overlaid"))
    if any(r.get("delta") is not None for r in per_class):
        fig = plots.delta_bars(per_class, key, label_a, label_b)
        figs.append(figure_html(plots.svg(fig), f"{key} per class: B minus A"))
    if figs:
        parts.append(f'<section><div class="grid2 capped">{"".join(figs)}</div></section>')
    # summary table
    ci_head = "<th>CI low</th><th>CI high</th><th>significant</th>" if has_ci else ""

    def ci_cells(m: dict[str, Any], k: str = "") -> str:
        if not has_ci:
            return ""
        sig = m.get("significant")
        return (
            f"{_td(m.get('ci_low'), signed=True, digits=4, colour=False)}"
            f"{_td(m.get('ci_high'), signed=True, digits=4, colour=False)}"
            f"<td>{'-' if sig is None else ('yes' if sig else 'no')}</td>"
        )

    rows = [
        f"<tr><td>{esc(k)}</td>{_td(m.get('a'), digits=4)}{_td(m.get('b'), digits=4)}"
        f"{_td(m.get('delta'), signed=True, digits=4, key=k)}{ci_cells(m, k)}</tr>"
        for k, m in metrics.items()
    ]
    parts.append(
        f"<section><h2>Summary</h2><table><thead><tr><th>metric</th><th>A</th><th>B</th>"
        f"<th>delta (B - A)</th>{ci_head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</section>"
    )
    if per_class:
        body = [
            f'<tr><td class="name">{esc(r.get("name"))}</td>{_td(r.get("a"), bar=True)}'
            f"{_td(r.get('b'), bar=True)}{_td(r.get('delta'), signed=True)}{ci_cells(r)}</tr>"
            for r in per_class
        ]
        parts.append(
            f'<section><h2>Per class ({esc(key)})</h2><div class="scroll"><table class="sortable">'
            f"<thead><tr><th>class</th><th>A</th><th>B</th><th>delta</th>{ci_head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>"
            '<p class="note">Click a column header to sort.</p></section>'
        )
    params = _field(comparison, "params") or {}
    kv = list(inputs.items()) + [(k, v) for k, v in params.items() if not k.startswith("params_")]
    if kv:
        parts.append(f"<section><h2>Inputs and parameters</h2>{_kv(kv)}</section>")
    return _page(title, "\n".join(parts))
