"""The map: a joined dataset (or the part of it on some images) -> :class:`PartialState`.

The protocol's own matching runs on the part (its images keep their ground-truth ordinals,
so tie keys stay global); only its match records are kept. Matching is per image, so a
part's records are those the whole run would give its images.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Dataset, fingerprint
from ..result import Evaluation, clean
from .partial import PartialState, pack_flags

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

FORMAT_PROTOCOLS = ("coco", "lvis", "voc", "voc07")  # also on Ray and Spark (distributed/)
# every protocol with a mergeable state (--partial, merge, --jobs, the Evaluator)
MERGEABLE = (*FORMAT_PROTOCOLS, "dota")


def restrict(ds: Dataset, image_mask: BoolArray) -> tuple[Dataset, IntArray]:
    """The dataset on the images ``image_mask`` marks (image and category tables kept),
    and the prediction rows taken (positions into ``ds.pred``, in order)."""
    g = np.flatnonzero(image_mask[ds.gt.image]).astype(np.int64)
    p = np.flatnonzero(image_mask[ds.pred.image]).astype(np.int64)
    return replace(ds, gt=ds.gt.take(g), pred=ds.pred.take(p)), p


def _categories(ds: Dataset) -> dict[str, Any]:
    return {
        "ids": [
            clean(i) if i is None or isinstance(i, (int, str)) else str(i)
            for i in ds.categories.ids
        ],
        "names": list(ds.categories.names),
    }


def run_options(protocol: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The protocol's resolved options for a map step (no ``--matches`` rows; COCO and LVIS
    keep every area range's match table)."""
    from ..protocols import get_protocol

    p = get_protocol(protocol)
    from dataclasses import fields

    defaults = p.params()
    opts = {f.name: getattr(defaults, f.name) for f in fields(defaults)}
    opts.update(options)  # resolved options (RunOptions.protocol_options) win
    opts["matches"] = False
    if "keep_tables" in opts:
        opts["keep_tables"] = True
    opts["map_only"] = True  # the reduce accumulates, once, over every part
    return opts


def build_state(
    ds: Dataset,
    protocol: str,
    options: Mapping[str, Any],
    *,
    image_mask: BoolArray | None = None,
    covered: IntArray | None = None,
    pred_keys: IntArray | None = None,
    fp: str | None = None,
) -> PartialState:
    """The state of ``ds`` (of the images ``image_mask`` marks; default all).

    ``covered``: the images the state covers when ``ds`` is already restricted to them.
    ``pred_keys`` (per row of ``ds.pred``): the VOC tie key (default: the row index, i.e.
    file order). ``fp``: the ground truth's fingerprint when already known.
    """
    from ..protocols import get_protocol

    if protocol not in MERGEABLE:
        from ..errors import UsageError

        raise UsageError(
            f"--protocol {protocol} has no mergeable state ({', '.join(MERGEABLE)} do)"
        )
    n_img = len(ds.images)
    mask = np.ones(n_img, dtype=bool) if image_mask is None else image_mask
    sub, rows = (
        restrict(ds, mask)
        if image_mask is not None
        else (ds, np.arange(len(ds.pred), dtype=np.int64))
    )
    keys = rows if pred_keys is None else np.asarray(pred_keys, dtype=np.int64)[rows]
    opts = run_options(protocol, options)
    ev = get_protocol(protocol).run(sub, opts)
    header = {
        "protocol": protocol,
        "fingerprint": fp if fp is not None else fingerprint(ds),
        "categories": _categories(ds),
        "n_images": n_img,
    }
    images = (
        np.flatnonzero(mask).astype(np.int64)
        if covered is None
        else np.sort(np.asarray(covered, dtype=np.int64))
    )
    if protocol in ("voc", "voc07"):
        return _voc_state(ev, header, images, keys)
    if protocol == "dota":
        return _dota_state(ev, header, images, keys)
    return _coco_state(ev, header, images)


def prepare_part_keypoints(ds: Dataset, sigmas: Any) -> Dataset:
    """A part's keypoints as the whole run prepares them (``api``: the user's sigmas or the
    file's, resolved): an update without predictions reads an empty results list, whose K
    (0) is not the ground truth's, so it takes the ground truth's K first."""
    from ..geometry.oks import prepare_keypoints

    gk, pk = ds.gt.keypoints, ds.pred.keypoints
    if len(ds.pred) == 0 and gk is not None and pk is not None and pk.shape[1] != gk.shape[1]:
        ds = replace(ds, pred=replace(ds.pred, keypoints=np.zeros((0, gk.shape[1], 3))))
    return prepare_keypoints(ds, sigmas)


def _sigmas_json(ev: Evaluation) -> dict[str, Any]:
    """Keypoints: the OKS sigmas the part was scored with (parts with others do not merge)
    and where they came from (the report's info line)."""
    sk = ev.dataset.skeleton
    table = None if sk is None or sk.sigmas is None else np.asarray(sk.sigmas).tolist()
    return {"oks_sigmas": table, "oks_sigma_source": str(getattr(ev, "sigma_source", ""))}


def coco_params_json(p: Any) -> dict[str, Any]:
    return {
        "iou_type": p.iou_type,
        "iou_thrs": [float(t) for t in p.iou_thrs],
        "rec_thrs": [float(r) for r in p.rec_thrs],
        "max_dets": [int(m) for m in p.max_dets],
        "area_rngs": [[n, lo, hi] for n, lo, hi in p.area_rngs],  # ints stay ints (JSON)
        "honor_ignore": bool(p.honor_ignore),
        "op_iou_thr": float(p.op_iou_thr),
        "score_thr": None if p.score_thr is None else float(p.score_thr),
    }


def _coco_state(ev: Evaluation, header: dict[str, Any], images: IntArray) -> PartialState:
    p = ev.params
    tables = ev.tables  # type: ignore[attr-defined]
    area_defined = bool(ev.area_defined)  # type: ignore[attr-defined]
    areas = [n for n, _, _ in p.area_rngs] if area_defined else [p.area_rngs[0][0]]
    t0 = tables[areas[0]]
    thrs = [float(t) for t in t0.iou_thrs]
    T = len(thrs)
    A = len(areas)
    D = len(t0)
    op_t = int(ev.op_t)  # type: ignore[attr-defined]
    flags = np.zeros((D, 2 * A * T), dtype=bool)
    for ai, name in enumerate(areas):
        tab = tables[name]
        # a prediction without a candidate pair is unmatched everywhere: ignored where
        # outside the area range, else a false positive
        flags[:, A * T + ai * T : A * T + (ai + 1) * T] = tab.det_out[:, None]
        flags[tab.cand, ai * T : (ai + 1) * T] = ((tab.gt >= 0) & ~tab.ignored).T
        flags[tab.cand, A * T + ai * T : A * T + (ai + 1) * T] = tab.ignored.T
    g, iou, ign = t0.dense(op_t)
    op_tp = (g >= 0) & ~ign
    header = dict(header)
    header["params"] = coco_params_json(p)
    if p.iou_type == "keypoints":
        header["params"].update(_sigmas_json(ev))
    header["layout"] = {
        "kind": "coco",
        "areas": areas,
        "area_defined": area_defined,
        "thresholds": thrs,
        "op_t": op_t,
        "n_flags": 2 * A * T,
        "iou_flag": op_t,
    }
    if header["protocol"] == "lvis":
        header["categories"] = dict(header["categories"], frequency=[int(f) for f in ev.frequency])  # type: ignore[attr-defined]
    extra: dict[str, int] = {}
    if header["protocol"] == "lvis":
        extra = {
            "n_over": int(ev.n_over),  # type: ignore[attr-defined]
            "max_most": int(ev.most),  # type: ignore[attr-defined]
            "n_eval_pred": len(ev.dataset.pred),
            "n_eval_gt": len(ev.dataset.gt),
        }
    return PartialState(
        header=header,
        images=images,
        category=t0.det_category.astype(np.int64),
        score=t0.det_score.astype(np.float64),
        image=t0.det_image.astype(np.int64),
        rank=t0.det_rank.astype(np.int64),
        bits=pack_flags(flags),
        iou=iou[op_tp].astype(np.float64),
        counts={
            "n_pos": np.stack([tables[n].n_pos for n in areas]).astype(np.int64),
            "n_det": np.asarray(ev.n_det, dtype=np.int64),  # type: ignore[attr-defined]
        },
        extra=extra,
    )


def _voc_state(
    ev: Evaluation, header: dict[str, Any], images: IntArray, keys: IntArray
) -> PartialState:
    m = ev.match  # type: ignore[attr-defined]
    ds = ev.dataset
    K = len(ds.categories)
    p = ev.params
    header = dict(header)
    header["params"] = {
        "iou_thr": float(p["iou_thr"]),
        "use_07": bool(p["use_07"]),
        "plus_one": bool(p["plus_one"]),
        "score_thr": p["score_thr"],
    }
    header["layout"] = {"kind": "voc", "n_flags": 2, "iou_flag": 0}
    flags = np.stack([m.tp, m.fp], axis=1)
    return PartialState(
        header=header,
        images=images,
        category=ds.pred.category.astype(np.int64),
        score=ds.pred.score.astype(np.float64),
        image=ds.pred.image.astype(np.int64),
        rank=keys.astype(np.int64),
        bits=pack_flags(flags),
        iou=m.iou[m.tp].astype(np.float64),
        counts={
            "n_gt": np.bincount(ds.gt.category[~m.hard], minlength=K).astype(np.int64),
        },
    )


def _dota_state(
    ev: Evaluation, header: dict[str, Any], images: IntArray, keys: IntArray
) -> PartialState:
    """DOTA's map: per prediction its best ground truth (``image``: that ground truth's key,
    image ordinal << 32 | position among its image's ground truths), whether the overlap
    passes the threshold and whether that ground truth is difficult; the IoU of the hits.
    Which hit takes a ground truth depends on the devkit's (unstable) sort over the whole
    class, so the reduce decides it, in reading order (``rank``)."""
    m = ev.match  # type: ignore[attr-defined]
    ds = ev.dataset
    gi = ds.gt.image.astype(np.int64)
    by_img = np.argsort(gi, kind="stable")
    first = np.searchsorted(gi[by_img], gi[by_img], side="left")
    pos = np.empty_like(gi)
    pos[by_img] = np.arange(gi.shape[0]) - first
    gt_key = (gi << 32) | pos
    has = m.gt_row >= 0
    on_hard = np.zeros(len(ds.pred), dtype=bool)
    on_hard[has] = m.hard[m.gt_row[has]]
    p = ev.params
    header = dict(header)
    header["params"] = {
        "iou_thr": float(p["iou_thr"]),
        "all_point": bool(p["all_point"]),
        "score_thr": p["score_thr"],
    }
    header["layout"] = {"kind": "dota", "n_flags": 2, "iou_flag": 0}
    return PartialState(
        header=header,
        images=images,
        category=ds.pred.category.astype(np.int64),
        score=ds.pred.score.astype(np.float64),
        image=np.where(has, gt_key[np.maximum(m.gt_row, 0)], 0)
        if gt_key.size
        else np.zeros(len(ds.pred), dtype=np.int64),
        rank=keys.astype(np.int64),
        bits=pack_flags(np.stack([m.hit, on_hard], axis=1)),
        iou=m.iou[m.hit].astype(np.float64),
        counts={
            "n_gt": np.bincount(ds.gt.category[~m.hard], minlength=len(ds.categories)).astype(
                np.int64
            ),
        },
    )
