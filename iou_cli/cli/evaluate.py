"""The ``evaluate`` verb (the default: ``iou-eval PRED GT``)."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer

from ..errors import UsageError
from .merge import JobsOpt, PartialOpt, ShardOpt, check_partial, write_partial
from .output import add_meta, emit, print_table, report_output, stdout_report, title_of
from .params import (
    P_OUTPUTS,
    AgnosticOpt,
    AllPointOpt,
    AngleUnitOpt,
    CalibrationOpt,
    ClassesOpt,
    ConfusionOpt,
    CurvesOpt,
    DebugOpt,
    FailOverOpt,
    FailUnderOpt,
    GtFormatOpt,
    GtNamesOpt,
    HonorIgnoreOpt,
    ImageIdsOpt,
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
    PerImageOpt,
    PerKeypointOpt,
    PlotsOpt,
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
    TideBgOpt,
    TideOpt,
    TidePosOpt,
    TpIouOpt,
    UnknownOpt,
    VerboseOpt,
    VocOriginOpt,
    analysis_args,
    parse_float_list,
    parse_image_size,
    parse_int_list,
    parse_subset,
    tp_iou_value,
)
from .stdio import ProgressBar, write_stdout
from .visuals import check_visuals, read_paths, write_visuals

# parameters of the evaluate verb that are not options of the run (inputs, outputs, gates,
# the old name of --tp-iou): everything else reaches RunOptions by its field name
CLI_ONLY = frozenset(
    {
        "predictions",
        "ground_truth",
        "output",
        "per_class",
        "tp_iou",
        "fail_under",
        "fail_over",
        "curves",
        "plots",
        "report",
        "quiet",
        "verbose",
        "debug",
        "partial",
        "shard",
    }
)

EVALUATE_HELP = (
    "Evaluate PREDICTIONS against GROUND_TRUTH (the default verb: iou-eval PRED GT).\n\n"
    "Each is a COCO JSON file (also .json.gz, or - for stdin), a Pascal VOC folder or a YOLO "
    "folder; predictions come first.\n\n"
    "Other verbs: iou, segment, labels, panoptic, compare, merge (iou-eval VERB --help). "
    "Shell completion: iou-eval --install-completion. Version: iou-eval --version."
)

EVALUATE_EXAMPLES = """Examples:
  iou-eval preds.json gt.json        # table on a terminal, CSV when piped
  iou-eval preds.json gt.json -o json -q > report.json
  iou-eval preds.json gt.json --fail-under AP=0.5 --fail-over fp=700
  iou-eval runs/detect/predict/labels data/labels --protocol voc --per-class
  iou-eval preds.json gt.json --matches matches.csv --score-thr 0.5
  gunzip -c preds.json.gz | iou-eval - gt.json -o csv
"""


def evaluate_cmd(
    predictions: Annotated[
        str,
        typer.Argument(
            metavar="PREDICTIONS",
            help="Predictions: COCO JSON (.json, .json.gz, - = stdin), VOC or YOLO folder.",
        ),
    ],
    ground_truth: Annotated[
        str,
        typer.Argument(metavar="GROUND_TRUTH", help="Ground truth: COCO JSON, VOC or YOLO folder."),
    ],
    output: OutputOpt = None,
    per_class: PerClassOpt = False,
    iou_type: IouTypeOpt = "bbox",
    protocol: ProtocolOpt = "coco",
    tp_iou: TpIouOpt = None,
    iou_thr: IouThrOldOpt = None,
    score_thr: ScoreThrOpt = None,
    max_dets: MaxDetsOpt = None,
    iou_thrs: IouThrsOpt = None,
    matches: Annotated[
        str | None,
        typer.Option(
            "--matches",
            metavar="PATH",
            help="Write per-prediction outcomes as CSV. - = stdout, which then carries only "
            "that CSV (no report; -o is refused).",
            rich_help_panel=P_OUTPUTS,
        ),
    ] = None,
    fail_under: FailUnderOpt = None,
    fail_over: FailOverOpt = None,
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
    classes: ClassesOpt = None,
    image_ids: ImageIdsOpt = None,
    class_agnostic: AgnosticOpt = False,
    tide: TideOpt = False,
    tide_pos_thr: TidePosOpt = 0.5,
    tide_bg_thr: TideBgOpt = 0.1,
    confusion: ConfusionOpt = False,
    per_image: PerImageOpt = False,
    calibration: CalibrationOpt = False,
    per_keypoint: PerKeypointOpt = False,
    sigmas: SigmasOpt = None,
    split: SplitOpt = None,
    image_map: ImageMapOpt = None,
    voc_origin: VocOriginOpt = 0,
    curves: CurvesOpt = False,
    plots: PlotsOpt = None,
    report: ReportOpt = None,
    jobs: JobsOpt = 1,
    partial: PartialOpt = None,
    shard: ShardOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    debug: DebugOpt = False,
) -> None:
    given = dict(locals())  # the parameters, by name: first, before any other local
    import time

    from .. import gates as gating
    from ..api import evaluate
    from ..loaders.keypoints import read_sigmas
    from ..options import RunOptions

    started = time.perf_counter()
    if predictions == "-" and ground_truth == "-":
        raise UsageError("only one of PREDICTIONS and GROUND_TRUTH can be - (stdin)")
    op_iou = tp_iou_value(tp_iou, iou_thr)
    whole: dict[str, Any] = {"--matches": matches, "--fail-under": fail_under}
    whole["--fail-over"] = fail_over
    whole.update({"--curves": curves, "--plots": plots, "--report": report, "-o": output})
    whole.update({"--tide": tide, "--confusion": confusion, "--per-image": per_image})
    whole.update({"--calibration": calibration, "--per-class": per_class})
    shard_kn = check_partial(partial, shard, whole)
    out = stdout_report(report_output(output, matches), output, report)
    if curves and out != "json" and plots is None and report is None:
        raise UsageError(
            f"--curves adds a 'curves' section to -o json; -o {out or 'csv'} has no place for "
            "it (use -o json, or --plots / --report for figures)"
        )
    gate_list = gating.parse_gates(fail_under, fail_over)
    analysis_args(
        out,
        tide=tide,
        confusion=confusion,
        per_image=per_image,
        calibration=calibration,
        per_keypoint=per_keypoint,
    )
    given.update(
        sigmas=None if sigmas is None else read_sigmas(sigmas)[0],
        iou_thr=op_iou,
        max_dets=parse_int_list(max_dets, "--max-dets") if max_dets is not None else None,
        iou_thrs=parse_float_list(iou_thrs, "--iou-thrs") if iou_thrs is not None else None,
        image_size=parse_image_size(image_size),
        matches=matches is not None,
        **parse_subset(classes, image_ids),
    )
    # the options by field name; option errors, gate-key typos and gates pointing the wrong
    # way fail before the work (the keys come from the protocol)
    options = RunOptions.build(given, ignore=CLI_ONLY, checked=True).for_inputs()
    options.validate()
    gate_list = gating.resolve(gate_list, options.summary_keys(), protocol=protocol, iou_thr=op_iou)
    inputs = [
        p
        for p in (predictions, ground_truth, names, gt_names, pred_names, images, image_map, sigmas)
        if p and (p != sigmas or os.path.isfile(p))
    ]
    if image_ids is not None and os.path.exists(image_ids):
        inputs.append(image_ids)  # an --image-ids file is an input too: never written over
    # every output at once, before the work: none over an input, none into an input folder,
    # no two at one path, at most one on stdout (outguard); again at write time against all
    # the loaders read
    from ..outguard import check_outputs, is_stdout

    check_outputs(
        [("--matches", matches), ("--report", report), ("--plots", plots), ("--partial", partial)],
        inputs,
    )
    if matches is not None and is_stdout(matches):  # /dev/stdout: after the report
        matches = "-"
    check_visuals(plots, report, inputs)
    progress = None if quiet or not sys.stderr.isatty() else ProgressBar()
    options.load.progress = progress
    try:
        if partial is not None:
            from ..api import partial as partial_state

            result = partial_state(predictions, ground_truth, shard=shard_kn, options=options)
        else:
            result = evaluate(predictions, ground_truth, options)
    finally:
        if progress is not None:
            progress.close()
    if partial is not None:
        write_partial(result, partial, inputs, (predictions, ground_truth), quiet)
        raise typer.Exit(0)
    done = time.perf_counter()
    if verbose:
        result.info.append(f"time: total {done - started:.3f} s")
    add_meta(result, predictions, ground_truth, protocol, done - started)
    write_visuals(
        result,
        curves=curves,
        plots=plots,
        report=report,
        inputs=inputs,
        named={"predictions": predictions, "ground truth": ground_truth},
    )
    matches_text = None
    if matches is not None and result.matches is not None:
        from ..report.result import matches_csv

        matches_text = matches_csv(result.matches)
        if matches != "-":
            # written before the report: a failed write exits 2 without a report on stdout
            from ..report.outputs import write_atomic

            # never over a file the run read, including those the loaders found themselves
            write_atomic(matches, matches_text, inputs, read_paths(result))
    title = title_of(predictions, ground_truth)
    status = emit(
        result, output=out, per_class=per_class, gates=gate_list, quiet=quiet, title=title
    )
    if matches == "-" and matches_text is not None:
        if sys.stderr.isatty() and not quiet:  # the report goes to the terminal, not stdout
            print_table(result, per_class, title, stderr=True)
        write_stdout(matches_text)
    raise typer.Exit(status)
