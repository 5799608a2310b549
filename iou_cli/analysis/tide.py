"""TIDE error breakdown (Bolya et al., ECCV 2020), on the evaluation's own match table.

Definitions (those of the reference code ``tidecv`` 1.0.1, which the tests run as the oracle):

* Matching is the evaluation's at the positive threshold ``pos`` (area "all", maxDets[-1]):
  a prediction is a true positive, a false positive, or ignored (it hit a crowd / ignored
  ground truth; ignored predictions are no error). A counted ground truth is *used* when a
  true positive took it.
* Each false positive gets exactly one error, tested in this order against the counted ground
  truths of its image (class-agnostic pairs, IoU >= ``bg``):
  ``loc``  the best same-class IoU is in [bg, pos] (its target: that ground truth);
  ``cls``  the best other-class IoU is >= pos (target: that ground truth);
  ``dupe`` the best IoU with a *used* same-class ground truth is >= pos;
  ``bkg``  the best IoU with any ground truth is <= bg (or the image has none);
  ``both`` anything else. Ties between equal IoUs go to the first ground truth in file order.
* A ``cls``/``loc`` error whose target is unused competes for it with every other such error
  on that target; the highest score wins (the target becomes *usable*). ``Miss``: a counted
  ground truth neither used nor usable.
* dAP of a type: AP at ``pos`` after fixing every error of that type alone, minus the baseline,
  floored at 0. Fixing ``cls``/``loc``: the winner becomes a true positive of its target's
  class (``cls``) or its own (``loc``); every other error of the type is removed (as are errors
  whose target was used). Fixing ``both``/``dupe``/``bkg``: the false positives are removed.
  Fixing ``Miss``: those ground truths leave the count. ``FalsePos`` (not floored): every true
  positive scored 1, every false positive 0. ``FalseNeg`` (not floored): every unused counted
  ground truth leaves the count.
* Every AP is the evaluation's: the edited table is re-scored by
  :func:`iou_cli.matching.accumulate.accumulate` and averaged as pycocotools' summarize does. The
  classes averaged are the baseline's (those with counted ground truth); a class that a fix
  leaves without ground truth scores 0 while it still has predictions and leaves the mean when
  it has none (tidecv's rule).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .sections import TideBreakdown

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# error codes per prediction (also the --matches ``error`` column)
NONE, CLS, LOC, BOTH, DUPE, BKG = 0, 1, 2, 3, 4, 5
ERROR_NAMES = ("", "cls", "loc", "both", "dupe", "bkg")
MAIN = ("Cls", "Loc", "Both", "Dupe", "Bkg", "Miss")
_SLICE = 1 << 16  # false positives paired at once
SPECIAL = ("FalsePos", "FalseNeg")


@dataclass
class TideErrors:
    """Per evaluated prediction (positions into the table's ``det``) and per ground truth."""

    pos_thr: float
    bg_thr: float
    code: npt.NDArray[np.int8]  # (D,) NONE for true positives and ignored predictions
    target: IntArray  # (D,) ground-truth row a cls/loc/dupe error points at, else -1
    target_iou: FloatArray  # (D,) IoU with it (NaN where none)
    best_gt: IntArray  # (D,) best-overlapping counted ground truth (any class), -1 if none >= bg
    best_iou: FloatArray  # (D,) its IoU (NaN where none)
    winner: BoolArray  # (D,) cls/loc errors that become true positives when fixed
    tp: BoolArray  # (D,)
    fp: BoolArray  # (D,)
    det_gt: IntArray  # (D,) ground truth matched at pos (-1 none)
    used: BoolArray  # (G,)
    missed: BoolArray  # (G,) Miss errors
    unused: BoolArray  # (G,) counted and not used (false negatives)
    # class-agnostic pairs of the false positives with counted ground truths (IoU >= bg_thr):
    # prediction positions into the table's ``det``, ground-truth rows, IoU
    pair_det: IntArray
    pair_gt: IntArray
    pair_iou: FloatArray


def _best_per(
    key: IntArray, gt: IntArray, iou: FloatArray, mask: BoolArray, n: int
) -> tuple[FloatArray, IntArray]:
    """Per ``key`` in [0, n): the highest IoU among the masked pairs and its ground truth (the
    lowest row among equal IoUs); -1 / -1 where there is none."""
    best = np.full(n, -1.0)
    arg = np.full(n, -1, dtype=np.int64)
    sel = np.flatnonzero(mask)
    if sel.size:
        o = sel[np.lexsort((gt[sel], -iou[sel], key[sel]))]
        first = o[np.r_[True, key[o][1:] != key[o][:-1]]]
        best[key[first]] = iou[first]
        arg[key[first]] = gt[first]
    return best, arg


def classify(
    ds: Any, table: Any, t: int, *, pos_thr: float, bg_thr: float, iou_type: str = "bbox"
) -> TideErrors:
    """The TIDE error of every evaluated prediction of ``table`` at threshold index ``t``."""
    from ..matching.pairs import candidate_pairs

    D = int(table.det.shape[0])
    G = len(ds.gt)
    det_gt, _iou, ign = table.dense(t)
    tp = (det_gt >= 0) & ~ign
    fp = np.asarray(table.fp(t), dtype=bool)
    counts = np.asarray(table.gt_counts, dtype=bool)
    used = np.zeros(G, dtype=bool)
    used[det_gt[tp]] = True

    fp_pos = np.flatnonzero(fp)
    fp_rows = table.det[fp_pos]
    by_row = np.argsort(fp_rows, kind="stable")
    sorted_rows = fp_rows[by_row]
    # in slices of predictions: the pairs before the IoU cut stay a few MiB
    parts_d, parts_g, parts_v = [], [], []
    for s in range(0, sorted_rows.shape[0], _SLICE):
        pairs = candidate_pairs(
            ds,
            det_rows=sorted_rows[s : s + _SLICE],
            by_class=False,
            min_iou=bg_thr,
            iou_type=iou_type,
        )
        parts_d.append(pairs.det)
        parts_g.append(pairs.gt)
        parts_v.append(pairs.iou)
    pair_rows = np.concatenate(parts_d) if parts_d else np.zeros(0, dtype=np.int64)
    g = np.concatenate(parts_g).astype(np.int64) if parts_g else np.zeros(0, dtype=np.int64)
    v = np.concatenate(parts_v).astype(np.float64) if parts_v else np.zeros(0)
    # pairs.det are prediction rows: map back to positions among the false positives
    p = by_row[np.searchsorted(sorted_rows, pair_rows)].astype(np.int64)
    keep = counts[g] if g.size else np.zeros(0, dtype=bool)
    p, g, v = p[keep], g[keep], v[keep]
    nF = fp_pos.shape[0]
    d_cat = table.det_category[fp_pos]
    g_cat = ds.gt.category
    same = d_cat[p] == g_cat[g]
    all_all = np.ones(p.shape[0], dtype=bool)

    same_max, same_arg = _best_per(p, g, v, same, nF)
    other_max, other_arg = _best_per(p, g, v, ~same, nF)
    dupe_max, dupe_arg = _best_per(p, g, v, same & used[g], nF)
    all_max, all_arg = _best_per(p, g, v, all_all, nF)

    code_f = np.full(nF, BOTH, dtype=np.int8)
    target_f = np.full(nF, -1, dtype=np.int64)
    tiou_f = np.full(nF, np.nan)
    undecided = np.ones(nF, dtype=bool)
    is_loc = (same_max >= bg_thr) & (same_max <= pos_thr)
    code_f[is_loc] = LOC
    target_f[is_loc] = same_arg[is_loc]
    tiou_f[is_loc] = same_max[is_loc]
    undecided &= ~is_loc
    is_cls = undecided & (other_max >= pos_thr)
    code_f[is_cls] = CLS
    target_f[is_cls] = other_arg[is_cls]
    tiou_f[is_cls] = other_max[is_cls]
    undecided &= ~is_cls
    is_dupe = undecided & (dupe_max >= pos_thr)
    code_f[is_dupe] = DUPE
    target_f[is_dupe] = dupe_arg[is_dupe]
    tiou_f[is_dupe] = dupe_max[is_dupe]
    undecided &= ~is_dupe
    is_bkg = undecided & (all_max <= bg_thr)
    code_f[is_bkg] = BKG

    code = np.zeros(D, dtype=np.int8)
    code[fp_pos] = code_f
    target = np.full(D, -1, dtype=np.int64)
    target[fp_pos] = target_f
    target_iou = np.full(D, np.nan)
    target_iou[fp_pos] = tiou_f
    best_gt = np.full(D, -1, dtype=np.int64)
    best_gt[fp_pos] = all_arg
    best_iou = np.full(D, np.nan)
    best_iou[fp_pos] = np.where(all_arg >= 0, all_max, np.nan)

    # cls/loc errors on unused targets: the highest score wins its target (ties: image, then
    # score order, then file order -- the order in which tidecv meets its errors)
    cand = np.flatnonzero(((code == CLS) | (code == LOC)) & (target >= 0))
    cand = cand[~used[target[cand]]]
    winner = np.zeros(D, dtype=bool)
    usable = np.zeros(G, dtype=bool)
    if cand.size:
        tg = target[cand]
        o = cand[np.lexsort((table.det[cand], -table.det_score[cand], table.det_image[cand], tg))]
        first = o[np.r_[True, target[o][1:] != target[o][:-1]]]
        winner[first] = True
        usable[tg] = True
    unused = counts & ~used
    return TideErrors(
        pos_thr=pos_thr,
        bg_thr=bg_thr,
        code=code,
        target=target,
        target_iou=target_iou,
        best_gt=best_gt,
        best_iou=best_iou,
        winner=winner,
        tp=tp,
        fp=fp,
        det_gt=det_gt,
        used=used,
        missed=unused & ~usable,
        unused=unused,
        pair_det=fp_pos[p],
        pair_gt=g,
        pair_iou=v,
    )


# ----------------------------------------------------------------------------- re-scoring


@dataclass
class _Base:
    """The one-threshold view that every fix edits (one column per evaluated prediction)."""

    table: Any  # MatchTable restricted to threshold t, every prediction a candidate
    gt: IntArray  # (D,) matched ground truth (-1 none)
    iou: FloatArray  # (D,) its IoU (0 none)
    ignored: BoolArray  # (D,)
    category: IntArray  # (D,)
    score: FloatArray  # (D,)
    n_pos: IntArray  # (K,)
    order: Any = None  # the accumulation order of the unedited columns


def _ap(
    base: _Base,
    *,
    n_classes: int,
    rec_thrs: FloatArray,
    max_det: int,
    base_classes: BoolArray,
    gt: IntArray | None = None,
    iou: FloatArray | None = None,
    ignored: BoolArray | None = None,
    category: IntArray | None = None,
    score: FloatArray | None = None,
    n_pos: IntArray | None = None,
) -> float:
    """AP at the one threshold of ``base`` with the given columns replaced."""
    from ..matching.accumulate import accumulate

    gt = base.gt if gt is None else gt
    iou = base.iou if iou is None else iou
    ignored = base.ignored if ignored is None else ignored
    category = base.category if category is None else category
    score = base.score if score is None else score
    n_pos = base.n_pos if n_pos is None else n_pos
    table = _with_columns(base.table, gt, iou, ignored, category, score, n_pos)
    # the accumulation order depends on categories and scores only: reuse the baseline's
    order = base.order if category is base.category and score is base.score else None
    precision, _recall, _scores = accumulate(
        table, n_classes=n_classes, rec_thrs=rec_thrs, max_dets=(max_det,), order=order
    )
    s = precision[0, :, :, -1]  # (R, K)
    valid = (n_pos > 0) & base_classes
    # a baseline class left without ground truth: 0 while it still has predictions
    scored = ~ignored
    has_pred = np.bincount(category[scored], minlength=n_classes) > 0
    zero = base_classes & (n_pos <= 0) & has_pred
    vals = s[:, valid]
    vals = vals[vals > -1]
    nz = int(zero.sum()) * s.shape[0]
    if vals.size + nz == 0:
        return 0.0
    if nz:
        vals = np.concatenate([vals, np.zeros(nz)])
    return float(np.mean(vals))


def _with_columns(
    table: Any,
    gt: IntArray,
    iou: FloatArray,
    ignored: BoolArray,
    category: IntArray,
    score: FloatArray,
    n_pos: IntArray,
) -> Any:
    """A copy of the one-threshold, all-candidates table with these columns."""
    D = gt.shape[0]
    return replace(
        table,
        det_category=category,
        det_score=score,
        cand=np.arange(D, dtype=np.int64),
        gt=gt[None, :],
        iou=iou[None, :],
        ignored=ignored[None, :],
        n_pos=n_pos,
    )


def _one_threshold(table: Any, t: int) -> _Base:
    gt, iou, ign = table.dense(t)
    one = replace(table, iou_thrs=np.asarray([table.iou_thrs[t]], dtype=np.float64))
    # the unmatched predictions outside the area range are ignored as in the evaluation
    out = np.asarray(table.det_out, dtype=bool)
    ignored = ign | ((gt < 0) & out)
    base = _Base(
        table=one,
        gt=gt.astype(np.int64),
        iou=iou.astype(np.float64),
        ignored=ignored,
        category=np.asarray(table.det_category, dtype=np.int64).copy(),
        score=np.asarray(table.det_score, dtype=np.float64).copy(),
        n_pos=np.asarray(table.n_pos, dtype=np.int64).copy(),
    )
    from ..matching.accumulate import accumulation_order

    full = _with_columns(
        one, base.gt, base.iou, base.ignored, base.category, base.score, base.n_pos
    )
    base.order = accumulation_order(full, int(base.n_pos.shape[0]))
    return base


def breakdown(
    ds: Any,
    table: Any,
    *,
    pos_thr: float = 0.5,
    bg_thr: float = 0.1,
    max_det: int = 100,
    rec_thrs: FloatArray | None = None,
    iou_type: str = "bbox",
    baseline: float | None = None,
    errors: TideErrors | None = None,
) -> tuple[TideBreakdown, TideErrors]:
    """The ``tide`` section and the per-prediction errors.

    ``table`` must hold ``pos_thr`` among its thresholds. ``rec_thrs`` defaults to
    pycocotools' 101 recall points; ``baseline`` (the report's AP at ``pos_thr``) is
    recomputed from the table when not given; ``errors`` (a :func:`classify` at ``pos_thr``
    with ``bg_thr``) is reused when given.
    """
    from ..matching.accumulate import REC_THRS

    rec = REC_THRS if rec_thrs is None else np.asarray(rec_thrs, dtype=np.float64)
    hits = np.flatnonzero(np.asarray(table.iou_thrs) == pos_thr)
    if hits.size == 0:
        raise ValueError(f"the match table has no threshold {pos_thr}")
    t = int(hits[0])
    err = errors
    if err is None or err.pos_thr != pos_thr or err.bg_thr != bg_thr:
        err = classify(ds, table, t, pos_thr=pos_thr, bg_thr=bg_thr, iou_type=iou_type)
    base = _one_threshold(table, t)
    K = len(ds.categories)
    base_classes = base.n_pos > 0
    kw: dict[str, Any] = {
        "n_classes": K,
        "rec_thrs": rec,
        "max_det": max_det,
        "base_classes": base_classes,
    }
    # the report's AP at pos_thr is this table's AP unedited (same accumulate, same mean)
    ap0 = float(baseline) if baseline is not None else _ap(base, **kw)
    if baseline is None and base_classes.any():
        baseline = ap0
    gt_cat = ds.gt.category

    def removed(mask: BoolArray) -> float:
        return _ap(base, ignored=base.ignored | mask, **kw)

    def fix_match(code: int, move_class: bool) -> float:
        errs = err.code == code
        win = errs & err.winner
        gt = base.gt.copy()
        gt[win] = err.target[win]
        iou = base.iou.copy()
        iou[win] = err.target_iou[win]
        cat = base.category
        if move_class:
            cat = cat.copy()
            cat[win] = gt_cat[err.target[win]]
        return _ap(base, gt=gt, iou=iou, ignored=base.ignored | (errs & ~win), category=cat, **kw)

    def drop_gts(mask: BoolArray) -> float:
        n_pos = base.n_pos - np.bincount(gt_cat[mask], minlength=K)
        return _ap(base, n_pos=n_pos, **kw)

    fixed = {
        "Cls": fix_match(CLS, True),
        "Loc": fix_match(LOC, False),
        "Both": removed(err.code == BOTH),
        "Dupe": removed(err.code == DUPE),
        "Bkg": removed(err.code == BKG),
        "Miss": drop_gts(err.missed),
    }
    d_ap: dict[str, float | None] = {k: max(v - ap0, 0.0) for k, v in fixed.items()}
    fp_score = np.where(err.tp, 1.0, np.where(err.fp, 0.0, base.score))
    d_ap["FalsePos"] = _ap(base, score=fp_score, **kw) - ap0
    d_ap["FalseNeg"] = drop_gts(err.unused) - ap0
    if baseline is None:  # no class has counted ground truth: AP is undefined
        d_ap = dict.fromkeys(d_ap)
    count = {
        "Cls": int(np.count_nonzero(err.code == CLS)),
        "Loc": int(np.count_nonzero(err.code == LOC)),
        "Both": int(np.count_nonzero(err.code == BOTH)),
        "Dupe": int(np.count_nonzero(err.code == DUPE)),
        "Bkg": int(np.count_nonzero(err.code == BKG)),
        "Miss": int(np.count_nonzero(err.missed)),
        "FalsePos": int(np.count_nonzero(err.fp)),
        "FalseNeg": int(np.count_nonzero(err.unused)),
    }
    section = TideBreakdown(
        pos_thr=float(pos_thr),
        bg_thr=float(bg_thr),
        baseline=None if baseline is None else float(baseline),
        dAP=d_ap,
        count=count,
    )
    return section, err
