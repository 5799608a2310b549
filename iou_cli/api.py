"""The library's front door: ``load`` and ``evaluate`` (no printing, no exiting).

::

    from pathlib import Path
    from iou_cli import evaluate

    result = evaluate(Path("preds.json"), Path("gt.json"))  # paths: str or os.PathLike
    result.summary["AP"], result.to_pandas()                # one row per class
    result.evaluation.table                                 # the match table (area "all")

    evaluate(results_list, dataset_dict)                    # in-memory COCO objects
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Union

from .data import Dataset, Side
from .errors import InputError, ResourceError, UsageError
from .limits import check_ranges
from .loaders import FORMATS
from .options import LoadOptions
from .result import Result

IOU_TYPES = ("bbox", "segm", "obb")
UNKNOWN = ("error", "skip", "skip-images", "skip-classes")

# a path (str or os.PathLike), or an in-memory COCO object: a results list or a dataset dict
Source = Union[str, "os.PathLike[str]", list[Any], dict[str, Any]]


def _source(value: Any, what: str) -> Any:
    """A path as ``str`` (``os.PathLike`` accepted), or a COCO object (list / dict; records
    may be any mapping, numbers NumPy scalars: made plain, as JSON would give them)."""
    from collections.abc import Mapping

    if isinstance(value, (list, dict)):
        return value  # made plain only if the loader refuses it (_plain_retry)
    if isinstance(value, (tuple, Mapping)):
        from .loaders.plain import plain

        return plain(value)
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return path
    raise UsageError(
        f"{what}: expected a path (str or os.PathLike) or a COCO object (a results list or "
        f"a dataset dict), got {type(value).__name__}"
    )


def load(
    path: str | os.PathLike[str],
    *,
    role: str = "gt",
    fmt: str | None = None,
    iou_type: str = "bbox",
) -> Side:
    """Read one side (``role`` "pred" or "gt") into columns."""
    from .loaders import load_side
    from .loaders.files import reading

    with reading() as rs:  # one read-set (and pipe cache) for this load
        side = load_side(
            _source(path, "path"), role=role, fmt=fmt, opts=LoadOptions(iou_type=iou_type)
        )
        side.read_paths = _union(side.read_paths, rs.paths())
    return side


def _plain(obj: Any) -> Any:
    """An in-memory COCO object with only JSON types (``obj`` itself when it has them)."""
    if not isinstance(obj, (list, dict)):
        return obj
    from .loaders.plain import is_plain, plain

    return obj if is_plain(obj) else plain(obj)


def _union(a: Sequence[str], b: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def load_pair(pred: Source, gt: Source, opts: LoadOptions) -> Dataset:
    """Read and join both sides (paths or in-memory COCO objects); masks prepared for segm."""
    from .loaders.files import reading
    from .loaders.join import load_dataset

    # one read-set for the run: every file the loaders read or found (outputs never go
    # over them), and the bytes of pipes, kept for this evaluation only
    with reading() as rs:
        p, g = _source(pred, "predictions"), _source(gt, "ground_truth")
        try:
            ds = load_dataset(p, g, opts)
        except InputError:
            # NumPy scalars, OrderedDict records...: the same objects made plain, once
            p2, g2 = _plain(p), _plain(g)
            if p2 is p and g2 is g:
                raise
            ds = load_dataset(p2, g2, opts)
        ds.read_paths = _union(ds.read_paths, rs.paths())
    if opts.iou_type == "segm":
        from .geometry.masks import prepare_masks

        ds = prepare_masks(ds)
    return ds


def summary_keys(protocol: str = "coco", **options: Any) -> list[str]:
    """The summary keys ``protocol`` reports with these options (metrics, then the
    operating point): what ``--fail-under`` may name."""
    from .metrics import OP_KEYS
    from .protocols import get_protocol, resolve_options

    p = get_protocol(protocol)
    return p.summary_keys(resolve_options(p, options)) + list(OP_KEYS)


def evaluate(
    predictions: Source,
    ground_truth: Source,
    *,
    protocol: str = "coco",
    iou_type: str = "bbox",
    iou_thr: float = 0.5,
    score_thr: float | None = None,
    max_dets: Sequence[int] | None = None,
    iou_thrs: Sequence[float] | None = None,
    honor_ignore: bool | None = None,
    plus_one: bool | None = None,
    keep_tables: bool | None = None,
    matches: bool = False,
    pred_format: str | None = None,
    gt_format: str | None = None,
    names: str | None = None,
    gt_names: str | None = None,
    pred_names: str | None = None,
    images: str | None = None,
    image_size: tuple[float, float] | None = None,
    unknown: str = "error",
    progress: Callable[[str, int, int], None] | None = None,
    classes: Sequence[str] | None = None,
    image_ids: Sequence[str] | None = None,
    class_agnostic: bool = False,
    tide: bool = False,
    tide_pos_thr: float = 0.5,
    tide_bg_thr: float = 0.1,
    confusion: bool = False,
    per_image: bool = False,
    calibration: bool = False,
    split: str | None = None,
    image_map: str | None = None,
    voc_origin: int = 0,
    pred_ids: str = "auto",
    all_point: bool | None = None,
    angle_unit: str = "rad",
    jobs: int = 1,
    _partial: Callable[[Dataset, str, dict[str, Any]], Any] | None = None,
) -> Result:
    """Evaluate ``predictions`` against ``ground_truth``.

    Each is a path (``str`` or ``os.PathLike``; any supported format) or an in-memory COCO
    object (a results list, a dataset dict). ``protocol="coco"`` reproduces pycocotools'
    COCOeval (options ``max_dets``, ``iou_thrs``, ``honor_ignore``, ``keep_tables``);
    ``"voc"``/``"voc07"`` the VOC devkit's all-point / 11-point AP at ``iou_thr`` (option
    ``plus_one``). An option the protocol does not use is a :class:`UsageError`. The
    operating point (TP/FP/FN, precision, recall, F1, mean IoU) is taken at ``iou_thr`` and
    ``score_thr`` (default: the confidence that maximises F1). The result carries the typed
    evaluation (``result.evaluation``) and its match table (``result.table``).

    Subsets (issue 11): ``classes`` (names or ids), ``image_ids`` (ids or file stems) and
    ``class_agnostic`` evaluate as pycocotools with ``params.catIds`` / ``params.imgIds``
    restricted and ``params.useCats = 0``. Analyses: ``tide`` (``tide_pos_thr``,
    ``tide_bg_thr``), ``confusion``, ``per_image`` (with label-error candidates) and
    ``calibration`` add sections to ``result.extra``; with ``matches`` the false-positive rows
    carry their TIDE ``error`` and best-overlapping ground truth.

    Rotated boxes (``iou_type="obb"``: DOTA txt, YOLO-OBB txt, COCO ``obb`` fields, angles in
    ``angle_unit``) are scored by exact polygon IoU; ``protocol="dota"`` is the DOTA devkit's
    task 1 (VOC2007 11-point AP, ``all_point`` for the area under the curve). DOTA files are
    rotated boxes whatever ``iou_type`` says.

    ``jobs``: worker processes matching the images (0: every core); the result is the one
    process's bit for bit (analyses and ``matches`` need the whole match table: one process).
    """
    from .limits import as_count, as_image_size, as_keys, as_list, as_number

    # API values as the CLI's: NumPy scalars accepted, strings and 1.5 detections refused
    iou_thr = as_number(iou_thr, "iou_thr")
    score_thr = None if score_thr is None else as_number(score_thr, "score_thr")
    if max_dets is not None:
        max_dets = [as_count(m, "max_dets") for m in as_list(max_dets, "max_dets")]
    if iou_thrs is not None:
        iou_thrs = [as_number(t, "iou_thrs") for t in as_list(iou_thrs, "iou_thrs")]
    image_size = None if image_size is None else as_image_size(image_size)
    image_ids = None if image_ids is None else as_keys(image_ids, "image_ids")
    classes = None if classes is None else as_keys(classes, "classes")
    tide_pos_thr = as_number(tide_pos_thr, "tide_pos_thr")
    tide_bg_thr = as_number(tide_bg_thr, "tide_bg_thr")
    if protocol == "dota" and iou_type == "bbox":
        iou_type = "obb"  # the DOTA protocol scores rotated boxes only
    options = {
        "iou_type": iou_type,
        "iou_thr": iou_thr,
        "score_thr": score_thr,
        "matches": matches,
        "max_dets": max_dets,
        "iou_thrs": iou_thrs,
        "honor_ignore": honor_ignore,
        "plus_one": plus_one,
        "keep_tables": keep_tables,
        "all_point": all_point,
    }
    check_options(
        protocol=protocol,
        iou_type=iou_type,
        iou_thr=iou_thr,
        score_thr=score_thr,
        max_dets=max_dets,
        iou_thrs=iou_thrs,
        unknown=unknown,
        formats=(pred_format, gt_format),
    )
    from .protocols import get_protocol, resolve_options

    resolve_options(get_protocol(protocol), options)  # option errors before any reading
    from .state.jobs import resolve_jobs

    jobs = resolve_jobs(jobs)
    from .analysis.run import AnalysisOptions
    from .analysis.run import check as check_analyses

    analyses = AnalysisOptions(
        tide=tide,
        confusion=confusion,
        per_image=per_image,
        calibration=calibration,
        tide_pos_thr=float(tide_pos_thr),
        tide_bg_thr=float(tide_bg_thr),
    )
    check_analyses(analyses, protocol)
    opts = load_options(
        protocol=protocol,
        iou_type=iou_type,
        pred_format=pred_format,
        gt_format=gt_format,
        names=names,
        gt_names=gt_names,
        pred_names=pred_names,
        images=images,
        image_size=image_size,
        unknown=unknown,
        split=split,
        image_map=image_map,
        voc_origin=voc_origin,
        progress=progress,
        pred_ids=pred_ids,
        angle_unit=angle_unit,
        jobs=jobs,
    )
    ds = load_pair(predictions, ground_truth, opts)
    iou_type = geometry_of(ds, iou_type)
    options["iou_type"] = iou_type
    if classes or image_ids or class_agnostic:
        from .analysis import subset

        ds = subset.apply(ds, classes=classes, image_ids=image_ids, agnostic=class_agnostic)
    if _partial is not None:  # partial(): the match records, not a Result
        return _partial(ds, protocol, options)
    if jobs != 1 and (analyses.any or matches or keep_tables):
        jobs = 1
        ds.info.append("--jobs: analyses and --matches read the whole match table: one process")
    from .state.build import FORMAT_PROTOCOLS

    if jobs != 1 and protocol not in FORMAT_PROTOCOLS:
        jobs = 1
        ds.info.append(f"--jobs: --protocol {protocol} has no mergeable state yet: one process")
    result = evaluate_dataset(ds, protocol=protocol, jobs=jobs, **options)
    result.info.insert(0, read_line(ds, iou_type))
    if analyses.any or result.matches is not None:
        from .analysis.run import analyze

        analyze(result, analyses)
    return result


def load_options(
    *,
    protocol: str,
    iou_type: str,
    pred_format: str | None,
    gt_format: str | None,
    names: str | None,
    gt_names: str | None,
    pred_names: str | None,
    images: str | None,
    image_size: tuple[float, float] | None,
    unknown: str,
    split: str | None,
    image_map: str | None,
    voc_origin: int,
    progress: Callable[[str, int, int], None] | None = None,
    pred_ids: str = "auto",
    angle_unit: str = "rad",
    jobs: int = 1,
) -> LoadOptions:
    """The loaders' options of a run (every verb that reads a prediction/ground-truth pair
    builds them here), ``--voc-origin`` checked."""
    if voc_origin not in (0, 1):
        raise UsageError(f"--voc-origin: expected 0 or 1, got {voc_origin}")
    from .loaders.class_ids import check_mode

    check_mode(pred_ids)
    if angle_unit not in ("rad", "deg"):
        raise UsageError(f"--angle-unit: expected rad or deg, got {angle_unit!r}")
    return LoadOptions(
        pred_format=pred_format,
        gt_format=gt_format,
        iou_type=iou_type,
        names=names,
        gt_names=gt_names,
        pred_names=pred_names,
        images=images,
        image_size=image_size,
        unknown=unknown,
        progress=progress,
        split=split,
        image_map=image_map,
        voc_origin=voc_origin,
        protocol=protocol,
        pred_ids=pred_ids,
        angle_unit=angle_unit,
        jobs=jobs,
    )


def geometry_of(ds: Dataset, iou_type: str) -> str:
    """The geometry a joined dataset is scored with: rotated boxes read from files that hold
    only rotated boxes (DOTA txt) make ``bbox`` mean ``obb`` (said in an info line); one side
    rotated and the other axis-aligned is an :class:`InputError`."""
    rotated = (ds.pred.obb is not None, ds.gt.obb is not None)
    if iou_type == "obb" or rotated == (False, False):
        return iou_type
    if rotated != (True, True):
        side, path = ("ground truth", ds.gt_path) if rotated[1] else ("predictions", ds.pred_path)
        other = "predictions" if rotated[1] else "ground truth"
        raise InputError(
            path,
            None,
            f"the {side} are rotated boxes but the {other} are axis-aligned: give both sides "
            "as rotated boxes (DOTA txt, YOLO-OBB txt or COCO 'obb' with --iou-type obb)",
        )
    ds.info.append("rotated boxes (DOTA txt): scored by polygon IoU (--iou-type obb)")
    return "obb"


def read_line(ds: Dataset, iou_type: str = "bbox") -> str:
    """The one info line saying what was read."""
    what = {"segm": "masks", "obb": "rotated boxes"}.get(iou_type, "boxes")
    return (
        f"read ground truth: {len(ds.gt):,} {what}, {len(ds.images):,} images, "
        f"{len(ds.categories):,} classes; predictions: {len(ds.pred):,} {what}"
    )


def partial(
    predictions: Source,
    ground_truth: Source,
    *,
    shard: tuple[int, int] | None = None,
    **options: Any,
) -> Any:
    """The mergeable state (:class:`~iou_cli.state.partial.PartialState`) of the images of
    ``shard`` ``(k, n)`` (1 <= k <= n: every ``n``-th image from the ``k``-th, in the ground
    truth's order; default all); ``options`` as :func:`evaluate`'s (``jobs`` too)."""
    from .state.jobs import shard_state

    jobs = int(options.pop("jobs", 1))

    def part(ds: Dataset, protocol: str, opts: dict[str, Any]) -> Any:
        state = shard_state(ds, protocol, opts, shard, jobs)
        state.header["warnings"] = input_warnings(ds, opts.get("max_dets"))
        return state

    return evaluate(predictions, ground_truth, _partial=part, **options)


def evaluate_dataset(
    ds: Dataset, *, protocol: str = "coco", jobs: int = 1, **options: Any
) -> Result:
    """Evaluate an already joined :class:`Dataset` with the registered ``protocol``
    (options as :func:`evaluate`'s protocol options; ``jobs`` worker processes) and add the
    input warnings."""
    from .protocols import get_protocol, resolve_options

    p = get_protocol(protocol)
    opts = resolve_options(p, options)
    try:
        if jobs != 1:
            from .state.jobs import parallel_result

            result = parallel_result(ds, protocol, options, jobs)
        else:
            result = p.run(ds, opts).result()
    except MemoryError:  # never "out of memory" alone: say what asked for it
        raise ResourceError(
            f"out of memory evaluating {len(ds.images)} images x {len(ds.categories)} classes "
            f"({len(ds.gt)} ground truths, {len(ds.pred)} predictions): evaluate a subset, or "
            "use a machine with more memory"
        ) from None
    result.info.extend(ds.info)  # how the files were read and joined
    from .checks import zero_ap_warning

    result.warnings.extend(input_warnings(ds, opts.get("max_dets")))
    zero = zero_ap_warning(ds, result.summary)
    from .box_hints import box_format_hint

    fmt_hint = box_format_hint(ds, result.summary)
    at = len(result.warnings) - (1 if _skipped(ds) else 0)  # before the skipped-rows line
    result.warnings[at:at] = [w for w in (zero, fmt_hint) if w]
    return result


def _skipped(ds: Dataset) -> str | None:
    n = sum(ds.skipped.values()) if ds.skipped else 0
    if not n:
        return None
    return (
        f"skipped {n} prediction(s) for images or categories the ground truth does not "
        f"know ({ds.skipped.get('unknown_image', 0)} image, "
        f"{ds.skipped.get('unknown_category', 0)} category)"
    )


def input_warnings(ds: Dataset, max_dets: Sequence[int] | None) -> list[str]:
    """What the inputs deserve a warning for (the loaders' notes, suspicious boxes, skipped
    rows), whatever the numbers: a partial file carries them to ``merge``."""
    from .checks import warnings_for

    out = list(ds.warnings)
    out.extend(warnings_for(ds, max_dets=max(max_dets) if max_dets else None))
    skipped = _skipped(ds)
    if skipped:
        out.append(skipped)
    return out


def check_options(
    *,
    protocol: str,
    iou_type: str,
    iou_thr: float,
    score_thr: float | None,
    max_dets: Sequence[int] | None,
    iou_thrs: Sequence[float] | None,
    unknown: str,
    formats: Sequence[str | None],
) -> None:
    """Validate option values (ranges, choices) before any input is read."""
    from .protocols import get_protocol

    check_ranges(max_dets=max_dets, iou_thrs=iou_thrs)  # sizes first: never print 10k values
    get_protocol(protocol)
    if iou_type not in IOU_TYPES:
        raise UsageError(f"--iou-type: expected one of {', '.join(IOU_TYPES)}, got {iou_type!r}")
    if not (0.0 < iou_thr <= 1.0):
        raise UsageError(f"--tp-iou: expected an IoU in (0, 1], got {iou_thr:g}")
    if score_thr is not None and not (0.0 <= score_thr <= 1.0):
        raise UsageError(f"--score-thr: expected a confidence in [0, 1], got {score_thr:g}")
    if max_dets is not None:
        md = list(max_dets)
        if not md or any(m < 1 for m in md) or md != sorted(set(md)):
            raise UsageError(
                f"--max-dets: expected increasing positive integers such as 1,10,100, got {md}"
            )
    if iou_thrs is not None:
        th = list(iou_thrs)
        if not th or any(not (0 < t <= 1) for t in th) or th != sorted(set(th)):
            raise UsageError(f"--iou-thrs: expected increasing thresholds in (0, 1], got {th}")
    if unknown not in UNKNOWN:
        raise UsageError(f"--unknown: expected one of {', '.join(UNKNOWN)}, got {unknown!r}")
    for f in formats:
        if f is not None and f not in FORMATS:
            raise UsageError(f"format {f!r}: expected one of {', '.join(FORMATS)}")
