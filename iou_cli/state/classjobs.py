"""``--jobs`` for the COCO protocol: the classes split over processes, not the images.

pycocotools matches each (image, class) pair of groups alone and accumulates each class
alone, so a process given every image but only some classes computes those classes' slices
of the ``precision`` / ``recall`` / ``scores`` arrays exactly as the one-process run does
(the rows it keeps are in the same relative order: same ranks, same stable sorts). Each
process then needs to send back only those slices and the operating point's columns (per
prediction that is a TP or an FP at the operating IoU: its score, TP bit, class; per TP its
IoU and image), and the reduce in this process is the driver's of a cluster run
(:func:`iou_cli.state.classes.combine`'s): no sort of every record, no second accumulation.

The dataset is shared with the workers by ``fork``; each worker sends its part through its
own pipe (plain processes, not a pool: nothing is shared but the pipe). A worker that fails
or dies makes this process compute that part itself (the same numbers, one process's time).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset
from ..result import Result

IntArray = npt.NDArray[np.int64]

_JOB: list[tuple[Dataset, dict[str, Any], list[IntArray]]] = []  # read by forked workers


PAIR_COST = 0.4  # a candidate pair's matching time, in units of a prediction's


def class_weights(ds: Dataset) -> npt.NDArray[np.float64]:
    """Each class's matching work: its predictions plus ``PAIR_COST`` x its candidate pairs
    (per image, its predictions times its ground truths: a class with crowded images costs
    far more than its prediction count says)."""
    K = len(ds.categories)
    n_groups = len(ds.images) * K
    if n_groups > 8 * (len(ds.pred) + len(ds.gt)):  # sparse: count pairs by sorted keys
        kp = np.unique(ds.pred.image * K + ds.pred.category, return_counts=True)
        kg = np.unique(ds.gt.image * K + ds.gt.category, return_counts=True)
        common, ip, ig = np.intersect1d(kp[0], kg[0], assume_unique=True, return_indices=True)
        cat, n_pairs = common % K, kp[1][ip] * kg[1][ig]
        pairs = np.bincount(cat, weights=n_pairs.astype(np.float64), minlength=K)
    else:  # keys image * K + class: a table of (image, class) counts
        nd = np.bincount(ds.pred.image * K + ds.pred.category, minlength=n_groups)
        ng = np.bincount(ds.gt.image * K + ds.gt.category, minlength=n_groups)
        pairs = (nd * ng).reshape(-1, K).sum(axis=0).astype(np.float64)
    return np.bincount(ds.pred.category, minlength=K) + PAIR_COST * pairs


def class_groups(ds: Dataset, n: int) -> list[IntArray]:
    """The classes in ``n`` groups of about equal work (:func:`class_weights`), each
    sorted, the lightest group first; the costliest classes first, each to the least loaded
    group (deterministic)."""
    weight = class_weights(ds)
    load = [0.0] * n
    groups: list[list[int]] = [[] for _ in range(n)]
    for k in np.argsort(-weight, kind="stable").tolist():
        i = load.index(min(load))
        groups[i].append(k)
        load[i] += float(weight[k])
    # lightest first: group 0 is this process's, which also combines the parts afterwards
    by_load = sorted(range(n), key=lambda i: (load[i], i))
    return [np.asarray(sorted(groups[i]), dtype=np.int64) for i in by_load]


def class_part(ds: Dataset, options: dict[str, Any], cats: IntArray) -> dict[str, Any]:
    """The COCO evaluation of the classes ``cats`` alone (every image): their array slices,
    counts and operating-point columns (rows in the run's order: image, class, rank)."""
    from ..protocols.coco import _params, run

    ev = run(ds, _params(options), classes=cats)
    score, tp, fp, iou = ev._op_columns()
    rows = tp | fp
    return {
        "cats": cats,
        "params": ev.params,
        "precision": ev.precision[:, :, cats],
        "recall": ev.recall[:, cats],
        "scores": ev.scores[:, :, cats],
        "precision_max_dets": ev.precision_max_dets,
        "n_pos": ev.n_gt[cats],
        "n_det": ev.n_det[cats],
        "thresholds": ev.table.iou_thrs,
        "area": ev.table.area,
        "area_defined": ev.area_defined,
        "op_t": ev.op_t,
        "sigma_source": ev.sigma_source,
        "op_score": score[rows],
        "op_tp": tp[rows],
        "op_cat": ev._op_category()[rows],
        "op_image": ev.table.det_image[rows],
        "op_iou": np.where(tp, iou, 0.0)[rows],
        # by descending score (stable): the parent merges the parts' runs (no full sort)
        "op_order": np.argsort(-score[rows], kind="stable").astype(np.int32),
    }


def _worker(w: int, send: Any) -> None:
    """Worker ``w``: class group ``w`` of the job, sent through its pipe as ``("ok",
    part)``, or ``("error", text)`` (this process then computes the group itself)."""
    from ..workers import init_worker

    init_worker()
    ds, options, groups = _JOB[0]
    try:
        msg: tuple[str, Any] = ("ok", class_part(ds, options, groups[w]))
    except BaseException as exc:  # the parent recomputes the group and reports any error
        msg = ("error", f"{type(exc).__name__}: {exc}")
    try:
        send.send(msg)
    finally:
        send.close()


def class_parallel_result(ds: Dataset, options: dict[str, Any], n: int) -> Result:
    """The COCO Result of ``ds`` by ``n`` processes (this one and ``n - 1`` forked ones),
    each evaluating a group of the classes; bit for bit the one-process Result's."""
    from ..workers import end_workers, fork_workers

    groups = class_groups(ds, n)
    _JOB[:] = [(ds, options, groups)]
    try:
        procs = fork_workers(_worker, [(w,) for w in range(1, n)])
    finally:
        _JOB.clear()
    collected = False
    try:
        parts = [class_part(ds, options, groups[0])]
        for w, (_, recv) in enumerate(procs, start=1):
            try:
                status, got = recv.recv()
            except (EOFError, OSError):  # the worker died
                status, got = "died", None
            parts.append(got if status == "ok" else class_part(ds, options, groups[w]))
        collected = True
    finally:
        end_workers(procs, collected)  # (on an exception the workers are not waited for)
    return combine_parts(ds, parts)


def combine_parts(ds: Dataset, parts: list[dict[str, Any]]) -> Result:
    """The Result of the class groups' parts (see :func:`class_part`), as the one-process
    run's (its ``table`` has no rows: ``result.table`` needs ``--jobs 1``)."""
    from ..matching.table import MatchTable
    from .classes import LeanCocoEvaluation

    K = len(ds.categories)
    first = parts[0]
    pr, rc = first["precision"], first["recall"]
    precision = np.full((pr.shape[0], pr.shape[1], K, *pr.shape[3:]), -1.0)
    recall = np.full((rc.shape[0], K, *rc.shape[2:]), -1.0)
    scores = np.full_like(precision, -1.0)
    n_pos = np.zeros(K, dtype=np.int64)
    n_det = np.zeros(K, dtype=np.int64)
    for part in parts:
        c = part["cats"]
        precision[:, :, c], recall[:, c], scores[:, :, c] = (
            part["precision"],
            part["recall"],
            part["scores"],
        )
        n_pos[c], n_det[c] = part["n_pos"], part["n_det"]
    op, score_order = _op_columns(parts, K)
    table = MatchTable.rowless(np.asarray(first["thresholds"]), n_pos, first["area"])
    ev = LeanCocoEvaluation(
        protocol="coco",
        params=first["params"],
        dataset=ds,
        table=table,
        precision=precision,
        recall=recall,
        scores=scores,
        precision_max_dets=first["precision_max_dets"],
        tables={first["area"]: table},
        area_defined=first["area_defined"],
        n_det=n_det,
        score_order=score_order,
        op_t=first["op_t"],
        sigma_source=first["sigma_source"],
    )
    ev._cache["n_pos"] = n_pos
    ev._cache["op"] = op
    return ev.result()


def _op_columns(
    parts: list[dict[str, Any]], K: int
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], IntArray]:
    """The operating point's rows of every part as :func:`iou_cli.state.classes.combine`
    lays them out (the FPs class by class, each class's in the run's order; then the TPs by
    image, class and rank: the mean IoU sums them in the one-process run's order) as
    ``(score, tp, iou, class)``, and their order by descending score.

    Each part's rows come in the run's order (image, class, rank) and its classes are its
    own, so a stable sort by class (small integers: radix) orders the FPs, and a stable
    sort of the TPs by ``image * K + class`` merges the parts' sorted runs; the descending
    score order merges the parts' own (ties in any order: the best-F1 sweep reads the
    counts at the end of each run of equal scores only)."""
    from .classes import _small

    sizes = [p["op_score"].shape[0] for p in parts]
    starts = np.cumsum([0, *sizes])[:-1]
    cat = _small(np.concatenate([p.pop("op_cat") for p in parts]))
    tp = np.concatenate([p.pop("op_tp") for p in parts])
    fp_rows = np.flatnonzero(~tp)
    tp_rows = np.flatnonzero(tp)
    fp_rows = fp_rows[np.argsort(cat[fp_rows], kind="stable")]
    image = np.concatenate([p.pop("op_image") for p in parts])[tp_rows].astype(np.int64)
    tp_rows = tp_rows[np.argsort(image * K + cat[tp_rows], kind="stable")]
    del image
    final = np.concatenate([fp_rows, tp_rows])  # position -> concatenated row
    del fp_rows, tp_rows
    at = np.empty_like(final)
    at[final] = np.arange(final.shape[0], dtype=final.dtype)  # concatenated row -> position
    score = np.concatenate([p.pop("op_score") for p in parts])[final]
    runs = np.concatenate([at[a + p.pop("op_order")] for a, p in zip(starts, parts, strict=True)])
    order = runs[np.argsort(-score[runs], kind="stable")]  # sorted runs: a merge
    iou = np.concatenate([p.pop("op_iou") for p in parts])
    return (score, tp[final], iou[final], cat[final]), order.astype(np.int64)
