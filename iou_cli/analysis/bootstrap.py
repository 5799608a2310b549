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

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
WArray = npt.NDArray[np.int32]

CHUNK = 16  # samples drawn (and scored) together; part of the seed's meaning: do not change
BUDGET = 500_000  # elements per working array (rows x records): bounds memory per thread
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
    det_tiebreak: IntArray | None = None  # order of tied scores; default (image, rank)


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
    tp_notout: npt.NDArray[np.int32]
    x_img: IntArray  # in-range matches to ignored ground truths: image
    x_before: IntArray  # per true positive: how many of those precede it
    x_start: IntArray  # ... and precede its category's start


@dataclass
class _Flat:
    """All thresholds' true positives end to end (threshold-major, then accumulation order),
    so one sample chunk is one set of array operations per area range. They are stored in
    reverse, so the suffix maximum of precision is a forward running maximum over contiguous
    memory. Cumulative counts inside a run come from sums over this list itself; matches to
    ignored ground truths (neither TP nor FP, usually few) are a second, small list."""

    # true positives, reversed
    tp_j: IntArray  # padded in-range index (inclusive)
    tp_seg: IntArray  # threshold * K + class
    tp_img: IntArray
    tp_notout: npt.NDArray[np.int32]
    run_end: IntArray  # end (exclusive) of each true positive's run
    opens: BoolArray  # the true positive opens its run (in accumulation order)
    follows: IntArray  # 1 where the next true positive in this layout is in the same run
    runs: IntArray  # start of each run in the reversed layout
    runs_end: IntArray
    run_seg: IntArray  # its (threshold, class)
    below: list[tuple[int, IntArray, IntArray, IntArray]]  # (mi, rows, run starts, run segs)
    off: FloatArray  # grows along the layout by more than a precision: keeps runs apart
    all_notout: bool  # every true positive is inside the area range
    # in-range matches to ignored ground truths (accumulation order) and, per true
    # positive, the padded cumulative indices of those before it in its run
    x_img: IntArray
    x_hi: IntArray
    run_len: IntArray  # per run (reversed layout): length, class, in-range index at the
    run_k: IntArray  # class's start, index of the first ignored-GT match of the run
    run_jk: IntArray
    run_xlo: IntArray


@dataclass
class _Area:
    no_img: IntArray  # in-range predictions, accumulation order: image
    thr: list[_Thr]
    flat: _Flat
    pos_img: IntArray  # counted ground truths grouped by (image, category)
    pos_cat: IntArray
    pos_cnt: IntArray


@dataclass
class SampleStats:
    """Per sample (rows) of one chunk, per area range: ``qsum`` (B, T, K) the interpolated
    precision summed over the recall points, ``q`` (B, T, K, R) the precision array itself
    (only with ``grid=True``), both at maxDets[-1]; recall ``rc`` (B, T, K, M); ``n_pos``
    (B, K)."""

    q: dict[str, FloatArray] = field(default_factory=dict)
    qsum: dict[str, FloatArray] = field(default_factory=dict)
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
        voc: bool = False,
    ) -> None:
        """``voc``: the VOC devkit's precision ``tp / max(tp + fp, eps)`` and, with
        ``rec_thrs`` empty, its all-point area (``qsum`` is then the AP itself)."""
        self.K = n_classes
        self.voc = voc
        self.rec_thrs = np.asarray(rec_thrs, dtype=np.float64)
        self.max_dets = tuple(int(m) for m in max_dets)
        R = self.rec_thrs.shape[0]
        self._uniform = R > 1 and np.array_equal(self.rec_thrs, np.linspace(0.0, 1.0, R))
        self._thr_pad = np.r_[self.rec_thrs, np.inf]
        self._last_order: tuple[FloatArray, IntArray, IntArray, IntArray] | None = None
        self.areas = {name: self._prepare(tab) for name, tab in tables.items()}
        self._width = max(
            (max(a.no_img.shape[0], a.flat.tp_seg.shape[0]) for a in self.areas.values()),
            default=0,
        )

    def _prepare(self, tab: ScoreTable) -> _Area:
        K = self.K
        cat = tab.det_category.astype(np.int64)
        # accumulation order: category, score descending, then (image, rank)
        order = self._order(tab, cat)
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
            x_pos = np.flatnonzero(~m_tp & ~out[mpos])  # in range, matched an ignored GT
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
                    tp_notout=(~out[p]).astype(np.int32),
                    x_img=img[mpos[x_pos]],
                    x_before=np.searchsorted(x_pos, tp_pos).astype(np.int64),
                    x_start=np.searchsorted(x_pos, m_cstart[cat[p]]).astype(np.int64),
                )
            )
        key = tab.gt_image.astype(np.int64) * K + tab.gt_category.astype(np.int64)
        uniq, cnt = np.unique(key, return_counts=True)
        return _Area(
            no_img=img[no_pos],
            thr=thr,
            flat=self._flatten(thr, at_cat),
            pos_img=uniq // K,
            pos_cat=uniq % K,
            pos_cnt=cnt.astype(np.int64),
        )

    def _order(self, tab: ScoreTable, cat: IntArray) -> IntArray:
        """Accumulation order: class, score descending, ties by (image, rank) or the given
        tie-break. Area tables share their predictions, so the sort is done once."""
        last = self._last_order
        if (
            last is not None
            and last[0].shape == tab.det_score.shape
            and np.array_equal(last[0], tab.det_score)
            and np.array_equal(last[1], tab.det_image)
            and np.array_equal(last[2], cat)
        ):
            return last[3]
        if tab.det_tiebreak is not None:
            order = np.lexsort((tab.det_tiebreak, -tab.det_score, cat))
        else:
            # (image, rank) order first, then stable sorts by score and by class
            base = np.lexsort((tab.det_rank, tab.det_image))
            by_score = base[np.argsort(-tab.det_score[base], kind="stable")]
            order = by_score[np.argsort(cat[by_score], kind="stable")]
        self._last_order = (tab.det_score, tab.det_image, cat, order)
        return order

    def _flatten(self, thr: list[_Thr], at_cat: IntArray) -> _Flat:
        K = self.K
        T = len(thr)
        empty = np.zeros(0, np.int64)

        def cat(parts: list[Any], dtype: type) -> Any:
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

        def rev(x: Any) -> Any:
            return np.ascontiguousarray(x[::-1])

        tp_seg = cat([t * K + th.tp_cat for t, th in enumerate(thr)], np.int64)
        n = tp_seg.shape[0]
        opens = np.ones(n, dtype=bool)
        opens[1:] = tp_seg[1:] != tp_seg[:-1]
        tp_rank = rev(cat([th.tp_rank for th in thr], np.int64))
        rseg = rev(tp_seg)

        def run_starts(segs: IntArray) -> IntArray:
            if segs.size == 0:
                return empty
            return np.flatnonzero(np.r_[True, segs[1:] != segs[:-1]]).astype(np.int64)

        runs = run_starts(rseg)
        runs_end = np.r_[runs[1:], n].astype(np.int64) if runs.size else empty
        below: list[tuple[int, IntArray, IntArray, IntArray]] = []
        for mi, md in enumerate(self.max_dets[:-1]):
            rows = np.flatnonzero(tp_rank < md).astype(np.int64)
            st = run_starts(rseg[rows])
            below.append((mi, rows, st, rseg[rows][st] if st.size else empty))
        x_offs = np.cumsum([0] + [th.x_img.shape[0] for th in thr])
        tp_notout = rev(cat([th.tp_notout for th in thr], np.int32))
        x_hi = rev(cat([x_offs[t] + th.x_before for t, th in enumerate(thr)], np.int64))
        x_lo = rev(cat([x_offs[t] + th.x_start for t, th in enumerate(thr)], np.int64))
        run_seg = rseg[runs] if runs.size else empty
        return _Flat(
            tp_j=rev(cat([th.tp_j for th in thr], np.int64)),
            tp_seg=rseg,
            tp_img=rev(cat([th.tp_img for th in thr], np.int64)),
            tp_notout=tp_notout,
            run_end=np.repeat(runs_end, runs_end - runs) if runs.size else empty,
            opens=rev(opens),
            follows=(~rev(opens)[:-1]).astype(np.int64),
            runs=runs,
            runs_end=runs_end,
            run_seg=run_seg,
            below=below,
            off=2.0 * (T * K - 1 - rseg).astype(np.float64),
            all_notout=bool(tp_notout.all()),
            x_img=cat([th.x_img for th in thr], np.int64),
            x_hi=x_hi,
            run_len=runs_end - runs,
            run_k=run_seg % K,
            run_jk=at_cat[run_seg % K].astype(np.int64),
            run_xlo=x_lo[runs] if runs.size else empty,
        )

    def _recall_lut(self, n_pos: IntArray) -> tuple[npt.NDArray[np.int64], IntArray]:
        """For every (sample, class) and every count c in 0..n_pos: how many recall points
        ``c / n_pos`` reaches; ``start`` (B, K) is each (sample, class)'s offset."""
        B, K = n_pos.shape
        npos = np.maximum(n_pos, 1).reshape(-1)
        size = npos + 1
        start = np.cumsum(size) - size
        total = int(size.sum())
        c = np.arange(total, dtype=np.int64) - np.repeat(start, size)
        lut = self._recall_index(c / np.repeat(npos, size).astype(np.float64))
        return lut, start.reshape(B, K)

    def _fast(
        self, w: WArray, ar: _Area, npos_f: FloatArray, n_pos: IntArray, m_list: list[int]
    ) -> tuple[FloatArray, FloatArray]:
        """``qsum`` (B, T, K) and recall (B, T, K, M) from the true positives alone."""
        f = ar.flat
        B, K, T = w.shape[0], self.K, len(ar.thr)
        TK = T * K
        M = len(self.max_dets)
        qsum = np.zeros((B, TK))
        rc = np.zeros((B, TK, M))
        n = f.tp_seg.shape[0]
        if n == 0:
            return qsum.reshape(B, T, K), rc.reshape(B, T, K, M)
        cz = _cum_pad(np.take(w, ar.no_img, axis=1))
        wt = np.take(w, f.tp_img, axis=1)
        # weighted true positives up to each one inside its run (the run lies reversed:
        # from this position to the run's end)
        s_tp = _cum_pad(wt)
        ctp = np.repeat(s_tp[:, f.runs_end], f.run_len, axis=1) - s_tp[:, :-1]
        if f.all_notout:
            ctp_no = ctp
        else:
            s_no = _cum_pad(wt * f.tp_notout)
            ctp_no = np.repeat(s_no[:, f.runs_end], f.run_len, axis=1) - s_no[:, :-1]
        # false positives before it: in-range predictions of its class so far, less the
        # in-range true positives and in-range matches to ignored ground truths among them
        base = cz[:, f.run_jk]
        cfp = cz[:, f.tp_j] - ctp_no
        if f.x_img.size:
            s_x = _cum_pad(np.take(w, f.x_img, axis=1))
            base = base - s_x[:, f.run_xlo]
            cfp -= s_x[:, f.x_hi]
        cfp -= np.repeat(base, f.run_len, axis=1)
        tot = (cfp + ctp).astype(np.float64)  # exact integers
        del cfp
        if self.voc:
            np.maximum(tot, EPS, out=tot)
        else:
            tot += EPS
        pr = ctp.astype(np.float64)
        pr /= tot
        del tot
        npos_seg = np.tile(npos_f, (1, T))  # (B, TK)
        if self.rec_thrs.shape[0]:
            # recall points reached: a lookup by (sample, class, weighted TP count)
            lut, start = self._recall_lut(n_pos)
            nr = lut[np.repeat(start[:, f.run_k], f.run_len, axis=1) + ctp]
        else:  # all-point area: each true positive adds its weight / n_pos of recall
            nr = ctp
        # monotone precision: the running maximum along each run (reversed: from its last
        # true positive back), runs kept apart by offsets (exact to ~1e-13; the same in
        # every row, so results do not depend on how samples are grouped)
        env = pr
        env += f.off
        if B == 1:
            np.maximum.accumulate(env[0], out=env[0])
        else:
            np.maximum.accumulate(env, axis=1, out=env)
        env -= f.off
        # recall points each true positive is the first to reach
        # (the next one in this layout is the previous one in its run, unless this opens it)
        nxt = np.zeros(nr.shape, dtype=nr.dtype)
        np.multiply(nr[:, 1:], f.follows, out=nxt[:, :-1])
        dn = (nr - nxt).astype(np.float64)
        if not self.rec_thrs.shape[0]:
            dn /= np.repeat(npos_f[:, f.run_k], f.run_len, axis=1)
        dn *= env
        qsum[:, f.run_seg] = np.add.reduceat(dn, f.runs, axis=1)
        # recall: weighted true positives of each run (all ranked below maxDets[-1]) ...
        cnt_all = np.zeros((B, TK))
        cnt_all[:, f.run_seg] = s_tp[:, f.runs_end] - s_tp[:, f.runs]
        rc[:, :, M - 1] = cnt_all / npos_seg
        # ... and below the smaller maxDets
        for mi, rows, st, segs in f.below:
            if mi not in m_list or st.size == 0:
                continue
            cnt = np.zeros((B, TK))
            cnt[:, segs] = np.add.reduceat(wt[:, rows], st, axis=1)
            rc[:, :, mi] = cnt / npos_seg
        return qsum.reshape(B, T, K), rc.reshape(B, T, K, M)

    def _recall_index(self, rc: FloatArray) -> npt.NDArray[np.int64]:
        """How many recall points ``r`` satisfy ``rc >= r`` (pycocotools' float comparison):
        on the uniform grid ``floor(rc * (R - 1)) + 1`` corrected by one exact comparison
        each way; otherwise a binary search."""
        if not self._uniform:
            return np.searchsorted(self.rec_thrs, rc, side="right").astype(np.int64)
        R = self.rec_thrs.shape[0]
        c = np.minimum((rc * (R - 1)).astype(np.int64), R - 1)  # rc <= 1 in real tables
        up = self._thr_pad[c + 1] <= rc
        down = self._thr_pad[c] > rc
        return c + 1 + up - down

    def sample(self, w: WArray, *, grid: bool = False) -> SampleStats:
        """Weighted accumulation of every sample (row) of ``w`` (B, n_images).

        Fills ``qsum`` (B, T, K): the sum over the recall points of the interpolated
        precision, computed from the true positives alone (each point's monotone precision
        times the number of recall points it is the first to reach); the summation order
        differs from pycocotools' mean in the last bits. ``grid=True`` also fills ``q``
        (B, T, K, R), the precision array itself, equal to pycocotools' bit for bit."""
        step = max(1, min(w.shape[0], BUDGET // max(self._width, 1)))
        if step < w.shape[0]:  # bound the working set: a few rows at a time
            parts = [self._sample(w[i : i + step], grid) for i in range(0, w.shape[0], step)]
            out = SampleStats()
            for name in parts[0].qsum:
                out.qsum[name] = np.concatenate([p.qsum[name] for p in parts])
                out.rc[name] = np.concatenate([p.rc[name] for p in parts])
                out.n_pos[name] = np.concatenate([p.n_pos[name] for p in parts])
                if grid:
                    out.q[name] = np.concatenate([p.q[name] for p in parts])
            return out
        return self._sample(w, grid)

    def _sample(self, w: WArray, grid: bool) -> SampleStats:
        B = w.shape[0]
        K = self.K
        M = len(self.max_dets)
        out = SampleStats()
        rows = np.arange(B, dtype=np.int64)[:, None]
        nseg = B * K
        for name, ar in self.areas.items():
            # weighted counted ground truths per class
            wp = np.take(w, ar.pos_img, axis=1).astype(np.int64) * ar.pos_cnt
            npos = np.bincount(
                (rows * K + ar.pos_cat).ravel(), weights=wp.ravel(), minlength=nseg
            ).reshape(B, K)
            n_pos = npos.astype(np.int64)
            npos_f = np.maximum(n_pos, 1).astype(np.float64)
            m_list = list(range(M)) if name == "all" else [M - 1]
            out.qsum[name], out.rc[name] = self._fast(w, ar, npos_f, n_pos, m_list)
            out.n_pos[name] = n_pos
            if grid:
                out.q[name] = self._grid(w, ar, npos_f)
        return out

    def _grid(self, w: WArray, ar: _Area, npos_f: FloatArray) -> FloatArray:
        """The precision array (B, T, K, R), read exactly as pycocotools reads it."""
        B, K, T = w.shape[0], self.K, len(ar.thr)
        R = self.rec_thrs.shape[0]
        rows = np.arange(B, dtype=np.int64)[:, None]
        nseg = B * K
        q = np.zeros((B, T, K, R))
        cz = _cum_pad(np.take(w, ar.no_img, axis=1))
        for t, th in enumerate(ar.thr):
            if th.tp_pos.shape[0] == 0:
                continue
            wm = np.take(w, th.m_img, axis=1)
            c_tp = _cum_pad(wm * th.m_tp)
            c_no = _cum_pad(wm * th.m_notout)
            s = th.m_cstart[th.tp_cat]
            e = th.tp_pos + 1
            ctp = c_tp[:, e] - c_tp[:, s]
            cfp = (cz[:, th.tp_j] - cz[:, th.tp_jk]) - (c_no[:, e] - c_no[:, s])
            ctp_f = ctp.astype(np.float64).ravel()
            pr = ctp_f / ((cfp.astype(np.float64).ravel() + ctp_f) + EPS)
            nr = self._recall_index(ctp_f / npos_f[:, th.tp_cat].ravel())
            seg = (rows * K + th.tp_cat).ravel()
            key = seg * (R + 1) + nr
            starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            z = np.zeros(nseg * (R + 1))
            z[key[starts]] = np.maximum.reduceat(pr, starts)
            z3 = z.reshape(B, K, R + 1)
            q[:, t] = np.maximum.accumulate(z3[:, :, :0:-1], axis=2)[:, :, ::-1]
        return q


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
        frequency: IntArray | None = None,
    ) -> None:
        """``frequency`` (LVIS): each class's group, 0 rare, 1 common, 2 frequent, adding
        APr, APc, APf."""
        self.frequency = frequency
        self.engine = WeightedCoco(
            tables, n_classes=n_classes, rec_thrs=rec_thrs, max_dets=max_dets
        )
        self.iou_thrs = np.asarray(iou_thrs, dtype=np.float64)
        self.max_dets = tuple(int(m) for m in max_dets)
        self.R = int(np.asarray(rec_thrs).shape[0])
        self.op = op
        self._op_img = op.per_image() if op is not None else None

    def _ap(
        self, st: SampleStats, area: str, iou: float | None, cats: BoolArray | None = None
    ) -> FloatArray | None:
        if area not in st.qsum or (t := self._t(iou)) is None:
            return None
        valid = st.n_pos[area] > 0
        if cats is not None:  # a class group (LVIS frequency)
            valid = valid & cats[None, :]
        if st.q:  # exact: pycocotools' mean over its (T, R, K) layout
            q = np.ascontiguousarray(st.q[area][:, t].transpose(0, 1, 3, 2))
            return _masked_mean(q, valid)
        qs = st.qsum[area][:, t]  # (B, T', K)
        n = valid.sum(axis=1) * qs.shape[1] * self.R
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, (qs * valid[:, None, :]).sum(axis=(1, 2)) / n, np.nan)

    def _t(self, iou: float | None) -> slice | None:
        idx = np.flatnonzero(self.iou_thrs == iou)
        return slice(None) if iou is None else slice(idx[0], idx[0] + 1) if idx.size else None

    def _ar(self, st: SampleStats, area: str, mi: int, iou: float | None = None) -> Any:
        if area not in st.rc or (t := self._t(iou)) is None:
            return None
        valid = st.n_pos[area] > 0
        r = st.rc[area][:, t, :, mi]  # (B, T, K)
        if st.q:
            return _masked_mean(np.ascontiguousarray(r), valid)
        n = valid.sum(axis=1) * r.shape[1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, (r * valid[:, None, :]).sum(axis=(1, 2)) / n, np.nan)

    def score(self, w: WArray, *, exact: bool = False) -> tuple[dict[str, FloatArray], FloatArray]:
        """Summary values (key -> (B,)) and per-class AP (B, K) of each sample. ``exact``:
        through the full precision array, bit for bit pycocotools' arithmetic (slower)."""
        st = self.engine.sample(w, grid=exact)
        B = w.shape[0]
        out: dict[str, FloatArray | None] = {
            "AP": self._ap(st, "all", None),
            "AP50": self._ap(st, "all", 0.5),
            "AP75": self._ap(st, "all", 0.75),
            "APs": self._ap(st, "small", None),
            "APm": self._ap(st, "medium", None),
            "APl": self._ap(st, "large", None),
        }
        if self.frequency is not None:
            for code, key in enumerate(("APr", "APc", "APf")):
                out[key] = self._ap(st, "all", None, cats=self.frequency == code)
        for mi, m in enumerate(self.max_dets):
            out[f"AR{m}"] = self._ar(st, "all", mi)
        last = len(self.max_dets) - 1
        out["ARs"] = self._ar(st, "small", last)
        out["ARm"] = self._ar(st, "medium", last)
        out["ARl"] = self._ar(st, "large", last)
        for key, thr in (("AR", None), ("AR50", 0.5), ("AR75", 0.75)):  # keypoints' AR keys
            out[key] = self._ar(st, "all", last, thr)
        if self._op_img is not None:
            out.update(_op_stats(w, self._op_img))
        # per-class AP: mean over (T, R) of each class with counted ground truth
        if exact:
            q = st.q["all"]
            K = q.shape[2]
            per = np.mean(np.ascontiguousarray(q.transpose(0, 2, 1, 3)).reshape(B, K, -1), axis=2)
        else:
            qs = st.qsum["all"]
            per = qs.sum(axis=1) / (qs.shape[1] * self.R)
        per[st.n_pos["all"] <= 0] = np.nan
        return {k: v for k, v in out.items() if v is not None}, per


def _op_stats(w: WArray, per_image: FloatArray) -> dict[str, FloatArray]:
    """Operating-point keys of each sample from per-image (tp, fp, TP IoU sum, n_gt)."""
    tp, fp, iou_sum, n_gt = (w.astype(np.float64) @ per_image).T
    fn = n_gt - tp
    out: dict[str, FloatArray] = {"tp": tp, "fp": fp, "fn": fn}
    with np.errstate(divide="ignore", invalid="ignore"):
        out["precision"] = np.where(tp + fp > 0, tp / (tp + fp), np.nan)
        out["recall"] = np.where(n_gt > 0, tp / n_gt, np.nan)
        den = 2 * tp + fp + fn
        out["f1"] = np.where(den > 0, 2 * tp / den, np.nan)
        out["mean_iou"] = np.where(tp > 0, iou_sum / tp, np.nan)
    return out


class VocScorer:
    """``mAP``, the operating point and per-class AP of one model under image weights, on
    the VOC devkit's curves (all-point area, or the 11-point mean with ``use_07``)."""

    def __init__(
        self, table: ScoreTable, *, n_classes: int, use_07: bool, op: OpTable | None = None
    ) -> None:
        rec = np.arange(0.0, 1.1, 0.1) if use_07 else np.zeros(0)
        self.R = rec.shape[0]
        self.engine = WeightedCoco(
            {"all": table}, n_classes=n_classes, rec_thrs=rec, max_dets=(1,), voc=True
        )
        self._op_img = op.per_image() if op is not None else None

    def score(self, w: WArray) -> tuple[dict[str, FloatArray], FloatArray]:
        st = self.engine.sample(w)
        per = st.qsum["all"][:, 0, :] / (self.R or 1)  # (B, K)
        valid = st.n_pos["all"] > 0
        per = np.where(valid, per, np.nan)
        n = valid.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            m_ap = np.where(n > 0, np.nansum(per, axis=1) / n, np.nan)
        out: dict[str, FloatArray] = {"mAP": m_ap}
        if self._op_img is not None:
            out.update(_op_stats(w, self._op_img))
        return out, per


Scorer = CocoScorer | VocScorer


def paired_deltas(
    a: Scorer, b: Scorer, *, n_images: int, n_samples: int, seed: int
) -> tuple[dict[str, FloatArray], FloatArray]:
    """Bootstrap deltas ``B - A`` per summary key (N,) and per class (N, K): both models are
    scored on the same image multiplicities (paired). NaN where a value is undefined."""
    keys: dict[str, list[FloatArray]] = {}
    per: list[FloatArray] = []
    pool = ThreadPoolExecutor(max_workers=2) if (os.cpu_count() or 1) > 1 else None
    for w in multiplicities(n_images, n_samples, seed):
        if pool is not None:  # NumPy releases the GIL in the big array operations
            fa = pool.submit(a.score, w)
            sb, pb = b.score(w)
            sa, pa = fa.result()
        else:
            sa, pa = a.score(w)
            sb, pb = b.score(w)
        for k in sa:
            if k in sb:
                keys.setdefault(k, []).append(sb[k] - sa[k])
        per.append(pb - pa)
    if pool is not None:
        pool.shutdown()
    deltas = {k: np.concatenate(v) for k, v in keys.items()}
    return deltas, np.concatenate(per) if per else np.zeros((0, 0))


# --------------------------------------------------------------------------- from an evaluation


def coco_scorer(ds: Any, result: Any) -> CocoScorer | None:
    """A scorer over a COCO evaluation's match tables (one per area range; the evaluation
    must have been run with ``keep_tables=True``), or None when there are none."""
    ev = getattr(result, "evaluation", None)
    tables = getattr(ev, "tables", None)
    if ev is None or not tables or getattr(ev, "protocol", "coco") not in ("coco", "lvis"):
        return None
    p = ev.params
    iou_thrs = np.asarray(p.iou_thrs, dtype=np.float64)
    # the tables' rows refer to the evaluated dataset (LVIS: its federated selection)
    evaluated = getattr(ev, "dataset", None)
    if evaluated is None:
        evaluated = ds
    gt_image = np.asarray(evaluated.gt.image, dtype=np.int64)
    gt_category = np.asarray(evaluated.gt.category, dtype=np.int64)
    out: dict[str, ScoreTable] = {}
    op: OpTable | None = None
    for name, tab in tables.items():
        t_idx = [int(np.flatnonzero(tab.iou_thrs == t)[0]) for t in iou_thrs]
        views = [tab.dense(t) for t in t_idx]
        matched = np.stack([v[0] >= 0 for v in views]) if views else np.zeros((0, len(tab.det)))
        tp = np.stack([(v[0] >= 0) & ~v[2] for v in views]) if views else matched
        counts = np.asarray(tab.gt_counts, dtype=bool)
        out[name] = ScoreTable(
            det_image=np.asarray(tab.det_image, dtype=np.int64),
            det_category=np.asarray(tab.det_category, dtype=np.int64),
            det_score=np.asarray(tab.det_score, dtype=np.float64),
            det_rank=np.asarray(tab.det_rank, dtype=np.int64),
            det_out=np.asarray(tab.det_out, dtype=bool),
            matched=matched.astype(bool),
            tp=tp.astype(bool),
            gt_image=gt_image[counts],
            gt_category=gt_category[counts],
        )
        if name == "all":
            op = _op_table(ds, result, tab, gt_image[counts])
    return CocoScorer(
        out,
        n_classes=len(ds.categories),
        iou_thrs=iou_thrs,
        rec_thrs=np.asarray(p.rec_thrs, dtype=np.float64),
        max_dets=tuple(p.max_dets),
        op=op,
        frequency=getattr(ev, "frequency", None) if ev.protocol == "lvis" else None,
    )


def _op_table(ds: Any, result: Any, tab: Any, gt_image: IntArray) -> OpTable | None:
    """The operating point at the single run's IoU and score thresholds (each model keeps
    its own score threshold; it is not re-chosen per sample)."""
    params = result.params
    thr = params.get("op_iou_thr", params.get("iou_thr"))
    if thr is None:
        return None
    where = np.flatnonzero(np.asarray(tab.iou_thrs) == thr)
    if where.size == 0:
        return None
    g, iou, ign = tab.dense(int(where[0]))
    score = np.asarray(tab.det_score, dtype=np.float64)
    s_thr = result.summary.get("score_thr")  # the cut actually used (given or max-F1)
    keep = score >= s_thr if s_thr is not None else np.ones(score.shape, dtype=bool)
    hit = g >= 0
    return OpTable(
        det_image=np.asarray(tab.det_image, dtype=np.int64),
        tp=hit & ~ign & keep,
        fp=~hit & ~np.asarray(tab.det_out, dtype=bool) & keep,
        iou=np.asarray(iou, dtype=np.float64),
        gt_image=gt_image,
        n_images=len(ds.images),
    )


def voc_scorer(ds: Any, result: Any, *, iou_thr: float, use_07: bool, plus_one: bool) -> VocScorer:
    """A scorer over the VOC devkit matching (re-run here: it is cheap and per image)."""
    from ..protocols.voc import voc_match

    m = voc_match(ds, iou_thr=iou_thr, plus_one=plus_one)
    n = len(ds.pred)
    on_hard = np.zeros(n, dtype=bool)
    has = m.gt_row >= 0
    on_hard[has] = m.hard[m.gt_row[has]]
    counted = ~m.hard
    table = ScoreTable(
        det_image=np.asarray(ds.pred.image, dtype=np.int64),
        det_category=np.asarray(ds.pred.category, dtype=np.int64),
        det_score=np.asarray(ds.pred.score, dtype=np.float64),
        det_rank=np.zeros(n, dtype=np.int64),
        det_out=np.zeros(n, dtype=bool),
        matched=(m.tp | (m.hit & on_hard))[None, :],
        tp=m.tp[None, :],
        gt_image=np.asarray(ds.gt.image, dtype=np.int64)[counted],
        gt_category=np.asarray(ds.gt.category, dtype=np.int64)[counted],
        det_tiebreak=np.arange(n, dtype=np.int64),
    )
    s_thr = result.summary.get("score_thr")  # the cut actually used (given or max-F1)
    keep = ds.pred.score >= s_thr if s_thr is not None else np.ones(n, dtype=bool)
    op = OpTable(
        det_image=table.det_image,
        tp=m.tp & keep,
        fp=m.fp & keep,
        iou=np.nan_to_num(m.iou),
        gt_image=table.gt_image,
        n_images=len(ds.images),
    )
    return VocScorer(table, n_classes=len(ds.categories), use_07=use_07, op=op)
