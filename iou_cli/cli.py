"""The shell: command line -> library calls -> stdout/stderr/exit code. The only module that exits.

Exit codes: 0 evaluated, 1 a ``--fail-under`` gate failed (report still printed), 2 usage
error or input that cannot be evaluated (also a stdout that cannot be written: closed, disk
full), 130 interrupted, 141 the reader of stdout went away (``| head -1``; quiet, as a shell
reports any tool that SIGPIPE ends). Errors are one line on stderr:
``iou-eval: error: <file>[:<where>]: <what>`` (``--debug`` shows the traceback instead).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from typing import Annotated, Any

import typer

from . import __version__
from .errors import InputError, IouEvalError, UsageError

PROG = "iou-eval"
VERBS = {"evaluate", "iou"}

app = typer.Typer(
    name=PROG,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, pwsh)
    no_args_is_help=True,
    rich_markup_mode="rich",  # help panels; help texts hold no [markup]
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=(
        "Score detection and segmentation predictions against ground truth by IoU.\n\n"
        "iou-eval PREDICTIONS GROUND_TRUTH [OPTIONS] evaluates (the default verb)."
    ),
)

# help panels (`iou-eval --help` groups options under these titles)
P_INPUTS = "Inputs"
P_PROTOCOL = "Protocol"
P_OUTPUTS = "Outputs"
P_GATES = "Gates (exit code 1 when one fails)"
P_OTHER = "Other"


def _version(value: bool) -> None:
    if value:
        write_stdout(f"{PROG} {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_version
        ),
    ] = False,
) -> None:
    """Score detection and segmentation predictions against ground truth by IoU."""


# --------------------------------------------------------------------------- shared helpers


def stderr_line(text: str) -> None:
    """One line on stderr: control characters from inputs (ESC, newline) shown escaped, so a
    file or class name can neither split the line nor drive the terminal. A stderr that
    cannot be written (closed, full) loses the line; there is nowhere else to say it."""
    from .text import term

    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(term(text) + "\n")
        sys.stderr.flush()


class StdoutFailed(Exception):
    """Writing to stdout failed (closed pipe, full disk, closed descriptor).

    Not an OSError on purpose: click turns an EPIPE OSError into exit 1 (the gate's code)."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(exc.strerror or str(exc))
        self.errno = exc.errno


_PIECE = 1 << 16


def write_stdout(text: str) -> None:
    """Write ``text`` to stdout and flush, turning an OS failure into :class:`StdoutFailed`."""
    try:
        # in 64 KiB pieces, each flushed: a reader that leaves mid-way (`| head -1`) is
        # then seen as EPIPE on the next piece, never as one short write taken for done
        for start in range(0, max(len(text), 1), _PIECE):
            sys.stdout.write(text[start : start + _PIECE])
            sys.stdout.flush()
    except OSError as exc:
        raise StdoutFailed(exc) from None


def console() -> Any:
    """A rich Console on stdout: no highlighting, a usable width (``COLUMNS=0`` would make
    rich print nothing; anything under 40 columns is taken as 40)."""
    from rich.console import Console

    from .limits import console_width

    return Console(highlight=False, width=console_width(os.environ.get("COLUMNS")))


def warn(text: str) -> None:
    stderr_line(f"{PROG}: warning: {text}")


def resolve_output(output: str | None) -> str:
    from .report import OUTPUTS

    if output is None:
        return "table" if sys.stdout.isatty() else "csv"
    if output not in OUTPUTS:
        raise UsageError(f"-o/--output: expected one of {', '.join(OUTPUTS)}, got {output!r}")
    return output


def _stdout_is_unicode() -> bool:
    import codecs

    try:
        return codecs.lookup(getattr(sys.stdout, "encoding", None) or "utf-8").name.startswith(
            "utf"
        )
    except LookupError:
        return False


def print_result(result: Any, output: str, per_class: bool, title: Any = PROG) -> None:
    from . import report

    extra = getattr(result, "extra", None) or {}
    if output == "json":
        write_stdout(report.to_json(result, ascii_only=not _stdout_is_unicode()))
    elif output == "csv":
        chosen = _analysis_csv(extra)
        write_stdout(chosen if chosen is not None else report.to_csv(result, per_class=per_class))
    elif output == "markdown":
        text = report.to_markdown(result, per_class=per_class)
        if extra:
            from .analysis.render import to_markdown

            text += to_markdown(extra)
        write_stdout(text)
    else:
        try:  # a closed pipe or a full disk: one line and a defined exit (main())
            _print_table(result, per_class, title)
        except OSError as exc:
            raise StdoutFailed(exc) from None
        write_stdout("")


def _print_table(result: Any, per_class: bool, title: Any, *, stderr: bool = False) -> None:
    """The rich table (and the analyses' tables) at the terminal's width; piped, at the
    table's full width."""
    from rich.console import Console

    from . import report

    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not stream.isatty():
        width = report.full_width(result, per_class=per_class, title=title)
    if width is None:  # COLUMNS=0 would make rich print nothing (limits.console_width)
        from .limits import console_width

        width = console_width(os.environ.get("COLUMNS"))
    console = Console(highlight=False, stderr=stderr, width=width)
    console.print(
        report.render_table(result, per_class=per_class, title=title, width=console.width)
    )
    extra = getattr(result, "extra", None) or {}
    if extra:
        from .analysis.render import renderables

        for part in renderables(extra):
            console.print(part)


def _analysis_csv(extra: dict[str, Any]) -> str | None:
    """Issue 11: with -o csv, the table of the one analysis asked for (else None)."""
    if not extra:
        return None
    from .analysis.render import SECTIONS, csv_table

    for name, _flag in SECTIONS:
        if name in extra:
            return csv_table(name, extra[name])
    return None


def emit(
    result: Any,
    *,
    output: str | None,
    per_class: bool,
    gates: list[Any],
    quiet: bool = False,
    title: Any = PROG,
) -> int:
    """Print the info lines (unless quiet), warnings, the report (``output`` None: none) and
    return the gates' exit status (1 when one failed)."""
    from .gates import failures
    from .text import term

    # info and warning lines name files, images and classes from the inputs: one line each
    if not quiet:
        for line in result.info:
            stderr_line(f"{PROG}: {term(line)}")
    for w in result.warnings:
        warn(term(w))
    if output is not None:
        print_result(result, output, per_class, title=title)
    failed = failures(gates, result.summary)
    for line in failed:
        stderr_line(f"{PROG}: {line}")
    return 1 if failed else 0


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
    from .limits import check_ranges

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


# --------------------------------------------------------------------------- visuals (issue 13)
# --curves (JSON curves section), --plots DIR (PNG + SVG files), --report FILE.html (one
# self-contained page). iou_cli/curves.py computes, plots.py draws (matplotlib, imported only
# here and only when asked), report_html.py writes the page; these helpers map the options.

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


def check_visuals(plots: str | None, report: str | None, inputs: list[str]) -> None:
    """Fail before the work: targets that cannot be written, matplotlib missing."""
    if plots is None and report is None:
        return
    import importlib.util

    from .outputs import check_target

    if importlib.util.find_spec("matplotlib") is None:
        opt = "--plots" if plots is not None else "--report"
        raise UsageError(f"{opt} needs matplotlib: pip install 'iou-eval[plots]'")
    if report is not None:
        check_target(report, inputs)
    if plots is not None:
        if os.path.isdir(plots):
            check_target(os.path.join(plots, "pr_curve.png"), inputs)
        else:
            check_target(plots, inputs)


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
    from .curves import for_result
    from .text import term

    cv = for_result(result)
    if curves and cv is not None:
        result.extra["curves"] = cv
    if plots is not None:
        from .plots import write_plots

        written = write_plots(result, cv, plots, inputs)
        result.info.append(f"wrote {len(written)} figure files to {term(plots)}")
    if report is not None:
        from .outputs import write_atomic
        from .report_html import evaluation_report

        write_atomic(report, evaluation_report(result, cv, inputs=named), inputs, _read(result))
        result.info.append(f"wrote the report {term(report)}")


def _read(result: Any) -> list[str]:
    """Every file the run read (the loaders' ``read_paths``): outputs never go over them."""
    ev = getattr(result, "evaluation", None)
    return list(getattr(getattr(ev, "dataset", None), "read_paths", None) or [])


def write_compare_report(comparison: Any, report: str, inputs: list[str]) -> None:
    """``compare --report FILE.html``: the deltas (and CIs), per-class delta bars, and A's
    and B's PR curves overlaid when both sides have curves. ``comparison.sources`` holds A
    and B: their Results (predictions mode) or loaded ``-o json`` reports (reports mode:
    curves when they were saved with ``--curves``); ``check_visuals(None, report, inputs)``
    goes before the work."""
    from .curves import curves_of
    from .outputs import write_atomic
    from .report_html import compare_report
    from .text import term

    a, b = getattr(comparison, "sources", None) or (None, None)
    page = compare_report(
        comparison,
        curves_a=None if a is None else curves_of(a),
        curves_b=None if b is None else curves_of(b),
        label_a=os.path.basename(inputs[0]),
        label_b=os.path.basename(inputs[1]),
        inputs=dict(zip(("A", "B", "ground truth"), inputs, strict=False)),
    )
    write_atomic(report, page, inputs)
    comparison.info.append(f"wrote the report {term(report)}")


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

EVALUATE_HELP = (
    "Evaluate PREDICTIONS against GROUND_TRUTH (the default verb: iou-eval PRED GT).\n\n"
    "Each is a COCO JSON file (also .json.gz, or - for stdin), a Pascal VOC folder or a YOLO "
    "folder; predictions come first.\n\n"
    "Other verbs: iou, segment, labels, compare (iou-eval VERB --help). "
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

IOU_EXAMPLES = """Examples:
  iou-eval iou 50,100,150,150 105,120,185,160
  iou-eval iou 50,100,100,50 105,120,80,40 --box-format xywh
  iou-eval iou boxes_a.csv boxes_b.csv -o csv
"""

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
        help="OKS sigmas, one per keypoint (default: the files' own; COCO's 17 for K=17).",
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
        metavar="bbox|segm|keypoints",
        help="Boxes, instance masks or keypoints (OKS).",
        rich_help_panel=P_PROTOCOL,
    ),
]
ProtocolOpt = Annotated[
    str,
    typer.Option(
        "--protocol",
        metavar="coco|voc|voc07|lvis",
        help="COCO 101-point AP over IoU .50:.95; VOC all-point; VOC2007 11-point; LVIS "
        "(federated, lvis-api).",
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
PredFormatOpt = Annotated[
    str | None,
    typer.Option(
        "--pred-format",
        metavar="coco|voc|yolo|yolo-darknet",
        help="Force the predictions' format (YOLO column order: detected when not forced).",
        rich_help_panel=P_INPUTS,
    ),
]
GtFormatOpt = Annotated[
    str | None,
    typer.Option(
        "--gt-format",
        metavar="coco|voc|yolo",
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


@app.command("evaluate", help=EVALUATE_HELP, epilog=EVALUATE_EXAMPLES)
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
    pred_format: PredFormatOpt = None,
    gt_format: GtFormatOpt = None,
    names: NamesOpt = None,
    gt_names: GtNamesOpt = None,
    pred_names: PredNamesOpt = None,
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
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    debug: DebugOpt = False,
) -> None:
    import time

    from . import gates as gating
    from .api import check_options, evaluate, summary_keys

    started = time.perf_counter()
    if predictions == "-" and ground_truth == "-":
        raise UsageError("only one of PREDICTIONS and GROUND_TRUTH can be - (stdin)")
    op_iou = _tp_iou(tp_iou, iou_thr)
    out = _report_output(output, matches)
    gate_list = gating.parse_gates(fail_under, fail_over)
    md = parse_int_list(max_dets, "--max-dets") if max_dets is not None else None
    thrs = parse_float_list(iou_thrs, "--iou-thrs") if iou_thrs is not None else None
    size = parse_image_size(image_size)
    analysis_args(
        out,
        tide=tide,
        confusion=confusion,
        per_image=per_image,
        calibration=calibration,
        per_keypoint=per_keypoint,
    )
    sigma_values: list[float] | None = None
    if sigmas is not None:
        from .loaders.keypoints import read_sigmas

        sigma_values = read_sigmas(sigmas)[0]
    subset_opts: dict[str, Any] = {}
    if classes is not None or image_ids is not None or class_agnostic:
        from .analysis.subset import parse_list, read_image_ids

        if classes is not None and not parse_list(classes):
            raise UsageError(f"--classes: expected NAME[,NAME...], got {classes!r}")
        subset_opts = {
            "classes": parse_list(classes) if classes is not None else None,
            "image_ids": read_image_ids(image_ids) if image_ids is not None else None,
            "class_agnostic": class_agnostic,
        }
    check_options(
        protocol=protocol,
        iou_type=iou_type,
        iou_thr=op_iou,
        score_thr=score_thr,
        max_dets=md,
        iou_thrs=thrs,
        unknown=unknown,
        formats=(pred_format, gt_format),
    )
    protocol_options: dict[str, Any] = {
        "max_dets": md,
        "iou_thrs": thrs,
        "honor_ignore": honor_ignore,
        "plus_one": plus_one,
    }
    # option errors, gate-key typos and gates pointing the wrong way fail before the work:
    # the keys come from the protocol
    keys = summary_keys(protocol, iou_type=iou_type, **protocol_options)
    gate_list = gating.resolve(gate_list, keys, protocol=protocol, iou_thr=op_iou)
    inputs = [
        p
        for p in (predictions, ground_truth, names, gt_names, pred_names, images, image_map, sigmas)
        if p and (p != sigmas or os.path.isfile(p))
    ]
    if image_ids is not None and os.path.isfile(image_ids):
        inputs.append(image_ids)  # an --image-ids file is an input too: never written over
    if matches not in (None, "-"):
        from .outputs import check_target, is_stdout

        if is_stdout(matches):  # /dev/stdout: after the report, never a second open
            matches = "-"
        else:
            check_target(matches, inputs)  # fail before the work, not after
    check_visuals(plots, report, inputs)
    progress = None if quiet or not sys.stderr.isatty() else _progress_bar()
    try:
        result = evaluate(
            predictions,
            ground_truth,
            protocol=protocol,
            iou_type=iou_type,
            iou_thr=op_iou,
            score_thr=score_thr,
            matches=matches is not None,
            pred_format=pred_format,
            gt_format=gt_format,
            names=names,
            gt_names=gt_names,
            pred_names=pred_names,
            images=images,
            image_size=size,
            unknown=unknown,
            progress=progress,
            tide=tide,
            tide_pos_thr=tide_pos_thr,
            tide_bg_thr=tide_bg_thr,
            confusion=confusion,
            per_image=per_image,
            calibration=calibration,
            per_keypoint=per_keypoint,
            sigmas=sigma_values,
            **subset_opts,
            split=split,
            image_map=image_map,
            voc_origin=voc_origin,
            **protocol_options,
        )
    finally:
        if progress is not None:
            progress.close()
    done = time.perf_counter()
    if verbose:
        result.info.append(f"time: total {done - started:.3f} s")
    _add_meta(result, predictions, ground_truth, protocol, done - started)
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
        from .report import matches_csv

        matches_text = matches_csv(result.matches)
        if matches != "-":
            # written before the report: a failed write exits 2 without a report on stdout
            from .outputs import write_atomic

            # never over a file the run read, including those the loaders found themselves
            write_atomic(matches, matches_text, inputs, _read(result))
    title = _title(predictions, ground_truth)
    status = emit(
        result, output=out, per_class=per_class, gates=gate_list, quiet=quiet, title=title
    )
    if matches == "-" and matches_text is not None:
        if sys.stderr.isatty() and not quiet:  # the report goes to the terminal, not stdout
            _print_table(result, per_class, title, stderr=True)
        write_stdout(matches_text)
    raise typer.Exit(status)


def _tp_iou(tp_iou: float | None, iou_thr: float | None) -> float:
    """``--tp-iou``, or its old name ``--iou-thr`` (the contract's); 0.5 by default."""
    if tp_iou is not None and iou_thr is not None and tp_iou != iou_thr:
        raise UsageError(
            f"--tp-iou {tp_iou:g} and --iou-thr {iou_thr:g} are the same setting (--iou-thr is "
            "its old name): give one"
        )
    value = tp_iou if tp_iou is not None else iou_thr
    return 0.5 if value is None else value


def _report_output(output: str | None, matches: str | None) -> str | None:
    """The report's format; None when ``--matches -`` owns stdout (one stream, one table)."""
    if matches == "-":
        if output is not None:
            raise UsageError(
                f"--matches - writes the matches CSV to stdout, so the -o {output} report would "
                "be mixed into it: write the matches to a file (--matches matches.csv), or drop "
                "-o to get only the matches on stdout"
            )
        return None
    return resolve_output(output)


def _title(predictions: str, ground_truth: str) -> str:
    """The table title: both file names (the reporter hands it to rich as plain text, never
    markup; see report.render_table)."""
    return f"{PROG}: {_shown(predictions)} vs {_shown(ground_truth)}"


def _shown(path: str) -> str:
    """A short name for the title: the file or folder's own name (``<stdin>`` for ``-``)."""
    if path == "-":
        return "<stdin>"
    return os.path.basename(os.path.normpath(path)) or path


def _add_meta(
    result: Any, predictions: str, ground_truth: str, protocol: str, seconds: float
) -> None:
    """JSON ``meta``: what produced this report (warnings name their first offenders)."""
    result.meta = {
        "version": __version__,
        "predictions": predictions,
        "ground_truth": ground_truth,
        "protocol": protocol,
        "seconds": round(seconds, 3),
        "warnings": list(result.warnings),
    }


class _progress_bar:
    """A rich progress bar on stderr, fed by the loaders' progress(side, done, total)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import Progress

        self._progress = Progress(console=Console(stderr=True), transient=True)
        self._tasks: dict[str, Any] = {}
        self._started = False

    def __call__(self, side: str, done: int, total: int) -> None:
        if not self._started:
            self._progress.start()
            self._started = True
        task = self._tasks.get(side)
        if task is None:
            task = self._tasks[side] = self._progress.add_task(f"reading {side}", total=total)
        self._progress.update(task, completed=done, total=total)

    def close(self) -> None:
        if self._started:
            self._progress.stop()


# --------------------------------------------------------------------------- iou


@app.command("iou", epilog=IOU_EXAMPLES)
def iou_cmd(
    box_a: Annotated[str, typer.Argument(help="A box 'x1,y1,x2,y2' or a CSV file of boxes.")],
    box_b: Annotated[str, typer.Argument(help="A box or a CSV file of boxes (the ground truth).")],
    box_format: Annotated[
        str,
        typer.Option("--box-format", metavar="xyxy|xywh|cxcywh", help="Box format of A and B."),
    ] = "xyxy",
    crowd: Annotated[
        bool, typer.Option("--crowd", help="Treat B as crowd regions: |A ∩ B| / |A|.")
    ] = False,
    output: OutputOpt = None,
    debug: DebugOpt = False,
) -> None:
    """IoU of two boxes, or the pairwise IoU matrix of two box CSV files."""
    from .pairwise import box_iou_matrix

    out = None if output is None else resolve_output(output)
    m = box_iou_matrix(box_a, box_b, box_format=box_format, crowd=crowd)
    if out is None:  # two boxes: the bare number; files: as every other verb
        out = "value" if m.single else resolve_output(None)
    if out == "table":
        from .report import iou_matrix_table

        try:
            console().print(iou_matrix_table(m))
        except OSError as exc:
            raise StdoutFailed(exc) from None
        write_stdout("")
    else:
        from .report import iou_matrix_text

        write_stdout(iou_matrix_text(m, out))


# --------------------------------------------------------------------------- entry point


ROOT_OPTIONS = ("--version", "--install-completion", "--show-completion")


def _dispatch_args(argv: list[str], command: Any = None) -> list[str]:
    """``iou-eval PRED GT ...`` means ``iou-eval evaluate PRED GT ...``.

    * ``iou-eval`` and ``iou-eval --help`` show the default verb's help (it lists the verbs);
    * a first argument that names an existing file or folder is the predictions, even when it
      is also a verb's name (``iou-eval labels gt/`` in a folder holding Ultralytics'
      ``labels/``): a note on stderr says so;
    * a first argument that is neither a path nor a verb but looks like a mistyped verb is a
      usage error that names the verb;
    * a negative box such as ``iou-eval iou -5,0,5,5 0,0,5,5`` is an argument, not an option
      (``command``: the click group, to know which options take a value).
    """
    if not argv or argv[0] in ("-h", "--help"):
        return ["evaluate", "--help"]
    first = argv[0]
    if first.startswith(ROOT_OPTIONS):
        return argv
    if first in VERBS:
        if first != "evaluate" and os.path.exists(first) and len(argv) > 1:
            from .text import term

            kind = "folder" if os.path.isdir(first) else "file"
            stderr_line(
                f"{PROG}: note: {term(first)!r} is a {kind} here, so it is read as the "
                f"predictions of the default verb, not as the '{first}' verb (to run that "
                f"verb, start iou-eval from another folder)"
            )
            return ["evaluate", *argv]
        if first == "iou" and command is not None:
            return [first, *_numbers_as_arguments(argv[1:], command.commands[first])]
        return argv
    if not first.startswith("-") and not os.path.exists(first):
        import difflib

        close = difflib.get_close_matches(first, sorted(VERBS), n=1, cutoff=0.6)
        if close and not any(c in first for c in "./\\"):
            raise UsageError(
                f"unknown verb {first!r} (did you mean '{close[0]}'?); "
                f"the verbs are {', '.join(sorted(VERBS))}"
            )
    return ["evaluate", *argv]


def _is_number_list(token: str) -> bool:
    """``-5,0,5,5`` (or ``-1e3;2;3;4``, ``-5``): numbers, so never an option name."""
    try:
        for part in token.replace(";", ",").split(","):
            float(part)
    except ValueError:
        return False
    return True


def _numbers_as_arguments(args: list[str], command: Any) -> list[str]:
    """Options first, then ``--``, then the arguments, when an argument starts with ``-``
    and is a list of numbers (click would take it for an option). Unchanged otherwise."""
    end = args.index("--") if "--" in args else len(args)
    if not any(t.startswith("-") and _is_number_list(t) for t in args[:end]):
        return args
    takes_value = {
        name
        for p in command.params
        if p.param_type_name == "option" and not p.is_flag and not p.count
        for name in p.opts
    }
    options: list[str] = []
    arguments: list[str] = []
    i = 0
    while i < end:
        token = args[i]
        if token.startswith("-") and len(token) > 1 and not _is_number_list(token):
            options.append(token)
            if token in takes_value and i + 1 < end:
                i += 1
                options.append(args[i])
        else:
            arguments.append(token)
        i += 1
    return [*options, "--", *arguments, *args[end + 1 :]]


EXIT_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `cat big | head -1`'s cat


class _ClosedStdout:
    """Stands for a stdout the shell closed (``>&-``): the first write fails with EBADF, as
    it does for every Unix tool, so the run ends with one line and exit 2."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


def _setup_streams() -> None:
    """Make stdout/stderr safe for any text and any terminal before anything is printed.

    * a closed descriptor 1 or 2 (``>&-``) gets /dev/null underneath it, so no file this
      run opens can land on it; a closed stdout then fails on first write (exit 2);
    * a terminal that cannot encode a name (``PYTHONIOENCODING=ascii``, LANG=C) shows
      ``\\xd6`` escapes instead of raising: names are escaped, numbers stay as they are.
    """
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
            if name == "stdout":
                sys.stdout = _ClosedStdout()
            elif sys.stderr is None:
                sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(errors="backslashreplace")


def _silence_stdout() -> None:
    """After a failed write: drop what is buffered, so the exit flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point; always ends with ``sys.exit``."""
    try:  # typer >= 0.27 vendors click; older releases depend on it
        from typer._click import exceptions as click_exc
    except ImportError:  # pragma: no cover
        from click import exceptions as click_exc  # type: ignore[no-redef]

    _setup_streams()
    command = typer.main.get_command(app)
    raw = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in raw  # every command's --debug: a traceback instead of one line
    try:
        args = _dispatch_args(raw, command)
        code = command.main(args=args, prog_name=PROG, standalone_mode=False)
    except StdoutFailed as exc:
        _silence_stdout()
        if exc.errno == errno.EPIPE:
            # the reader went away (`| head -1`): quiet, and the status a shell reports for
            # a tool that SIGPIPE ends (128 + 13), never the gate's 1 nor success
            sys.exit(EXIT_PIPE)
        stderr_line(f"{PROG}: error: cannot write to stdout: {exc}")
        sys.exit(2)
    except IouEvalError as exc:
        if debug:
            raise
        if isinstance(exc, InputError) and exc.path == "-":
            exc.path = "<stdin>"
        stderr_line(f"{PROG}: error: {exc.message()}")
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        stderr_line(f"{PROG}: interrupted")
        sys.exit(130)
    except KeyboardInterrupt:
        stderr_line(f"{PROG}: interrupted")
        sys.exit(130)
    except click_exc.ClickException as exc:
        if debug:
            raise
        stderr_line(f"{PROG}: error: {_click_message(exc, click_exc)}")
        sys.exit(2)
    except BrokenPipeError:
        # a write to stdout outside write_stdout() (should not happen): same answer
        _silence_stdout()
        sys.exit(EXIT_PIPE)
    except MemoryError:
        stderr_line(f"{PROG}: error: out of memory")
        sys.exit(2)
    if code == 130:  # typer turns KeyboardInterrupt into Exit(130) and returns it
        stderr_line(f"{PROG}: interrupted")
    sys.exit(code if isinstance(code, int) else 0)


# options users of other tools reach for, and what iou-eval calls them
_OPTION_HINTS = {
    "--json": "-o json",
    "--csv": "-o csv",
    "--markdown": "-o markdown",
    "--md": "-o markdown",
    "--table": "-o table",
    "--format": "-o table|csv|json|markdown",
    "--conf": "--score-thr",
    "--iou": "--tp-iou",
    "--threshold": "--score-thr or --tp-iou",
    "--iou-threshold": "--tp-iou",
}


def _click_message(exc: Any, click_exc: Any) -> str:
    """click's message, with the option a user of another tool meant."""
    message = str(exc.format_message())
    if isinstance(exc, click_exc.NoSuchOption):
        hint = _OPTION_HINTS.get(exc.option_name)
        if hint:
            return f"no such option: {exc.option_name} (use {hint})"
    return message


# --------------------------------------------------------------------------- segment / labels
# Semantic segmentation (label-map PNGs) and multi-label sets (CSV): iou_cli/segment.py and
# iou_cli/labels.py do the work; these commands only map options and print through emit().

VERBS.update({"segment", "labels"})


def _clock() -> float:
    import time

    return time.perf_counter()


def _finish(
    result: Any, predictions: str, ground_truth: str, task: str, started: float, verbose: bool
) -> None:
    """JSON meta and, with -v, the run's time on stderr."""
    seconds = _clock() - started
    if verbose:
        result.info.append(f"time: total {seconds:.3f} s")
    _add_meta(result, predictions, ground_truth, task, seconds)


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


@app.command("segment", epilog=SEGMENT_EXAMPLES)
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
    started = _clock()
    from .gates import parse_gates, resolve
    from .segment import SUMMARY_KEYS, evaluate_segment

    out = resolve_output(output)
    gates = resolve(parse_gates(fail_under, fail_over), SUMMARY_KEYS)
    progress = None if quiet or not sys.stderr.isatty() else _progress_bar()
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
    _finish(result, pred_dir, gt_dir, "segment", started, verbose)
    status = emit(
        result,
        output=out,
        per_class=per_class,
        gates=gates,
        quiet=quiet,
        title=f"{PROG} segment: {_shown(pred_dir)} vs {_shown(gt_dir)}",
    )
    raise typer.Exit(status)


@app.command("labels", epilog=LABELS_EXAMPLES)
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
    started = _clock()
    from .gates import parse_gates, resolve
    from .labels import SUMMARY_KEYS, evaluate_labels

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
    _finish(result, predictions, ground_truth, "labels", started, verbose)
    status = emit(
        result,
        output=out,
        per_class=per_class,
        gates=gates,
        quiet=quiet,
        title=f"{PROG} labels: {_shown(predictions)} vs {_shown(ground_truth)}",
    )
    raise typer.Exit(status)


# --------------------------------------------------------------------------- compare (issue 12)
# Two models on one ground truth (paired bootstrap CIs, --fail-if-worse gate) or two saved
# -o json reports. The analysis is iou_cli/analysis/compare.py; the reporters are
# iou_cli/report_compare.py; this command only maps options and prints.

VERBS.add("compare")


COMPARE_EXAMPLES = """Examples:
  iou-eval compare a.json b.json gt.json         # A vs B, bootstrap CIs
  iou-eval compare a.json b.json gt.json --fail-if-worse AP=0.01
  iou-eval compare report_a.json report_b.json   # two saved -o json reports
"""


@app.command("compare", epilog=COMPARE_EXAMPLES)
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
    pred_format: PredFormatOpt = None,
    gt_format: GtFormatOpt = None,
    names: NamesOpt = None,
    gt_names: GtNamesOpt = None,
    pred_names: PredNamesOpt = None,
    images: ImagesOpt = None,
    image_size: ImageSizeOpt = None,
    unknown: UnknownOpt = "error",
    split: SplitOpt = None,
    image_map: ImageMapOpt = None,
    voc_origin: VocOriginOpt = 0,
    report: ReportOpt = None,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Compare B with A: deltas, paired bootstrap CIs over images, a regression gate."""
    from .analysis import compare as cmp
    from .text import term

    out = resolve_output(output)
    gates = cmp.parse_gates(fail_if_worse)
    md = parse_int_list(max_dets, "--max-dets") if max_dets is not None else None
    check_visuals(None, report, list(inputs))  # before the work
    comparison = cmp.compare(
        inputs,
        gates=gates,
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        protocol=protocol,
        iou_type=iou_type,
        iou_thr=_tp_iou(tp_iou, iou_thr),
        score_thr=score_thr,
        max_dets=md,
        iou_thrs=parse_float_list(iou_thrs, "--iou-thrs") if iou_thrs is not None else None,
        honor_ignore=honor_ignore,
        plus_one=plus_one,
        pred_format=pred_format,
        gt_format=gt_format,
        names=names,
        gt_names=gt_names,
        pred_names=pred_names,
        images=images,
        image_size=parse_image_size(image_size),
        unknown=unknown,
        split=split,
        image_map=image_map,
        voc_origin=voc_origin,
    )
    results = cmp.check_gates(comparison, gates, significant_only=significant_only)
    if report is not None:
        write_compare_report(comparison, report, list(inputs))
    if not quiet:
        for line in comparison.info:
            stderr_line(f"{PROG}: {term(line)}")
    for w in comparison.warnings:
        warn(term(w))
    from . import report_compare as rc

    if out == "json":
        write_stdout(rc.to_json(comparison))
    elif out == "csv":
        write_stdout(rc.to_csv(comparison, per_class=per_class))
    elif out == "markdown":
        write_stdout(rc.to_markdown(comparison, per_class=per_class))
    else:
        try:  # closed pipe, full disk, COLUMNS=0: as every other verb
            console().print(rc.render_table(comparison, per_class=per_class))
        except OSError as exc:
            raise StdoutFailed(exc) from None
        write_stdout("")
    status = 0
    for g in results:
        if g["failed"]:
            stderr_line(f"{PROG}: fail-if-worse: {term(g['reason'])}")
            status = 1
    raise typer.Exit(status)
