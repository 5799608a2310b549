"""The ``iou`` verb: two boxes, or the pairwise IoU matrix of two box CSV files."""

from __future__ import annotations

from typing import Annotated

import typer

from .output import resolve_output
from .params import DebugOpt, OutputOpt
from .stdio import StdoutFailed, console, write_stdout

IOU_EXAMPLES = """Examples:
  iou-eval iou 50,100,150,150 105,120,185,160
  iou-eval iou 50,100,100,50 105,120,80,40 --box-format xywh
  iou-eval iou boxes_a.csv boxes_b.csv -o csv
  iou-eval iou 100,100,40,20,0.5 110,100,40,20,0 --box-format xywhr
"""


def iou_cmd(
    box_a: Annotated[str, typer.Argument(help="A box 'x1,y1,x2,y2' or a CSV file of boxes.")],
    box_b: Annotated[str, typer.Argument(help="A box or a CSV file of boxes (the ground truth).")],
    box_format: Annotated[
        str,
        typer.Option(
            "--box-format",
            metavar="xyxy|xywh|cxcywh|xywhr|corners",
            help="Box format of A and B (rotated: cx,cy,w,h,angle in radians, or 4 corners).",
        ),
    ] = "xyxy",
    crowd: Annotated[
        bool, typer.Option("--crowd", help="Treat B as crowd regions: |A ∩ B| / |A|.")
    ] = False,
    output: OutputOpt = None,
    debug: DebugOpt = False,
) -> None:
    """IoU of two boxes, or the pairwise IoU matrix of two box CSV files."""
    from ..tasks.pairwise import box_iou_matrix

    out = None if output is None else resolve_output(output)
    m = box_iou_matrix(box_a, box_b, box_format=box_format, crowd=crowd)
    if out is None:  # two boxes: the bare number; files: as every other verb
        out = "value" if m.single else resolve_output(None)
    if out == "table":
        from ..report.result import iou_matrix_table

        try:
            console().print(iou_matrix_table(m))
        except OSError as exc:
            raise StdoutFailed(exc) from None
        write_stdout("")
    else:
        from ..report.result import iou_matrix_text

        write_stdout(iou_matrix_text(m, out))
