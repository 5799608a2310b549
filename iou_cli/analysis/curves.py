"""Curves as plain data: the JSON ``curves`` section (NumPy only; nothing is drawn here).

Two families, both computed from an evaluation's arrays and nothing else:

* precision-recall, as pycocotools' ``accumulate`` leaves them: for area "all" and the largest
  maxDets, the interpolated precision at the 101 recall points per IoU threshold and class
  (``null`` for a class without ground truth, pycocotools' -1), and the confidence of the
  prediction at which each recall point is first reached (pycocotools' ``scores``; 0 where the
  recall is never reached). The values are the very floats the summary is averaged from, so
  AP50, AP75 and AP are reproduced exactly from the JSON alone (see :func:`mean_ap`).
* precision / recall / F1 against confidence at the report's IoU threshold (the operating
  point's ``--iou-thr``), pooled over all classes: one point per distinct confidence, where a
  cut at ``s`` keeps every evaluated prediction scoring ``>= s`` (so the operating point in
  the summary lies exactly on it). Long curves are thinned to at most ``MAX_CONF_POINTS``
  cuts, always keeping the first, the last and the operating point's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

MAX_CONF_POINTS = 1000


def thr_key(t: float) -> str:
    """The JSON key of an IoU threshold: ``0.5``, ``0.75``, ``0.55`` (never 0.5499999...)."""
    return f"{float(t):.10g}"


def unique_names(names: Sequence[str], ids: Sequence[Any] | None = None) -> list[str]:
    """Class names as JSON keys, all distinct: a repeated name gains its category id
    (``dog (id 7)``), and a number more if that is taken too (``cat``, ``cat`` and
    ``cat (id 2)`` keep three keys)."""
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    used = {n for n in names if seen[n] == 1}  # unique names keep themselves
    out: list[str] = []
    for i, n in enumerate(names):
        if seen[n] > 1:
            base = f"{n} (id {ids[i] if ids is not None else i})"
            cand, j = base, 2
            while cand in used:
                cand, j = f"{base} #{j}", j + 1
            n = cand
        used.add(n)
        out.append(n)
    return out


def pr_curves(
    precision: npt.NDArray[np.float64],
    iou_thrs: Sequence[float],
    rec_thrs: Sequence[float],
    names: Sequence[str],
    *,
    scores: npt.NDArray[np.float64] | None = None,
    area_index: int = 0,
    max_det_index: int = -1,
    area: str = "all",
    max_dets: int | None = None,
) -> dict[str, Any]:
    """The ``curves`` section's precision-recall part from pycocotools-shaped arrays.

    ``precision`` and ``scores`` are (T, R, K, A, M) as in pycocotools' ``eval`` dict.
    """
    prec = np.asarray(precision, dtype=np.float64)[:, :, :, area_index, max_det_index]
    # whole matrices at once (10,000 classes: 3 s, not 16): (T, K) "undefined" flags, and
    # each (T, K) row as a list of Python floats (tolist gives the same floats as float())
    undefined = np.all(prec == -1, axis=1) & (prec.shape[1] > 0)
    p_rows = np.moveaxis(prec, 1, 2).tolist()  # (T, K, R)
    out: dict[str, Any] = {
        "area": area,
        "max_dets": max_dets,
        "iou_thrs": [float(t) for t in iou_thrs],
        "recall": [float(r) for r in rec_thrs],
        "precision": {
            thr_key(t): {
                n: None if undefined[ti, k] else p_rows[ti][k] for k, n in enumerate(names)
            }
            for ti, t in enumerate(iou_thrs)
        },
    }
    if scores is not None:
        sc = np.asarray(scores, dtype=np.float64)[:, :, :, area_index, max_det_index]
        s_undefined = np.all(sc == -1, axis=1) & (sc.shape[1] > 0)
        s_rows = np.moveaxis(sc, 1, 2).tolist()
        out["score"] = {
            thr_key(t): {
                n: None if undefined[ti, k] or s_undefined[ti, k] else s_rows[ti][k]
                for k, n in enumerate(names)
            }
            for ti, t in enumerate(iou_thrs)
        }
    return out


def confidence_curve(
    score: npt.NDArray[np.float64],
    tp: npt.NDArray[np.bool_],
    fp: npt.NDArray[np.bool_],
    n_gt: int,
    *,
    iou_thr: float,
    score_thr: float | None = None,
    max_points: int = MAX_CONF_POINTS,
) -> dict[str, Any]:
    """Precision, recall and F1 of the ``score >= s`` cut at each distinct confidence ``s``
    (descending), over predictions that are TP or FP at ``iou_thr`` (``tp``/``fp`` exclusive;
    a prediction that is neither, matched to an ignored ground truth, does not count).

    Recall is ``None`` throughout when there is no ground truth.
    """
    score = np.asarray(score, dtype=np.float64)
    counted = np.asarray(tp, dtype=bool) | np.asarray(fp, dtype=bool)
    order = np.argsort(-score, kind="stable")
    order = order[counted[order]]
    s = score[order]
    ctp = np.cumsum(np.asarray(tp, dtype=bool)[order]).astype(np.int64)
    cfp = np.cumsum(np.asarray(fp, dtype=bool)[order]).astype(np.int64)
    last = np.ones(s.size, dtype=bool)
    last[:-1] = s[1:] != s[:-1]
    s, ctp, cfp = s[last], ctp[last], cfp[last]
    if s.size > max_points:
        keep = np.unique(np.linspace(0, s.size - 1, max_points).round().astype(np.int64))
        if score_thr is not None:
            at = np.searchsorted(-s, -float(score_thr), side="right") - 1  # last cut >= thr
            if 0 <= at < s.size:
                keep = np.union1d(keep, [at])
        s, ctp, cfp = s[keep], ctp[keep], cfp[keep]
    n = int(n_gt)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = ctp / (ctp + cfp)
        rec = ctp / n if n else np.full(s.shape, np.nan)
        f1 = 2.0 * ctp / (ctp + cfp + n)

    def lst(a: npt.NDArray[np.float64]) -> list[float | None]:
        return [float(v) if np.isfinite(v) else None for v in a]

    return {
        "iou_thr": float(iou_thr),
        "score_thr": None if score_thr is None else float(score_thr),
        "n_gt": n,
        "score": [float(v) for v in s],
        "tp": [int(v) for v in ctp],
        "fp": [int(v) for v in cfp],
        "precision": lst(prec),
        "recall": lst(rec),
        "f1": lst(f1),
    }


# --------------------------------------------------------------------------- reading them back


def class_matrix(curves: dict[str, Any], thr: str, kind: str = "precision") -> np.ndarray:
    """(K', R) array of the classes with ground truth at IoU threshold key ``thr``."""
    rows = [v for v in curves[kind][thr].values() if v is not None]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(curves["recall"]))


def mean_ap(curves: dict[str, Any], thr: str | None = None) -> float | None:
    """AP from the JSON alone, bit for bit as pycocotools' summary: the mean over the (T, R,
    K) values in pycocotools' element order (threshold, then recall point, then class).

    ``thr`` one key (``"0.5"`` gives AP50) or ``None`` for all thresholds (AP).
    """
    keys = [thr] if thr is not None else list(curves["precision"])
    blocks = [class_matrix(curves, k).T.flatten() for k in keys]  # (R, K') in C order
    vals = np.concatenate(blocks) if blocks else np.zeros(0)
    return float(np.mean(vals)) if vals.size else None


def mean_curve(curves: dict[str, Any], thr: str | None = None) -> np.ndarray | None:
    """The precision curve averaged over classes (and thresholds when ``thr`` is None)."""
    keys = [thr] if thr is not None else list(curves["precision"])
    mats = [class_matrix(curves, k) for k in keys]
    mats = [m for m in mats if m.size]
    if not mats:
        return None
    return np.mean(np.concatenate(mats, axis=0), axis=0)


def class_curve(curves: dict[str, Any], name: str, thr: str | None = None) -> np.ndarray | None:
    """One class's precision curve at ``thr`` (or averaged over the thresholds)."""
    keys = [thr] if thr is not None else list(curves["precision"])
    rows = [curves["precision"][k].get(name) for k in keys]
    if any(r is None for r in rows):
        return None
    return np.mean(np.asarray(rows, dtype=np.float64), axis=0)


# --------------------------------------------------------------------------- from an evaluation


def for_evaluation(evaluation: Any, result: Any) -> dict[str, Any]:
    """The whole ``curves`` section of a COCO evaluation and its Result.

    PR curves at area "all" and the largest maxDets; the confidence curve at the operating
    point's IoU threshold (``result.summary["iou_thr"]``), its cut marked at the summary's
    ``score_thr``.
    """
    p = evaluation.params
    names = unique_names(
        [str(r.get("name")) for r in result.per_class],
        [r.get("category_id") for r in result.per_class],
    )
    out = pr_curves(
        evaluation.precision,
        p.iou_thrs,
        p.rec_thrs,
        names,
        scores=getattr(evaluation, "scores", None),
        max_dets=int(p.max_dets[-1]),
    )
    conf = _confidence_inputs(evaluation, float(result.summary["iou_thr"]))
    if conf is not None:
        score, tp, fp, n_gt = conf
        out["confidence"] = confidence_curve(
            score,
            tp,
            fp,
            n_gt,
            iou_thr=float(result.summary["iou_thr"]),
            score_thr=result.summary.get("score_thr"),
        )
    return out


def _confidence_inputs(evaluation: Any, iou_thr: float) -> tuple[Any, Any, Any, int] | None:
    """(score, tp, fp, n_gt) of the evaluated predictions at ``iou_thr``."""
    table = getattr(evaluation, "table", None)
    if table is not None:
        hit = np.flatnonzero(np.asarray(table.iou_thrs, dtype=np.float64) == iou_thr)
        if hit.size == 0:
            return None
        t = int(hit[0])
        return table.det_score, table.tp(t), table.fp(t), int(np.sum(table.n_pos))
    return None


def for_result(result: Any) -> dict[str, Any] | None:
    """The curves of a Result's evaluation: COCO (pycocotools-shaped arrays) or VOC (the
    devkit's per-class curves); None for anything else."""
    evaluation = getattr(result, "evaluation", None)
    if evaluation is None:
        return None
    from ..protocols import get_protocol

    kind = get_protocol(evaluation.protocol).curves  # what the protocol's evaluation holds
    if kind == "coco" and getattr(evaluation, "precision", None) is not None:
        return for_evaluation(evaluation, result)
    lean = getattr(evaluation, "lean", False)  # a cluster's combined run keeps no PR arrays
    if kind == "voc" and isinstance(getattr(evaluation, "curves", None), list) and not lean:
        return voc_curves(evaluation, result)
    return None


def voc_curves(evaluation: Any, result: Any) -> dict[str, Any]:
    """VOC: each class's devkit curve (cumulative recall and precision over its predictions
    by descending score; the AP is computed from exactly these arrays) and the confidence
    curve at the VOC threshold. ``null`` for a class without (non-difficult) ground truth."""
    names = unique_names(
        [str(r.get("name")) for r in result.per_class],
        [r.get("category_id") for r in result.per_class],
    )
    thr = float(result.summary["iou_thr"])
    per: dict[str, Any] = {}
    for name, c in zip(names, evaluation.curves, strict=False):
        per[name] = (
            None
            if c.get("AP") is None
            else {
                "AP": float(c["AP"]),
                "recall": [float(v) for v in c["recall"]],
                "precision": [float(v) for v in c["precision"]],
            }
        )
    out: dict[str, Any] = {"protocol": result.params.get("protocol", "voc"), "iou_thrs": [thr]}
    out["voc"] = per
    conf = _confidence_inputs(evaluation, thr)
    if conf is not None:
        score, tp, fp, n_gt = conf
        out["confidence"] = confidence_curve(
            score, tp, fp, n_gt, iou_thr=thr, score_thr=result.summary.get("score_thr")
        )
    return out


def curves_of(source: Any) -> dict[str, Any] | None:
    """The curves of a Result (from its evaluation) or of a saved ``-o json`` report loaded as
    a dict (its ``curves`` section, present when it was written with ``--curves``)."""
    if isinstance(source, dict):
        cv = source.get("curves")
        return cv if isinstance(cv, dict) else None
    return for_result(source)
