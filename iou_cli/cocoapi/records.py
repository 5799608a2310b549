"""pycocotools' per-image records (``COCOeval.evalImgs``) from the engine's match tables,
and the accumulation back from such records.

A record is one (category, area range, image): the dict ``COCOeval.evaluateImg`` returns
(``image_id``, ``category_id``, ``aRng``, ``maxDet``, ``dtIds``, ``gtIds``, ``dtMatches``,
``gtMatches``, ``dtScores``, ``gtIgnore``, ``dtIgnore``), or None when the image has neither
ground truth nor detections of the category. The list is laid out as pycocotools lays it
out: category-major, then area range, then image. Code that gathers records from several
processes and assigns them back to ``evalImgs`` (the torchvision references'
``CocoEvaluator``) is accumulated by :func:`accumulate_records`, through the engine's own
:func:`iou_cli.protocols.coco.accumulate`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..matching.table import MatchTable
from ..protocols.coco import CocoEvaluation, accumulate
from .scene import Scene


def build_records(ev: CocoEvaluation, scene: Scene, params: Any) -> list[dict[str, Any] | None]:
    """``evalImgs`` of a run made with ``keep_tables`` (every area range's table)."""
    ds = scene.ds
    K, A, n_img = len(scene.cat_ids), len(params.areaRng), len(ds.images)
    T = len(params.iouThrs)
    max_det = int(params.maxDets[-1])
    out: list[dict[str, Any] | None] = [None] * (K * A * n_img)
    gt_key = ds.gt.category * n_img + ds.gt.image
    g_order = np.argsort(gt_key, kind="stable")
    g_sorted = gt_key[g_order]
    dt_ids = np.asarray(scene.dt_ids, dtype=object)
    gt_ids = np.asarray(scene.gt_ids, dtype=object)
    for a, table in enumerate(ev.tables.values()):
        a_idx = _area_index(ev, a)
        D = len(table)
        hit = np.full((T, D), -1, dtype=np.int64)
        hit[:, table.cand] = table.gt[:T]
        ign = np.repeat(table.det_out[None, :], T, axis=0)
        ign[:, table.cand] = table.ignored[:T]
        d_key = table.det_category * n_img + table.det_image
        d_order = np.lexsort((table.det_rank, d_key))
        d_sorted = d_key[d_order]
        keys = np.union1d(np.unique(d_sorted), np.unique(g_sorted))
        for key in keys.tolist():
            k, i = divmod(int(key), n_img)
            dpos = d_order[np.searchsorted(d_sorted, key) : np.searchsorted(d_sorted, key, "right")]
            grows = g_order[
                np.searchsorted(g_sorted, key) : np.searchsorted(g_sorted, key, "right")
            ]
            g_ign = ~table.gt_counts[grows]
            gperm = np.argsort(g_ign, kind="stable")
            grows, g_ign = grows[gperm], g_ign[gperm]
            rows = table.det[dpos]
            h = hit[:, dpos]
            matched = h >= 0
            dtm = np.zeros((T, dpos.shape[0]))
            gtm = np.zeros((T, grows.shape[0]))
            if matched.any():
                dtm[matched] = gt_ids[h[matched]].astype(np.float64)
                where = {int(r): n for n, r in enumerate(grows)}
                t_idx, d_idx = np.nonzero(matched)
                g_idx = np.array([where[int(r)] for r in h[matched]], dtype=np.int64)
                gtm[t_idx, g_idx] = dt_ids[rows[d_idx]].astype(np.float64)
            out[(k * A + a_idx) * n_img + i] = {
                "image_id": ds.images.keys[i],
                "category_id": scene.cat_ids[k],
                "aRng": list(params.areaRng[a_idx]),
                "maxDet": max_det,
                "dtIds": dt_ids[rows].tolist(),
                "gtIds": gt_ids[grows].tolist(),
                "dtMatches": dtm,
                "gtMatches": gtm,
                "dtScores": table.det_score[dpos].tolist(),
                "gtIgnore": g_ign.astype(np.int64),
                "dtIgnore": ign[:, dpos],
            }
    return out


def _area_index(ev: CocoEvaluation, position: int) -> int:
    """Area index of the ``position``-th table (tables are kept area "all" last)."""
    names = list(ev.tables)
    return int(names[position][1:]) if names[position] != "all" else 0


def accumulate_records(
    records: list[Any], params: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """pycocotools' ``accumulate`` over ``evalImgs`` laid out for ``params`` (its imgIds,
    catIds/useCats, areaRng, maxDets): ``(precision, recall, scores)``, bit for bit."""
    K = len(params.catIds) if params.useCats else 1
    A, n_img = len(params.areaRng), len(params.imgIds)
    T, R, M = len(params.iouThrs), len(params.recThrs), len(params.maxDets)
    if len(records) != K * A * n_img:
        raise ValueError(
            f"evalImgs holds {len(records)} records, expected {K * A * n_img} "
            f"({K} categories x {A} area ranges x {n_img} images)"
        )
    precision = np.full((T, R, K, A, M), -1.0)
    recall = np.full((T, K, A, M), -1.0)
    scores = np.full((T, R, K, A, M), -1.0)
    iou_thrs = np.asarray(params.iouThrs, dtype=np.float64)
    for a in range(A):
        score, rank, cat, hit, ign = [], [], [], [], []
        n_pos = np.zeros(K, dtype=np.int64)
        for k in range(K):
            for i in range(n_img):
                e = records[(k * A + a) * n_img + i]
                if e is None:
                    continue
                s = np.asarray(e["dtScores"], dtype=np.float64).reshape(-1)
                d = s.shape[0]
                score.append(s)
                rank.append(np.arange(d, dtype=np.int64))
                cat.append(np.full(d, k, dtype=np.int64))
                hit.append(np.asarray(e["dtMatches"]).reshape(T, d) != 0)
                ign.append(np.asarray(e["dtIgnore"], dtype=bool).reshape(T, d))
                n_pos[k] += int(np.count_nonzero(np.asarray(e["gtIgnore"]) == 0))
        if not score:
            continue
        det_score = np.concatenate(score)
        D = det_score.shape[0]
        table = MatchTable(
            iou_thrs=iou_thrs,
            det=np.arange(D, dtype=np.int64),
            det_rank=np.concatenate(rank),
            det_category=np.concatenate(cat),
            det_score=det_score,
            det_image=np.zeros(D, dtype=np.int64),
            det_out=np.zeros(D, dtype=bool),
            cand=np.arange(D, dtype=np.int64),
            gt=np.where(np.concatenate(hit, axis=1), 0, -1),
            iou=np.zeros((T, D)),
            ignored=np.concatenate(ign, axis=1),
            gt_counts=np.zeros(0, dtype=bool),
            n_pos=n_pos,
        )
        accumulate(
            table,
            n_classes=K,
            rec_thrs=np.asarray(params.recThrs, dtype=np.float64),
            max_dets=tuple(int(m) for m in params.maxDets),
            out=(precision[:, :, :, a, :], recall[:, :, a, :], scores[:, :, :, a, :]),
        )
    return precision, recall, scores
