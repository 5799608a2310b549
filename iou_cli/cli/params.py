"""Shared command-line parameters (one declaration each) and their parsers."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..errors import UsageError

P_INPUTS = "Inputs"
P_PROTOCOL = "Protocol"
P_OUTPUTS = "Outputs"
P_GATES = "Gates (exit code 1 when one fails)"
P_OTHER = "Other"


def parse_image_size(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    parts = text.replace("x", ",").split(",")
    try:
        w, h = (float(p) for p in parts)
        if not (w > 0 and h > 0) or w == float("inf") or h == float("inf"):
            raise ValueError
    except ValueError:
        raise UsageError(f"--image-size: expected W,H such as 640,480, got {text!r}") from None
    from ..limits import check_ranges

    check_ranges(image_size=(w, h))
    return (w, h)


def parse_int_list(text: str, option: str) -> list[int]:
    try:
        return [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise UsageError(f"{option}: expected integers such as 1,10,100, got {text!r}") from None


def parse_float_list(text: str, option: str) -> list[float]:
    try:
        return [float(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise UsageError(f"{option}: expected numbers such as 0.5,0.75, got {text!r}") from None


def tp_iou_value(tp_iou: float | None, iou_thr: float | None) -> float:
    """``--tp-iou``, or its old name ``--iou-thr`` (the contract's); 0.5 by default."""
    if tp_iou is not None and iou_thr is not None and tp_iou != iou_thr:
        raise UsageError(
            f"--tp-iou {tp_iou:g} and --iou-thr {iou_thr:g} are the same setting (--iou-thr is "
            "its old name): give one"
        )
    value = tp_iou if tp_iou is not None else iou_thr
    return 0.5 if value is None else value


# --------------------------------------------------------------------------- visuals (issue 13)
# --curves (JSON curves section), --plots DIR (PNG + SVG files), --report FILE.html (one
# self-contained page). analysis/curves.py computes, report/plots.py draws (matplotlib,
# imported only there and only when asked), report/html.py writes the page; cli/visuals.py
# maps the options.

CurvesOpt = Annotated[
    bool,
    typer.Option("--curves", help="Add PR curves and P/R/F1-vs-confidence curves to -o json."),
]
PlotsOpt = Annotated[
    str | None,
    typer.Option("--plots", metavar="DIR", help="Write figures as PNG and SVG into DIR."),
]
ReportOpt = Annotated[
    str | None,
    typer.Option(
        "--report", metavar="FILE.html", help="Write a self-contained HTML report (offline)."
    ),
]


# --------------------------------------------------------------------------- evaluate

OutputOpt = Annotated[
    str | None,
    typer.Option(
        "-o",
        "--output",
        metavar="table|csv|json|markdown",
        help="Report format (default: table on a terminal, csv otherwise).",
        rich_help_panel=P_OUTPUTS,
    ),
]
PerClassOpt = Annotated[
    bool, typer.Option("--per-class", help="Add per-category rows.", rich_help_panel=P_OUTPUTS)
]
FailUnderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-under",
        metavar="KEY=VALUE",
        help="Exit 1 when a higher-is-better summary KEY (AP, mAP, f1, ...) is below VALUE "
        "or undefined; repeatable; the report is still printed.",
        rich_help_panel=P_GATES,
    ),
]
FailOverOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-over",
        metavar="KEY=VALUE",
        help="Exit 1 when a lower-is-better summary KEY (fp, fn) is above VALUE; repeatable.",
        rich_help_panel=P_GATES,
    ),
]
QuietOpt = Annotated[
    bool,
    typer.Option("-q", "--quiet", help="No progress or info lines.", rich_help_panel=P_OTHER),
]
VerboseOpt = Annotated[
    bool,
    typer.Option(
        "-v", "--verbose", help="Also print the run's timing on stderr.", rich_help_panel=P_OTHER
    ),
]
DebugOpt = Annotated[
    bool,
    typer.Option("--debug", help="Show a traceback on errors.", rich_help_panel=P_OTHER),
]


# ---- issue 11: subsets and analyses (options; parsed by analysis_args below)
ClassesOpt = Annotated[
    str | None,
    typer.Option(
        "--classes", metavar="NAME[,NAME...]", help="Evaluate these classes (names or ids)."
    ),
]
ImageIdsOpt = Annotated[
    str | None,
    typer.Option(
        "--image-ids", metavar="FILE|ID,...", help="Evaluate these images (ids or file stems)."
    ),
]
AgnosticOpt = Annotated[
    bool, typer.Option("--class-agnostic", help="Match all classes as one (COCO useCats=0).")
]
TideOpt = Annotated[bool, typer.Option("--tide", help="TIDE error breakdown (dAP per error type).")]
TidePosOpt = Annotated[
    float, typer.Option("--tide-pos-thr", help="TIDE (and calibration) positive IoU threshold.")
]
TideBgOpt = Annotated[float, typer.Option("--tide-bg-thr", help="TIDE background IoU threshold.")]
ConfusionOpt = Annotated[
    bool, typer.Option("--confusion", help="Confusion matrix at the operating point.")
]
PerImageOpt = Annotated[
    bool, typer.Option("--per-image", help="Per-image view and label-error candidates.")
]
CalibrationOpt = Annotated[
    bool, typer.Option("--calibration", help="ECE / MCE of the scores (10 bins).")
]
PerKeypointOpt = Annotated[
    bool,
    typer.Option(
        "--per-keypoint", help="Which keypoints fail, over the true positives (keypoints)."
    ),
]
SigmasOpt = Annotated[
    str | None,
    typer.Option(
        "--sigmas",
        metavar="V,V,...|FILE",
        help="OKS sigmas, one per keypoint (default: the files' own; COCO's 17 for K=17; "
        "--protocol ultralytics: 1/K otherwise, as yolo val).",
        rich_help_panel=P_PROTOCOL,
    ),
]


def analysis_args(
    out: str | None,
    *,
    tide: bool,
    confusion: bool,
    per_image: bool,
    calibration: bool,
    per_keypoint: bool = False,
) -> None:
    """CSV is one stream, one table: with -o csv at most one analysis (its table)."""
    flags = [
        f
        for f, on in (
            ("--tide", tide),
            ("--confusion", confusion),
            ("--per-image", per_image),
            ("--calibration", calibration),
            ("--per-keypoint", per_keypoint),
        )
        if on
    ]
    if out == "csv" and len(flags) > 1:
        raise UsageError(
            f"-o csv prints one table: choose one of {', '.join(flags)}, or use -o json"
        )


# options shared by the evaluate and compare verbs (one declaration each)
IouTypeOpt = Annotated[
    str,
    typer.Option(
        "--iou-type",
        metavar="bbox|segm|obb|keypoints",
        help="Boxes, instance masks, rotated boxes (DOTA txt, YOLO-OBB, COCO 'obb') or keypoints (OKS).",
        rich_help_panel=P_PROTOCOL,
    ),
]
ProtocolOpt = Annotated[
    str,
    typer.Option(
        "--protocol",
        metavar="coco|voc|voc07|lvis|dota|ultralytics",
        help="COCO 101-point AP over IoU .50:.95; VOC all-point; VOC2007 11-point; LVIS "
        "(federated, lvis-api); DOTA devkit task 1 (rotated boxes); Ultralytics (yolo val's "
        "P, R, mAP50, mAP50-95).",
        rich_help_panel=P_PROTOCOL,
    ),
]
TpIouOpt = Annotated[
    float | None,
    typer.Option(
        "--tp-iou",
        metavar="T",
        help="IoU a match needs to count as a true positive at the operating point "
        "(TP/FP/FN, precision, recall, F1), and the VOC AP threshold (default 0.5). "
        "Was --iou-thr, which still works.",
        rich_help_panel=P_PROTOCOL,
    ),
]
IouThrOldOpt = Annotated[
    float | None, typer.Option("--iou-thr", hidden=True, help="Old name of --tp-iou.")
]
ScoreThrOpt = Annotated[
    float | None,
    typer.Option(
        "--score-thr",
        metavar="S",
        help="Confidence of the operating point, in [0, 1] (default: the one maximising F1).",
        rich_help_panel=P_PROTOCOL,
    ),
]
MaxDetsOpt = Annotated[
    str | None,
    typer.Option(
        "--max-dets",
        metavar="N,N,...",
        help="COCO maxDets (default 1,10,100).",
        rich_help_panel=P_PROTOCOL,
    ),
]
IouThrsOpt = Annotated[
    str | None,
    typer.Option(
        "--iou-thrs",
        metavar="T,T,...",
        help="COCO AP thresholds (default .50:.05:.95); not the operating point's --tp-iou.",
        rich_help_panel=P_PROTOCOL,
    ),
]
HonorIgnoreOpt = Annotated[
    bool,
    typer.Option(
        "--honor-ignore",
        help="Also treat a ground truth's 'ignore' flag as ignored.",
        rich_help_panel=P_PROTOCOL,
    ),
]
PlusOneOpt = Annotated[
    bool,
    typer.Option(
        "--plus-one",
        help="VOC devkit pixel convention: width = x2 - x1 + 1.",
        rich_help_panel=P_PROTOCOL,
    ),
]
AllPointOpt = Annotated[
    bool,
    typer.Option(
        "--all-point",
        help="DOTA: area under the precision envelope instead of VOC2007's 11 points.",
        rich_help_panel=P_PROTOCOL,
    ),
]
AngleUnitOpt = Annotated[
    str,
    typer.Option(
        "--angle-unit",
        metavar="rad|deg",
        help="Angles of COCO 'obb' fields [cx, cy, w, h, angle] (hotcoco: radians).",
        rich_help_panel=P_INPUTS,
    ),
]
PredFormatOpt = Annotated[
    str | None,
    typer.Option(
        "--pred-format",
        metavar="coco|voc|yolo|yolo-darknet|yolo-obb|dota",
        help="Force the predictions' format (YOLO column order: detected when not forced).",
        rich_help_panel=P_INPUTS,
    ),
]
GtFormatOpt = Annotated[
    str | None,
    typer.Option(
        "--gt-format",
        metavar="coco|voc|yolo|yolo-obb|dota",
        help="Force the ground truth's format.",
        rich_help_panel=P_INPUTS,
    ),
]
NamesOpt = Annotated[
    str | None,
    typer.Option("--names", help="Class-names file (YOLO).", rich_help_panel=P_INPUTS),
]
GtNamesOpt = Annotated[
    str | None,
    typer.Option("--gt-names", help="Class names of the ground truth.", rich_help_panel=P_INPUTS),
]
PredNamesOpt = Annotated[
    str | None,
    typer.Option("--pred-names", help="Class names of the predictions.", rich_help_panel=P_INPUTS),
]
PredIdsOpt = Annotated[
    str,
    typer.Option(
        "--pred-ids",
        metavar="auto|index|index+1",
        help="A results list's category_id against YOLO classes: the class index (Ultralytics "
        "before Dec 2024), index + 1 (Ultralytics 8.3.4x+ on non-COCO data), or auto (the "
        "reading every id fits; by evidence when both fit, said on stderr).",
        rich_help_panel=P_INPUTS,
    ),
]
ImagesOpt = Annotated[
    str | None,
    typer.Option("--images", help="Image folder (sizes for YOLO).", rich_help_panel=P_INPUTS),
]
ImageSizeOpt = Annotated[
    str | None,
    typer.Option(
        "--image-size", metavar="W,H", help="Size of every image.", rich_help_panel=P_INPUTS
    ),
]
UnknownOpt = Annotated[
    str,
    typer.Option(
        "--unknown",
        metavar="error|skip|skip-images|skip-classes",
        help="Predictions for images/classes the ground truth does not know: error, or drop them.",
        rich_help_panel=P_INPUTS,
    ),
]
SplitOpt = Annotated[
    str | None,
    typer.Option(
        "--split",
        help="Split of a data.yaml / obj.data / VOC root (default val).",
        rich_help_panel=P_INPUTS,
    ),
]
ImageMapOpt = Annotated[
    str | None,
    typer.Option(
        "--image-map",
        metavar="COCO.json",
        help="Image id <-> file_name for results lists.",
        rich_help_panel=P_INPUTS,
    ),
]
VocOriginOpt = Annotated[
    int,
    typer.Option(
        "--voc-origin",
        help="VOC corners: 0 continuous (default), 1 devkit 1-based.",
        rich_help_panel=P_INPUTS,
    ),
]


def parse_subset(classes: str | None, image_ids: str | None) -> dict[str, Any]:
    """``--classes NAME,...`` and ``--image-ids FILE|ID,...`` as lists (None: all)."""
    if classes is None and image_ids is None:
        return {"classes": None, "image_ids": None}
    from ..analysis.subset import parse_list, read_image_ids

    if classes is not None and not parse_list(classes):
        raise UsageError(f"--classes: expected NAME[,NAME...], got {classes!r}")
    return {
        "classes": parse_list(classes) if classes is not None else None,
        "image_ids": read_image_ids(image_ids) if image_ids is not None else None,
    }
