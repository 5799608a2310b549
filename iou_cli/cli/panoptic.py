"""The ``panoptic`` verb: COCO panoptic PQ, SQ and RQ as panopticapi computes them.
``tasks/panoptic.py`` does the work, ``report/panoptic.py`` the HTML page; this command only
maps options and prints through ``output.emit``."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from .output import clock, emit, finish, resolve_output, shown
from .params import (
    P_INPUTS,
    P_OTHER,
    P_OUTPUTS,
    DebugOpt,
    FailOverOpt,
    FailUnderOpt,
    OutputOpt,
    PerClassOpt,
    QuietOpt,
    ReportOpt,
    VerboseOpt,
)
from .stdio import PROG, ProgressBar

PANOPTIC_EXAMPLES = """Examples:
  iou-eval panoptic panoptic_pred.json panoptic_val2017.json
  iou-eval panoptic pred.json gt.json --pred-folder pred_pngs/ --per-class -o markdown
  iou-eval panoptic pred.json gt.json --jobs 4 --fail-under PQ=0.4 --report pq.html
"""


def panoptic_cmd(
    predictions: Annotated[
        str, typer.Argument(help="Predicted COCO panoptic JSON (PNGs in the folder named like it).")
    ],
    ground_truth: Annotated[
        str,
        typer.Argument(help="Ground-truth COCO panoptic JSON (PNGs in the folder named like it)."),
    ],
    pred_folder: Annotated[
        str | None,
        typer.Option(
            "--pred-folder",
            metavar="DIR",
            help="Folder of the predicted PNGs (default: the JSON path without .json).",
            rich_help_panel=P_INPUTS,
        ),
    ] = None,
    gt_folder: Annotated[
        str | None,
        typer.Option(
            "--gt-folder",
            metavar="DIR",
            help="Folder of the ground-truth PNGs (default: the JSON path without .json).",
            rich_help_panel=P_INPUTS,
        ),
    ] = None,
    unknown: Annotated[
        str,
        typer.Option(
            "--unknown",
            metavar="error|skip",
            help="Images with a record on one side only: error, or skip them.",
            rich_help_panel=P_INPUTS,
        ),
    ] = "error",
    per_image: Annotated[
        bool,
        typer.Option(
            "--per-image",
            help="Add per_image rows (PQ, tp, fp, fn; worst first) to -o json.",
            rich_help_panel=P_OUTPUTS,
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", metavar="N", help="Worker processes (same numbers).", rich_help_panel=P_OTHER
        ),
    ] = 1,
    output: OutputOpt = None,
    per_class: PerClassOpt = False,
    fail_under: FailUnderOpt = None,
    fail_over: FailOverOpt = None,
    report: ReportOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Panoptic segmentation: PQ, SQ, RQ (All, Things, Stuff) of COCO panoptic PNGs, as panopticapi."""
    started = clock()
    from ..gates import parse_gates, resolve
    from ..tasks.panoptic import SUMMARY_KEYS, evaluate_panoptic

    out = resolve_output(output)
    gates = resolve(parse_gates(fail_under, fail_over), SUMMARY_KEYS)
    from ..loaders.panoptic import default_folder

    # the PNG folders count as inputs even when found beside the JSON: nothing is written there
    folders = (
        pred_folder or default_folder(predictions),
        gt_folder or default_folder(ground_truth),
    )
    inputs = [p for p in (predictions, ground_truth, *folders) if p and p != "-"]
    if report is not None:
        from ..report.outputs import check_target

        check_target(report, inputs)
    progress = None if quiet or not sys.stderr.isatty() else ProgressBar()
    from ..heap import reuse_freed_memory

    reuse_freed_memory()  # per-image buffers: no page faults for each image (see heap.py)
    try:
        result = evaluate_panoptic(
            predictions,
            ground_truth,
            pred_folder=pred_folder,
            gt_folder=gt_folder,
            unknown=unknown,
            per_image=per_image or report is not None,
            jobs=jobs,
            progress=progress,
        )
    finally:
        if progress is not None:
            progress.close()
    if report is not None:
        from ..report.outputs import write_atomic
        from ..report.panoptic import panoptic_report
        from ..text import term

        named = {"predictions": predictions, "ground truth": ground_truth}
        rows = result.extra.get("per_image")
        if not per_image:
            result.extra.pop("per_image", None)
        page = panoptic_report(result, inputs=named, rows=rows)
        write_atomic(report, page, inputs)
        result.info.append(f"wrote the report {term(report)}")
    finish(result, predictions, ground_truth, "panoptic", started, verbose)
    status = emit(
        result,
        output=out,
        per_class=per_class,
        gates=gates,
        quiet=quiet,
        title=f"{PROG} panoptic: {shown(predictions)} vs {shown(ground_truth)}",
    )
    raise typer.Exit(status)
