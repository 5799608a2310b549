"""The reduce: a :class:`PartialState` (of all images) -> the protocol's Evaluation.

The records are put back in the order the one-shot run lays its match table out (COCO:
image, class, rank; VOC: file order), rebuilt into match tables with the same flags, and
handed to the protocols' own accumulation code, so every float operation is the one-shot
run's, on the same values in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Boxes, Categories, Dataset, Images
from ..matching.table import MatchTable
from ..result import Evaluation, Result
from .partial import PartialState

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def skeleton(state: PartialState, n_gt: int = 0) -> Dataset:
    """The image and category tables of the state's ground truth, without boxes
    (``n_gt`` placeholder ground-truth rows; the reporters read only the tables)."""
    h = state.header
    n = int(h["n_images"])
    cats = h["categories"]
    keys: list[Any] = (
        list(range(n)) if state.image_keys is None else [int(k) for k in state.image_keys]
    )
    images = Images(keys, [None] * n, np.full(n, np.nan), np.full(n, np.nan))
    empty = Boxes.build(np.zeros((0, 4)), image=np.zeros(0), category=np.zeros(0))
    return Dataset(
        images=images,
        categories=Categories(list(cats["ids"]), list(cats["names"])),
        gt=empty,
        pred=empty,
    )


def evaluation(state: PartialState, jobs: int = 1) -> Evaluation:
    """The protocol's Evaluation of the state (its ``matches()`` rows are not available:
    the state keeps no annotation ids); ``jobs`` processes share COCO's area ranges."""
    kind = state.header["layout"]["kind"]
    if kind == "voc":
        return _voc(state)
    if kind == "dota":
        return _dota(state)
    return _coco(state, jobs)


def result(state: PartialState, jobs: int = 1) -> Result:
    """``evaluation(state).result()``, with what the state counted in place of the
    dataset's lengths (LVIS's evaluated predictions and ground truths)."""
    res = evaluation(state, jobs).result()
    res.gt_fingerprint = str(state.header.get("fingerprint") or "") or None
    if state.header["protocol"] == "lvis":
        res.params["evaluated_predictions"] = int(state.extra.get("n_eval_pred", 0))
        res.params["evaluated_ground_truths"] = int(state.extra.get("n_eval_gt", 0))
    return res


def table_order(image: IntArray, category: IntArray, rank: IntArray) -> IntArray:
    """``np.lexsort((rank, category, image))``. The parts' rows arrive as sorted runs (one per
    worker), so a stable sort of one combined key merges them in near-linear time (0.3 s
    instead of 0.9 s at 4.2M rows); keys that would not fit 63 bits take the lexsort."""
    n = image.shape[0]
    if n and min(int(image.min()), int(category.min()), int(rank.min())) >= 0:
        n_cat, n_rank = int(category.max()) + 1, int(rank.max()) + 1
        if (int(image.max()) + 1) * n_cat * n_rank < 2**62:
            key = (image.astype(np.int64) * n_cat + category) * n_rank + rank
            return np.argsort(key, kind="stable")
    return np.lexsort((rank, category, image))


def _coco_params(h: dict[str, Any]) -> Any:
    from ..protocols.coco import CocoParams

    p = h["params"]
    return CocoParams(
        iou_type=p["iou_type"],
        iou_thrs=np.asarray(p["iou_thrs"], dtype=np.float64),
        rec_thrs=np.asarray(p["rec_thrs"], dtype=np.float64),
        max_dets=tuple(int(m) for m in p["max_dets"]),
        area_rngs=tuple((str(n), lo, hi) for n, lo, hi in p["area_rngs"]),
        honor_ignore=bool(p["honor_ignore"]),
        op_iou_thr=float(p["op_iou_thr"]),
        score_thr=p["score_thr"],
        keep_tables=False,
    )


def _coco(state: PartialState, jobs: int = 1, n_classes: int | None = None) -> Evaluation:
    """COCO/LVIS; ``n_classes``: the classes of the whole evaluation when ``state`` holds
    one class's cut of it (so the arrays keep the whole run's maxDets axis)."""
    from ..matching.accumulate import acc_order as _acc_order
    from ..matching.accumulate import by_score as _by_score

    h = state.header
    lay = h["layout"]
    params = _coco_params(h)
    K = len(h["categories"]["names"])
    thr_arr = np.asarray(lay["thresholds"], dtype=np.float64)
    Tp = thr_arr.shape[0]
    T = len(params.iou_thrs)
    areas: list[str] = list(lay["areas"])
    A_state = len(areas)
    op_t = int(lay["op_t"])
    area_defined = bool(lay["area_defined"])

    # the one-shot table's order: image, class, rank
    order = table_order(state.image, state.category, state.rank)
    cat = state.category[order]
    score = state.score[order]
    image = state.image[order]
    rank = state.rank[order]
    n = order.shape[0]
    op_tp_rows = _flag_rows(state.bits, int(lay["iou_flag"]), 1)[0]  # area "all" is first
    iou_dense = np.zeros(n, dtype=np.float64)
    iou_dense[op_tp_rows] = state.iou
    iou_dense = iou_dense[order]
    bits = state.bits[order]  # packed; each area unpacks only its own flags
    score_order = _by_score(score)
    det = np.arange(n, dtype=np.int64)
    n_pos = state.counts["n_pos"]

    A = len(params.area_rngs)
    M = len(params.max_dets)
    R = params.rec_thrs.shape[0]
    full = 8 * T * R * (n_classes or K) * A * M <= 256 * 2**20
    p_at = list(range(M)) if full else [M - 1]
    precision = np.full((T, R, K, A, len(p_at)), -1.0)
    recall = np.full((T, K, A, M), -1.0)
    scores = np.full((T, R, K, A, len(p_at)), -1.0)
    base = _acc_order(cat, np.zeros(0, dtype=np.int64), K, score_order)  # once, not per area
    ctx = _AreaWork(
        bits, A_state, Tp, T, K, op_t, iou_dense, thr_arr, det, rank, cat, score, image,
        n_pos, areas, params, p_at, base,
    )  # fmt: skip
    a_of = {nm: i for i, (nm, _, _) in enumerate(params.area_rngs)}
    tables: dict[str, MatchTable] = {}
    # area "all" (index 0 of the layout) here and last, as the one-shot run; the others in
    # forked workers when there are jobs to spare
    for ai, (table, p_a, r_a, s_a) in _areas(ctx, [*range(1, A_state), 0], jobs):
        a = a_of[areas[ai]]
        precision[:, :, :, a, :], recall[:, :, a, :], scores[:, :, :, a, :] = p_a, r_a, s_a
        if table is not None:
            tables[areas[0]] = table

    ds = skeleton(state)
    common: dict[str, Any] = {
        "params": params,
        "dataset": ds,
        "table": tables[areas[0]],
        "precision": precision,
        "recall": recall,
        "scores": scores,
        "precision_max_dets": tuple(params.max_dets[m] for m in p_at),
        "tables": tables,
        "area_defined": area_defined,
        "n_det": state.counts["n_det"].astype(np.int64),
        "score_order": score_order,
        "op_t": op_t,
    }
    if h["protocol"] == "lvis":
        from ..protocols.lvis import LvisEvaluation

        return LvisEvaluation(
            protocol="lvis",
            frequency=np.asarray(h["categories"]["frequency"], dtype=np.int64),
            source=ds,
            n_over=int(state.extra.get("n_over", 0)),
            most=int(state.extra.get("max_most", 0)),
            **common,
        )
    from ..protocols.coco import CocoEvaluation

    return CocoEvaluation(
        protocol="coco", sigma_source=str(h["params"].get("oks_sigma_source", "")), **common
    )


def _stand_in(state: PartialState, order: IntArray, image: IntArray) -> Dataset:
    """The dataset the VOC-family reduces score: one placeholder ground-truth row per counted
    ground truth (its class only) and the predictions in ``order`` on ``image`` (no boxes:
    the matches are the state's)."""
    n_classes = len(state.header["categories"]["names"])
    ds = skeleton(state)
    gt_cat = np.repeat(np.arange(n_classes, dtype=np.int64), state.counts["n_gt"])
    ds.gt = Boxes.build(
        np.zeros((gt_cat.shape[0], 4)), image=np.zeros_like(gt_cat), category=gt_cat
    )
    ds.pred = Boxes.build(
        np.zeros((order.shape[0], 4)),
        image=image,
        category=state.category[order],
        score=state.score[order],
    )
    return ds


def _iou_by_row(state: PartialState, flags: npt.NDArray[np.bool_]) -> FloatArray:
    """Each record's IoU in record order: the state keeps it for hits only (NaN elsewhere)."""
    iou = np.full(len(state), np.nan)
    iou[flags[:, 0]] = state.iou
    return iou


def _voc(state: PartialState) -> Evaluation:
    from ..protocols.voc import VocEvaluation, VocMatch, class_curves, voc_table

    h = state.header
    p = h["params"]
    order = np.argsort(state.rank, kind="stable")  # file order
    flags = state.flags()
    tp = flags[order, 0]
    fp = flags[order, 1]
    ds = _stand_in(state, order, state.image[order])
    pr = ds.pred
    m = VocMatch(
        tp=tp,
        fp=fp,
        iou=_iou_by_row(state, flags)[order],
        gt_row=np.where(tp, 0, -1).astype(np.int64),
        order=np.lexsort((-pr.score, pr.category)).astype(np.int64),
        hard=np.zeros(len(ds.gt.category), dtype=bool),
        hit=tp.copy(),
    )
    params = {
        "iou_thr": float(p["iou_thr"]),
        "use_07": bool(p["use_07"]),
        "plus_one": bool(p["plus_one"]),
        "score_thr": p["score_thr"],
        "matches": False,
    }
    return VocEvaluation(
        protocol=h["protocol"],
        params=params,
        dataset=ds,
        table=voc_table(ds, m, float(p["iou_thr"])),
        match=m,
        curves=class_curves(ds, m, use_07=bool(p["use_07"])),
    )


def _dota(state: PartialState) -> Evaluation:
    """DOTA's reduce: predictions back in reading order, the devkit's visiting order over
    each class, the first visit of each ground truth's hits takes it (build._dota_state)."""
    from ..protocols.dota import devkit_order, dota_evaluation
    from ..protocols.voc import VocMatch

    h = state.header
    p = h["params"]
    K = len(h["categories"]["names"])
    order = np.argsort(state.rank, kind="stable")  # reading order
    flags = state.flags()
    hit, on_hard = flags[order, 0], flags[order, 1]
    iou = _iou_by_row(state, flags)[order]
    gt_key = state.image[order]
    ds = _stand_in(state, order, np.zeros(order.shape[0], dtype=np.int64))
    visit = devkit_order(ds.pred, K)
    tp = np.zeros(order.shape[0], dtype=bool)
    cand = visit[(hit & ~on_hard)[visit]]
    if cand.size:
        _, first = np.unique(gt_key[cand], return_index=True)
        tp[cand[first]] = True
    m = VocMatch(
        tp=tp,
        fp=~tp & ~(hit & on_hard),
        iou=np.where(tp, iou, np.nan),
        gt_row=np.where(tp, 0, -1).astype(np.int64),
        order=visit,
        hard=np.zeros(len(ds.gt.category), dtype=bool),
        hit=tp.copy(),
    )
    return dota_evaluation(
        ds,
        m,
        iou_thr=float(p["iou_thr"]),
        all_point=bool(p["all_point"]),
        score_thr=p["score_thr"],
        matches=False,
    )


def _flag_rows(bits: npt.NDArray[np.uint8], first: int, count: int) -> npt.NDArray[np.bool_]:
    """Flags ``first .. first + count - 1`` of packed rows, one row per flag ``(count, n)``
    (only the bytes holding them are unpacked)."""
    b0, b1 = first // 8, (first + count - 1) // 8 + 1
    sub = np.unpackbits(bits[:, b0:b1], axis=1)[:, first - 8 * b0 : first - 8 * b0 + count]
    return np.ascontiguousarray(sub.T).astype(bool)


@dataclass
class _AreaWork:
    """What accumulating one area range needs (shared with forked workers)."""

    bits: npt.NDArray[np.uint8]
    A: int
    Tp: int
    T: int
    K: int
    op_t: int
    iou_dense: FloatArray
    thr_arr: FloatArray
    det: IntArray
    rank: IntArray
    cat: IntArray
    score: FloatArray
    image: IntArray
    n_pos: IntArray
    areas: list[str]
    params: Any
    p_at: list[int]
    base: Any  # AccOrder of every prediction (cand_acc filled per area)


def _area(c: _AreaWork, ai: int) -> tuple[MatchTable | None, FloatArray, FloatArray, FloatArray]:
    """Area range ``ai`` of the layout: its match table (area "all" only) and its
    precision (T, R, K, P), recall (T, K, M) and scores (T, R, K, P)."""
    from ..matching.accumulate import AccOrder, accumulate

    Tp, A = c.Tp, c.A
    tp = _flag_rows(c.bits, ai * Tp, Tp)  # (Tp, n)
    ig = _flag_rows(c.bits, A * Tp + ai * Tp, Tp)
    all_fp = ~np.logical_or.reduce(tp | ig, axis=0)
    all_ig = np.logical_and.reduce(ig, axis=0)
    is_cand = ~(all_fp | all_ig)
    cand = np.flatnonzero(is_cand).astype(np.int64)
    tp_c = tp[:, cand]
    iou = np.zeros((Tp, cand.shape[0]), dtype=np.float64)
    if ai == 0:
        iou[c.op_t] = np.where(tp_c[c.op_t], c.iou_dense[cand], 0.0)
    table = MatchTable(
        iou_thrs=c.thr_arr,
        det=c.det,
        det_rank=c.rank,
        det_category=c.cat,
        det_score=c.score,
        det_image=c.image,
        det_out=np.asarray(all_ig, dtype=bool),
        cand=cand,
        gt=np.where(tp_c, 0, -1).astype(np.int64),
        iou=iou,
        ignored=ig[:, cand],
        gt_counts=np.zeros(0, dtype=bool),
        n_pos=c.n_pos[ai].astype(np.int64),
        area=c.areas[ai],
    )
    b = c.base
    # candidates in accumulation order, as positions into cand (no sort: cand is sorted)
    in_cand = np.full(is_cand.shape[0], -1, dtype=np.int64)
    in_cand[cand] = np.arange(cand.shape[0])
    order = AccOrder(
        b.acc_order, b.acc_pos, b.cat_start, in_cand[b.acc_order[is_cand[b.acc_order]]]
    )
    p = c.params
    R, M, P = p.rec_thrs.shape[0], len(p.max_dets), len(c.p_at)
    out = (
        np.full((c.T, R, c.K, P), -1.0),
        np.full((c.T, c.K, M), -1.0),
        np.full((c.T, R, c.K, P), -1.0),
    )
    accumulate(
        table,
        n_classes=c.K,
        rec_thrs=p.rec_thrs,
        max_dets=p.max_dets,
        thresholds=range(c.T),
        order=order,
        precision_at=c.p_at,
        out=out,
    )
    return (table if ai == 0 else None), *out


_WORK: list[_AreaWork] = []  # what forked workers read (set just before the fork)


def _area_in_worker(ai: int) -> tuple[None, FloatArray, FloatArray, FloatArray]:
    _, p, r, s = _area(_WORK[0], ai)
    return None, p, r, s


def _areas(c: _AreaWork, order: list[int], jobs: int) -> Any:
    """``(ai, _area(c, ai))`` for each area range, area "all" (0) computed here, last."""
    import multiprocessing

    others = [ai for ai in order if ai != 0]
    if jobs <= 1 or not others or "fork" not in multiprocessing.get_all_start_methods():
        return [(ai, _area(c, ai)) for ai in order]
    # the parent takes area "all" and its share of the others; workers the rest
    n = min(jobs, len(others) + 1)
    mine = others[: len(others) // n]
    theirs = others[len(mine) :]
    _WORK[:] = [c]
    try:
        from ..workers import init_worker

        with multiprocessing.get_context("fork").Pool(n - 1, init_worker) as pool:
            pending = pool.map_async(_area_in_worker, theirs, chunksize=1)
            done = [(ai, _area(c, ai)) for ai in mine]
            done += list(zip(theirs, pending.get(), strict=True))
    finally:
        _WORK.clear()
    return done + [(0, _area(c, 0))]
