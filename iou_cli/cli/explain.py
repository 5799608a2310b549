"""The ``explain`` verb: why two protocols' numbers differ, one convention at a time. The
analysis is ``analysis/explain.py``; the reporters ``report/explain.py``."""

from __future__ import annotations

from typing import Annotated

import typer

from .output import resolve_output
from .params import (
    AngleUnitOpt,
    DebugOpt,
    GtFormatOpt,
    GtNamesOpt,
    ImageMapOpt,
    ImageSizeOpt,
    ImagesOpt,
    IouTypeOpt,
    NamesOpt,
    OutputOpt,
    PredFormatOpt,
    PredIdsOpt,
    PredNamesOpt,
    QuietOpt,
    SplitOpt,
    UnknownOpt,
    VocOriginOpt,
    parse_image_size,
)
from .stdio import PROG, StdoutFailed, console, stderr_line, warn, write_stdout

EXPLAIN_EXAMPLES = """Examples:
  iou-eval explain preds.json gt.json --to ultralytics   # why yolo val differs from COCO AP
  iou-eval explain preds.json gt.json --to voc -o markdown
"""


def explain_cmd(
    predictions: Annotated[str, typer.Argument(metavar="PREDICTIONS")],
    ground_truth: Annotated[str, typer.Argument(metavar="GROUND_TRUTH")],
    source: Annotated[
        str,
        typer.Option("--from", metavar="coco", help="The protocol to start from."),
    ] = "coco",
    target: Annotated[
        str,
        typer.Option(
            "--to",
            metavar="ultralytics|voc|voc07",
            help="The protocol to reach, one convention at a time.",
        ),
    ] = "ultralytics",
    output: OutputOpt = None,
    pred_format: PredFormatOpt = None,
    gt_format: GtFormatOpt = None,
    names: NamesOpt = None,
    gt_names: GtNamesOpt = None,
    pred_names: PredNamesOpt = None,
    pred_ids: PredIdsOpt = "auto",
    images: ImagesOpt = None,
    image_size: ImageSizeOpt = None,
    unknown: UnknownOpt = "error",
    split: SplitOpt = None,
    image_map: ImageMapOpt = None,
    voc_origin: VocOriginOpt = 0,
    iou_type: IouTypeOpt = "bbox",
    angle_unit: AngleUnitOpt = "rad",
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Why two protocols' numbers differ: switch one convention at a time (crowds, maxDets,
    matching rule, float32, tie order, AP integral; rotated boxes: polygon IoU -> probiou)
    and show each step's effect; the steps add up to the difference between the two
    protocols' own results."""
    from ..analysis.explain import explain_files
    from ..text import term

    out = resolve_output(output)
    ex, info, warnings = explain_files(
        predictions,
        ground_truth,
        source=source,
        target=target,
        pred_format=pred_format,
        gt_format=gt_format,
        names=names,
        gt_names=gt_names,
        pred_names=pred_names,
        pred_ids=pred_ids,
        images=images,
        image_size=parse_image_size(image_size),
        unknown=unknown,
        split=split,
        image_map=image_map,
        voc_origin=voc_origin,
        iou_type=iou_type,
        angle_unit=angle_unit,
    )
    if not quiet:
        for line in info:
            stderr_line(f"{PROG}: {term(line)}")
    for w in warnings:
        warn(term(w))
    from ..report import explain as rx

    if out == "json":
        write_stdout(rx.to_json(ex))
    elif out == "csv":
        write_stdout(rx.to_csv(ex))
    elif out == "markdown":
        write_stdout(rx.to_markdown(ex))
    else:
        try:
            console().print(rx.render_table(ex))
        except OSError as exc:
            raise StdoutFailed(exc) from None
        write_stdout("")
    raise typer.Exit(0)
