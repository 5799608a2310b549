"""``COCOeval`` and ``Params``: pycocotools' evaluation API over iou-eval's COCO engine.

``evaluate()`` runs :func:`iou_cli.protocols.coco.run` once over every selected image and
category (no per-image Python loop); ``accumulate()`` hands over the engine's
precision/recall/scores arrays, or, when ``evalImgs`` was assigned by the caller (records
gathered from several processes), accumulates those records. ``summarize()`` prints
pycocotools' summary lines (the one place the library prints: pycocotools' API contract).
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

import numpy as np

from ..errors import UsageError
from ..protocols.coco import CocoEvaluation, CocoParams, run
from .records import accumulate_records, build_records
from .scene import Scene, build_scene


class Params:
    """pycocotools' ``Params`` for ``bbox`` and ``segm`` (same attribute names and defaults)."""

    def __init__(self, iouType: str = "segm") -> None:
        if iouType not in ("bbox", "segm"):
            raise UsageError(f"iouType {iouType!r} is not supported (bbox or segm)")
        self.iouType = iouType
        self.imgIds: list[Any] = []
        self.catIds: list[Any] = []
        self.iouThrs = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
        self.recThrs = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
        self.maxDets = [1, 10, 100]
        self.areaRng: list[list[float]] = [
            [0**2, 1e5**2],
            [0**2, 32**2],
            [32**2, 96**2],
            [96**2, 1e5**2],
        ]
        self.areaRngLbl = ["all", "small", "medium", "large"]
        self.useCats = 1


class COCOeval:
    """pycocotools' ``COCOeval(cocoGt, cocoDt, iouType)``; either COCO class is accepted."""

    def __init__(self, cocoGt: Any = None, cocoDt: Any = None, iouType: str = "segm") -> None:
        self.cocoGt = cocoGt
        self.cocoDt = cocoDt
        self.params = Params(iouType)
        self.eval: dict[str, Any] = {}
        self.stats: np.ndarray = np.zeros(0)
        self._paramsEval: Params | None = None
        self._run: CocoEvaluation | None = None
        self._scene: Scene | None = None
        self._records: list[Any] | None = None
        self._assigned = False
        if cocoGt is not None:
            self.params.imgIds = sorted(cocoGt.getImgIds())
            self.params.catIds = sorted(cocoGt.getCatIds())

    # -- evaluate ----------------------------------------------------------------------
    def evaluate(self) -> None:
        """Match every detection of ``params.imgIds`` (pycocotools' per-image evaluation)."""
        if self.cocoGt is None or self.cocoDt is None:
            raise UsageError("COCOeval needs cocoGt and cocoDt before evaluate()")
        p = self.params
        p.imgIds = list(np.unique(p.imgIds))
        if p.useCats:
            p.catIds = list(np.unique(p.catIds))
        p.maxDets = sorted(p.maxDets)
        if len(p.areaRng) != len(p.areaRngLbl):
            raise UsageError("params.areaRng and params.areaRngLbl differ in length")
        scene = build_scene(self.cocoGt, self.cocoDt, p)
        names = ["all"] + [f"a{i}" for i in range(1, len(p.areaRng))]
        thrs = np.asarray(p.iouThrs, dtype=np.float64)
        params = CocoParams(
            iou_type=p.iouType,
            iou_thrs=thrs,
            rec_thrs=np.asarray(p.recThrs, dtype=np.float64),
            max_dets=tuple(int(m) for m in p.maxDets),
            area_rngs=tuple(
                (n, float(lo), float(hi)) for n, (lo, hi) in zip(names, p.areaRng, strict=True)
            ),
            op_iou_thr=float(thrs[0]),
            score_thr=1.0,  # no operating point is reported: skip its search
            keep_tables=True,
            full_arrays=True,
        )
        self._run = run(scene.ds, params)
        self._scene = scene
        self._records = None
        self._assigned = False
        self._paramsEval = copy.deepcopy(p)

    @property
    def evalImgs(self) -> list[Any]:
        """pycocotools' per-image records (built on first access; see :mod:`.records`)."""
        if self._records is None:
            if self._run is None or self._scene is None or self._paramsEval is None:
                return []
            self._records = build_records(self._run, self._scene, self._paramsEval)
        return self._records

    @evalImgs.setter
    def evalImgs(self, records: list[Any]) -> None:
        self._records = list(records)
        self._assigned = True

    # -- accumulate --------------------------------------------------------------------
    def accumulate(self, p: Params | None = None) -> None:
        """Precision (T, R, K, A, M), recall (T, K, A, M) and scores into ``self.eval``."""
        pe = self._paramsEval
        if pe is None:
            raise UsageError("run evaluate() first")
        if p is None:
            p = self.params
        if self._assigned:
            precision, recall, scores = accumulate_records(self._records or [], pe)
        else:
            if self._run is None:
                raise UsageError("run evaluate() first")
            precision, recall, scores = self._run.precision, self._run.recall, self._run.scores
        K = precision.shape[2]
        self.eval = {
            "params": p,
            "counts": [len(p.iouThrs), len(p.recThrs), K, len(p.areaRng), len(p.maxDets)],
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
            "precision": precision,
            "recall": recall,
            "scores": scores,
        }

    # -- summarize ---------------------------------------------------------------------
    def _one(
        self, ap: bool, iou_thr: float | None = None, area: str = "all", max_det: int = 100
    ) -> float:
        p = self.params
        line = " {:<18} {} @[ IoU={:<9} | area={:>6s} | maxDets={:>3d} ] = {:0.3f}"
        title = "Average Precision" if ap else "Average Recall"
        kind = "(AP)" if ap else "(AR)"
        if iou_thr is None:
            iou_str = f"{p.iouThrs[0]:0.2f}:{p.iouThrs[-1]:0.2f}"
        else:
            iou_str = f"{iou_thr:0.2f}"
        aind = [i for i, lbl in enumerate(p.areaRngLbl) if lbl == area]
        mind = [i for i, m in enumerate(p.maxDets) if m == max_det]
        s = self.eval["precision"] if ap else self.eval["recall"]
        if iou_thr is not None:
            s = s[np.where(iou_thr == p.iouThrs)[0]]
        s = s[:, :, :, aind, mind] if ap else s[:, :, aind, mind]
        kept = s[s > -1]
        mean = -1.0 if len(kept) == 0 else np.mean(kept)
        print(line.format(title, kind, iou_str, area, max_det, mean))  # noqa: T201 (contract)
        return float(mean)

    def summarize(self) -> None:
        """Print pycocotools' 12 summary lines and set ``stats`` (-1 where undefined)."""
        if not self.eval:
            raise UsageError("Please run accumulate() first")
        m = self.params.maxDets
        self.stats = np.array(
            [
                self._one(True),
                self._one(True, iou_thr=0.5, max_det=m[2]),
                self._one(True, iou_thr=0.75, max_det=m[2]),
                self._one(True, area="small", max_det=m[2]),
                self._one(True, area="medium", max_det=m[2]),
                self._one(True, area="large", max_det=m[2]),
                self._one(False, max_det=m[0]),
                self._one(False, max_det=m[1]),
                self._one(False, max_det=m[2]),
                self._one(False, area="small", max_det=m[2]),
                self._one(False, area="medium", max_det=m[2]),
                self._one(False, area="large", max_det=m[2]),
            ]
        )

    def __str__(self) -> str:
        self.summarize()
        return ""
