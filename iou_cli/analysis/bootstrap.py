"""Paired bootstrap over images by re-weighting, not re-matching.

Resampling images with replacement never changes which ground truth a prediction matches:
matching is per (image, category) group, and a copy of an image is matched exactly like the
original. Only the accumulation changes. A bootstrap sample is therefore a vector of
multiplicities, one per image (how often the image was drawn), and every evaluated
prediction and every counted ground truth of image ``j`` weighs ``w[j]``:

* ``n_pos`` per class is the weighted count of counted ground truths;
* along each class's accumulation order (score descending; ties in image, then rank order,
  as pycocotools) the cumulative true/false positive counts are weighted sums;
* precision ``tp / (fp + tp + eps)`` and recall ``tp / n_pos`` at every true positive are
  read at the 101 recall points exactly as the COCO accumulation reads them (the first
  point whose recall reaches ``r``, precision made monotone from the right), and AR is the
  weighted true-positive count at each maxDets over ``n_pos``.

Only the true positives need a precision value: between two true positives the precision
only falls, so false positives enter through their counts. Those counts are split into a
threshold-independent part (weighted count of in-range predictions up to a position, one
cumulative sum per area range and sample) and a sparse part over matched predictions only.

Equivalence with a real re-evaluation of the duplicated image set: with all multiplicities
1 the numbers are pycocotools' exactly. With integer multiplicities they equal pycocotools
on the image set with each image copied ``w[j]`` times, bit for bit, whenever no two
predictions of one class share a score; copies of a prediction are then consecutive and
the points between them are dominated (precision rises along a run of equal true
positives and falls along a run of false positives). With tied scores pycocotools orders
the tie by image id, so copies placed under new ids interleave differently with the other
tied predictions; only the precision inside such a tie block can differ (tie-order effect).
The weighted form keeps each image's copies together at the original image's place, which
is one of the orders a re-evaluation could equally produce.

Multiplicities are drawn with a NumPy ``Generator`` from ``seed`` in fixed chunks of
samples, so the same seed gives the same samples whatever the machine or thread count.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
WArray = npt.NDArray[np.int32]

CHUNK = 16  # samples drawn (and scored) together; part of the seed's meaning: do not change
EPS = np.spacing(1)


def multiplicities(n_images: int, n_samples: int, seed: int) -> Iterator[WArray]:
    """Chunks of ``(<= CHUNK, n_images)`` image multiplicities (each row sums to n_images):
    each sample draws ``n_images`` images uniformly with replacement."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_samples:
        b = min(CHUNK, n_samples - done)
        if n_images == 0:
            yield np.zeros((b, 0), dtype=np.int32)
        else:
            idx = rng.integers(0, n_images, size=(b, n_images), dtype=np.int64)
            idx += (np.arange(b, dtype=np.int64) * n_images)[:, None]
            w = np.bincount(idx.ravel(), minlength=b * n_images).reshape(b, n_images)
            yield w.astype(np.int32)
        done += b


@dataclass
class ScoreTable:
    """One area range of one model's evaluation, as the weighted accumulation needs it.

    Predictions are the evaluated ones (after maxDets), in any order; ``matched[t]`` /
    ``tp[t]`` say whether a prediction took a ground truth at threshold ``t`` and whether
    that ground truth counts (a match to an ignored one is neither TP nor FP). ``out``:
    outside the area range (ignored when unmatched). ``gt_image``/``gt_category``: the
    ground truths that count in this range.
    """

    det_image: IntArray
    det_category: IntArray
    det_score: FloatArray
    det_rank: IntArray
    det_out: BoolArray
    matched: BoolArray  # (T, D)
    tp: BoolArray  # (T, D)
    gt_image: IntArray
    gt_category: IntArray


@dataclass
class _Thr:
    m_img: IntArray  # matched predictions (accumulation order): image
    m_notout: npt.NDArray[np.int32]
    m_tp: npt.NDArray[np.int32]
    m_cstart: IntArray  # (K+1,) category starts inside the matched list
    tp_pos: IntArray  # true positives: index into the matched list
    tp_cat: IntArray
    tp_img: IntArray
    tp_rank: IntArray
    tp_j: IntArray  # index into the padded in-range cumulative sum (inclusive)
    tp_jk: IntArray  # the same at the start of its category


@dataclass
class _Area:
    no_img: IntArray  # in-range predictions, accumulation order: image
    thr: list[_Thr]
    pos_img: IntArray  # counted ground truths grouped by (image, category)
    pos_cat: IntArray
    pos_cnt: IntArray


@dataclass
class SampleStats:
    """Per sample (rows) of one chunk: precision ``q`` (B, T, K, R) of each area range at
    maxDets[-1], recall ``rc`` (B, T, K, M) and ``n_pos`` (B, K) per area range."""

    q: dict[str, FloatArray] = field(default_factory=dict)
    rc: dict[str, FloatArray] = field(default_factory=dict)
    n_pos: dict[str, IntArray] = field(default_factory=dict)


def _cum_pad(x: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """Row-wise cumulative sums with a leading zero column."""
    out = np.zeros((x.shape[0], x.shape[1] + 1), dtype=np.int32)
    np.cumsum(x, axis=1, dtype=np.int32, out=out[:, 1:])
    return out


class WeightedCoco:
    """The COCO accumulation of one model under image weights (see the module docstring)."""

    def __init__(
        self,
        tables: dict[str, ScoreTable],
        *,
        n_classes: int,
        rec_thrs: FloatArray,
        max_dets: tuple[int, ...],
    ) -> None:
        self.K = n_classes
        self.rec_thrs = np.asarray(rec_thrs, dtype=np.float64)
        self.max_dets = tuple(int(m) for m in max_dets)
        self.areas = {name: self._prepare(tab) for name, tab in tables.items()}

    def _prepare(self, tab: ScoreTable) -> _Area:
        K = self.K
        cat = tab.det_category.astype(np.int64)
        # accumulation order: category, score descending, then (image, rank)
        order = np.lexsort((tab.det_rank, tab.det_image, -tab.det_score, cat))
        img = tab.det_image[order].astype(np.int64)
        cat = cat[order]
        rank = tab.det_rank[order].astype(np.int64)
        out = tab.det_out[order]
        cstart = np.searchsorted(cat, np.arange(K + 1), side="left")
        no_pos = np.flatnonzero(~out)
        # padded cumulative index of "in-range predictions up to and including position p"
        incl = np.searchsorted(no_pos, np.arange(img.shape[0]), side="right")
        at_cat = np.searchsorted(no_pos, cstart[:-1], side="left")
        thr: list[_Thr] = []
        for t in range(tab.matched.shape[0]):
            matched = tab.matched[t][order]
            tp = tab.tp[t][order]
            mpos = np.flatnonzero(matched)
            mcat = cat[mpos]
            m_cstart = np.searchsorted(mcat, np.arange(K + 1), side="left")
            m_tp = tp[mpos]
            tp_pos = np.flatnonzero(m_tp)
            p = mpos[tp_pos]
            thr.append(
                _Thr(
                    m_img=img[mpos],
                    m_notout=(~out[mpos]).astype(np.int32),
                    m_tp=m_tp.astype(np.int32),
                    m_cstart=m_cstart.astype(np.int64),
                    tp_pos=tp_pos.astype(np.int64),
                    tp_cat=cat[p],
                    tp_img=img[p],
                    tp_rank=rank[p],
                    tp_j=incl[p].astype(np.int64),
                    tp_jk=at_cat[cat[p]].astype(np.int64),
                )
            )
        key = tab.gt_image.astype(np.int64) * K + tab.gt_category.astype(np.int64)
        uniq, cnt = np.unique(key, return_counts=True)
        return _Area(
            no_img=img[no_pos],
            thr=thr,
            pos_img=uniq // K,
            pos_cat=uniq % K,
            pos_cnt=cnt.astype(np.int64),
        )

    def sample(self, w: WArray) -> SampleStats:
        """Precision and recall arrays of every sample (row) of ``w`` (B, n_images)."""
        B = w.shape[0]
        K = self.K
        R = self.rec_thrs.shape[0]
        M = len(self.max_dets)
        out = SampleStats()
        rows = np.arange(B, dtype=np.int64)[:, None]
        for name, ar in self.areas.items():
            T = len(ar.thr)
            # weighted counted ground truths per class
            wp = np.take(w, ar.pos_img, axis=1).astype(np.int64) * ar.pos_cnt
            npos = np.bincount(
                (rows * K + ar.pos_cat).ravel(), weights=wp.ravel(), minlength=B * K
            ).reshape(B, K)
            n_pos = npos.astype(np.int64)
            npos_f = np.maximum(n_pos, 1).astype(np.float64)
            cz = _cum_pad(np.take(w, ar.no_img, axis=1))
            q = np.zeros((B, T, K, R))
            rc = np.zeros((B, T, K, M))
            for t, th in enumerate(ar.thr):
                n_tp = th.tp_pos.shape[0]
                if n_tp == 0:
                    continue
                wm = np.take(w, th.m_img, axis=1)
                c_tp = _cum_pad(wm * th.m_tp)
                c_no = _cum_pad(wm * th.m_notout)
                s = th.m_cstart[th.tp_cat]
                e = th.tp_pos + 1
                ctp = c_tp[:, e] - c_tp[:, s]
                cfp = (cz[:, th.tp_j] - cz[:, th.tp_jk]) - (c_no[:, e] - c_no[:, s])
                ctp_f = ctp.astype(np.float64)
                pr = ctp_f / ((cfp.astype(np.float64) + ctp_f) + EPS)
                rcv = ctp_f / npos_f[:, th.tp_cat]
                nr = np.searchsorted(self.rec_thrs, rcv.ravel(), side="right")
                key = (rows * K + th.tp_cat).ravel() * (R + 1) + nr
                starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
                z = np.zeros(B * K * (R + 1))
                z[key[starts]] = np.maximum.reduceat(pr.ravel(), starts)
                z3 = z.reshape(B, K, R + 1)
                q[:, t] = np.maximum.accumulate(z3[:, :, :0:-1], axis=2)[:, :, ::-1]
                # recall at each maxDets: weighted true positives ranked below it
                wt = np.take(w, th.tp_img, axis=1)
                for mi, md in enumerate(self.max_dets):
                    sel = th.tp_rank < md
                    if not sel.any():
                        continue
                    cnt = np.bincount(
                        (rows * K + th.tp_cat[sel]).ravel(),
                        weights=wt[:, sel].ravel(),
                        minlength=B * K,
                    ).reshape(B, K)
                    rc[:, t, :, mi] = cnt / npos_f
            out.q[name] = q
            out.rc[name] = rc
            out.n_pos[name] = n_pos
        return out


# --------------------------------------------------------------------------- summaries


def _masked_mean(x: FloatArray, valid: BoolArray) -> FloatArray:
    """Per sample ``b``: ``np.mean(x[b][..., valid[b]])`` over the trailing class axis, NaN
    when no class is valid. Samples sharing a mask are reduced together (one contiguous
    row each, so the pairwise sum is the one ``np.mean`` of that 1-D selection makes)."""
    B = x.shape[0]
    out = np.full(B, np.nan)
    patterns, inverse = np.unique(valid, axis=0, return_inverse=True)
    for p, mask in enumerate(patterns):
        if not mask.any():
            continue
        rows = np.flatnonzero(inverse.reshape(-1) == p)
        sel = x[rows][..., mask].reshape(rows.shape[0], -1)
        out[rows] = np.mean(sel, axis=1)
    return out


@dataclass
class OpTable:
    """The operating point's inputs (area "all", top ``maxDets[-1]``), fixed score cut:
    per evaluated prediction its image, whether it is a TP / FP at the cut, the TP's IoU;
    per counted ground truth its image."""

    det_image: IntArray
    tp: BoolArray
    fp: BoolArray
    iou: FloatArray
    gt_image: IntArray
    n_images: int

    def per_image(self) -> FloatArray:
        n = self.n_images
        return np.stack(
            [
                np.bincount(self.det_image[self.tp], minlength=n).astype(np.float64),
                np.bincount(self.det_image[self.fp], minlength=n).astype(np.float64),
                np.bincount(self.det_image[self.tp], weights=self.iou[self.tp], minlength=n),
                np.bincount(self.gt_image, minlength=n).astype(np.float64),
            ],
            axis=1,
        )


class CocoScorer:
    """Summary keys (pycocotools' 12 stats and the operating point) and per-class AP of one
    model for a chunk of image weights; undefined values are NaN."""

    def __init__(
        self,
        tables: dict[str, ScoreTable],
        *,
        n_classes: int,
        iou_thrs: FloatArray,
        rec_thrs: FloatArray,
        max_dets: tuple[int, ...],
        op: OpTable | None = None,
    ) -> None:
        self.engine = WeightedCoco(
            tables, n_classes=n_classes, rec_thrs=rec_thrs, max_dets=max_dets
        )
        self.iou_thrs = np.asarray(iou_thrs, dtype=np.float64)
        self.max_dets = tuple(int(m) for m in max_dets)
        self.op = op
        self._op_img = op.per_image() if op is not None else None

    def _ap(self, st: SampleStats, area: str, iou: float | None) -> FloatArray | None:
        if area not in st.q:
            return None
        q = st.q[area]  # (B, T, K, R)
        if iou is not None:
            t = np.flatnonzero(self.iou_thrs == iou)
            if t.size == 0:
                return None
            q = q[:, t]
        # pycocotools' order: (T, R, K)
        return _masked_mean(np.ascontiguousarray(q.transpose(0, 1, 3, 2)), st.n_pos[area] > 0)

    def _ar(self, st: SampleStats, area: str, mi: int) -> FloatArray | None:
        if area not in st.rc:
            return None
        return _masked_mean(np.ascontiguousarray(st.rc[area][:, :, :, mi]), st.n_pos[area] > 0)

    def score(self, w: WArray) -> tuple[dict[str, FloatArray], FloatArray]:
        st = self.engine.sample(w)
        B = w.shape[0]
        out: dict[str, FloatArray | None] = {
            "AP": self._ap(st, "all", None),
            "AP50": self._ap(st, "all", 0.5),
            "AP75": self._ap(st, "all", 0.75),
            "APs": self._ap(st, "small", None),
            "APm": self._ap(st, "medium", None),
            "APl": self._ap(st, "large", None),
        }
        for mi, m in enumerate(self.max_dets):
            out[f"AR{m}"] = self._ar(st, "all", mi)
        last = len(self.max_dets) - 1
        out["ARs"] = self._ar(st, "small", last)
        out["ARm"] = self._ar(st, "medium", last)
        out["ARl"] = self._ar(st, "large", last)
        if self._op_img is not None:
            tp, fp, iou_sum, n_gt = (w.astype(np.float64) @ self._op_img).T
            fn = n_gt - tp
            with np.errstate(divide="ignore", invalid="ignore"):
                out["tp"] = tp
                out["fp"] = fp
                out["fn"] = fn
                out["precision"] = np.where(tp + fp > 0, tp / (tp + fp), np.nan)
                out["recall"] = np.where(n_gt > 0, tp / n_gt, np.nan)
                den = 2 * tp + fp + fn
                out["f1"] = np.where(den > 0, 2 * tp / den, np.nan)
                out["mean_iou"] = np.where(tp > 0, iou_sum / tp, np.nan)
        # per-class AP: mean over (T, R) of each class with counted ground truth
        q = st.q["all"]
        K = q.shape[2]
        per = np.mean(np.ascontiguousarray(q.transpose(0, 2, 1, 3)).reshape(B, K, -1), axis=2)
        per[st.n_pos["all"] <= 0] = np.nan
        return {k: v for k, v in out.items() if v is not None}, per


def paired_deltas(
    a: CocoScorer, b: CocoScorer, *, n_images: int, n_samples: int, seed: int
) -> tuple[dict[str, FloatArray], FloatArray]:
    """Bootstrap deltas ``B - A`` per summary key (N,) and per class (N, K): both models are
    scored on the same image multiplicities (paired). NaN where a value is undefined."""
    keys: dict[str, list[FloatArray]] = {}
    per: list[FloatArray] = []
    for w in multiplicities(n_images, n_samples, seed):
        sa, pa = a.score(w)
        sb, pb = b.score(w)
        for k in sa:
            if k in sb:
                keys.setdefault(k, []).append(sb[k] - sa[k])
        per.append(pb - pa)
    deltas = {k: np.concatenate(v) for k, v in keys.items()}
    return deltas, np.concatenate(per) if per else np.zeros((0, 0))
