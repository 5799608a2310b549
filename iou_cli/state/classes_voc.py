"""The VOC / VOC2007 / DOTA reduce cut by class, for a cluster (as :mod:`.classes` for
COCO/LVIS).

:func:`voc_class_result` runs where one class's records are assembled (a Ray / Spark group):
it reduces them with :mod:`.reduce`'s own VOC (or DOTA) code on a one-class cut of the state
(the devkit's per-class sort by descending score over file order, cumulative TP / FP, the
all-point or 11-point AP; DOTA: which hit takes each ground truth is decided there too, by
the devkit's visiting order over the class) and keeps that class's AP and counts, and the few columns the
operating point needs: per prediction that is a TP or an FP its score, TP bit and file
position; per TP its IoU. :func:`combine_voc` (the driver) puts the classes together and
sweeps the operating point (the score maximising F1 over all classes, TP/FP/FN, mean IoU
summed in file order as the one-shot run sums it) over those columns, so the Result is bit
for bit the one-shot run's, and the driver never holds a class's match records.

A combined evaluation has no match rows and no per-class PR curves (their arrays are as
long as the predictions); the one-machine run has both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import UsageError
from ..protocols.dota import DotaEvaluation
from ..protocols.voc import VocEvaluation, VocMatch
from ..result import Result
from .classes import _small, class_state
from .partial import PartialState
from .reduce import _dota, _voc, skeleton

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def voc_class_result(
    header: Mapping[str, Any], k: int, records: Mapping[str, np.ndarray], n_gt: int
) -> dict[str, np.ndarray]:
    """Class ``k``'s reduce: ``records`` (its rows from every bucket: ``score``, ``image``,
    ``rank`` (file position), ``bits``, ``iou``; any order), ``n_gt`` its non-difficult
    ground truths over every image -> its AP, counts and operating-point columns."""
    state = class_state(header, k, records, {"n_gt": np.asarray([n_gt], dtype=np.int64)})
    ev = _dota(state) if header["layout"]["kind"] == "dota" else _voc(state)
    assert isinstance(ev, VocEvaluation)
    cur, m = ev.curves[0], ev.match
    rank = state.rank[np.argsort(state.rank, kind="stable")]  # ev's rows: file order
    keep = m.tp | m.fp
    return {
        "ap": np.asarray([0.0 if cur["AP"] is None else cur["AP"]], dtype=np.float64),
        "counts": np.asarray([cur["tp"], cur["fp"], cur["n_gt"], cur["n_det"]], dtype=np.int64),
        "op_score": ev.dataset.pred.score[keep],
        "op_tp": m.tp[keep],
        "op_rank": _small(rank[keep]),
        "tp_iou": m.iou[m.tp],
    }


class LeanVocEvaluation(VocEvaluation):
    """A VOC evaluation combined from per-class results: the operating point read from
    :func:`combine_voc`'s columns; no match rows, no PR curves (``curves`` keeps each
    class's AP and counts)."""

    lean = True

    def _op_rows(self) -> tuple[FloatArray, BoolArray, BoolArray, FloatArray, IntArray]:
        score, tp, iou, cat = self._cache["op"]
        return score, tp, ~tp, iou, cat

    def _n_gt(self) -> int:
        return int(self._cache["n_gt"])

    def _best_f1(self) -> float | None:
        score, tp = self._cache["op"][:2]
        return lean_best_f1(score, tp, self._n_gt())


def lean_best_f1(score: FloatArray, tp: BoolArray, n_gt: int) -> float | None:
    """:func:`iou_cli.metrics.best_f1_threshold` where every row is a TP or an FP (the
    combined columns), with fewer arrays alive at once: the FPs before each cut are the
    rows before it minus its TPs (the same integers, so the same F1 floats and argmax)."""
    if score.shape[0] == 0 or n_gt <= 0:
        return None
    order = np.argsort(-score, kind="stable")
    s = score[order]
    ctp = np.cumsum(tp[order])
    del order
    last = np.ones(s.size, dtype=bool)  # last position of each run of equal scores
    last[:-1] = s[1:] != s[:-1]
    at = np.flatnonzero(last)
    ctp, s = ctp[at], s[at]
    cfp = (at + 1) - ctp
    f1 = 2.0 * ctp / (ctp + cfp + n_gt)
    return float(s[int(np.argmax(f1))])


class LeanDotaEvaluation(LeanVocEvaluation, DotaEvaluation):
    """A DOTA evaluation combined from per-class results (see :class:`LeanVocEvaluation`)."""


def combine_voc(rest: PartialState, parts: dict[int, dict[str, np.ndarray]]) -> Result:
    """The Result of the union: ``parts`` (class -> :func:`voc_class_result` plus
    ``mapped``, the class's ground truths the buckets counted; consumed), ``rest`` (the state
    of the images without predictions: their ground truths' counts)."""
    from ..matching.table import MatchTable

    h = rest.header
    p = h["params"]
    K = len(h["categories"]["names"])
    n_rest = rest.counts["n_gt"]
    empty = {"score": np.zeros(0), "image": np.zeros(0), "rank": np.zeros(0)}
    empty |= {"bits": np.zeros((0, rest.bits.shape[1]), np.uint8), "iou": np.zeros(0)}
    curves: list[dict[str, Any]] = []
    cols: list[dict[str, np.ndarray]] = []
    for k in range(K):
        part = parts.pop(k, None)
        if part is None:  # no prediction in any bucket: its ground truths are rest's
            part = voc_class_result(h, k, empty, int(n_rest[k]))
        elif int(part["counts"][2]) != int(np.sum(part["mapped"])) + int(n_rest[k]):
            raise UsageError(
                f"distributed evaluation: class {k}'s ground-truth counts differ between "
                "the workers and the driver (same ground truth everywhere?)"
            )
        tp, fp, n_gt, n_det = (int(v) for v in part["counts"])
        nothing = np.zeros(0)
        curves.append(
            {
                "AP": float(part["ap"][0]) if n_gt else None,
                "tp": tp,
                "fp": fp,
                "n_gt": n_gt,
                "n_det": n_det,
                "recall": nothing,
                "precision": nothing,
            }
        )
        cols.append({c: part[c] for c in ("op_score", "op_tp", "op_rank", "tp_iou")})
        del part
    op = _op_columns(cols)
    del cols
    ds = skeleton(rest)
    none_i = np.zeros(0, dtype=np.int64)
    none_b = np.zeros(0, dtype=bool)
    thr = float(p["iou_thr"])
    table = MatchTable.rowless(np.asarray([thr]), np.asarray([c["n_gt"] for c in curves]))
    match = VocMatch(
        tp=none_b, fp=none_b, iou=np.zeros(0), gt_row=none_i, order=none_i, hard=none_b,
        hit=none_b,
    )  # fmt: skip
    params: dict[str, Any] = {"iou_thr": thr, "score_thr": p["score_thr"], "matches": False}
    lean: type[LeanVocEvaluation] = LeanVocEvaluation
    if h["layout"]["kind"] == "dota":
        lean = LeanDotaEvaluation
        params |= {"all_point": bool(p["all_point"]), "iou_type": "obb"}
    else:
        params |= {"use_07": bool(p["use_07"]), "plus_one": bool(p["plus_one"])}
    ev = lean(
        protocol=h["protocol"], params=params, dataset=ds, table=table, match=match, curves=curves
    )
    ev._cache["op"] = op
    ev._cache["n_gt"] = sum(c["n_gt"] for c in curves)
    res = ev.result()
    res.gt_fingerprint = str(h.get("fingerprint") or "") or None
    return res


def _op_columns(
    cols: list[dict[str, np.ndarray]],
) -> tuple[FloatArray, BoolArray, FloatArray, IntArray]:
    """Every class's TP and FP rows as one set in file order (score, TP, IoU dense, class):
    the mean IoU's float sum follows that order, as in the one-shot run. One column at a
    time, each class's piece dropped once gathered (the driver's peak stays near the
    received rows plus the result)."""
    if not cols:
        return np.zeros(0), np.zeros(0, bool), np.zeros(0), np.zeros(0, np.int64)
    n = [c["op_score"].shape[0] for c in cols]
    perm = np.argsort(np.concatenate([c.pop("op_rank") for c in cols]), kind="stable")
    tp_parts = [c.pop("op_tp") for c in cols]
    iou = np.full(perm.shape[0], np.nan)
    iou[np.concatenate(tp_parts)] = np.concatenate([c.pop("tp_iou") for c in cols])
    iou = iou[perm]
    tp = np.concatenate(tp_parts)[perm]
    del tp_parts
    score = np.concatenate([c.pop("op_score") for c in cols])[perm]
    cat = _small(np.repeat(np.arange(len(cols), dtype=np.int64), n))[perm]
    return score, tp, iou, cat
