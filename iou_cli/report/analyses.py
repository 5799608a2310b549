"""The analyses' sections as terminal renderables, markdown and CSV (JSON is the sections).

CSV is one stream, one table: with ``-o csv`` an analysis flag selects that analysis' table
(``csv_table``); several analyses with ``-o csv`` are a usage error (the CLI asks for one, or
``-o json``). Every name from the inputs goes through :mod:`iou_cli.text`.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import Any

from ..analysis.tide import MAIN, SPECIAL
from ..text import csv_cell, md_cell, rich_text
from .result import csv_value

# the sections in report order, each with the CLI flag that asks for it
SECTIONS = (
    ("tide", "--tide"),
    ("confusion", "--confusion"),
    ("per_image", "--per-image"),
    ("calibration", "--calibration"),
)
TOP_N = 10  # terminal/markdown: top confusions, worst images, label-error candidates


def _short(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _csv(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(body)
    return buf.getvalue()


# ----------------------------------------------------------------------------------- CSV


def csv_table(name: str, section: Any) -> str:
    """The one CSV table of analysis ``name`` (a key of :data:`SECTIONS`)."""
    if name == "tide":
        return _csv(
            ["error", "dAP", "count", "baseline", "pos_thr", "bg_thr"],
            [
                [
                    e,
                    csv_value(section["dAP"][e]),
                    csv_value(section["count"][e]),
                    csv_value(section["baseline"]),
                    csv_value(section["pos_thr"]),
                    csv_value(section["bg_thr"]),
                ]
                for e in MAIN + SPECIAL
            ],
        )
    if name == "confusion":
        labels = [csv_cell(x) for x in section["labels"]]
        return _csv(
            [""] + labels,
            [[labels[i]] + [csv_value(v) for v in row] for i, row in enumerate(section["matrix"])],
        )
    if name == "per_image":
        rows = section
        keys = list(rows[0]) if rows else ["image", "n_gt", "n_pred", "tp", "fp", "fn"]
        return _csv(
            keys,
            [
                [csv_cell(str(r[k])) if k == "image" else csv_value(r[k]) for k in keys]
                for r in rows
            ],
        )
    if name == "calibration":
        ov = section["overall"]
        body = [["all", csv_value(ov["n"]), csv_value(ov["ece"]), csv_value(ov["mce"])]]
        body += [
            [csv_cell(r["name"]), csv_value(r["n"]), csv_value(r["ece"]), csv_value(r["mce"])]
            for r in section["per_class"]
        ]
        return _csv(["name", "n", "ece", "mce"], body)
    raise KeyError(name)


# ------------------------------------------------------------------------------ markdown


def _md_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines) + "\n"


def to_markdown(extra: dict[str, Any]) -> str:
    """Markdown for every analysis section present (appended after the summary)."""
    out: list[str] = []
    tide = extra.get("tide")
    if tide is not None:
        out.append(
            f"\n**TIDE** (AP at IoU {_short(tide['pos_thr'], 2)}: {_short(tide['baseline'])}; "
            f"background IoU {_short(tide['bg_thr'], 2)})\n\n"
        )
        out.append(
            _md_table(
                ["error", "dAP", "count"],
                [[e, _short(tide["dAP"][e]), str(tide["count"][e])] for e in MAIN + SPECIAL],
            )
        )
    conf = extra.get("confusion")
    if conf is not None:
        from ..analysis.confusion import top_confusions

        out.append("\n**Top confusions** (ground truth → predicted)\n\n")
        out.append(
            _md_table(
                ["ground truth", "predicted", "count"],
                [[md_cell(a), md_cell(b), str(n)] for a, b, n in top_confusions(conf, TOP_N)],
            )
        )
    rows = extra.get("per_image")
    if rows is not None:
        out.append(f"\n**Worst images** (top {min(TOP_N, len(rows))} of {len(rows)})\n\n")
        keys = list(rows[0]) if rows else []
        out.append(
            _md_table(
                keys,
                [
                    [md_cell(r[k]) if k == "image" else str(r[k]) for k in keys]
                    for r in rows[:TOP_N]
                ],
            )
        )
    lab = extra.get("label_errors")
    if lab:
        out.append(f"\n**Label-error candidates** (top {min(TOP_N, len(lab))} of {len(lab)})\n\n")
        out.append(
            _md_table(
                ["kind", "image", "class", "score", "ground truth", "IoU"],
                [
                    [
                        x["kind"],
                        md_cell(x["image"]),
                        md_cell(x["category"]),
                        _short(x["score"]),
                        md_cell(x["gt_category"]) if x["gt_category"] is not None else "-",
                        _short(x["iou"]),
                    ]
                    for x in lab[:TOP_N]
                ],
            )
        )
    cal = extra.get("calibration")
    if cal is not None:
        ov = cal["overall"]
        out.append(
            f"\n**Calibration** (IoU {_short(cal['iou_thr'], 2)}, {cal['n_bins']} bins): "
            f"ECE {_short(ov['ece'])}, MCE {_short(ov['mce'])}\n\n"
        )
        out.append(
            _md_table(
                ["class", "n", "ECE", "MCE"],
                [
                    [md_cell(r["name"]), str(r["n"]), _short(r["ece"]), _short(r["mce"])]
                    for r in cal["per_class"]
                ],
            )
        )
    return "".join(out)


# ------------------------------------------------------------------------------ terminal


def renderables(extra: dict[str, Any]) -> list[Any]:
    """rich renderables for every analysis section present (names as rich Text, never
    markup)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = []

    def table(title: str, header: Sequence[str]) -> Any:
        # the title as its own line (a table title would wrap at the table's width)
        parts.append(Text("\n" + title, style="bold"))
        t = Table(box=box.SIMPLE_HEAD, header_style="bold", expand=False)
        for i, h in enumerate(header):
            t.add_column(h, justify="left" if i == 0 else "right", no_wrap=i != 0)
        return t

    tide = extra.get("tide")
    if tide is not None:
        t = table(
            f"TIDE at IoU {_short(tide['pos_thr'], 2)} (AP {_short(tide['baseline'])})",
            ["error", "dAP", "count"],
        )
        for e in MAIN + SPECIAL:
            t.add_row(e, _short(tide["dAP"][e]), str(tide["count"][e]))
        parts.append(t)
    conf = extra.get("confusion")
    if conf is not None:
        from ..analysis.confusion import top_confusions

        t = table(
            "Top confusions, ground truth -> predicted (full matrix: -o csv or -o json)",
            ["ground truth", "predicted", "n"],
        )
        for a, b, n in top_confusions(conf, TOP_N):
            t.add_row(rich_text(a), rich_text(b), str(n))
        parts.append(t)
    rows = extra.get("per_image")
    if rows is not None:
        keys = list(rows[0]) if rows else ["image"]
        t = table(f"Worst images (top {min(TOP_N, len(rows))} of {len(rows)})", keys)
        for r in rows[:TOP_N]:
            t.add_row(*[rich_text(r[k]) if k == "image" else Text(str(r[k])) for k in keys])
        parts.append(t)
    lab = extra.get("label_errors")
    if lab:
        t = table(
            f"Label-error candidates (top {min(TOP_N, len(lab))} of {len(lab)})",
            ["kind", "image", "class", "score", "gt class", "IoU"],
        )
        for x in lab[:TOP_N]:
            t.add_row(
                x["kind"],
                rich_text(x["image"]),
                rich_text(x["category"]),
                _short(x["score"]),
                rich_text(x["gt_category"]) if x["gt_category"] is not None else "-",
                _short(x["iou"]),
            )
        parts.append(t)
    cal = extra.get("calibration")
    if cal is not None:
        ov = cal["overall"]
        t = table(
            f"Calibration at IoU {_short(cal['iou_thr'], 2)}: ECE {_short(ov['ece'])}, "
            f"MCE {_short(ov['mce'])}",
            ["class", "n", "ECE", "MCE"],
        )
        for r in cal["per_class"]:
            t.add_row(rich_text(r["name"]), str(r["n"]), _short(r["ece"]), _short(r["mce"]))
        parts.append(t)
    return parts
