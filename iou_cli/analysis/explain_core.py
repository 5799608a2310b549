"""What the ``explain`` walks share: a :class:`Step`, the :class:`Explanation`, the
accumulation variants (pycocotools' over any match bits, Ultralytics' AP means) and the walk
itself (each state's values and its effect over the previous state)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass
class Step:
    """One convention switched: its ``name``, what changed (``before`` -> ``after``), the
    values after it and the ``effect`` (after minus before) per key."""

    name: str
    before: str
    after: str
    values: dict[str, float | None]
    effect: dict[str, float | None]


@dataclass
class Explanation:
    source: str
    target: str
    keys: list[tuple[str, str]]  # (source key, target key)
    start: dict[str, float | None]  # by source key
    end: dict[str, float | None]
    steps: list[Step]

    @property
    def total(self) -> dict[str, float | None]:
        return {k: _diff(self.end[k], self.start[k]) for k, _ in self.keys}

    def biggest(self) -> Step | None:
        """The step that moves the first key most."""
        key = self.keys[0][0]
        moved = [s for s in self.steps if s.effect.get(key)]
        return max(moved, key=lambda s: abs(s.effect[key] or 0.0)) if moved else None

    def reading(self) -> str:
        """One line on the biggest step."""
        key, tkey = self.keys[0]
        total = self.total[key]
        big = self.biggest()
        if big is None or total is None:
            return f"{self.source} and {self.target} agree on {key} here: no convention moves it"
        share = f" of the total {total:+.6f}" if total else ""
        return (
            f"{key} ({self.source}) -> {tkey} ({self.target}): the biggest step is "
            f"{big.name} ({big.before} -> {big.after}), {big.effect[key]:+.6f}{share}"
        )

    def rows(self) -> list[dict[str, Any]]:
        """The table: start, one row per step, end, total; one column per key."""
        keys = [k for k, _ in self.keys]
        out: list[dict[str, Any]] = [
            {"step": f"{self.source} (start)", "change": "", **{k: self.start[k] for k in keys}}
        ]
        for i, s in enumerate(self.steps, 1):
            out.append({"step": f"{i}. {s.name}", "change": f"{s.before} -> {s.after}", **s.effect})
        out.append({"step": f"{self.target} (end)", "change": "", **self.end})
        out.append({"step": "total", "change": "end - start", **self.total})
        return out


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


# ------------------------------------------------------------------- accumulation variants


def coco_ap(
    correct: npt.NDArray[np.bool_],
    score: npt.NDArray[Any],
    cls: IntArray,
    n_gt: IntArray,
    *,
    sort: str = "stable",
    fp: npt.NDArray[np.bool_] | None = None,
) -> dict[str, float | None]:
    """pycocotools' accumulation (area all, no ignored detections) of match bits ``correct``
    (N, T) with ``score``/``cls`` in evaluation order (images, then descending score):
    AP, AP50, AP75 (AP50 only with one threshold). ``sort="numpy"``: ties in the order of
    NumPy's default sort over all classes (Ultralytics') instead of a stable sort per class.
    ``fp``: the false positives when some predictions are neither (default ``~correct``)."""
    from ..protocols.coco import REC_THRS

    T = correct.shape[1]
    K = n_gt.shape[0]
    R = REC_THRS.shape[0]
    fps_all = ~correct if fp is None else fp
    glob = np.argsort(-score) if sort == "numpy" else None
    prec = np.full((T, R, K), -1.0)
    for k in range(K):
        npig = int(n_gt[k])
        if npig == 0:
            continue
        if glob is not None:
            rows = glob[cls[glob] == k]
        else:
            sel = np.flatnonzero(cls == k)
            rows = sel[np.argsort(-score[sel], kind="mergesort")]
        q = np.zeros((T, R))
        if rows.size:
            tps = correct[rows].T
            tp = np.cumsum(tps, axis=1).astype(np.float64)
            fpc = np.cumsum(fps_all[rows].T, axis=1).astype(np.float64)
            for t in range(T):
                rc = tp[t] / npig
                pr = tp[t] / (fpc[t] + tp[t] + np.spacing(1))
                pr = np.maximum.accumulate(pr[::-1])[::-1]
                idx = np.searchsorted(rc, REC_THRS, side="left")
                ok = idx < rows.size
                q[t, ok] = pr[idx[ok]]
        prec[:, :, k] = q

    def mean(s: FloatArray) -> float | None:
        s = s[s > -1]
        return float(np.mean(s)) if s.size else None

    if T == 1:
        return {"AP50": mean(prec[0])}
    return {"AP": mean(prec), "AP50": mean(prec[0]), "AP75": mean(prec[5])}


def _ul_ap(curves: Any) -> dict[str, float | None]:
    if not curves.classes.size:
        return {"AP": None, "AP50": None, "AP75": None}
    ap = curves.ap
    return {
        "AP": float(ap.mean()),
        "AP50": float(ap[:, 0].mean()),
        "AP75": float(ap[:, 5].mean()),
    }


# ------------------------------------------------------------------------------ the walk


def _no_ignore(ds: Dataset) -> Dataset:
    g = ds.gt
    n = len(g)
    return replace(
        ds,
        gt=replace(
            g,
            iscrowd=np.zeros(n, dtype=bool),
            ignore=np.zeros(n, dtype=bool),
            difficult=np.zeros(n, dtype=bool),
        ),
    )


def _walk(
    start: dict[str, float | None],
    states: list[tuple[str, str, str, Callable[[], dict[str, float | None]]]],
) -> list[Step]:
    steps: list[Step] = []
    prev = start
    for name, before, after, fn in states:
        values = fn()
        steps.append(
            Step(name, before, after, values, {k: _diff(values[k], prev[k]) for k in values})
        )
        prev = values
    return steps
