"""The library's front door: ``load``, ``load_ground_truth`` and ``evaluate`` (no printing,
no exiting).

::

    from pathlib import Path
    from iou_cli import evaluate

    result = evaluate(Path("preds.json"), Path("gt.json"))  # paths: str or os.PathLike
    result.summary["AP"], result.to_pandas()                # one row per class
    result.evaluation.table                                 # the match table (area "all")

    evaluate(results_list, dataset_dict)                    # in-memory COCO objects

    gt = load_ground_truth("gt.json")                       # read once ...
    for run in ("a.json", "b.json"):                        # ... score many
        evaluate(run, gt, protocol="voc", iou_thr=0.5)     # keywords build RunOptions
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Union

from .data import Dataset, Side
from .errors import InputError, ResourceError, UsageError
from .options import LoadOptions, RunOptions
from .result import Result

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


@dataclass
class GroundTruth:
    """A ground truth read once (:func:`load_ground_truth`); :func:`evaluate` takes it in place
    of a path, so many prediction sets are scored against one read. ``side`` is never
    changed by an evaluation; ``options`` are the loaders' options it was read with (its
    format, names, images and sizes)."""

    path: str
    side: Side
    options: LoadOptions


def load_ground_truth(
    path: Source, options: RunOptions | None = None, **keywords: Any
) -> GroundTruth:
    """Read a ground truth once for several :func:`evaluate` calls (``options`` or keywords as
    :func:`evaluate`'s; the loaders' ones that concern the ground truth are used)."""
    from .loaders.join import load_gt

    opts = run_options(options, keywords)
    opts.validate()
    load = opts.loader_options()
    source = _source(path, "ground_truth")
    name = source if isinstance(source, str) else "<ground truth>"
    return GroundTruth(name, load_gt(source, load), load)


def load_pair(pred: Source, gt: Source | GroundTruth, opts: LoadOptions) -> Dataset:
    """Read and join both sides (paths, in-memory COCO objects, or a :class:`GroundTruth`
    read before); masks prepared for segm."""
    from .loaders.files import reading
    from .loaders.join import load_dataset

    # one read-set for the run: every file the loaders read or found (outputs never go
    # over them), and the bytes of pipes, kept for this evaluation only
    with reading() as rs:
        p = _source(pred, "predictions")
        if isinstance(gt, GroundTruth):
            if gt.options.iou_type != opts.iou_type:
                raise UsageError(
                    f"the ground truth was read for --iou-type {gt.options.iou_type}, not "
                    f"{opts.iou_type}: read it again with iou_type={opts.iou_type!r}"
                )
            ds = load_dataset(p, gt.path, opts, gt_side=gt.side)
        else:
            g = _source(gt, "ground_truth")
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
    elif opts.iou_type == "keypoints":
        from .geometry.oks import prepare_keypoints
        from .protocols import get_protocol

        fallback = get_protocol(opts.protocol or "coco").sigma_default
        ds = prepare_keypoints(ds, opts.sigmas, fallback=fallback)
    return ds


def summary_keys(protocol: str = "coco", **options: Any) -> list[str]:
    """The summary keys ``protocol`` reports with these options (metrics, then the
    operating point): what ``--fail-under`` may name."""
    opts = RunOptions.build({"protocol": protocol, **options})
    opts.validate()
    return opts.summary_keys()


def _as_cli_values(keywords: dict[str, Any]) -> dict[str, Any]:
    """API values as the CLI's: NumPy scalars accepted, strings and 1.5 detections refused."""
    from .limits import as_count, as_image_size, as_keys, as_list, as_number

    out = dict(keywords)
    for key in ("iou_thr", "tide_pos_thr", "tide_bg_thr"):
        if key in out:
            out[key] = as_number(out[key], key)
    if out.get("score_thr") is not None:
        out["score_thr"] = as_number(out["score_thr"], "score_thr")
    if out.get("max_dets") is not None:
        out["max_dets"] = [as_count(m, "max_dets") for m in as_list(out["max_dets"], "max_dets")]
    if out.get("iou_thrs") is not None:
        out["iou_thrs"] = [as_number(t, "iou_thrs") for t in as_list(out["iou_thrs"], "iou_thrs")]
    if out.get("image_size") is not None:
        out["image_size"] = as_image_size(out["image_size"])
    for key in ("image_ids", "classes"):
        if out.get(key) is not None:
            out[key] = as_keys(out[key], key)
    return out


def run_options(options: RunOptions | None, keywords: dict[str, Any]) -> RunOptions:
    """``options``, or the options the keywords name (field names of :mod:`iou_cli.options`
    and of the protocol's ``Params``); not both."""
    if options is None:
        return RunOptions.build(_as_cli_values(keywords))
    if keywords:
        raise UsageError(
            f"give options=RunOptions(...) or keywords ({', '.join(sorted(keywords))}), not both"
        )
    if not isinstance(options, RunOptions):
        raise UsageError(f"options: expected a RunOptions, got {type(options).__name__}")
    return options


def evaluate(
    predictions: Source,
    ground_truth: Source | GroundTruth,
    options: RunOptions | None = None,
    *,
    _partial: Callable[[Dataset, RunOptions], Any] | None = None,
    **keywords: Any,
) -> Result:
    """Evaluate ``predictions`` against ``ground_truth``.

    Each is a path (``str`` or ``os.PathLike``; any supported format) or an in-memory COCO
    object (a results list, a dataset dict); the ground truth may also be a
    :class:`GroundTruth` read before with :func:`load_ground_truth`. ``options`` is a
    :class:`~iou_cli.options.RunOptions`; keywords (its field names, those of its
    ``LoadOptions`` / ``AnalysisOptions`` and of the protocol's ``Params``) build one
    instead: ``evaluate(p, g, protocol="voc", iou_thr=0.5)``.

    ``protocol="coco"`` reproduces pycocotools' COCOeval (options ``max_dets``,
    ``iou_thrs``, ``honor_ignore``, ``keep_tables``); ``"voc"``/``"voc07"`` the VOC devkit's
    all-point / 11-point AP at ``iou_thr`` (option ``plus_one``). An option the protocol does
    not use is a :class:`UsageError`. The operating point (TP/FP/FN, precision, recall, F1,
    mean IoU) is taken at ``iou_thr`` and ``score_thr`` (default: the confidence that
    maximises F1). The result carries the typed evaluation (``result.evaluation``) and its
    match table (``result.table``).

    Subsets: ``classes`` (names or ids), ``image_ids`` (ids or file stems) and
    ``class_agnostic`` evaluate as pycocotools with ``params.catIds`` / ``params.imgIds``
    restricted and ``params.useCats = 0``. Analyses: ``tide`` (``tide_pos_thr``,
    ``tide_bg_thr``), ``confusion``, ``per_image`` (with label-error candidates) and
    ``calibration`` add sections to ``result.analyses``; with ``matches`` the false-positive rows
    carry their TIDE ``error`` and best-overlapping ground truth.

    Keypoints (``iou_type="keypoints"``): OKS as pycocotools' computeOks; ``sigmas`` (one
    per keypoint) overrides the files' own (data.yaml ``kpt_oks_sigmas``, the categories'
    ``sigmas``); COCO's 17 are the default for 17-keypoint data only. ``per_keypoint`` adds
    which joints fail (``result.analyses["per_keypoint"]``, see :mod:`iou_cli.analysis.keypoints`).
    Rotated boxes (``iou_type="obb"``: DOTA txt, YOLO-OBB txt, COCO ``obb`` fields, angles in
    ``angle_unit``) are scored by exact polygon IoU; ``protocol="dota"`` is the DOTA devkit's
    task 1 (VOC2007 11-point AP, ``all_point`` for the area under the curve). DOTA files are
    rotated boxes whatever ``iou_type`` says.

    ``jobs``: worker processes matching the images (0: every core); the result is the one
    process's bit for bit (analyses and ``matches`` need the whole match table: one process).
    """
    opts = run_options(options, keywords).for_inputs()
    opts.validate()  # option errors before any reading
    ds = load_pair(predictions, ground_truth, opts.loader_options())
    iou_type = geometry_of(ds, opts.iou_type)
    if iou_type != opts.iou_type:  # rotated boxes read from files that hold only those
        opts = replace(opts, iou_type=iou_type)
    if opts.classes or opts.image_ids or opts.class_agnostic:
        from .analysis import subset

        ds = subset.apply(
            ds, classes=opts.classes, image_ids=opts.image_ids, agnostic=opts.class_agnostic
        )
    if _partial is not None:  # partial(): the match records, not a Result
        return _partial(ds, opts)
    jobs = opts.load.jobs
    if jobs != 1 and (
        opts.analyses.any or opts.matches or opts.protocol_params().get("keep_tables")
    ):
        opts = replace(opts, load=replace(opts.load, jobs=1))
        ds.info.append("--jobs: analyses and --matches read the whole match table: one process")
    if opts.load.jobs != 1:
        from .state.build import MERGEABLE

        if opts.protocol not in MERGEABLE:
            opts = replace(opts, load=replace(opts.load, jobs=1))
            ds.info.append(
                f"--jobs: --protocol {opts.protocol} has no mergeable state yet: one process"
            )
    result = evaluate_dataset(ds, opts)
    result.info.insert(0, read_line(ds, opts.iou_type))
    if opts.analyses.any or result.matches is not None:
        from .analysis.run import analyze

        analyze(result, opts.analyses)
    return result


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
    what = {"segm": "masks", "obb": "rotated boxes", "keypoints": "poses"}.get(iou_type, "boxes")
    return (
        f"read ground truth: {len(ds.gt):,} {what}, {len(ds.images):,} images, "
        f"{len(ds.categories):,} classes; predictions: {len(ds.pred):,} {what}"
    )


def evaluate_dataset(ds: Dataset, options: RunOptions | None = None, **keywords: Any) -> Result:
    """Evaluate an already joined :class:`Dataset` with the registered protocol (``options``
    or keywords as :func:`evaluate`'s) and add the input warnings."""
    from .protocols import get_protocol

    run = run_options(options, keywords)
    run.validate()
    p = get_protocol(run.protocol)
    opts = run.protocol_options()
    try:
        jobs = cores = run.load.jobs
        if jobs != 1:  # (one process needs none of the multiprocessing machinery imported)
            from .state.jobs import resolve_jobs, split_pays

            cores = resolve_jobs(jobs)
            jobs = cores if split_pays(ds, run.protocol) else 1
        if jobs != 1:
            from .state.jobs import parallel_result

            result = parallel_result(ds, run.protocol, opts, jobs)
        else:  # one process matches; keypoints may split their pairs' OKS (matching.pairs)
            if cores > 1 and run.protocol == "coco":
                opts = {**opts, "pair_jobs": cores}
            result = p.run(ds, opts).result()
    except MemoryError:  # never "out of memory" alone: say what asked for it
        raise ResourceError(
            f"out of memory evaluating {len(ds.images)} images x {len(ds.categories)} classes "
            f"({len(ds.gt)} ground truths, {len(ds.pred)} predictions): evaluate a subset, or "
            "use a machine with more memory"
        ) from None
    result.info.extend(ds.info)  # how the files were read and joined
    from .checks import zero_ap_warning

    # the maxDets the evaluation used (a protocol default may depend on the IoU type)
    used = getattr(getattr(result.evaluation, "params", None), "max_dets", None)
    result.warnings.extend(input_warnings(ds, used if used is not None else opts.get("max_dets")))
    zero = zero_ap_warning(ds, result.summary)
    from .box_hints import box_format_hint

    fmt_hint = box_format_hint(ds, result.summary)
    at = len(result.warnings) - (1 if _skipped(ds) else 0)  # before the skipped-rows line
    result.warnings[at:at] = [w for w in (zero, fmt_hint) if w]
    return result


def partial(
    predictions: Source,
    ground_truth: Source | GroundTruth,
    *,
    shard: tuple[int, int] | None = None,
    **options: Any,
) -> Any:
    """The mergeable state (:class:`~iou_cli.state.partial.PartialState`) of the images of
    ``shard`` ``(k, n)`` (1 <= k <= n: every ``n``-th image from the ``k``-th, in the ground
    truth's order; default all); ``options`` as :func:`evaluate`'s (``jobs`` too)."""
    from .state.jobs import resolve_jobs, shard_state

    def part(ds: Dataset, run: RunOptions) -> Any:
        opts = run.protocol_options()
        state = shard_state(ds, run.protocol, opts, shard, resolve_jobs(run.load.jobs))
        state.header["warnings"] = input_warnings(ds, opts.get("max_dets"))
        return state

    return evaluate(predictions, ground_truth, _partial=part, **options)


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
