"""Random federated (LVIS) scenes built to stress every corner of lvis-api's protocol.

The ground truth is laid out as LVIS v1 val is (images with ``coco_url`` and no
``file_name``; categories with ``synset``, ``frequency``, ``image_count``...; no
``iscrowd``). Every federated case is present:

* images with more than 300 predictions, with score ties at the 300th place;
* ``neg_category_ids``: predictions of a class verified absent are false positives;
* predictions of classes an image neither contains nor lists as negative (not evaluated);
* ``not_exhaustive_category_ids`` (unmatched predictions there are ignored), also for a
  class listed as negative at the same time;
* classes of each frequency, rare (and other) classes without any ground truth;
* ground truths with a user ``ignore``, an ``area`` unlike w*h, area 0 (lvis-api drops them),
  zero-size predictions (counted in the 300, then dropped), images without ground truth.

Integer coordinates on a coarse grid make IoU land exactly on thresholds. ``segm=True``
adds polygon masks to the ground truth and compressed-RLE masks to the predictions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

WIDTH, HEIGHT = 320, 240


def random_lvis_scene(
    seed: int,
    *,
    n_images: int = 14,
    n_cats: int = 12,
    segm: bool = False,
    pred_bbox: bool = True,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(ground truth dict, results list)``. ``pred_bbox=False`` (segm only) leaves the
    predictions' ``bbox`` out, so lvis-api takes their areas from the masks."""
    rng = np.random.default_rng(seed)
    ids = rng.choice(np.arange(1, 100_000), size=n_images, replace=False)
    cat_ids = sorted(int(c) for c in rng.choice(np.arange(1, 2000), size=n_cats, replace=False))
    freq = ["r", "c", "f"] * (n_cats // 3) + ["f"] * (n_cats % 3)
    rng.shuffle(freq)
    categories = [
        {
            "id": c,
            "name": f"thing_{c}",
            "synset": f"thing_{c}.n.01",
            "synonyms": [f"thing_{c}"],
            "def": "a generated category",
            "frequency": f,
            "image_count": 0,
            "instance_count": 0,
        }
        for c, f in zip(cat_ids, freq, strict=True)
    ]
    rare = [c for c, f in zip(cat_ids, freq, strict=True) if f == "r"]
    # one rare class (and one other, chosen at random) never has ground truth
    no_gt = {rare[0], int(rng.choice(cat_ids))}
    with_gt = [c for c in cat_ids if c not in no_gt]
    grid = int(rng.choice([2, 4, 8]))
    images: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    dets: list[dict[str, Any]] = []
    for n, img_id in enumerate(int(i) for i in ids):
        split = "val2017" if n % 2 else "train2017"
        present: list[int] = []
        gts: list[dict[str, Any]] = []
        if rng.random() > 0.1:
            k = int(rng.integers(1, 5))
            present = [int(c) for c in rng.choice(with_gt, size=k, replace=False)]
        for c in present:
            for _ in range(int(rng.integers(1, 6))):
                w = int(rng.integers(0, 30)) * grid
                h = int(rng.integers(0, 25)) * grid
                x = int(rng.integers(0, (WIDTH - w) // grid + 1)) * grid
                y = int(rng.integers(0, (HEIGHT - h) // grid + 1)) * grid
                r = rng.random()
                area = (
                    float(w * h)
                    if r < 0.75
                    else (0.0 if r < 0.8 else float(rng.integers(0, 12000)))
                )
                ann: dict[str, Any] = {
                    "id": len(anns) + 1,
                    "image_id": img_id,
                    "category_id": c,
                    "bbox": [x, y, w, h],
                    "area": area,
                }
                if rng.random() < 0.04:
                    ann["ignore"] = 1
                if segm:
                    ann["segmentation"] = [_polygon(rng, x, y, w, h)]
                anns.append(ann)
                gts.append(ann)
        others = [c for c in cat_ids if c not in present]
        neg = [int(c) for c in rng.choice(others, size=int(rng.integers(0, 5)), replace=False)]
        nel_pool = present + neg[:1]
        nel = [c for c in nel_pool if rng.random() < 0.3]
        images.append(
            {
                "id": img_id,
                "license": 1,
                "height": HEIGHT,
                "width": WIDTH,
                "coco_url": f"http://images.cocodataset.org/{split}/{img_id:012d}.jpg",
                "flickr_url": f"http://farm1.staticflickr.com/{img_id}.jpg",
                "date_captured": "2013-11-14 16:28:13",
                "neg_category_ids": neg,
                "not_exhaustive_category_ids": nel,
            }
        )
        many = rng.random() < 0.25
        n_det = int(rng.integers(300, 380)) if many else int(rng.integers(0, 40))
        for _ in range(n_det):
            if gts and rng.random() < 0.6:
                g = gts[int(rng.integers(0, len(gts)))]
                x, y, w, h = g["bbox"]
                j = rng.integers(-2, 3, size=4) * grid
                box = [x + int(j[0]), y + int(j[1]), max(0, w + int(j[2])), max(0, h + int(j[3]))]
                cat = g["category_id"] if rng.random() < 0.8 else int(rng.choice(cat_ids))
            else:
                w = int(rng.integers(0, 30)) * grid
                h = int(rng.integers(0, 25)) * grid
                box = [int(rng.integers(0, 30)) * grid, int(rng.integers(0, 25)) * grid, w, h]
                cat = (
                    int(rng.choice(neg + present))
                    if neg and rng.random() < 0.5
                    else int(rng.choice(cat_ids))
                )
            # coarse scores: ties everywhere, including at the 300th place of a full image
            score = float(np.round(rng.random(), 2 if many else 3))
            det: dict[str, Any] = {"image_id": img_id, "category_id": cat, "score": score}
            if pred_bbox or not segm:
                det["bbox"] = box
            if segm:
                det["segmentation"] = _box_rle(rng, box)
            dets.append(det)
    order = rng.permutation(len(dets))
    dets = [dets[i] for i in order]
    counts: dict[Any, int] = {c: 0 for c in cat_ids}
    for a in anns:
        counts[a["category_id"]] += 1
    for cat_rec in categories:
        cat_rec["instance_count"] = counts[cat_rec["id"]]
        cat_rec["image_count"] = len(
            {a["image_id"] for a in anns if a["category_id"] == cat_rec["id"]}
        )
    gt = {
        "info": {"description": "generated LVIS-like scene", "version": "1.0"},
        "licenses": [{"id": 1, "name": "Attribution License", "url": ""}],
        "images": images,
        "annotations": anns,
        "categories": categories,
    }
    return gt, dets


def _polygon(rng: np.random.Generator, x: int, y: int, w: int, h: int) -> list[float]:
    """A polygon inside the box: its corners, each pulled in at random."""
    pts = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
    out: list[float] = []
    for px, py in pts:
        out += [float(px + (x + w / 2 - px) * rng.random() * 0.3), float(py)]
    return out


def _box_rle(rng: np.random.Generator, box: list[int]) -> dict[str, Any]:
    """A compressed RLE of a box (minus a random corner cut), as detectors write them."""
    from pycocotools import mask as mask_utils

    x, y, w, h = box
    x0, y0 = max(0, x), max(0, y)
    m = np.zeros((HEIGHT, WIDTH), dtype=np.uint8, order="F")
    m[y0 : y + h, x0 : x + w] = 1
    if w > 2 and h > 2 and rng.random() < 0.5:
        m[y0 : y + h // 2, x0 : x + w // 2] = 0
    rle = mask_utils.encode(np.asfortranarray(m))
    return {"size": [HEIGHT, WIDTH], "counts": rle["counts"].decode("ascii")}
