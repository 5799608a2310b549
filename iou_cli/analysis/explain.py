"""Why two tools' numbers differ: switch one convention at a time (``iou-eval explain``).

From pycocotools (``--protocol coco``) to Ultralytics' ``yolo val`` (``--protocol
ultralytics``), in this order, each step changing one convention of the previous state:

1. **crowd and ignore**: crowd (and ``ignore``/``difficult``) ground truths stop being
   ignored regions and count as ordinary objects (Ultralytics has no such flag);
2. **maxDets**: every prediction of an image and class counts, not only its 100 best;
3. **matching rule**: per threshold, ties between equally good ground truths go to the first
   one, not the last, and nothing is preferred for being non-ignored (IoU still pycocotools'
   float64, thresholds ``min(t, 1 - 1e-10)``);
4. **IoU precision**: boxes, confidences, IoU (``+ 1e-7`` in the union) and thresholds in
   float32, as Ultralytics' tensors;

On rotated boxes the walk starts from COCO on polygon IoU, and one step comes before the
precision step: **IoU**, polygon IoU -> probiou (the Bhattacharyya similarity of the boxes'
Gaussians, Ultralytics' OBB validator's), both in float64; the precision step then rounds
probiou to float32.
5. **tie order**: predictions of equal confidence in the order of NumPy's default (unstable)
   sort over all classes, not a stable sort per class;
6. **AP integration**: the precision envelope (sentinels 1 and 0) interpolated at 101 recall
   points and integrated by the trapezoid rule, instead of the mean of 101 samples of the
   interpolated precision.

The class set (classes with ground truth) and the IoU thresholds (.50:.05:.95) are the same
in both. The first state is the COCO protocol's own result and the last the Ultralytics
protocol's own (the tests check both ends and that the steps add up to the total).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset
from ..errors import UsageError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

TARGETS = ("ultralytics", "voc", "voc07")
SOURCES = ("coco",)
# the keys compared: (COCO key, Ultralytics key)
KEYS = (
    ("AP", "metrics/mAP50-95(B)"),
    ("AP50", "metrics/mAP50(B)"),
    ("AP75", "mAP75"),
)


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


def _coco_stats(
    ds: Dataset, max_dets: tuple[int, ...] | None = None, iou_type: str = "bbox"
) -> dict[str, float | None]:
    from ..protocols import coco

    params = coco.CocoParams(iou_type=iou_type)
    if max_dets is not None:
        params = replace(params, max_dets=max_dets)
    ev = coco.run(ds, params)
    st = ev.stats()
    return {"AP": st["AP"], "AP50": st["AP50"], "AP75": st["AP75"]}


def _coco_to_ultralytics(ds: Dataset, rotated: bool = False) -> Explanation:
    from ..protocols import ultralytics as ul

    geo = "obb" if rotated else "bbox"
    n_gt = np.bincount(ds.gt.category, minlength=len(ds.categories)).astype(np.int64)
    start = _coco_stats(ds, iou_type=geo)
    ds1 = _no_ignore(ds)
    group = ds.pred.image * max(len(ds.categories), 1) + ds.pred.category
    most = int(np.bincount(group).max()) if group.size else 0
    no_cap = (1, 10, max(100, most))
    bits: dict[str, tuple[npt.NDArray[np.bool_], npt.NDArray[Any], IntArray]] = {}
    final = "probiou" if rotated else "box"

    def matched(
        precision: str, iou: str = final
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[Any], IntArray]:
        key = f"{precision} {iou}"
        if key not in bits:
            order, taken, _ = ul.match(ds1, precision=precision, iou=iou)
            score: npt.NDArray[Any] = ds1.pred.score[order]
            if precision == "float32":
                score = score.astype(np.float32)
            bits[key] = (taken >= 0, score, ds1.pred.category[order])
        return bits[key]

    def step3() -> dict[str, float | None]:
        correct, score, cls = matched("float64", "polygon" if rotated else "box")
        return coco_ap(correct, score, cls, n_gt)

    def step_probiou() -> dict[str, float | None]:
        correct, score, cls = matched("float64")
        return coco_ap(correct, score, cls, n_gt)

    def step4() -> dict[str, float | None]:
        correct, score, cls = matched("float32")
        return coco_ap(correct, score, cls, n_gt)

    def step5() -> dict[str, float | None]:
        correct, score, cls = matched("float32")
        return coco_ap(correct, score, cls, n_gt, sort="numpy")

    def step6() -> dict[str, float | None]:
        correct, conf, cls = matched("float32")
        return _ul_ap(ul.accumulate(correct, conf, cls, ds1.gt.category))

    states: list[tuple[str, str, str, Callable[[], dict[str, float | None]]]]
    states = [
        (
            "crowd and ignore",
            "ignored regions",
            "ordinary ground truth",
            lambda: _coco_stats(ds1, iou_type=geo),
        ),
        (
            "maxDets",
            "100 per image and class",
            "no limit",
            lambda: _coco_stats(ds1, no_cap, iou_type=geo),
        ),
        ("matching rule", "ties to the last ground truth", "ties to the first", step3),
    ]
    if rotated:
        states.append(
            ("IoU", "polygon IoU", "probiou (Gaussians of the enclosing rectangles)", step_probiou)
        )
    states += [
        (
            "IoU precision",
            "float64",
            "float32" if rotated else "float32 (+1e-7 in the union)",
            step4,
        ),
        ("tie order", "stable per class", "NumPy default sort over all classes", step5),
        ("AP integration", "mean of 101 samples", "trapezoid over 101 points", step6),
    ]
    steps = _walk(start, states)
    end_ev = ul.run_ultralytics(ds, iou_type=geo)
    end = _ul_ap(end_ev.curves)
    return Explanation("coco", "ultralytics", list(KEYS), start, end, steps)


def _coco_to_voc(ds: Dataset, use_07: bool, rotated: bool = False) -> Explanation:
    from ..protocols import voc

    geo = "obb" if rotated else "bbox"
    target = "voc07" if use_07 else "voc"
    start = {"AP50": _coco_stats(ds, iou_type=geo)["AP50"]}
    group = ds.pred.image * max(len(ds.categories), 1) + ds.pred.category
    most = int(np.bincount(group).max()) if group.size else 0
    m = voc.voc_match(ds, iou_thr=0.5, iou_type=geo)
    n_gt = np.bincount(ds.gt.category[~m.hard], minlength=len(ds.categories)).astype(np.int64)
    score, cls = ds.pred.score, ds.pred.category
    by_image = np.lexsort((-score, ds.pred.image))

    def voc_bits(rows: IntArray) -> dict[str, float | None]:
        tp = m.tp[rows][:, None]
        return coco_ap(tp, score[rows], cls[rows], n_gt, fp=m.fp[rows][:, None])

    integral = "11 points (VOC2007)" if use_07 else "all points (VOC2010+)"
    states: list[tuple[str, str, str, Callable[[], dict[str, float | None]]]] = [
        (
            "maxDets",
            "100 per image and class",
            "no limit",
            lambda: {"AP50": _coco_stats(ds, (1, 10, max(100, most)), iou_type=geo)["AP50"]},
        ),
        (
            "matching rule",
            "best free ground truth, crowds absorb",
            "best ground truth (a second hit is a duplicate), crowds as difficult",
            lambda: voc_bits(by_image),
        ),
        (
            "tie order",
            "images in order, then score",
            "score, then file order",
            lambda: voc_bits(np.arange(len(ds.pred), dtype=np.int64)),
        ),
        (
            "AP integration",
            "mean of 101 samples",
            integral,
            lambda: {
                "AP50": voc.run_voc(ds, iou_thr=0.5, use_07=use_07, iou_type=geo).summary()["mAP"]
            },
        ),
    ]
    steps = _walk(start, states)
    end = {"AP50": voc.run_voc(ds, iou_thr=0.5, use_07=use_07, iou_type=geo).summary()["mAP"]}
    return Explanation("coco", target, [("AP50", "mAP")], start, end, steps)


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


def explain(
    ds: Dataset, *, source: str = "coco", target: str = "ultralytics", iou_type: str = "bbox"
) -> Explanation:
    """Walk from protocol ``source`` to ``target`` one convention at a time (module doc).
    Rotated boxes (``iou_type="obb"``, or both sides read as rotated boxes) start from COCO
    on polygon IoU and have one more step to Ultralytics: polygon IoU -> probiou."""
    if source not in SOURCES:
        raise UsageError(f"--from: expected one of {', '.join(SOURCES)}, got {source!r}")
    if target not in TARGETS:
        raise UsageError(f"--to: expected one of {', '.join(TARGETS)}, got {target!r}")
    rotated = iou_type == "obb" or (ds.gt.obb is not None and ds.pred.obb is not None)
    if target == "ultralytics":
        return _coco_to_ultralytics(ds, rotated)
    return _coco_to_voc(ds, use_07=target == "voc07", rotated=rotated)


def explain_files(
    predictions: Any,
    ground_truth: Any,
    *,
    source: str = "coco",
    target: str = "ultralytics",
    pred_format: str | None = None,
    gt_format: str | None = None,
    names: str | None = None,
    gt_names: str | None = None,
    pred_names: str | None = None,
    pred_ids: str = "auto",
    images: str | None = None,
    image_size: tuple[float, float] | None = None,
    unknown: str = "error",
    split: str | None = None,
    image_map: str | None = None,
    voc_origin: int = 0,
    iou_type: str = "bbox",
    angle_unit: str = "rad",
) -> tuple[Explanation, list[str], list[str]]:
    """Read a prediction/ground-truth pair (any format, the default verb's input options) and
    :func:`explain` it. Returns the explanation, the input's info and warning lines."""
    if source not in SOURCES:
        raise UsageError(f"--from: expected one of {', '.join(SOURCES)}, got {source!r}")
    if target not in TARGETS:
        raise UsageError(f"--to: expected one of {', '.join(TARGETS)}, got {target!r}")
    if iou_type not in ("bbox", "obb"):
        raise UsageError(
            f"explain walks between box protocols: --iou-type bbox or obb, got {iou_type!r}",
            option="iou_type",
        )
    from ..api import load_pair, read_line
    from ..options import LoadOptions, RunOptions

    # the loaders' options as the default verb builds and checks them (under --from's rules)
    run = RunOptions(
        protocol=source,
        iou_type=iou_type,
        load=LoadOptions(
            angle_unit=angle_unit,
            pred_format=pred_format,
            gt_format=gt_format,
            names=names,
            gt_names=gt_names,
            pred_names=pred_names,
            images=images,
            image_size=image_size,
            unknown=unknown,
            split=split,
            image_map=image_map,
            voc_origin=voc_origin,
            pred_ids=pred_ids,
        ),
    )
    run.validate()
    opts = run.loader_options()
    ds = load_pair(predictions, ground_truth, opts)
    rotated = ds.gt.obb is not None and ds.pred.obb is not None
    ex = explain(ds, source=source, target=target, iou_type=iou_type)
    return ex, [read_line(ds, "obb" if rotated else iou_type), *ds.info], ds.warnings
