"""``--curves``, ``--plots DIR`` and ``--report FILE.html``: checked before the work, written
after it (curves: ``analysis/curves.py``; figures: ``report/plots.py``; pages: ``report/html.py``)."""

from __future__ import annotations

import os
from typing import Any

from ..errors import UsageError


def check_visuals(plots: str | None, report: str | None, inputs: list[str]) -> None:
    """Fail before the work: targets that cannot be written, matplotlib missing."""
    if plots is None and report is None:
        return
    import importlib.util

    from ..outguard import is_stdout
    from ..report.outputs import check_target

    if importlib.util.find_spec("matplotlib") is None:
        opt = "--plots" if plots is not None else "--report"
        raise UsageError(f"{opt} needs matplotlib: pip install 'iou-eval[plots]'")
    if report is not None and not is_stdout(report):
        check_target(report, inputs)
    if plots is not None:
        check_target(plots, inputs, folder=True)


def write_visuals(
    result: Any,
    *,
    curves: bool,
    plots: str | None,
    report: str | None,
    inputs: list[str],
    named: dict[str, str],
) -> None:
    """Compute the curves once; put them in the JSON, the figures and the page as asked."""
    if not (curves or plots or report):
        return
    from ..analysis.curves import for_result
    from ..text import term

    cv = for_result(result)
    if curves and cv is not None:
        result.extra["curves"] = cv
    if plots is not None:
        from ..report.plots import write_plots

        written = write_plots(result, cv, plots, inputs)
        result.info.append(f"wrote {len(written)} figure files to {term(plots)}")
    if report is not None:
        from ..report.html import evaluation_report
        from ..report.outputs import write_atomic

        write_atomic(
            report, evaluation_report(result, cv, inputs=named), inputs, read_paths(result)
        )
        result.info.append(f"wrote the report {term(report)}")


def read_paths(result: Any) -> list[str]:
    """Every file the run read (the loaders' ``read_paths``): outputs never go over them."""
    ev = getattr(result, "evaluation", None)
    return list(getattr(getattr(ev, "dataset", None), "read_paths", None) or [])


def write_compare_report(
    comparison: Any, report: str, inputs: list[str], read: list[str] | None = None
) -> None:
    """``compare --report FILE.html``: the deltas (and CIs), per-class delta bars, and A's
    and B's PR curves overlaid when both sides have curves. ``comparison.sources`` holds A
    and B: their Results (predictions mode) or loaded ``-o json`` reports (reports mode:
    curves when they were saved with ``--curves``); ``check_visuals(None, report, inputs)``
    goes before the work."""
    from ..analysis.curves import curves_of
    from ..report.html import compare_report
    from ..report.outputs import write_atomic
    from ..text import term

    a, b = getattr(comparison, "sources", None) or (None, None)
    page = compare_report(
        comparison,
        curves_a=None if a is None else curves_of(a),
        curves_b=None if b is None else curves_of(b),
        label_a=os.path.basename(inputs[0]),
        label_b=os.path.basename(inputs[1]),
        inputs=dict(zip(("A", "B", "ground truth"), inputs, strict=False)),
    )
    write_atomic(report, page, read if read is not None else inputs)
    comparison.info.append(f"wrote the report {term(report)}")
