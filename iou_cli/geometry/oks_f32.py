"""Ultralytics' Object Keypoint Similarity (``ultralytics.utils.metrics.kpt_iou`` as its pose
validator calls it), our own NumPy code in the same float32 operations:

* ``d = dx**2 + dy**2`` per keypoint, float32;
* the object area is **0.53 x the ground truth's box area** (``w * h * 0.53`` in float32:
  YOLO labels have no area; the factor is xtcocotools');
* ``e = d / ((2 * sigma)**2 * (area + 1e-7) * 2)``;
* ``OKS = sum(exp(-e) * labelled) / (n_labelled + 1e-7)``: only keypoints the ground truth
  labels count (flag != 0); a ground truth without any has OKS 0 with every prediction
  (pycocotools measures those to an enlarged box instead);
* sigmas: the data's own (``--sigmas``, ``kpt_oks_sigmas``, the categories'), else COCO's
  17 for ``kpt_shape [17, 3]`` (Ultralytics' ``OKS_SIGMA``: the float32 values divided by
  10 in float32, not COCO's float64 ones), else ``1 / K`` for every keypoint.

Sums of float32 are not ordered as torch orders them, so an OKS may differ from
Ultralytics' in its last bit (about 1e-7); a match changes only when an OKS lies within
that of a threshold.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .oks import COCO_SIGMAS
from .oks import ultralytics_sigmas as default_sigmas  # noqa: F401 (re-exported)

F32 = npt.NDArray[np.float32]
FloatArray = npt.NDArray[np.float64]

AREA_FROM_BOX = np.float32(0.53)
EPS = np.float32(1e-7)
# ultralytics.utils.metrics.OKS_SIGMA: float32 values / 10.0, divided in float32
OKS_SIGMA: F32 = np.array(
    [0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07, 0.87]
    + [0.87, 0.89, 0.89],
    dtype=np.float32,
) / np.float32(10.0)


def sigmas_f32(table: FloatArray) -> F32:
    """The sigma table in float32 as Ultralytics holds it (COCO's rows as its OKS_SIGMA)."""
    t = np.asarray(table, dtype=np.float64)
    out: F32 = t.astype(np.float32)
    if t.shape[1] == COCO_SIGMAS.shape[0]:
        out[(t == COCO_SIGMAS).all(axis=1)] = OKS_SIGMA
    return out


def box_area_f32(xyxy: FloatArray) -> F32:
    """``0.53 * w * h`` of ``x1, y1, x2, y2`` boxes, float32 (Ultralytics' pose area)."""
    b = np.asarray(xyxy, dtype=np.float64).astype(np.float32)
    w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    out: F32 = (w * h) * AREA_FROM_BOX
    return out


def oks_f32(gt: F32, pred: F32, area: F32, sigma: F32) -> F32:
    """(G, D) OKS of float32 ground-truth keypoints ``gt`` (G, K, 3), predicted ``pred``
    (D, K, 2+), ``area`` (G,) and ``sigma`` (K,), in Ultralytics' order of operations."""
    dx = gt[:, None, :, 0] - pred[None, :, :, 0]
    dy = gt[:, None, :, 1] - pred[None, :, :, 1]
    d = dx * dx + dy * dy
    labelled = gt[:, :, 2] != 0
    s2 = (np.float32(2) * sigma) ** 2
    scale = s2[None, None, :] * (area + EPS)[:, None, None] * np.float32(2)
    e = d / scale
    ex = np.exp(-e) * labelled[:, None, :]
    n = labelled.sum(axis=1).astype(np.float32) + EPS
    out: F32 = ex.sum(axis=-1) / n[:, None]
    return out
