"""Evaluation in parts: ``--jobs``, ``--partial`` / ``--shard`` (options of the default
verb) and the ``merge`` verb (partial files -> the report ``iou-eval PRED GT`` prints for
their union). The library is ``iou_cli/state/``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..errors import UsageError
from .output import add_meta, emit, resolve_output, title_of
from .params import (
    P_OUTPUTS,
    CurvesOpt,
    DebugOpt,
    FailOverOpt,
    FailUnderOpt,
    OutputOpt,
    PerClassOpt,
    PlotsOpt,
    QuietOpt,
    ReportOpt,
    VerboseOpt,
)
from .stdio import PROG, stderr_line
from .visuals import check_visuals, write_visuals

JobsOpt = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        metavar="N",
        help="Worker processes matching the images (0 = all cores). The numbers are those "
        "of one process, bit for bit.",
    ),
]
PartialOpt = Annotated[
    str | None,
    typer.Option(
        "--partial",
        metavar="OUT",
        help="Write the match records (a partial file) to OUT instead of a report; "
        "iou-eval merge OUT... reports their union.",
        rich_help_panel=P_OUTPUTS,
    ),
]
ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        metavar="K/N",
        help="With --partial: only every N-th image from the K-th (ground-truth order).",
        rich_help_panel=P_OUTPUTS,
    ),
]

MERGE_EXAMPLES = """Examples:
  for k in 1 2 3 4; do iou-eval preds.json gt.json --shard $k/4 --partial part$k.iou & done; wait
  iou-eval merge part*.iou --per-class --fail-under AP=0.4
"""

# options of the default verb that need the whole run (they cannot go into a partial file)
_NOT_WITH_PARTIAL = (
    "--matches",
    "--fail-under",
    "--fail-over",
    "--curves",
    "--plots",
    "--report",
    "--tide",
    "--confusion",
    "--per-image",
    "--calibration",
    "--per-class",
    "-o",
)


def check_partial(partial: str | None, shard: str | None, given: dict[str, Any]) -> Any:
    """``--partial``/``--shard`` usage: the parsed shard, or a usage error naming the
    option that cannot go with them."""
    if partial is None:
        if shard is not None:
            raise UsageError("--shard K/N goes with --partial OUT (a shard's records go to a file)")
        return None
    for flag in _NOT_WITH_PARTIAL:
        if given.get(flag):
            raise UsageError(
                f"{flag} reads the whole evaluation, which a partial file is not: give it to "
                f"iou-eval merge PARTS... (or leave out --partial)"
            )
    if shard is None:
        return None
    from ..state.jobs import parse_shard

    return parse_shard(shard)


def write_partial(
    state: Any, partial: str, inputs: list[str], names: tuple[str, str], quiet: bool
) -> None:
    """Write the partial file (never over an input) and say what it holds on stderr."""
    from ..report.outputs import write_atomic
    from ..state.codec import to_bytes

    state.header["inputs"] = {"predictions": names[0], "ground_truth": names[1]}
    data = to_bytes(state)
    write_atomic(partial, data, inputs)
    if not quiet:
        shard = state.header.get("shard")
        stderr_line(
            f"{PROG}: wrote {partial}: {len(state):,} predictions of {state.images.shape[0]:,} "
            f"images{f' (shard {shard})' if shard else ''}, {len(data):,} bytes"
        )


def merge_cmd(
    parts: Annotated[
        list[str],
        typer.Argument(metavar="PARTS...", help="Partial files (iou-eval PRED GT --partial OUT)."),
    ],
    output: OutputOpt = None,
    per_class: PerClassOpt = False,
    fail_under: FailUnderOpt = None,
    fail_over: FailOverOpt = None,
    curves: CurvesOpt = False,
    plots: PlotsOpt = None,
    report: ReportOpt = None,
    allow_overlap: Annotated[
        bool,
        typer.Option(
            "--allow-overlap",
            help="Keep the records of an image found in two parts (default: refused).",
        ),
    ] = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Merge partial files into the report iou-eval PRED GT prints for their union."""
    from .. import gates as gating
    from ..api import summary_keys
    from ..state.files import merge_result
    from .output import clock

    started = clock()
    out = resolve_output(output)
    gate_list = gating.parse_gates(fail_under, fail_over)
    check_visuals(plots, report, parts)
    result = merge_result(parts, allow_overlap=allow_overlap)
    p = result.params
    protocol = str(p["protocol"])
    opts: dict[str, Any] = {"iou_type": p.get("iou_type", "bbox")}
    if protocol == "coco":
        opts["max_dets"] = p.get("max_dets")
    op_iou = float(p.get("op_iou_thr", p.get("iou_thr", 0.5)))
    gate_list = gating.resolve(
        gate_list, summary_keys(protocol, **opts), protocol=protocol, iou_thr=op_iou
    )
    names = result.meta.get("inputs") or {"predictions": parts[0], "ground_truth": "?"}
    seconds = clock() - started
    if verbose:
        result.info.append(f"time: total {seconds:.3f} s")
    add_meta(result, names["predictions"], names["ground_truth"], protocol, seconds)
    write_visuals(
        result,
        curves=curves,
        plots=plots,
        report=report,
        inputs=list(parts),
        named={"partial files": parts[0]},
    )
    title = title_of(names["predictions"], names["ground_truth"])
    status = emit(
        result, output=out, per_class=per_class, gates=gate_list, quiet=quiet, title=title
    )
    raise typer.Exit(status)
