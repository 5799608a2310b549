"""Which joints fail (``--per-keypoint``): per keypoint, over the true-positive pairs of the
operating point (OKS >= its threshold, score >= its confidence; area "all"):

* ``within``: share of the labelled keypoints whose own similarity ``exp(-e)`` reaches the
  OKS threshold (the sigma-scaled tolerance, PCK-style);
* ``mean_error``: mean distance over ``sqrt(area)`` (the object scale OKS divides by);
* ``mean_similarity``: mean ``exp(-e)`` of the labelled keypoint;
* ``visible_not_labelled``: share of the keypoints the ground truth does not label (v = 0)
  that the prediction says are visible (its third value >= ``visible_thr``), and
  ``labelled_not_visible`` the reverse;
* ``oks_lost``: the keypoint's part of the OKS the pairs lose (``1 - OKS`` is the mean over a
  pair's counted keypoints of ``1 - exp(-e)``, so a keypoint's part is its ``(1 - exp(-e)) /
  n``, averaged over pairs; summed over keypoints it is ``1 - mean OKS``), and
  ``share_of_loss`` that part over the total.

The section also carries the skeleton (``skeleton``: the categories' 1-based edges, [] when
they give none) and ``layout``: each keypoint's mean position over the pairs' ground truths
that label it, from their box centre in units of ``sqrt(box area)`` (the pose's own
proportions; None when no pair labels it), on which the HTML report draws the skeleton.
"""

from __future__ import annotations

from typing import Any

import numpy as np

VISIBLE_THR = 0.5  # a predicted keypoint with third value >= this is "predicted visible"


def per_keypoint(
    ds: Any,
    table: Any,
    t: int,
    *,
    score_thr: float,
    visible_thr: float = VISIBLE_THR,
    area: Any = None,
) -> dict[str, Any]:
    """The ``per_keypoint`` section (see the module docstring) at threshold index ``t``;
    ``area``: each ground truth's object area as the protocol's OKS takes it (default the
    annotated ``area``; Ultralytics: 0.53 x the box area)."""
    from ..geometry.oks import pair_terms
    from ..matching.pairs import kpt_boxes, sigma_table

    gt_row, _oks, ign = table.dense(t)
    det = np.asarray(table.det, dtype=np.int64)
    tp = (gt_row >= 0) & ~ign & (np.asarray(table.det_score) >= score_thr)
    d_rows, g_rows = det[tp], gt_row[tp]
    sigmas, source = sigma_table(ds)
    gt, pred = ds.gt, ds.pred
    k = int(sigmas.shape[1])
    box = kpt_boxes(gt, g_rows)
    sig = sigmas[0] if sigmas.shape[0] == 1 else sigmas[gt.category[g_rows]]
    g_kp = gt.keypoints[g_rows] if gt.keypoints is not None else np.zeros((0, k, 3))
    p_kp = pred.keypoints[d_rows] if pred.keypoints is not None else np.zeros((0, k, 3))
    area = (gt.area if area is None else np.asarray(area, dtype=np.float64))[g_rows]
    terms = pair_terms(p_kp, g_kp, area, box, sig)
    sim = np.exp(-terms.e)  # (P, K)
    labelled = g_kp[:, :, 2] > 0
    n_kept = np.maximum(terms.kept.sum(axis=1), 1)
    lost = np.where(terms.kept, (1.0 - sim) / n_kept[:, None], 0.0)
    total_lost = float(lost.sum())
    dist = np.hypot(p_kp[:, :, 0] - g_kp[:, :, 0], p_kp[:, :, 1] - g_kp[:, :, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        norm_err = dist / np.sqrt(area)[:, None]
    p_vis = p_kp[:, :, 2] >= visible_thr
    thr = float(table.iou_thrs[t])
    names = ds.skeleton.names if ds.skeleton is not None and ds.skeleton.names else None
    P = int(tp.sum())
    rows: list[dict[str, Any]] = []
    for j in range(k):
        lab = labelled[:, j]
        n_lab = int(lab.sum())
        n_unl = P - n_lab
        rows.append(
            {
                "keypoint": j + 1,
                "name": names[j] if names else f"k{j + 1}",
                "sigma": float(sigmas[0, j]) if (sigmas[:, j] == sigmas[0, j]).all() else None,
                "n_labelled": n_lab,
                "within": _share(int((sim[lab, j] >= thr).sum()), n_lab),
                "mean_error": float(np.mean(norm_err[lab, j])) if n_lab else None,
                "mean_similarity": float(np.mean(sim[lab, j])) if n_lab else None,
                "visible_not_labelled": _share(int((p_vis[:, j] & ~lab).sum()), n_unl),
                "labelled_not_visible": _share(int((~p_vis[:, j] & lab).sum()), n_lab),
                "oks_lost": float(lost[:, j].sum() / P) if P else None,
                "share_of_loss": float(lost[:, j].sum() / total_lost) if total_lost > 0 else None,
            }
        )
    layout: list[list[float] | None] = []
    with np.errstate(divide="ignore", invalid="ignore"):  # box centre, sqrt(box area) units
        unit = np.sqrt(box[:, 2:3] * box[:, 3:4])
        rel_x = (g_kp[:, :, 0] - (box[:, :1] + box[:, 2:3] / 2)) / unit
        rel_y = (g_kp[:, :, 1] - (box[:, 1:2] + box[:, 3:4] / 2)) / unit
    for j in range(k):
        ok = labelled[:, j] & np.isfinite(rel_x[:, j]) & np.isfinite(rel_y[:, j])
        layout.append(
            [float(rel_x[ok, j].mean()), float(rel_y[ok, j].mean())] if ok.any() else None
        )
    edges = ds.skeleton.edges if ds.skeleton is not None else []
    return {
        "oks_thr": thr,
        "score_thr": None if not np.isfinite(score_thr) else float(score_thr),
        "visible_thr": visible_thr,
        "n_pairs": P,
        "sigmas": source,
        "keypoints": rows,
        "skeleton": [[a + 1, b + 1] for a, b in edges],
        "layout": layout,
    }


def _share(n: int, d: int) -> float | None:
    return n / d if d else None
