"""The ``compare`` verb: two models on one ground truth (paired bootstrap CIs,
``--fail-if-worse``) or two saved ``-o json`` reports. The analysis is
``analysis/compare.py``; the reporters ``report/compare.py``."""

from __future__ import annotations

from typing import Annotated

import typer

from ..outguard import check_outputs
from .merge import JobsOpt
from .output import resolve_output, stdout_report, write_report
from .params import (
    AllPointOpt,
    AngleUnitOpt,
    DebugOpt,
    GtFormatOpt,
    GtNamesOpt,
    HonorIgnoreOpt,
    ImageMapOpt,
    ImageSizeOpt,
    ImagesOpt,
    IouThrOldOpt,
    IouThrsOpt,
    IouTypeOpt,
    MaxDetsOpt,
    NamesOpt,
    OutputOpt,
    PerClassOpt,
    PlusOneOpt,
    PredFormatOpt,
    PredIdsOpt,
    PredNamesOpt,
    ProtocolOpt,
    QuietOpt,
    ReportOpt,
    ScoreThrOpt,
    SigmasOpt,
    SplitOpt,
    TpIouOpt,
    UnknownOpt,
    VocOriginOpt,
    parse_float_list,
    parse_image_size,
    parse_int_list,
    tp_iou_value,
)
from .stdio import PROG, stderr_line, warn
from .visuals import check_visuals, write_compare_report

# parameters of the compare verb that are not options of the run
CLI_ONLY = frozenset(
    {
        "inputs",
        "bootstrap",
        "seed",
        "confidence",
        "fail_if_worse",
        "significant_only",
        "output",
        "per_class",
        "tp_iou",
        "report",
        "quiet",
        "debug",
    }
)

COMPARE_EXAMPLES = """Examples:
  iou-eval compare a.json b.json gt.json         # A vs B, bootstrap CIs
  iou-eval compare a.json b.json gt.json --fail-if-worse AP=0.01
  iou-eval compare a.json b.json gt.json --jobs 0  # every core: same numbers
  iou-eval compare report_a.json report_b.json   # two saved -o json reports
"""


def compare_cmd(
    inputs: Annotated[
        list[str],
        typer.Argument(
            metavar="PRED_A PRED_B GROUND_TRUTH | REPORT_A.json REPORT_B.json",
            help="Two prediction sets and their ground truth, or two saved -o json reports.",
        ),
    ],
    bootstrap: Annotated[
        int,
        typer.Option("--bootstrap", metavar="N", help="Bootstrap samples for the CIs (0 = off)."),
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap samples.")] = 0,
    confidence: Annotated[
        float, typer.Option("--confidence", help="Confidence level of the CIs.")
    ] = 0.95,
    fail_if_worse: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if-worse",
            metavar="KEY=MARGIN",
            help="Exit 1 when B is worse than A on KEY by more than MARGIN (repeatable).",
        ),
    ] = None,
    significant_only: Annotated[
        bool,
        typer.Option(
            "--significant-only", help="--fail-if-worse fails only when the CI excludes 0."
        ),
    ] = False,
    output: OutputOpt = None,
    per_class: PerClassOpt = False,
    iou_type: IouTypeOpt = "bbox",
    protocol: ProtocolOpt = "coco",
    tp_iou: TpIouOpt = None,
    iou_thr: IouThrOldOpt = None,
    score_thr: ScoreThrOpt = None,
    max_dets: MaxDetsOpt = None,
    iou_thrs: IouThrsOpt = None,
    honor_ignore: HonorIgnoreOpt = False,
    plus_one: PlusOneOpt = False,
    all_point: AllPointOpt = False,
    angle_unit: AngleUnitOpt = "rad",
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
    sigmas: SigmasOpt = None,
    jobs: JobsOpt = 1,
    report: ReportOpt = None,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Compare B with A: deltas, paired bootstrap CIs over images, a regression gate."""
    given = dict(locals())  # the parameters, by name: first, before any other local
    from ..analysis import compare as cmp
    from ..loaders.keypoints import read_sigmas
    from ..options import RunOptions
    from ..text import term

    out = stdout_report(resolve_output(output), output, report)
    gates = cmp.parse_gates(fail_if_worse)
    given.update(
        iou_thr=tp_iou_value(tp_iou, iou_thr),
        max_dets=parse_int_list(max_dets, "--max-dets") if max_dets is not None else None,
        iou_thrs=parse_float_list(iou_thrs, "--iou-thrs") if iou_thrs is not None else None,
        image_size=parse_image_size(image_size),
        sigmas=None if sigmas is None else read_sigmas(sigmas)[0],
    )
    # every input the command names, files and folders: the report goes over none of them
    # nor into their folders (outguard; the files the loaders find are checked at write time)
    read = [*inputs, *(p for p in (names, gt_names, pred_names, images, image_map) if p)]
    check_outputs([("--report", report)], read)
    check_visuals(None, report, read)  # before the work
    from ..loaders.panoptic import looks_panoptic

    if len(inputs) == 3 and looks_panoptic(inputs[2]):  # COCO panoptic: PQ/SQ/RQ deltas
        from ..heap import reuse_freed_memory
        from ..tasks.panoptic_compare import compare_panoptic

        reuse_freed_memory()  # two PNG pairs per image: no page faults for each (heap.py)
        comparison = compare_panoptic(
            inputs[0],
            inputs[1],
            inputs[2],
            unknown=unknown,
            bootstrap=bootstrap,
            seed=seed,
            confidence=confidence,
        )
    else:
        comparison = cmp.compare(
            inputs,
            RunOptions.build(given, ignore=CLI_ONLY, checked=True),
            gates=gates,
            bootstrap=bootstrap,
            seed=seed,
            confidence=confidence,
        )
    results = cmp.check_gates(comparison, gates, significant_only=significant_only)
    if report is not None:
        write_compare_report(comparison, report, list(inputs), read)
    if not quiet:
        for line in comparison.info:
            stderr_line(f"{PROG}: {term(line)}")
    for w in comparison.warnings:
        warn(term(w))
    if out is not None:  # None: --report - owns stdout
        write_report(comparison, out, per_class=per_class)
    status = 0
    for g in results:
        if g["failed"]:
            stderr_line(f"{PROG}: fail-if-worse: {term(g['reason'])}")
            status = 1
    raise typer.Exit(status)
