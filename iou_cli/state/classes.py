"""The reduce cut by class (COCO, LVIS), for a cluster: no node holds every record.

:func:`class_result` runs where one class's records are assembled (a Ray / Spark group):
it reduces them with :mod:`.reduce`'s own code on a one-class cut of the state, and keeps
that class's slices of the ``precision`` / ``recall`` / ``scores`` arrays and the few
columns the operating point needs (per prediction that is a TP or an FP at the operating
IoU: its score and TP bit; per TP: its IoU and image ordinal). :func:`combine` (the driver)
puts the slices in place and sweeps the operating point (the score maximising F1 over all
classes, TP/FP/FN, mean IoU) over those columns, in the one-shot run's order where the
floats depend on it (the mean IoU sums the TPs by image, class, rank), so the Result is bit
for bit the one-shot run's.

Each class's accumulation depends on that class's records alone (pycocotools sorts and sums
per class), and its total ground-truth counts: the class's group reads them from the whole
ground truth, and the driver checks them against the buckets' and the unmatched images'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import UsageError
from ..protocols.coco import CocoEvaluation
from ..protocols.lvis import LvisEvaluation
from ..result import Result
from .partial import PartialState
from .reduce import _coco, skeleton

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _small(values: np.ndarray) -> np.ndarray:
    """Integers in the smallest signed dtype that holds them."""
    top = int(np.abs(values).max()) if values.size else 0
    for dt in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(dt).max:
            return values.astype(dt)
    return values.astype(np.int64)


def _one_class(header: Mapping[str, Any], k: int) -> dict[str, Any]:
    """The header of class ``k``'s cut (its category alone; no image table)."""
    h = dict(header)
    cats = {
        name: [vals[k]]
        for name, vals in header["categories"].items()
        if isinstance(vals, list) and len(vals) == len(header["categories"]["names"])
    }
    h["categories"] = {**header["categories"], **cats}
    h["n_images"] = 0
    return h


def class_state(
    header: Mapping[str, Any],
    k: int,
    records: Mapping[str, np.ndarray],
    counts: dict[str, np.ndarray],
) -> PartialState:
    """Class ``k``'s records (``score``, ``image``, ``rank``, ``bits``, ``iou``; any order)
    as a one-class state: what :mod:`.reduce`'s own code reduces on a cluster's group."""
    n = int(records["score"].shape[0])
    return PartialState(
        header=_one_class(header, k),
        images=np.zeros(0, dtype=np.int64),
        category=np.zeros(n, dtype=np.int64),
        score=np.asarray(records["score"], dtype=np.float64),
        image=np.asarray(records["image"], dtype=np.int64),
        rank=np.asarray(records["rank"], dtype=np.int64),
        bits=np.asarray(records["bits"], dtype=np.uint8),
        iou=np.asarray(records["iou"], dtype=np.float64),
        counts=counts,
    )


def class_result(
    header: Mapping[str, Any],
    k: int,
    records: Mapping[str, np.ndarray],
    n_pos: IntArray,
    n_det: int,
) -> dict[str, np.ndarray]:
    """Class ``k``'s reduce: ``records`` (its rows from every bucket: ``score``, ``image``,
    ``rank``, ``bits``, ``iou``, any order), ``n_pos`` (area ranges,) its ground truths
    counted over every image, ``n_det`` its predictions -> its slices of the arrays and its
    operating-point columns (see the module docstring)."""
    state = class_state(
        header,
        k,
        records,
        {
            "n_pos": np.asarray(n_pos, dtype=np.int64)[:, None],
            "n_det": np.asarray([n_det], dtype=np.int64),
        },
    )
    ev = _coco(state, 1, n_classes=len(header["categories"]["names"]))
    assert isinstance(ev, CocoEvaluation)
    score, tp, fp, iou = ev._op_columns()  # in the class's det order: image, rank
    keep = tp | fp
    return {
        "precision": ev.precision[:, :, 0],
        "recall": ev.recall[:, 0],
        "scores": ev.scores[:, :, 0],
        "n_pos": np.asarray(n_pos, dtype=np.int64),
        "n_det": np.asarray([n_det], dtype=np.int64),
        "op_score": score[keep],
        "op_tp": tp[keep],
        "tp_iou": iou[tp],
        "tp_image": _small(ev.table.det_image[tp]),
    }


class _Lean:
    """The operating point read from :func:`combine`'s columns, not from a match table."""

    _cache: dict[str, Any]

    @property
    def n_gt(self) -> IntArray:
        n: IntArray = self._cache["n_pos"]
        return n

    def _op_columns(self) -> tuple[FloatArray, BoolArray, BoolArray, FloatArray]:
        score, tp, iou, _ = self._cache["op"]
        return score, tp, ~tp, iou

    def _op_category(self) -> IntArray:
        cat: IntArray = self._cache["op"][3]
        return cat


class LeanCocoEvaluation(_Lean, CocoEvaluation):
    """A COCO evaluation combined from per-class results: its ``table`` has no rows
    (``result.table`` is not available from a cluster's run)."""


class LeanLvisEvaluation(_Lean, LvisEvaluation):
    """An LVIS evaluation combined from per-class results (see :class:`LeanCocoEvaluation`)."""


def combine(
    rest: PartialState, parts: dict[int, dict[str, np.ndarray]], extra: Mapping[str, int]
) -> Result:
    """The Result of the union: ``parts`` (class -> :func:`class_result`, of the classes the
    buckets emitted), ``rest`` (the state of the images without predictions: their ground
    truths' counts), ``extra`` (the buckets' additive scalars). ``parts`` is consumed (each
    class's arrays are dropped once copied, so the rows received are freed as they go)."""
    from ..matching.table import MatchTable
    from .reduce import _coco_params

    h = rest.header
    K = len(h["categories"]["names"])
    n_rest = rest.counts["n_pos"]
    empty = {"score": np.zeros(0), "image": np.zeros(0), "rank": np.zeros(0)}
    empty |= {"bits": np.zeros((0, rest.bits.shape[1]), np.uint8), "iou": np.zeros(0)}
    params = _coco_params(h)
    lay = h["layout"]
    T, R = len(params.iou_thrs), params.rec_thrs.shape[0]
    A, M = len(params.area_rngs), len(params.max_dets)
    P = M if 8 * T * R * K * A * M <= 256 * 2**20 else 1  # as reduce._coco
    areas: list[str] = list(lay["areas"])
    precision = np.full((T, R, K, A, P), -1.0)
    recall = np.full((T, K, A, M), -1.0)
    scores = np.full((T, R, K, A, P), -1.0)
    n_pos = np.zeros((len(areas), K), dtype=np.int64)
    n_det = np.zeros(K, dtype=np.int64)
    nothing: dict[str, np.ndarray] | None = None
    cols: list[dict[str, np.ndarray]] = []  # the operating point's columns per class
    for k in range(K):
        part = parts.pop(k, None)
        if part is None:  # no prediction in any bucket: its ground truths are rest's
            if n_rest[:, k].any():
                part = class_result(h, k, empty, n_rest[:, k], 0)
            else:
                if nothing is None:
                    nothing = class_result(h, k, empty, n_rest[:, k], 0)
                part = nothing
        elif not np.array_equal(part["n_pos"], part["mapped"] + n_rest[:, k]):
            raise UsageError(
                f"distributed evaluation: class {k}'s ground-truth counts differ between "
                "the workers and the driver (same ground truth everywhere?)"
            )
        precision[:, :, k], recall[:, k] = part["precision"], part["recall"]
        scores[:, :, k] = part["scores"]
        n_pos[:, k], n_det[k] = part["n_pos"], part["n_det"][0]
        cols.append({c: part[c] for c in ("op_score", "op_tp", "tp_iou", "tp_image")})
        del part
    op = _op_columns(cols)
    del cols
    ds = skeleton(rest)
    no_rows = np.zeros(0, dtype=np.int64)
    table = MatchTable.rowless(np.asarray(lay["thresholds"]), n_pos[0], areas[0])
    common: dict[str, Any] = {
        "params": params,
        "dataset": ds,
        "table": table,
        "precision": precision,
        "recall": recall,
        "scores": scores,
        "precision_max_dets": tuple(params.max_dets[-P:]),
        "tables": {areas[0]: table},
        "area_defined": bool(lay["area_defined"]),
        "n_det": n_det.astype(np.int64),
        "score_order": no_rows,
        "op_t": int(lay["op_t"]),
    }
    ev: CocoEvaluation
    if h["protocol"] == "lvis":
        ev = LeanLvisEvaluation(
            protocol="lvis",
            frequency=np.asarray(h["categories"]["frequency"], dtype=np.int64),
            source=ds,
            n_over=int(extra.get("n_over", 0)),
            most=int(extra.get("max_most", 0)),
            **common,
        )
    else:
        ev = LeanCocoEvaluation(protocol="coco", **common)
    ev._cache["n_pos"] = n_pos[0].astype(np.int64)
    ev._cache["op"] = op
    res = ev.result()
    res.gt_fingerprint = str(h.get("fingerprint") or "") or None
    if h["protocol"] == "lvis":
        res.params["evaluated_predictions"] = int(extra.get("n_eval_pred", 0))
        res.params["evaluated_ground_truths"] = int(extra.get("n_eval_gt", 0))
    return res


def _op_columns(
    cols: list[dict[str, np.ndarray]],
) -> tuple[FloatArray, BoolArray, FloatArray, np.ndarray]:
    """Every class's operating-point rows as one set (score, TP, IoU dense, class): the
    FPs first, then the TPs in the one-shot run's order (image, class, rank), which the mean
    IoU's float sum follows (the counts and the best-F1 sweep do not depend on the order)."""
    n = [c["op_score"].shape[0] for c in cols]
    score = np.concatenate([c.pop("op_score") for c in cols]) if cols else np.zeros(0)
    tp = np.concatenate([c.pop("op_tp") for c in cols]) if cols else np.zeros(0, bool)
    cat = _small(np.repeat(np.arange(len(cols)), n))
    dt = np.result_type(np.int32, *[c["tp_image"].dtype for c in cols])
    key = np.full(score.shape[0], -1, dtype=dt)
    key[tp] = np.concatenate([c.pop("tp_image") for c in cols]) if cols else 0
    iou = np.zeros(score.shape[0])
    iou[tp] = np.concatenate([c.pop("tp_iou") for c in cols]) if cols else 0.0
    perm = np.argsort(key, kind="stable")  # class-major rows, (image, rank) inside a class
    del key
    return score[perm], tp[perm], iou[perm], cat[perm]
