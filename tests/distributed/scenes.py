"""Random scenes for the cluster tests, and a plain-Python run of the cluster's plan (map by
image bucket, shuffle by class, combine) that the engines must equal."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from iou_cli.distributed import core
from tests.oracle.cocogen import random_scene
from tests.oracle.lvisgen import random_lvis_scene
from tests.oracle.obbgen import rotated_scene
from tests.state.test_merge_exact import same

CASES = {
    "coco-bbox": ("coco", "bbox"),
    "coco-segm": ("coco", "segm"),
    "lvis-bbox": ("lvis", "bbox"),
    "voc": ("voc", "bbox"),
    "voc07": ("voc07", "bbox"),
    "dota": ("dota", "obb"),
    "coco-obb": ("coco", "obb"),
    "voc-obb": ("voc", "obb"),
}


def scene(case: str, seed: int, ties: int = 4) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random scene with score ties everywhere and the predictions in a shuffled file
    order (ties inside an image and across images ranked by that order)."""
    protocol, iou_type = CASES[case]
    if iou_type == "obb":  # rotated boxes (COCO obb fields), some ground truths difficult
        gt, dets = rotated_scene(seed)
        for a in gt["annotations"][::7]:
            a["ignore"] = 1
    elif protocol == "lvis" or iou_type == "segm":
        gt, dets = random_lvis_scene(seed, n_images=8, segm=iou_type == "segm")
    else:
        gt, dets = random_scene(seed, n_images=12, n_cats=4)
    rng = np.random.default_rng(seed + 11)
    levels = np.linspace(0.1, 0.9, ties)
    for d in dets:
        d["score"] = float(levels[int(rng.integers(0, ties))])
    dets = [dets[i] for i in rng.permutation(len(dets))]
    return gt, dets


def frame(dets: list[dict[str, Any]]) -> pd.DataFrame:
    """The predictions as a table (one row a prediction, in file order)."""
    return pd.DataFrame(copy.deepcopy(dets))


def plan(
    gt: Any, dets: list[dict[str, Any]], protocol: str, n_buckets: int, seed: int, **options: Any
) -> Any:
    """The cluster's plan in one process: buckets by image, each mapped in a random row
    order, the per-class rows shuffled and reduced in random groups, then combined."""
    rng = np.random.default_rng(seed)
    df = frame(dets)
    df[core.ORDER] = np.arange(len(df))
    df[core.BUCKET] = df["image_id"].map(lambda i: hash(str(i)) % n_buckets)
    job = core.Job(gt=gt, protocol=protocol, options={"iou_type": "bbox", **options})
    emitted: list[tuple[int, bytes]] = []
    for _, part in df.groupby(core.BUCKET):
        emitted += core.map_bucket(job, part.sample(frac=1.0, random_state=int(rng.integers(99))))
    rng.shuffle(emitted)
    by_cat: dict[int, list[bytes]] = {}
    for c, p in emitted:
        by_cat.setdefault(c, []).append(p)
    reduced = [(c, core.reduce_rows(job, c, ps)) for c, ps in by_cat.items()]
    return core.combine(job, reduced)


__all__ = ["CASES", "frame", "plan", "same", "scene"]
