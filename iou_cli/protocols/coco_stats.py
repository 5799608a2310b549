"""pycocotools' ``summarize`` over a COCO evaluation's arrays: the 12 detection stats (the
10 keypoint ones for ``iou_type="keypoints"``), of all classes or of each.

``ev`` is a :class:`iou_cli.protocols.coco.CocoEvaluation` (``precision`` (T, R, K, A, M),
``recall`` (T, K, A, M), ``params``, ``area_defined``).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _summarize(
    ev: Any,
    *,
    ap: bool,
    iou_thr: float | None = None,
    area: int = 0,
    max_det_index: int = -1,
    k: int | None = None,
) -> float | None:
    p = ev.params
    if area != 0 and not ev.area_defined:
        return None
    if ap:
        s = ev.precision
        if iou_thr is not None:
            t = np.where(iou_thr == p.iou_thrs)[0]
            if t.size == 0:
                return None
            s = s[t]
        s = s[:, :, :, area, max_det_index] if k is None else s[:, :, k, area, max_det_index]
    else:
        s = ev.recall
        if iou_thr is not None:
            t = np.where(iou_thr == p.iou_thrs)[0]
            if t.size == 0:
                return None
            s = s[t]
        s = s[:, :, area, max_det_index] if k is None else s[:, k, area, max_det_index]
    vals = s[s > -1]
    if vals.size == 0:
        return None
    return float(np.mean(vals))


def _stat_specs(
    max_dets: tuple[int, ...], iou_type: str = "bbox"
) -> list[tuple[str, dict[str, Any]]]:
    """pycocotools' summary, stat by stat: key and ``_summarize`` arguments."""
    if iou_type == "keypoints":  # _summarizeKps: maxDets 20, areas all/medium/large
        ap: list[tuple[str, dict[str, Any]]] = [
            ("AP", {}),
            ("AP50", {"iou_thr": 0.5}),
            ("AP75", {"iou_thr": 0.75}),
            ("APm", {"area": 1}),
            ("APl", {"area": 2}),
        ]
        return [(k, {"ap": True, **kw}) for k, kw in ap] + [
            ("AR" + k[2:], {"ap": False, **kw}) for k, kw in ap
        ]
    specs: list[tuple[str, dict[str, Any]]] = [
        ("AP", {"ap": True}),
        ("AP50", {"ap": True, "iou_thr": 0.5}),
        ("AP75", {"ap": True, "iou_thr": 0.75}),
        ("APs", {"ap": True, "area": 1}),
        ("APm", {"ap": True, "area": 2}),
        ("APl", {"ap": True, "area": 3}),
    ]
    specs += [(f"AR{m}", {"ap": False, "max_det_index": i}) for i, m in enumerate(max_dets)]
    specs += [
        ("ARs", {"ap": False, "area": 1}),
        ("ARm", {"ap": False, "area": 2}),
        ("ARl", {"ap": False, "area": 3}),
    ]
    return specs


def stat_keys(max_dets: tuple[int, ...], iou_type: str = "bbox") -> list[str]:
    """The summary's stat keys for these maxDets (``AR<m>`` follow the actual values)."""
    return [key for key, _ in _stat_specs(max_dets, iou_type)]


def class_stats(ev: Any) -> list[dict[str, float | None]]:
    """:func:`stats` of every class at once (what ``per_class`` reports), bit-identical to
    ``stats(ev, k)``: a class's values are all defined or all -1, and ``np.mean`` over a
    C-contiguous row sums in the same order as over that row alone."""
    p = ev.params
    K = ev.recall.shape[1]
    cols: dict[str, list[float | None]] = {}
    for key, kw in _stat_specs(p.max_dets, p.iou_type):
        area = int(kw.get("area", 0))
        if area != 0 and not ev.area_defined:
            cols[key] = [None] * K
            continue
        t_sel: Any = slice(None)
        if kw.get("iou_thr") is not None:
            hit = np.flatnonzero(kw["iou_thr"] == p.iou_thrs)
            if hit.size == 0:
                cols[key] = [None] * K
                continue
            t_sel = slice(int(hit[0]), int(hit[0]) + 1)
        if kw["ap"]:
            sub = ev.precision[t_sel, :, :, area, -1]  # (T', R, K)
        else:
            sub = ev.recall[t_sel, :, area, int(kw.get("max_det_index", -1))][:, None, :]
        rows = np.ascontiguousarray(np.moveaxis(sub, 2, 0).reshape(K, sub.shape[0] * sub.shape[1]))
        valid = rows > -1
        n_valid = valid.sum(axis=1)
        means = np.mean(rows, axis=1)
        out: list[float | None] = []
        for k in range(K):
            if n_valid[k] == rows.shape[1]:
                out.append(float(means[k]))
            elif n_valid[k] == 0:
                out.append(None)
            else:  # mixed (not produced by accumulate): the plain definition
                out.append(float(np.mean(rows[k][valid[k]])))
        cols[key] = out
    return [{key: vals[k] for key, vals in cols.items()} for k in range(K)]


def stats(ev: Any, k: int | None = None) -> dict[str, float | None]:
    """The 12 pycocotools stats (keys ``AR<m>`` follow the actual maxDets)."""
    p = ev.params
    return {key: _summarize(ev, k=k, **kw) for key, kw in _stat_specs(p.max_dets, p.iou_type)}
