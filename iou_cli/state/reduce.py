"""The reduce: a :class:`PartialState` (of all images) -> the protocol's Evaluation.

The records are put back in the order the one-shot run lays its match table out (COCO:
image, class, rank; VOC: file order), rebuilt into match tables with the same flags, and
handed to the protocols' own accumulation code, so every float operation is the one-shot
run's, on the same values in the same order.
"""

from __future__ import annotations

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
    images = Images(list(range(n)), [None] * n, np.full(n, np.nan), np.full(n, np.nan))
    empty = Boxes.build(np.zeros((0, 4)), image=np.zeros(0), category=np.zeros(0))
    return Dataset(
        images=images,
        categories=Categories(list(cats["ids"]), list(cats["names"])),
        gt=empty,
        pred=empty,
    )


def evaluation(state: PartialState) -> Evaluation:
    """The protocol's Evaluation of the state (its ``matches()`` rows are not available:
    the state keeps no annotation ids)."""
    kind = state.header["layout"]["kind"]
    if kind == "voc":
        return _voc(state)
    return _coco(state)


def result(state: PartialState) -> Result:
    """``evaluation(state).result()``, with what the state counted in place of the
    dataset's lengths (LVIS's evaluated predictions and ground truths)."""
    res = evaluation(state).result()
    if state.header["protocol"] == "lvis":
        res.params["evaluated_predictions"] = int(state.extra.get("n_eval_pred", 0))
        res.params["evaluated_ground_truths"] = int(state.extra.get("n_eval_gt", 0))
    return res


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


def _coco(state: PartialState) -> Evaluation:
    from ..protocols.coco import _acc_order, _by_score, accumulate

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
    order = np.lexsort((state.rank, state.category, state.image))
    cat = state.category[order]
    score = state.score[order]
    image = state.image[order]
    rank = state.rank[order]
    flags = state.flags()
    n = order.shape[0]
    op_tp_rows = flags[:, int(lay["iou_flag"])]  # area "all" is the first of the layout
    iou_dense = np.zeros(n, dtype=np.float64)
    iou_dense[op_tp_rows] = state.iou
    iou_dense = iou_dense[order]
    flags = flags[order]
    score_order = _by_score(score)
    det = np.arange(n, dtype=np.int64)
    n_pos = state.counts["n_pos"]

    A = len(params.area_rngs)
    M = len(params.max_dets)
    R = params.rec_thrs.shape[0]
    full = 8 * T * R * K * A * M <= 256 * 2**20
    p_at = list(range(M)) if full else [M - 1]
    precision = np.full((T, R, K, A, len(p_at)), -1.0)
    recall = np.full((T, K, A, M), -1.0)
    scores = np.full((T, R, K, A, len(p_at)), -1.0)
    tables: dict[str, MatchTable] = {}
    # area "all" (index 0 of the layout) last, as the one-shot run
    for ai in [*range(1, A_state), 0]:
        tp = flags[:, ai * Tp : (ai + 1) * Tp]
        ig = flags[:, A_state * Tp + ai * Tp : A_state * Tp + (ai + 1) * Tp]
        all_fp = ~(tp | ig).any(axis=1)
        all_ig = ig.all(axis=1)
        cand = np.flatnonzero(~(all_fp | all_ig)).astype(np.int64)
        tp_c = tp[cand].T
        iou = np.zeros((Tp, cand.shape[0]), dtype=np.float64)
        if ai == 0:
            iou[op_t] = np.where(tp_c[op_t], iou_dense[cand], 0.0)
        table = MatchTable(
            iou_thrs=thr_arr,
            det=det,
            det_rank=rank,
            det_category=cat,
            det_score=score,
            det_image=image,
            det_out=np.asarray(all_ig, dtype=bool),
            cand=cand,
            gt=np.where(tp_c, 0, -1).astype(np.int64),
            iou=iou,
            ignored=np.ascontiguousarray(ig[cand].T),
            gt_counts=np.zeros(0, dtype=bool),
            n_pos=n_pos[ai].astype(np.int64),
            area=areas[ai],
        )
        a = [nm for nm, _, _ in params.area_rngs].index(areas[ai])
        accumulate(
            table,
            n_classes=K,
            rec_thrs=params.rec_thrs,
            max_dets=params.max_dets,
            thresholds=range(T),
            order=_acc_order(cat, cand, K, score_order),
            precision_at=p_at,
            out=(precision[:, :, :, a, :], recall[:, :, a, :], scores[:, :, :, a, :]),
        )
        if ai == 0:
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

    return CocoEvaluation(protocol="coco", **common)


def _voc(state: PartialState) -> Evaluation:
    from ..protocols.voc import VocEvaluation, VocMatch, class_curves, voc_table

    h = state.header
    p = h["params"]
    K = len(h["categories"]["names"])
    order = np.argsort(state.rank, kind="stable")  # file order
    flags = state.flags()
    tp_raw = flags[:, 0]
    iou_dense = np.full(len(state), np.nan)
    iou_dense[tp_raw] = state.iou
    tp = tp_raw[order]
    fp = flags[order, 1]
    n_gt = state.counts["n_gt"]
    ds = skeleton(state)
    gt_cat = np.repeat(np.arange(K, dtype=np.int64), n_gt)
    ds.gt = Boxes.build(
        np.zeros((gt_cat.shape[0], 4)), image=np.zeros_like(gt_cat), category=gt_cat
    )
    ds.pred = Boxes.build(
        np.zeros((order.shape[0], 4)),
        image=state.image[order],
        category=state.category[order],
        score=state.score[order],
    )
    pr = ds.pred
    m = VocMatch(
        tp=tp,
        fp=fp,
        iou=iou_dense[order],
        gt_row=np.where(tp, 0, -1).astype(np.int64),
        order=np.lexsort((-pr.score, pr.category)).astype(np.int64),
        hard=np.zeros(gt_cat.shape[0], dtype=bool),
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
