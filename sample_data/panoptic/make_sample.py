"""Writes the synthetic COCO panoptic sample of sample_data/panoptic/ (deterministic; run from
anywhere): ``gt.json`` + ``gt/`` and ``pred.json`` + ``pred/`` (the PNG folders named like the
JSON files, as panopticapi expects).

Three 96 x 64 street scenes: sky and road (stuff), cars and persons (things), a crowd of
persons in the first scene, a VOID border in the ground truth. The predictions shift the
objects by a few pixels, miss a person, call one car a person and add a spurious car.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
W, H = 96, 64
CATEGORIES = [
    {"id": 1, "name": "person", "supercategory": "person", "isthing": 1},
    {"id": 3, "name": "car", "supercategory": "vehicle", "isthing": 1},
    {"id": 149, "name": "road", "supercategory": "ground", "isthing": 0},
    {"id": 187, "name": "sky", "supercategory": "sky", "isthing": 0},
]
# per scene: objects as (category, x0, y0, x1, y1, crowd)
SCENES = [
    [(3, 10, 30, 40, 50, 0), (1, 60, 20, 68, 50, 0), (1, 74, 22, 90, 50, 1)],
    [(3, 50, 34, 90, 54, 0), (1, 20, 24, 27, 52, 0), (1, 8, 26, 14, 52, 0)],
    [(3, 30, 28, 70, 52, 0), (1, 80, 30, 86, 56, 0)],
]


def rgb(ids: np.ndarray) -> np.ndarray:
    return np.stack([ids & 255, (ids >> 8) & 255, (ids >> 16) & 255], -1).astype(np.uint8)


def segments(ids: np.ndarray, cats: dict[int, int], crowd: set[int]) -> list[dict]:
    out = []
    for v in np.unique(ids).tolist():
        if v == 0:
            continue
        ys, xs = np.nonzero(ids == v)
        x0, y0 = int(xs.min()), int(ys.min())
        out.append(
            {
                "id": v,
                "category_id": cats[v],
                "area": int(len(xs)),
                "bbox": [x0, y0, int(xs.max()) - x0 + 1, int(ys.max()) - y0 + 1],
                "iscrowd": int(v in crowd),
            }
        )
    return out


def draw(scene: int, objects: list[tuple[int, ...]], truth: bool) -> tuple[np.ndarray, list]:
    ids = np.zeros((H, W), dtype=np.uint32)
    cats: dict[int, int] = {}
    crowd: set[int] = set()
    base = 1000 * (scene + 1) + (0 if truth else 500)
    ids[:36, :], cats[base + 1] = base + 1, 187  # sky
    ids[36 if truth else 38 :, :], cats[base + 2] = base + 2, 149  # road
    for k, (cat, x0, y0, x1, y1, is_crowd) in enumerate(objects):
        sid = base + 10 + k
        ids[y0:y1, x0:x1], cats[sid] = sid, cat
        if is_crowd:
            crowd.add(sid)
    if truth:  # a VOID border (unlabelled pixels)
        ids[:2, :] = ids[-2:, :] = 0
    return ids, segments(ids, cats, crowd)


def predicted(scene: int) -> list[tuple[int, ...]]:
    objs = [(c, x0 + 1, y0 + 1, x1 + 1, y1, 0) for c, x0, y0, x1, y1, crowd in SCENES[scene]]
    if scene == 0:
        objs[2] = (1, 76, 24, 84, 48, 0)  # a person inside the crowd: not a false positive
    if scene == 1:
        objs = objs[:2] + [(3, 2, 40, 12, 50, 0)]  # a person missed, a spurious car
    if scene == 2:
        objs[0] = (1, *objs[0][1:])  # the car called a person
    return objs


def main() -> None:
    images, gts, preds = [], [], []
    for side in ("gt", "pred"):
        (HERE / side).mkdir(exist_ok=True)
    for s in range(len(SCENES)):
        name = f"scene{s + 1}.png"
        images.append({"id": s + 1, "file_name": f"scene{s + 1}.jpg", "width": W, "height": H})
        for side, objs, out in (("gt", SCENES[s], gts), ("pred", predicted(s), preds)):
            ids, segs = draw(s, objs, side == "gt")
            Image.fromarray(rgb(ids), mode="RGB").save(HERE / side / name)
            out.append({"image_id": s + 1, "file_name": name, "segments_info": segs})
    for side, anns in (("gt", gts), ("pred", preds)):
        doc = {"images": images, "annotations": anns, "categories": CATEGORIES}
        (HERE / f"{side}.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
