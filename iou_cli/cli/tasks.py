"""The ``segment`` and ``labels`` verbs: semantic segmentation (label-map PNGs) and
multi-label sets (CSV). ``tasks/segment.py`` and ``tasks/labels.py`` do the work; these
commands only map options and print through ``output.emit``."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from .output import clock, emit, finish, resolve_output, shown
from .params import (
    P_INPUTS,
    P_PROTOCOL,
    DebugOpt,
    FailOverOpt,
    FailUnderOpt,
    OutputOpt,
    PerClassOpt,
    QuietOpt,
    VerboseOpt,
)
from .stdio import PROG, ProgressBar

SEGMENT_EXAMPLES = """Examples:
  iou-eval segment pred/ gt/ --num-classes 19 --ignore-index 255
  iou-eval segment pred/ gt/ --names classes.txt --per-class -o markdown
  iou-eval segment pred/ gt/ --names classes.txt --fail-under mIoU=0.6
"""

LABELS_EXAMPLES = """Examples:
  iou-eval labels preds.csv gt.csv --per-class
  iou-eval labels preds.csv gt.csv --average micro -o json
  iou-eval labels preds.csv gt.csv --fail-under IoU=0.7
"""


def segment_cmd(
    pred_dir: Annotated[
        str, typer.Argument(help="Folder of predicted label-map PNGs (or one PNG).")
    ],
    gt_dir: Annotated[
        str, typer.Argument(help="Folder of ground-truth label-map PNGs (or one PNG).")
    ],
    num_classes: Annotated[
        int | None,
        typer.Option(
            "--num-classes",
            help="Number of classes K (labels 0..K-1); default: the number of --names.",
            rich_help_panel=P_INPUTS,
        ),
    ] = None,
    ignore_index: Annotated[
        int | None,
        typer.Option(
            "--ignore-index",
            help="Label of unscored pixels, e.g. 255 (>= K).",
            rich_help_panel=P_INPUTS,
        ),
    ] = None,
    names: Annotated[
        str | None,
        typer.Option(
            "--names",
            help="Class names, one per line (line i = class i-1).",
            rich_help_panel=P_INPUTS,
        ),
    ] = None,
    unknown: Annotated[
        str,
        typer.Option(
            "--unknown",
            metavar="error|skip",
            help="Images without a counterpart: error, or skip them.",
            rich_help_panel=P_INPUTS,
        ),
    ] = "error",
    output: OutputOpt = None,
    per_class: PerClassOpt = False,
    fail_under: FailUnderOpt = None,
    fail_over: FailOverOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Semantic segmentation: per-class IoU, mIoU, fwIoU, mAcc, aAcc of label-map PNGs."""
    started = clock()
    from ..gates import parse_gates, resolve
    from ..tasks.segment import SUMMARY_KEYS, evaluate_segment

    out = resolve_output(output)
    gates = resolve(parse_gates(fail_under, fail_over), SUMMARY_KEYS)
    progress = None if quiet or not sys.stderr.isatty() else ProgressBar()
    try:
        result = evaluate_segment(
            pred_dir,
            gt_dir,
            num_classes=num_classes,
            ignore_index=ignore_index,
            names=names,
            unknown=unknown,
            progress=progress,
        )
    finally:
        if progress is not None:
            progress.close()
    finish(result, pred_dir, gt_dir, "segment", started, verbose)
    status = emit(
        result,
        output=out,
        per_class=per_class,
        gates=gates,
        quiet=quiet,
        title=f"{PROG} segment: {shown(pred_dir)} vs {shown(gt_dir)}",
    )
    raise typer.Exit(status)


def labels_cmd(
    predictions: Annotated[str, typer.Argument(help="Predicted label sets (CSV).")],
    ground_truth: Annotated[str, typer.Argument(help="True label sets (CSV).")],
    average: Annotated[
        str,
        typer.Option(
            "--average",
            metavar="macro|micro|weighted|samples",
            help="The average reported as IoU (all four are in the summary).",
            rich_help_panel=P_PROTOCOL,
        ),
    ] = "macro",
    id_column: Annotated[
        str | None,
        typer.Option(
            "--id-column", help="Sample id column (default: the first).", rich_help_panel=P_INPUTS
        ),
    ] = None,
    separator: Annotated[
        str,
        typer.Option(
            "--separator", help="Separator inside a label-list column.", rich_help_panel=P_INPUTS
        ),
    ] = ";",
    unknown: Annotated[
        str,
        typer.Option(
            "--unknown",
            metavar="error|skip",
            help="Samples without a counterpart: error, or skip them.",
            rich_help_panel=P_INPUTS,
        ),
    ] = "error",
    output: OutputOpt = None,
    per_class: PerClassOpt = False,
    fail_under: FailUnderOpt = None,
    fail_over: FailOverOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Multi-label classification: per-class IoU (Jaccard) and its averages from two CSV files."""
    started = clock()
    from ..gates import parse_gates, resolve
    from ..tasks.labels import SUMMARY_KEYS, evaluate_labels

    out = resolve_output(output)
    gates = resolve(parse_gates(fail_under, fail_over), SUMMARY_KEYS)
    result = evaluate_labels(
        predictions,
        ground_truth,
        average=average,
        id_column=id_column,
        separator=separator,
        unknown=unknown,
    )
    finish(result, predictions, ground_truth, "labels", started, verbose)
    status = emit(
        result,
        output=out,
        per_class=per_class,
        gates=gates,
        quiet=quiet,
        title=f"{PROG} labels: {shown(predictions)} vs {shown(ground_truth)}",
    )
    raise typer.Exit(status)
