"""Generate a COCO-scale benchmark set from a seed: ``gt.json`` and ``preds.json``.

Scale 1 is COCO val2017-sized: 5,000 images, ~35k ground truths (1% crowd), ~85 detections per
image (~430k). Scale 10 is ten times that. The mix is meant to exercise every branch of the
COCO evaluation the way real detector output does:

- object counts per image and the small/medium/large split follow COCO (41% / 34% / 25%),
  category ids are COCO's 80 non-contiguous ids (1..90), ~1% of images have no annotation;
- ``area`` is a segmentation-like area (a fraction of ``w*h``), so area ranges are not ``w*h``;
- crowd regions (``iscrowd=1``) that swallow detections;
- per ground truth: a localised hit (sometimes missed), near-duplicates, and class confusions
  (same box, wrong category); plus background false positives, up to 100 detections per image;
- scores rounded to 3 decimals, so many ties across and within images.

Everything is vectorised; the JSON is written in chunks (no list of 4M dicts in memory).

    python bench/gen.py --scale 1 [--seed 0] [--out bench/_data/x1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

COCO_CAT_IDS = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 27,
    28, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53,
    54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 67, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80,
    81, 82, 84, 85, 86, 87, 88, 89, 90,
]  # fmt: skip

IMAGES_PER_SCALE = 5000
DETS_PER_IMAGE = 85
MAX_DETS_PER_IMAGE = 100


def _sizes(rng: np.random.Generator, n: int) -> np.ndarray:
    """sqrt(area) with COCO's small (<32^2) / medium / large (>96^2) mix: 41/34/25 %."""
    kind = rng.choice(3, size=n, p=[0.41, 0.34, 0.25])
    lo = np.array([4.0, 32.0, 96.0])[kind]
    hi = np.array([32.0, 96.0, 400.0])[kind]
    return lo + (hi - lo) * rng.random(n) ** 1.3


def generate(scale: int, seed: int) -> tuple[dict, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    n_img = IMAGES_PER_SCALE * scale
    cat_ids = np.array(COCO_CAT_IDS, dtype=np.int64)
    # category frequencies: a long tail like COCO (person is ~1/4 of all objects)
    freq = 1.0 / np.arange(1, len(cat_ids) + 1) ** 0.9
    freq[0] *= 4
    freq /= freq.sum()

    width = rng.choice([640, 640, 640, 500, 480, 427, 612], size=n_img).astype(np.float64)
    height = rng.choice([480, 427, 640, 375, 360, 512], size=n_img).astype(np.float64)
    # objects per image: COCO averages ~7.3 with a heavy tail; ~1% images empty
    n_obj = np.minimum(rng.negative_binomial(1.2, 1.2 / (1.2 + 7.0), size=n_img), 60)
    n_obj[rng.random(n_img) < 0.01] = 0
    g_img = np.repeat(np.arange(n_img), n_obj)
    ng = len(g_img)
    side = _sizes(rng, ng)
    aspect = np.exp(rng.normal(0, 0.5, ng))
    gw = np.minimum(side * np.sqrt(aspect), width[g_img] - 1)
    gh = np.minimum(side / np.sqrt(aspect), height[g_img] - 1)
    gx = rng.random(ng) * (width[g_img] - gw)
    gy = rng.random(ng) * (height[g_img] - gh)
    gcat = rng.choice(len(cat_ids), size=ng, p=freq)
    crowd = rng.random(ng) < 0.01
    # crowd regions are big
    gw[crowd] = np.minimum(gw[crowd] * 3, width[g_img[crowd]] - gx[crowd] - 1)
    gh[crowd] = np.minimum(gh[crowd] * 3, height[g_img[crowd]] - gy[crowd] - 1)
    gx, gy, gw, gh = (np.round(v, 2) for v in (gx, gy, gw, gh))
    gw = np.maximum(gw, 1.0)
    gh = np.maximum(gh, 1.0)
    area = np.round(gw * gh * rng.uniform(0.45, 0.95, ng), 2)

    # --- detections derived from ground truths
    parts = []

    def jitter(idx: np.ndarray, sigma: float) -> tuple[np.ndarray, ...]:
        k = len(idx)
        w, h = gw[idx], gh[idx]
        x = gx[idx] + rng.normal(0, sigma, k) * w
        y = gy[idx] + rng.normal(0, sigma, k) * h
        w2 = w * np.exp(rng.normal(0, sigma, k))
        h2 = h * np.exp(rng.normal(0, sigma, k))
        return x, y, w2, h2

    hit = np.flatnonzero(rng.random(ng) < 0.85)  # localised detection of this object
    x, y, w, h = jitter(hit, 0.06)
    parts.append((g_img[hit], gcat[hit], x, y, w, h, rng.beta(5, 2, len(hit))))
    dup = np.repeat(np.arange(ng), rng.poisson(0.8, ng))  # near-duplicates
    x, y, w, h = jitter(dup, 0.15)
    parts.append((g_img[dup], gcat[dup], x, y, w, h, rng.beta(2, 4, len(dup))))
    conf = np.flatnonzero(rng.random(ng) < 0.3)  # class confusions: same box, wrong category
    x, y, w, h = jitter(conf, 0.08)
    wrong = (gcat[conf] + rng.integers(1, len(cat_ids), len(conf))) % len(cat_ids)
    parts.append((g_img[conf], wrong, x, y, w, h, rng.beta(2, 3, len(conf))))

    d_img = np.concatenate([p[0] for p in parts])
    per_img = np.bincount(d_img, minlength=n_img)
    # background detections fill each image up to ~Poisson(85) (max 100)
    target = np.minimum(rng.poisson(DETS_PER_IMAGE, n_img), MAX_DETS_PER_IMAGE)
    n_bg = np.maximum(target - per_img, 0)
    b_img = np.repeat(np.arange(n_img), n_bg)
    nb = len(b_img)
    bs = _sizes(rng, nb)
    ba = np.exp(rng.normal(0, 0.6, nb))
    bw = np.minimum(bs * np.sqrt(ba), width[b_img] - 1)
    bh = np.minimum(bs / np.sqrt(ba), height[b_img] - 1)
    bx = rng.random(nb) * (width[b_img] - bw)
    by = rng.random(nb) * (height[b_img] - bh)
    parts.append((b_img, rng.choice(len(cat_ids), nb, p=freq), bx, by, bw, bh, rng.beta(1, 6, nb)))

    d_img = np.concatenate([p[0] for p in parts])
    d_cat = np.concatenate([p[1] for p in parts])
    dx, dy, dw, dh, ds = (np.concatenate([p[i] for p in parts]) for i in range(2, 7))
    # clip to the image like detectors do; keep widths positive
    dx = np.clip(dx, 0, width[d_img] - 1)
    dy = np.clip(dy, 0, height[d_img] - 1)
    dw = np.clip(dw, 0.5, width[d_img] - dx)
    dh = np.clip(dh, 0.5, height[d_img] - dy)
    # order: by image, a shuffle within (detector output is grouped by image)
    order = np.lexsort((rng.random(len(d_img)), d_img))
    # COCO keeps the top 100 per image at evaluation; detectors emit about that many
    d_img, d_cat = d_img[order], d_cat[order]
    dx, dy, dw, dh, ds = (v[order] for v in (dx, dy, dw, dh, ds))
    dets = {
        "image_id": d_img + 1,
        "category_id": cat_ids[d_cat],
        "x": np.round(dx, 2),
        "y": np.round(dy, 2),
        "w": np.round(dw, 2),
        "h": np.round(dh, 2),
        "score": np.round(ds, 3),  # 3 decimals: many score ties
    }

    images = [
        {
            "id": i + 1,
            "file_name": f"{i + 1:012d}.jpg",
            "width": int(width[i]),
            "height": int(height[i]),
        }
        for i in range(n_img)
    ]
    annotations = [
        {
            "id": k + 1,
            "image_id": int(g_img[k]) + 1,
            "category_id": int(cat_ids[gcat[k]]),
            "bbox": [float(gx[k]), float(gy[k]), float(gw[k]), float(gh[k])],
            "area": float(area[k]),
            "iscrowd": int(crowd[k]),
        }
        for k in range(ng)
    ]
    categories = [
        {"id": int(c), "name": f"class_{int(c)}", "supercategory": "thing"} for c in cat_ids
    ]
    gt = {
        "info": {"description": f"iou-eval benchmark, scale {scale}, seed {seed}"},
        "images": images,
        "annotations": annotations,
        "categories": categories,
    }
    return gt, dets


def write_dets(path: str, dets: dict[str, np.ndarray], chunk: int = 200_000) -> None:
    n = len(dets["image_id"])
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as fh:
        fh.write("[")
        for start in range(0, n, chunk):
            sl = slice(start, min(n, start + chunk))
            cols = [dets[k][sl].tolist() for k in ("image_id", "category_id", "x", "y", "w", "h")]
            sc = dets["score"][sl].tolist()
            recs = [
                f'{{"image_id": {i}, "category_id": {c}, "bbox": [{x!r}, {y!r}, {w!r}, {h!r}], '
                f'"score": {s!r}}}'
                for i, c, x, y, w, h, s in zip(*cols, sc, strict=True)
            ]
            if start:
                fh.write(", ")
            fh.write(", ".join(recs))
        fh.write("]")
    os.replace(tmp, path)


def ensure(scale: int, seed: int = 0, out: str | None = None) -> tuple[str, str]:
    """Generate the set unless it already exists; returns (preds_path, gt_path)."""
    out = out or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "_data", f"x{scale}_s{seed}"
    )
    gt_path = os.path.join(out, "gt.json")
    pred_path = os.path.join(out, "preds.json")
    if os.path.exists(gt_path) and os.path.exists(pred_path):
        return pred_path, gt_path
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    gt, dets = generate(scale, seed)
    with open(gt_path + ".tmp", "w", encoding="ascii") as fh:
        json.dump(gt, fh)
    os.replace(gt_path + ".tmp", gt_path)
    write_dets(pred_path, dets)
    n_gt = len(gt["annotations"])
    n_crowd = sum(a["iscrowd"] for a in gt["annotations"])
    print(
        f"generated {out}: {len(gt['images'])} images, {n_gt} ground truths "
        f"({n_crowd} crowd), {len(dets['image_id'])} detections, "
        f"preds {os.path.getsize(pred_path) / 2**20:.1f} MiB, "
        f"gt {os.path.getsize(gt_path) / 2**20:.1f} MiB in {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )
    return pred_path, gt_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    print(*ensure(args.scale, args.seed, args.out))


if __name__ == "__main__":
    main()


def _octagon(b: list[float]) -> list[float]:
    x, y, w, h = b
    a, c = w * 0.3, h * 0.3
    return [x + a, y, x + w - a, y, x + w, y + c, x + w, y + h - c,
            x + w - a, y + h, x + a, y + h, x, y + h - c, x, y + c]  # fmt: skip


def ensure_segm(scale: int, seed: int = 0, n_images: int = 1000) -> tuple[str, str]:
    """A mask set derived from the box set: the first ``n_images * scale`` images, every box
    an octagon polygon inside it (crowd regions as uncompressed RLE, as in COCO), every
    detection a compressed RLE. Returns (preds_path, gt_path)."""
    import numpy as np
    from pycocotools import mask as mask_utils

    preds_path, gt_path = ensure(scale, seed)
    out = os.path.join(os.path.dirname(preds_path), "segm")
    gt_segm = os.path.join(out, "gt.json")
    preds_segm = os.path.join(out, "preds.json")
    if os.path.exists(gt_segm) and os.path.exists(preds_segm):
        return preds_segm, gt_segm
    os.makedirs(out, exist_ok=True)
    with open(gt_path) as fh:
        gt = json.load(fh)
    with open(preds_path) as fh:
        dets = json.load(fh)
    gt["images"] = gt["images"][: n_images * scale]
    keep = {im["id"] for im in gt["images"]}
    sizes = {im["id"]: (im["height"], im["width"]) for im in gt["images"]}
    anns = [a for a in gt["annotations"] if a["image_id"] in keep]
    for a in anns:
        h, w = sizes[a["image_id"]]
        if a.get("iscrowd"):
            rle = mask_utils.merge(mask_utils.frPyObjects([_octagon(a["bbox"])], h, w))
            m = mask_utils.decode(rle).flatten(order="F")
            change = np.flatnonzero(np.diff(np.concatenate(([0], m, [1 - m[-1]]))))
            runs = np.diff(np.concatenate(([0], change)))
            a["segmentation"] = {"size": [h, w], "counts": [int(v) for v in runs]}
        else:
            a["segmentation"] = [_octagon(a["bbox"])]
    gt["annotations"] = anns
    out_dets = []
    for d in dets:
        if d["image_id"] not in keep:
            continue
        h, w = sizes[d["image_id"]]
        rle = mask_utils.merge(mask_utils.frPyObjects([_octagon(d["bbox"])], h, w))
        out_dets.append(
            {
                "image_id": d["image_id"],
                "category_id": d["category_id"],
                "segmentation": {"size": [h, w], "counts": rle["counts"].decode()},
                "score": d["score"],
            }
        )
    with open(gt_segm, "w") as fh:
        json.dump(gt, fh)
    with open(preds_segm, "w") as fh:
        json.dump(out_dets, fh)
    return preds_segm, gt_segm
