"""The per-image step of panoptic evaluation: read one pair of PNGs, count pixel pairs,
apply panopticapi's matching rules; and the map over images (in this process or ``jobs``
worker processes, results always in the ground truth's image order).

Pixel pairs: the maps stay as the decoder's RGB bytes; :func:`pixel_runs` finds the runs of
pixels where neither map changes (a few thousand per image), their ids are mapped to small
indices through a lookup table over all 2^24 ids (set and reset per image), and one
``bincount`` of ``gt_index * (P + 1) + pred_index`` weighted by run length gives the
``(G + 1) x (P + 1)`` intersection matrix; row and column 0 are VOID (id 0).
See :mod:`iou_cli.tasks.panoptic` for the rules.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..loaders.panoptic import MAX_ID, PanopticImage, read_rgb

IntArray = npt.NDArray[np.int64]
Progress = Callable[[str, int, int], None]
_UNKNOWN = np.uint16(0xFFFF)
MAX_SEGMENTS = 0xFFFE  # per image and side: indices fit the uint16 lookup table
CHUNK = 32  # images per task handed to a worker process
JIT_MIN_PAIRS = 1000  # from here the compiled counter (numba's start ~0.5 s) pays
PNG_EXPECTED = "an RGB panoptic PNG"


@dataclass
class ImageScore:
    """One image's contribution, sparse: per touched category index ``cats`` the counts,
    and the matched pairs' IoUs in panopticapi's order (``match_cat`` aligned)."""

    cats: IntArray
    tp: IntArray
    fp: IntArray
    fn: IntArray
    iou: npt.NDArray[np.float64]  # per cats: sum of matched IoUs (this image only)
    match_cat: IntArray
    match_iou: npt.NDArray[np.float64]
    area_mismatch: int = 0  # ground-truth segments whose JSON area is not their pixel count

    def pq(self) -> float | None:
        """The image's PQ: mean over its categories with TP + FP + FN > 0 (None: none)."""
        den = self.tp + 0.5 * self.fp + 0.5 * self.fn
        keep = (self.tp + self.fp + self.fn) > 0
        if not keep.any():
            return None
        return float(np.mean(self.iou[keep] / den[keep]))


@dataclass
class Packed:
    """The scores of a run of images as flat arrays (per image: how many touched categories
    and matches; then those, concatenated in image order): what a worker sends back, one
    pickle of ten arrays for a chunk instead of eight arrays per image."""

    n_cats: IntArray
    cats: IntArray
    tp: IntArray
    fp: IntArray
    fn: IntArray
    iou: npt.NDArray[np.float64]
    n_match: IntArray
    match_cat: IntArray
    match_iou: npt.NDArray[np.float64]
    area_mismatch: IntArray

    @classmethod
    def of(cls, scores: Sequence[ImageScore]) -> Packed:
        def cat(name: str, dtype: type) -> npt.NDArray[Any]:
            return np.concatenate([getattr(s, name) for s in scores] or [np.empty(0, dtype)])

        return cls(
            n_cats=np.array([len(s.cats) for s in scores], dtype=np.int64),
            cats=cat("cats", np.int64),
            tp=cat("tp", np.int64),
            fp=cat("fp", np.int64),
            fn=cat("fn", np.int64),
            iou=cat("iou", np.float64),
            n_match=np.array([len(s.match_cat) for s in scores], dtype=np.int64),
            match_cat=cat("match_cat", np.int64),
            match_iou=cat("match_iou", np.float64),
            area_mismatch=np.array([s.area_mismatch for s in scores], dtype=np.int64),
        )

    def scores(self) -> list[ImageScore]:
        """The images' scores again (equal arrays, as views)."""
        a = np.concatenate([[0], np.cumsum(self.n_cats)]).tolist()
        m = np.concatenate([[0], np.cumsum(self.n_match)]).tolist()
        return [
            ImageScore(
                cats=self.cats[a[i] : a[i + 1]],
                tp=self.tp[a[i] : a[i + 1]],
                fp=self.fp[a[i] : a[i + 1]],
                fn=self.fn[a[i] : a[i + 1]],
                iou=self.iou[a[i] : a[i + 1]],
                match_cat=self.match_cat[m[i] : m[i + 1]],
                match_iou=self.match_iou[m[i] : m[i + 1]],
                area_mismatch=int(n),
            )
            for i, n in enumerate(self.area_mismatch.tolist())
        ]


@dataclass
class Job:
    """One image pair with everything needed to score it (picklable, small)."""

    gt: PanopticImage
    pred: PanopticImage
    gt_cat: IntArray  # category indices of the segments, JSON order
    pred_cat: IntArray
    gt_png: str
    pred_png: str
    gt_json: str
    pred_json: str
    size: tuple[int, int] | None  # (w, h) from the ground truth's images entry


class Lookup:
    """A reusable segment-id -> index table (32 MiB), set and reset per image, and the
    run finder's scratch masks (one byte per map byte, kept between images)."""

    def __init__(self) -> None:
        self.table = np.full(MAX_ID + 1, _UNKNOWN, dtype=np.uint16)
        self.table[0] = 0
        self._masks = (np.empty(0, dtype=bool), np.empty(0, dtype=bool))
        self._pred_table: npt.NDArray[np.uint16] | None = None  # the compiled path's
        self._scratch: dict[int, npt.NDArray[np.uint8]] = {}

    def pred_table(self) -> npt.NDArray[np.uint16]:
        """A second table like ``table``, for the prediction's ids (the compiled counter
        looks up both maps' ids in one pass)."""
        if self._pred_table is None:
            self._pred_table = self.table.copy()
        return self._pred_table

    def scratch(
        self, width: int, make: Callable[[int], npt.NDArray[np.uint8]]
    ) -> npt.NDArray[np.uint8]:
        if width not in self._scratch:
            self._scratch = {width: make(width)}
        return self._scratch[width]

    def masks(
        self, nbytes: int
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Two bool buffers of ``nbytes`` rounded up to a multiple of 8, and one of an eighth
        of that (uninitialised)."""
        size = (nbytes + 7) & ~7
        if self._masks[0].size < size:
            self._masks = (np.empty(size, dtype=bool), np.empty(size + size // 8, dtype=bool))
        mark, other = self._masks
        return mark[:size], other[:size], other[size : size + size // 8]

    def indices(self, ids_map: npt.NDArray[np.uint32], ids: IntArray) -> npt.NDArray[np.uint16]:
        t = self.table
        t[ids] = np.arange(1, len(ids) + 1, dtype=np.uint16)
        try:
            return t[ids_map]
        finally:
            t[ids] = _UNKNOWN


def _unknown_pixel(
    idx: npt.NDArray[np.uint16],
    run_ids: npt.NDArray[np.uint32],
    starts: IntArray,
    width: int,
    png: str,
    json: str,
    img: PanopticImage,
) -> None:
    """A run whose id is not in segments_info: the error names its first pixel."""
    bad = idx == _UNKNOWN
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        y, x = divmod(int(starts[k]), width)
        sid = int(run_ids[k])
        n = len(np.unique(run_ids[bad]))
        raise InputError(
            png,
            f"pixel (x={x}, y={y})",
            f"segment id {sid} is in the PNG but not in segments_info of {img.where} in "
            f"{json} ({n} such id(s) in this image)",
        )


def _missing_segment(counts: IntArray, json: str, img: PanopticImage) -> None:
    empty = np.flatnonzero(counts == 0)
    if len(empty):
        j = int(empty[0])
        raise InputError(
            json,
            f"{img.where}.segments_info[{j}]",
            f"segment id {int(img.ids[j])} has no pixel in the PNG {img.file_name} "
            f"({len(empty)} such segment(s) in this image)",
        )


RgbMap = npt.NDArray[np.uint8]


def _ids_at(flat: npt.NDArray[np.uint8], pixels: IntArray) -> npt.NDArray[np.uint32]:
    """The ids ``R + 256 G + 256^2 B`` of the given pixels of a flat RGB byte array (one
    gather per byte: faster here than one gather of 3-byte records)."""
    at = pixels * 3
    out = np.take(flat, at).astype(np.uint32)
    at += 1
    out |= np.take(flat, at).astype(np.uint32) << 8
    at += 1
    out |= np.take(flat, at).astype(np.uint32) << 16
    return out


def pixel_runs(
    gt_rgb: RgbMap, pred_rgb: RgbMap, lookup: Lookup
) -> tuple[IntArray, IntArray, npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """The runs of pixels (row-major order) where neither (H, W, 3) map changes: their first
    pixels, lengths, and the two ids ``R + 256 G + 256^2 B`` there.

    A map changes at a pixel when one of its 3 bytes differs from the byte 3 back. The
    marked bytes, a few per run, are found 8 at a time (the 64-bit words marked in either
    map, then the bytes of those words) and mapped to their pixels (byte // 3). Every pass
    over the image is over contiguous bytes (the decoder's RGB output, no 4-byte copy)."""
    g, p = gt_rgb.reshape(-1), pred_rgb.reshape(-1)
    nb = g.size
    mark, other, flags = lookup.masks(nb)
    mark[:3] = True  # pixel 0 starts a run
    other[:3] = False
    np.not_equal(g[3:], g[:-3], out=mark[3:nb])
    np.not_equal(p[3:], p[:-3], out=other[3:nb])
    mark[nb:] = other[nb:] = False
    mw, pw = mark.view(np.uint64), other.view(np.uint64)
    hit = np.flatnonzero(np.logical_or(mw, pw, out=flags))  # words with a mark in either map
    within = np.flatnonzero((mw[hit] | pw[hit]).view(bool))
    pix = hit[within >> 3]
    pix *= 8
    pix += within & 7
    pix //= 3
    first = np.empty(pix.size, dtype=bool)  # a pixel with 2 or 3 changed bytes: once
    first[:1] = True
    np.not_equal(pix[1:], pix[:-1], out=first[1:])
    starts = pix[first]
    lengths = np.diff(starts, append=nb // 3)
    return starts, lengths, _ids_at(g, starts), _ids_at(p, starts)


def score_image(gt_map: RgbMap, pred_map: RgbMap, job: Job, lookup: Lookup) -> ImageScore:
    """One image: intersections by pixel-pair counting, then panopticapi's rules. The maps
    are C-contiguous (H, W, 3) uint8 (:func:`~iou_cli.loaders.panoptic.read_rgb`). The
    ground truth's areas are its JSON ``area`` values (panopticapi's), the pixel counts where
    absent; the prediction's are its pixel counts."""
    for m in (gt_map, pred_map):
        if m.dtype != np.uint8 or m.ndim != 3 or m.shape[2] != 3 or m.shape != gt_map.shape:
            raise ValueError(f"expected two (H, W, 3) uint8 RGB maps, got {m.dtype} {m.shape}")
    gt, pred = job.gt, job.pred
    starts, lengths, g_run, p_run = pixel_runs(gt_map, pred_map, lookup)
    width = gt_map.shape[1]
    gi = lookup.indices(g_run, gt.ids)
    _unknown_pixel(gi, g_run, starts, width, job.gt_png, job.gt_json, gt)
    pi = lookup.indices(p_run, pred.ids)
    _unknown_pixel(pi, p_run, starts, width, job.pred_png, job.pred_json, pred)
    kg, kp = len(gt.ids), len(pred.ids)
    key = gi.astype(np.intp)
    key *= kp + 1
    key += pi
    counts = (
        np.bincount(key, weights=lengths, minlength=(kg + 1) * (kp + 1))
        .astype(np.int64)
        .reshape(kg + 1, kp + 1)
    )
    return score_counts(counts, job)


def score_counts(counts: IntArray, job: Job) -> ImageScore:
    """panopticapi's rules on one image's ``(G + 1) x (P + 1)`` pixel-pair counts (row and
    column 0: VOID), whichever counter made them."""
    gt, pred, gt_cat, pred_cat = job.gt, job.pred, job.gt_cat, job.pred_cat
    kg, kp = len(gt.ids), len(pred.ids)
    gt_pixels = counts[1:].sum(axis=1)
    _missing_segment(gt_pixels, job.gt_json, gt)
    pred_area = counts[:, 1:].sum(axis=0)
    _missing_segment(pred_area, job.pred_json, pred)
    inter = counts[1:, 1:]
    void = counts[0, 1:]
    ga = np.where(np.isnan(gt.area), gt_pixels, gt.area)
    mismatch = int(np.count_nonzero(ga != gt_pixels))
    # candidates: overlapping, same category, ground truth not crowd
    cand = (inter > 0) & (gt_cat[:, None] == pred_cat[None, :]) & ~gt.iscrowd[:, None]
    r, c = np.nonzero(cand)
    i_rc = inter[r, c].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = i_rc / (pred_area[c] + ga[r] - i_rc - void[c])  # VOID overlap left out
    hit = iou > 0.5
    r, c, iou = r[hit], c[hit], iou[hit]
    order = np.lexsort((pred.ids[c], gt.ids[r]))  # panopticapi: by gt id, then pred id
    r, c, iou = r[order], c[order], iou[order]
    gt_matched = np.zeros(kg, dtype=bool)
    gt_matched[r] = True
    pred_matched = np.zeros(kp, dtype=bool)
    pred_matched[c] = True
    n_cat = int(max(gt_cat.max(initial=-1), pred_cat.max(initial=-1))) + 1
    fn_rows = ~gt_matched & ~gt.iscrowd
    # the crowd region of each category: the last crowd segment of it in segments_info
    crowd_row = {int(gt_cat[j]): j for j in np.flatnonzero(gt.iscrowd).tolist()}
    fp_cols = np.flatnonzero(~pred_matched)
    ignored = void[fp_cols].astype(np.int64)
    if crowd_row:
        rows = np.array([crowd_row.get(int(k), -1) for k in pred_cat[fp_cols]], dtype=np.intp)
        has = rows >= 0
        ignored[has] += inter[rows[has], fp_cols[has]]
    is_fp = ~(ignored / pred_area[fp_cols] > 0.5)  # more than half VOID or crowd: ignored
    tp = np.bincount(gt_cat[r], minlength=n_cat)
    fn = np.bincount(gt_cat[fn_rows], minlength=n_cat)
    fp = np.bincount(pred_cat[fp_cols[is_fp]], minlength=n_cat)
    iou_sum = np.bincount(gt_cat[r], weights=iou, minlength=n_cat).astype(np.float64)
    touched = np.flatnonzero((tp + fn + fp) > 0)
    return ImageScore(
        cats=touched,
        tp=tp[touched],
        fp=fp[touched],
        fn=fn[touched],
        iou=iou_sum[touched],
        match_cat=gt_cat[r],
        match_iou=iou,
        area_mismatch=mismatch,
    )


def jit_rules(counts: IntArray, job: Job, jit: ModuleType) -> ImageScore | None:
    """:func:`score_counts` by the compiled rules (:func:`.panoptic_jit.rules`: the same
    operations, the same bits, without ~30 NumPy calls on tiny arrays); None when a segment
    has no pixel (then :func:`score_counts` words the error)."""
    gt, pred, gt_cat = job.gt, job.pred, job.gt_cat
    n_cat = int(max(gt_cat.max(initial=-1), job.pred_cat.max(initial=-1))) + 1
    out = np.zeros((4, n_cat), dtype=np.int64)
    room = len(gt.ids) * len(pred.ids)
    m_row = np.empty(room, dtype=np.int64)
    m_iou = np.empty(room, dtype=np.float64)
    order = (np.argsort(gt.ids), np.argsort(pred.ids))
    status, nm, mismatch = jit.rules(
        counts, gt.area, gt.iscrowd, gt_cat, job.pred_cat, *order, out, m_row, m_iou
    )
    if status:
        return None
    match_cat = gt_cat[m_row[:nm]]
    match_iou = m_iou[:nm].copy()
    touched = np.flatnonzero(out[3])
    iou_sum = np.bincount(match_cat, weights=match_iou, minlength=n_cat).astype(np.float64)
    return ImageScore(
        cats=touched,
        tp=out[0][touched],
        fp=out[1][touched],
        fn=out[2][touched],
        iou=iou_sum[touched],
        match_cat=match_cat,
        match_iou=match_iou,
        area_mismatch=int(mismatch),
    )


def _jit_counts(job: Job, lookup: Lookup, jit: ModuleType) -> IntArray | None:
    """The pixel-pair counts by the compiled counter (:mod:`.panoptic_jit`), or None where
    the NumPy path must read the pair (a PNG off the fast path, a size that differs, an id
    not in segments_info, a bad filter type): it gives the counts or words the error, as
    before, so errors never depend on the path."""
    from PIL import Image

    from ..loaders.files import read_input
    from ..loaders.png import inflated_rgb8

    limit = Image.MAX_IMAGE_PIXELS
    g = inflated_rgb8(read_input(job.gt_png, member=True, expected=PNG_EXPECTED), limit)
    if g is None or (job.size is not None and (g[0], g[1]) != job.size):
        return None
    p = inflated_rgb8(read_input(job.pred_png, member=True, expected=PNG_EXPECTED), limit)
    if p is None or (p[0], p[1]) != (g[0], g[1]):
        return None
    w, h = g[0], g[1]
    kg, kp = len(job.gt.ids), len(job.pred.ids)
    tg, tp = lookup.table, lookup.pred_table()
    counts = np.zeros((kg + 1) * (kp + 1), dtype=np.int64)
    tg[job.gt.ids] = np.arange(1, kg + 1, dtype=np.uint16)
    tp[job.pred.ids] = np.arange(1, kp + 1, dtype=np.uint16)
    try:
        code = jit.pair_counts(
            np.frombuffer(g[2], dtype=np.uint8),
            np.frombuffer(p[2], dtype=np.uint8),
            h,
            w,
            tg,
            tp,
            counts,
            kp + 1,
            lookup.scratch(w, jit.scratch_for),
        )
    finally:
        tg[job.gt.ids] = _UNKNOWN
        tp[job.pred.ids] = _UNKNOWN
    return counts.reshape(kg + 1, kp + 1) if code == 0 else None


def score_job(job: Job, lookup: Lookup, jit: ModuleType | None = None) -> ImageScore:
    """Read the job's two PNGs (checked against each other and the images entry), score.
    ``jit``: :mod:`.panoptic_jit` (the compiled counter), or None for the NumPy path."""
    for json, img in ((job.gt_json, job.gt), (job.pred_json, job.pred)):
        if len(img.ids) > MAX_SEGMENTS:
            raise InputError(json, img.where, f"more than {MAX_SEGMENTS:,} segments in one image")
    if jit is not None:
        counts = _jit_counts(job, lookup, jit)
        if counts is not None:
            score = jit_rules(counts, job, jit)
            return score if score is not None else score_counts(counts, job)
    gt_map = read_rgb(job.gt_png)
    h, w = gt_map.shape[:2]
    if job.size is not None and (w, h) != job.size:
        raise InputError(
            job.gt_png,
            None,
            f"size {w} x {h} differs from the image's {job.size[0]} x {job.size[1]} "
            f"(images entry of image_id {job.gt.image_id!r} in {job.gt_json})",
        )
    pred_map = read_rgb(job.pred_png)
    if pred_map.shape != gt_map.shape:
        raise InputError(
            job.pred_png,
            None,
            f"size {pred_map.shape[1]} x {pred_map.shape[0]} differs from the ground "
            f"truth's {w} x {h} ({job.gt_png})",
        )
    return score_image(gt_map, pred_map, job, lookup)


def jit_for(n_pairs: int) -> ModuleType | None:
    """:mod:`.panoptic_jit` with its machine code loaded when numba is installed and the run
    has at least ``JIT_MIN_PAIRS`` image pairs (numba's start, about half a second, pays
    from there); None otherwise (the NumPy path: the same numbers)."""
    if n_pairs < JIT_MIN_PAIRS:
        return None
    with _scipy_hidden():
        try:
            from . import panoptic_jit
        except ImportError:  # numba not installed (the jit extra), or not for this NumPy
            return None
        panoptic_jit.warm()
    return panoptic_jit


@contextmanager
def _scipy_hidden() -> Iterator[None]:
    """In iou-eval's own process only (``workers.own_process``), SciPy looks absent while
    numba starts: numba imports ``scipy.linalg`` (~0.12-0.22 s, most of its start) only to
    learn whether its ``np.dot``-based inner products may call BLAS, which the compiled
    counter never does; it then uses its own loop for them. Afterwards SciPy imports as
    usual. A library caller's process is left alone (its numba keeps BLAS)."""
    from ..workers import own_process

    if not own_process() or "scipy" in sys.modules:
        yield
        return
    sys.modules["scipy"] = None  # type: ignore[assignment]  # import scipy -> ImportError
    try:
        yield
    finally:
        if sys.modules.get("scipy", 0) is None:
            del sys.modules["scipy"]


_WORKER_LOOKUP: Lookup | None = None
_WORKER_JOBS: Sequence[Job] = ()
_WORKER_JIT: ModuleType | None = None


def _init_worker(jobs: Sequence[Job], use_jit: bool = False) -> None:
    """A worker's start: the signal handling of every pool (``workers.init_worker``), and
    the jobs themselves, so that tasks are only (start, end) spans. A forked worker gets
    ``jobs`` with the parent's memory, never pickled (about 60 us of pickling per image
    before); under spawn they are pickled once per worker."""
    global _WORKER_JOBS, _WORKER_JIT
    from ..workers import init_worker

    init_worker()
    _WORKER_JOBS = jobs
    if use_jit:  # forked: already imported and loaded by the parent
        from . import panoptic_jit

        _WORKER_JIT = panoptic_jit


def _score_span(span: tuple[int, int]) -> Packed | tuple[str | None, str | None, str]:
    """Worker side: the scores of jobs[start:end], or the first error as (path, where,
    reason)."""
    global _WORKER_LOOKUP
    if _WORKER_LOOKUP is None:
        _WORKER_LOOKUP = Lookup()
    try:
        return Packed.of(
            [score_job(_WORKER_JOBS[i], _WORKER_LOOKUP, _WORKER_JIT) for i in range(*span)]
        )
    except InputError as exc:
        return (exc.path, exc.where, exc.reason)


def run_jobs(
    jobs: Sequence[Job], n_jobs: int = 1, progress: Progress | None = None
) -> Iterator[ImageScore]:
    """Score the jobs in order; ``n_jobs > 1`` spreads chunks of images over processes.
    Only one pair of PNGs per process is in memory at a time."""
    for packed in run_chunks(jobs, n_jobs, progress):
        yield from packed.scores()


def run_chunks(
    jobs: Sequence[Job], n_jobs: int = 1, progress: Progress | None = None
) -> Iterator[Packed]:
    """:func:`run_jobs` a chunk of images at a time (:class:`Packed`, in order)."""
    total = len(jobs)
    jit = jit_for(total)
    if n_jobs <= 1 or total <= CHUNK:
        lookup = Lookup()
        for start in range(0, total, CHUNK):
            chunk = []
            for done in range(start + 1, min(start + CHUNK, total) + 1):
                chunk.append(score_job(jobs[done - 1], lookup, jit))
                if progress is not None:
                    progress("images", done, total)
            yield Packed.of(chunk)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    spans = [(i, min(i + CHUNK, total)) for i in range(0, total, CHUNK)]
    method = "fork" if "fork" in mp.get_all_start_methods() else None
    ctx = mp.get_context(method)
    workers = min(n_jobs, len(spans), os.cpu_count() or 1)
    done = 0
    pool = ProcessPoolExecutor(workers, ctx, _init_worker, (jobs, jit is not None))
    try:
        for out in pool.map(_score_span, spans):
            if isinstance(out, tuple):
                raise InputError(*out)
            done += len(out.n_cats)
            yield out
            if progress is not None:
                progress("images", done, total)
    finally:  # an error (or a consumer that stops early) cancels the chunks not started
        pool.shutdown(wait=True, cancel_futures=True)


__all__ = [
    "ImageScore",
    "Job",
    "Lookup",
    "Packed",
    "jit_for",
    "pixel_runs",
    "run_chunks",
    "run_jobs",
    "score_counts",
    "score_image",
    "score_job",
]
