"""How a results list's ``category_id`` meets a class list: ``--pred-ids {auto,index,index+1}``.

Ultralytics writes ``category_id = class index + 1`` for every dataset that is not COCO since
its PR #18140 (December 2024, 8.3.4x); older releases wrote the class index. Both kinds of
``predictions.json`` exist, and nothing in the file says which it is. A reading turns an id
into a class of the ground truth:

* YOLO ground truth (class indices): ``index`` takes the id as the class index, ``index+1``
  takes id - 1;
* COCO ground truth (Ultralytics' ``convert_coco`` makes class = category id - 1): ``index+1``
  takes the id as the category id (the usual join), ``index`` takes id + 1;
* a names file for the predictions (``--pred-names``/``--names``, line k names class k):
  ``index`` names id k by line k, ``index+1`` by line k - 1; the classes then meet by name.

``auto`` takes the only reading under which every id is a class of the ground truth. When
both are, it counts the confident predictions (score >= 0.25) that overlap a ground truth by
IoU >= 0.5 most with one whose class agrees under each reading; a clear winner (at least 3
more agreements and twice as many) is taken and the evidence said; weaker evidence stops
with an error naming ``--pred-ids``. Against a COCO ground truth the usual id join stays
untouched unless the rows carry Ultralytics' ``file_name`` or the option is given.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace

import numpy as np

from ..data import Categories, Dataset, Side, norm_id
from ..errors import InputError, UsageError

PRED_IDS = ("auto", "index", "index+1")
OFFSET = {"index": 0, "index+1": 1}
CONFIDENT = 0.25
MARGIN = 3
WHY = {
    "index": "Ultralytics before Dec 2024 wrote the class index",
    "index+1": "Ultralytics since Dec 2024 writes class index + 1 for non-COCO data",
}


@dataclass
class Reading:
    name: str
    side: Side | None  # None: some id is no class of the ground truth under this reading
    bad: list[Hashable]


def check_mode(mode: str) -> str:
    if mode not in PRED_IDS:
        raise UsageError(f"--pred-ids: expected one of {', '.join(PRED_IDS)}, got {mode!r}")
    return mode


def _int_ids(side: Side) -> list[int] | None:
    out = []
    for k in side.categories.ids:
        v = norm_id(k)
        if not isinstance(v, int):
            return None
        out.append(v)
    return out


def _reading(pred: Side, gt: Side, ids: list[int], name: str, names: list[str] | None) -> Reading:
    off = OFFSET[name]
    if names is not None:
        gt_names = {n for n in gt.categories.names if n is not None}
        new_names: list[str | None] = []
        bad: list[Hashable] = []
        for i in ids:
            n = names[i - off] if 0 <= i - off < len(names) else None
            if n is None or n not in gt_names:
                bad.append(i)
            new_names.append(n)
        cats = Categories(list(pred.categories.ids), new_names)
    else:
        shift = -off if gt.format == "yolo" else 1 - off
        valid = {norm_id(k) for k in gt.categories.ids}
        new_ids: list[Hashable | None] = [i + shift for i in ids]
        bad = [i for i, n in zip(ids, new_ids, strict=True) if n not in valid]
        cats = Categories(new_ids, [None] * len(new_ids))
    side = replace(pred, categories=cats) if not bad else None
    return Reading(name, side, bad)


def _agreement(ds: Dataset) -> tuple[int, int]:
    """(confident predictions whose best ground truth overlaps by IoU >= 0.5, of them those
    whose class agrees with that ground truth's)."""
    pr, gt = ds.pred, ds.gt
    conf = pr.score >= CONFIDENT
    if not conf.any():
        conf = np.ones(len(pr), dtype=bool)
    rows = np.flatnonzero(conf)
    if not rows.size or not len(gt):
        return 0, 0
    rows = rows[np.argsort(pr.image[rows], kind="stable")]
    g_order = np.argsort(gt.image, kind="stable")
    g_img = gt.image[g_order]
    p_img = pr.image[rows]
    images, p_lo = np.unique(p_img, return_index=True)
    p_hi = np.append(p_lo[1:], rows.shape[0])
    g_lo = np.searchsorted(g_img, images, side="left")
    g_hi = np.searchsorted(g_img, images, side="right")
    n = agree = 0
    for i in range(images.shape[0]):
        if g_lo[i] == g_hi[i]:
            continue
        p = pr.xyxy[rows[p_lo[i] : p_hi[i]]][:, None, :]
        g = g_order[g_lo[i] : g_hi[i]]
        q = gt.xyxy[g][None, :, :]
        w = np.minimum(p[..., 2], q[..., 2]) - np.maximum(p[..., 0], q[..., 0])
        h = np.minimum(p[..., 3], q[..., 3]) - np.maximum(p[..., 1], q[..., 1])
        inter = np.clip(w, 0, None) * np.clip(h, 0, None)
        area_p = (p[..., 2] - p[..., 0]) * (p[..., 3] - p[..., 1])
        area_q = (q[..., 2] - q[..., 0]) * (q[..., 3] - q[..., 1])
        union = area_p + area_q - inter
        iou = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
        j = np.argmax(iou, axis=1)
        hit = iou[np.arange(iou.shape[0]), j] >= 0.5
        n += int(hit.sum())
        same = gt.category[g[j]] == pr.category[rows[p_lo[i] : p_hi[i]]]
        agree += int((hit & same).sum())
    return n, agree


def resolve(
    pred: Side,
    gt: Side,
    *,
    mode: str,
    names: list[str] | None,
    join: Callable[[Side], Dataset],
    info: list[str],
) -> Side:
    """``pred`` (a results list without class names) with the categories of the chosen
    reading; ``names``: the predictions' class-names file, if given; ``join(side)`` aligns a
    candidate with the ground truth (for the evidence)."""
    check_mode(mode)
    ids = _int_ids(pred)
    if ids is None or not ids:
        if mode != "auto" and ids is None:
            raise InputError(pred.path, None, "--pred-ids needs integer category ids")
        return pred
    readings = {r: _reading(pred, gt, ids, r, names) for r in OFFSET}
    what = (
        f"the names of {'--pred-names' if names is not None else 'the names file'}"
        if names is not None
        else f"the classes of {gt.path}"
    )
    if mode != "auto":
        chosen = readings[mode]
        if chosen.side is None:
            raise InputError(
                pred.path,
                None,
                f"--pred-ids {mode}: category ids {_few(chosen.bad)} are no class of {what}",
            )
        info.append(f"category ids read as class {mode} (--pred-ids {mode})")
        return chosen.side
    ok = [r for r in readings.values() if r.side is not None]
    coco = gt.format != "yolo" and names is None
    if coco and readings["index+1"].side is None and readings["index"].side is None:
        return pred  # the join locates the unknown ids
    if not ok:
        raise InputError(
            pred.path,
            None,
            f"category ids {_few(readings['index'].bad)} (read as class index) and "
            f"{_few(readings['index+1'].bad)} (read as index + 1) are no class of {what}: "
            "the predictions were made for another class list; give the data.yaml the model "
            "was trained with (--names, or --pred-names for the predictions)",
        )
    if len(ok) == 1:
        r = ok[0]
        if coco and r.name == "index+1":
            return pred  # the usual COCO id join is the only one that fits: unchanged
        other = "index" if r.name == "index+1" else "index+1"
        info.append(
            f"category ids read as class {r.name} ({WHY[r.name]}): as {other}, ids "
            f"{_few(readings[other].bad)} would be no class (force with --pred-ids)"
        )
        assert r.side is not None
        return r.side
    # every id fits both readings: decide by the evidence
    ultralytics = bool(pred.notes.get("file_stems"))  # its rows carry file_name
    if coco and not ultralytics and not _contiguous(gt):
        return pred  # COCO's own ids (with gaps): the usual id join
    counts = {}
    for r in ok:
        assert r.side is not None
        try:
            counts[r.name] = _agreement(join(r.side))
        except InputError:  # every prediction on an image the ground truth lacks
            counts[r.name] = (0, 0)
    n = max(c[0] for c in counts.values())
    a, b = counts["index"][1], counts["index+1"][1]
    best, lead, other_n = ("index", a, b) if a > b else ("index+1", b, a)
    evidence = (
        f"of {n} confident predictions (score >= {CONFIDENT}) overlapping a ground truth by "
        f"IoU >= 0.5, {a} agree with its class read as index, {b} as index+1"
    )
    clear = lead - other_n >= MARGIN and lead >= 2 * other_n
    if coco and not ultralytics:
        if clear and best == "index":  # the usual id join looks one class off
            raise UsageError(
                f"--pred-ids: the category ids look one class off the ground truth's ids "
                f"({evidence}); give --pred-ids index if the ids are class indices from 0 "
                f"({WHY['index']}), or --pred-ids index+1 to join them as they are"
            )
        return pred
    if not clear:
        raise UsageError(
            f"--pred-ids: every category id is a class under both readings, and the evidence "
            f"is too weak to choose ({evidence}); give --pred-ids index ({WHY['index']}) or "
            f"--pred-ids index+1 ({WHY['index+1']})"
        )
    info.append(
        f"category ids read as class {best} ({WHY[best]}): {evidence} (force with --pred-ids)"
    )
    side = readings[best].side
    assert side is not None
    return side


def _contiguous(gt: Side) -> bool:
    """COCO category ids 1..K or 0..K-1 (a converted custom dataset, not COCO's own 1..90)."""
    raw = [norm_id(k) for k in gt.categories.ids]
    ids = sorted(v for v in raw if isinstance(v, int))
    if not ids or len(ids) != len(raw):
        return False
    return ids == list(range(ids[0], ids[0] + len(ids))) and ids[0] in (0, 1)


def _few(ids: list[Hashable]) -> str:
    uniq = sorted({str(i) for i in ids}, key=lambda s: (len(s), s))
    return ", ".join(uniq[:5]) + (f" (+{len(uniq) - 5} more)" if len(uniq) > 5 else "")
