"""pycocotools' evalImgs as bootstrap ScoreTables: the oracle the weighted accumulation is
checked against (matching from pycocotools itself, nothing of ours)."""

from __future__ import annotations

from typing import Any

import numpy as np

from iou_cli.analysis.bootstrap import ScoreTable


def tables_from_pycoco(ev: Any) -> dict[str, ScoreTable]:
    """One ScoreTable per area range, images indexed in id order, classes in id order."""
    p = ev.params
    img_index = {i: n for n, i in enumerate(p.imgIds)}
    cat_index = {c: n for n, c in enumerate(p.catIds)}
    names = list(p.areaRngLbl)  # all/small/medium/large (keypoints: all/medium/large)
    n_img, n_area = len(p.imgIds), len(p.areaRng)
    T = len(p.iouThrs)
    out: dict[str, ScoreTable] = {}
    for a, (lo, hi) in enumerate(p.areaRng):
        cols: dict[str, list[Any]] = {k: [] for k in ("img", "cat", "score", "rank", "out")}
        matched: list[np.ndarray] = []
        tp: list[np.ndarray] = []
        g_img: list[int] = []
        g_cat: list[int] = []
        for k, cat_id in enumerate(p.catIds):
            for i in range(n_img):
                e = ev.evalImgs[k * n_area * n_img + a * n_img + i]
                if e is None:
                    continue
                assert e["image_id"] == p.imgIds[i] and e["category_id"] == cat_id
                nd = len(e["dtIds"])
                for r, did in enumerate(e["dtIds"]):
                    area = ev.cocoDt.anns[did]["area"]
                    cols["img"].append(img_index[e["image_id"]])
                    cols["cat"].append(cat_index[cat_id])
                    cols["score"].append(e["dtScores"][r])
                    cols["rank"].append(r)
                    cols["out"].append(area < lo or area > hi)
                dtm = np.asarray(e["dtMatches"]).reshape(T, nd)
                dig = np.asarray(e["dtIgnore"]).reshape(T, nd).astype(bool)
                matched.append(dtm > 0)
                tp.append((dtm > 0) & ~dig)
                for gi in np.asarray(e["gtIgnore"]).reshape(-1):
                    if not gi:
                        g_img.append(img_index[e["image_id"]])
                        g_cat.append(cat_index[cat_id])
        out[names[a]] = ScoreTable(
            det_image=np.asarray(cols["img"], dtype=np.int64),
            det_category=np.asarray(cols["cat"], dtype=np.int64),
            det_score=np.asarray(cols["score"], dtype=np.float64),
            det_rank=np.asarray(cols["rank"], dtype=np.int64),
            det_out=np.asarray(cols["out"], dtype=bool),
            matched=np.concatenate(matched, axis=1) if matched else np.zeros((T, 0), bool),
            tp=np.concatenate(tp, axis=1) if tp else np.zeros((T, 0), bool),
            gt_image=np.asarray(g_img, dtype=np.int64),
            gt_category=np.asarray(g_cat, dtype=np.int64),
        )
    return out


def duplicate_images(
    gt: dict[str, Any], dets: list[dict[str, Any]], counts: np.ndarray
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The scene with image ``j`` (in id order) present ``counts[j]`` times: copy ``c`` of an
    image gets id ``id + c * big`` so the copies follow every original id."""
    ids = sorted(im["id"] for im in gt["images"])
    big = 10 ** (len(str(max(ids))) + 1)
    by_id = {im["id"]: im for im in gt["images"]}
    n_of = {i: int(c) for i, c in zip(ids, counts, strict=True)}
    images: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    out_dets: list[dict[str, Any]] = []
    for i in ids:
        for c in range(n_of[i]):
            images.append({**by_id[i], "id": i + c * big})
    for a in gt["annotations"]:
        for c in range(n_of[a["image_id"]]):
            anns.append({**a, "id": len(anns) + 1, "image_id": a["image_id"] + c * big})
    for d in dets:
        for c in range(n_of[d["image_id"]]):
            out_dets.append({**d, "image_id": d["image_id"] + c * big})
    return {**gt, "images": images, "annotations": anns}, out_dets
