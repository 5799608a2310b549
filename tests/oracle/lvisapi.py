"""lvis-api (PyPI ``lvis`` 0.5.3) as an oracle: run LVISEval on in-memory dicts, quietly.

lvis-api 0.5.3 calls ``np.float``, which NumPy 1.24 removed; the shim below puts the alias
back for the oracle's sake (it is the builtin ``float``, exactly what the alias was). It is
set only while lvis-api runs, so no code of ours can lean on it.
"""

from __future__ import annotations

import contextlib
import copy
import io
import logging
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

SUMMARY_KEYS = [
    "AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf",
    "AR300", "ARs", "ARm", "ARl",
]  # fmt: skip
# lvis-api's result keys, in the order of SUMMARY_KEYS
LVIS_KEYS = [
    "AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf",
    "AR@300", "ARs@300", "ARm@300", "ARl@300",
]  # fmt: skip


@contextlib.contextmanager
def _np_float_shim() -> Iterator[None]:
    had = "float" in np.__dict__
    if not had:
        np.float = float  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if not had:
            del np.float  # type: ignore[attr-defined]


def lvis_api() -> Any:
    """The ``lvis`` package, or skip the test when it is not installed."""
    with _np_float_shim():
        return pytest.importorskip("lvis")


def lvis_eval(gt: dict[str, Any], dets: list[dict[str, Any]], iou_type: str = "bbox") -> Any:
    """A finished ``LVISEval`` (evaluate, accumulate, summarize) of copies of the inputs."""
    lvis = lvis_api()
    logging.getLogger("lvis").setLevel(logging.ERROR)
    with _np_float_shim(), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        # lvis-api calls the deprecated Logger.warn when given a results list
        warnings.simplefilter("ignore", DeprecationWarning)
        lvis_gt = lvis.LVIS.__new__(lvis.LVIS)
        lvis_gt.logger = logging.getLogger("lvis.lvis")
        lvis_gt.dataset = copy.deepcopy(gt)
        lvis_gt._create_index()
        ev = lvis.LVISEval(lvis_gt, copy.deepcopy(dets), iou_type)
        ev.run()
    return ev


def summary_of(ev: Any) -> list[float | None]:
    """lvis-api's results in SUMMARY_KEYS order; its -1 (undefined) as None."""
    return [None if ev.results[k] == -1 else float(ev.results[k]) for k in LVIS_KEYS]


CLASS_KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR300", "ARs", "ARm", "ARl"]


def per_class(ev: Any) -> list[dict[str, float | None]]:
    """lvis-api's ``_summarize`` restricted to one class, for every class: the mean of its
    defined slice of ``eval["precision"]`` (T, R, K, A) / ``eval["recall"]`` (T, K, A)."""
    prec, rec = ev.eval["precision"], ev.eval["recall"]
    thrs = ev.params.iou_thrs

    def mean(s: Any) -> float | None:
        return float(np.mean(s[s > -1])) if (s > -1).any() else None

    out = []
    for k in range(prec.shape[2]):
        row = {
            "AP": mean(prec[:, :, k, 0]),
            "AP50": mean(prec[np.where(thrs == 0.5)[0]][:, :, k, 0]),
            "AP75": mean(prec[np.where(thrs == 0.75)[0]][:, :, k, 0]),
        }
        row.update({key: mean(prec[:, :, k, a]) for a, key in ((1, "APs"), (2, "APm"), (3, "APl"))})
        keys = ((0, "AR300"), (1, "ARs"), (2, "ARm"), (3, "ARl"))
        row.update({key: mean(rec[:, k, a]) for a, key in keys})
        out.append(row)
    return out


def counts_at(ev: Any, score_thr: float, iou_thr: float = 0.5) -> tuple[int, int, int]:
    """(tp, fp, fn) from lvis-api's per-image results (area "all") at one IoU threshold,
    counting predictions scored >= ``score_thr``: a match to a non-ignored ground truth is a
    true positive, an unmatched prediction not ignored a false positive."""
    t = int(np.flatnonzero(np.isclose(ev.params.iou_thrs, iou_thr))[0])
    tp = fp = n_gt = 0
    n_area = len(ev.params.area_rng)
    n_img = len(ev.params.img_ids)
    for k in range(len(ev.params.cat_ids)):
        for e in ev.eval_imgs[k * n_area * n_img : k * n_area * n_img + n_img]:
            if e is None:
                continue
            keep = np.asarray(e["dt_scores"], dtype=float) >= score_thr
            matched = e["dt_matches"][t] > 0
            ignored = e["dt_ignore"][t].astype(bool)
            tp += int((keep & matched & ~ignored).sum())
            fp += int((keep & ~matched & ~ignored).sum())
            n_gt += int((np.asarray(e["gt_ignore"]) == 0).sum())
    return tp, fp, n_gt - tp


def fates(ev: Any, iou_thr: float = 0.5) -> tuple[list[tuple[Any, ...]], list[int]]:
    """lvis-api's fate of every evaluated prediction (area "all", one IoU threshold):
    ``(image_id, category_id, score, outcome, matched gt id or -1)`` with outcome TP, FP or
    ignored; and the ids of the counted ground truths no prediction took (FN)."""
    t = int(np.flatnonzero(np.isclose(ev.params.iou_thrs, iou_thr))[0])
    n_area = len(ev.params.area_rng)
    n_img = len(ev.params.img_ids)
    out: list[tuple[Any, ...]] = []
    missed: list[int] = []
    for k in range(len(ev.params.cat_ids)):
        for e in ev.eval_imgs[k * n_area * n_img : k * n_area * n_img + n_img]:
            if e is None:
                continue
            for j, score in enumerate(e["dt_scores"]):
                m = int(e["dt_matches"][t][j])
                ig = bool(e["dt_ignore"][t][j])
                outcome = "ignored" if ig else ("TP" if m > 0 else "FP")
                out.append((e["image_id"], e["category_id"], score, outcome, m if m > 0 else -1))
            for j, gid in enumerate(e["gt_ids"]):
                if e["gt_ignore"][j] == 0 and e["gt_matches"][t][j] == 0:
                    missed.append(int(gid))
    return out, missed
