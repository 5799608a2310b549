"""Make the keypoint samples (deterministic): ``coco/`` (17 COCO person keypoints: ground
truth and results JSON) and ``yolo/`` (a 5-keypoint custom skeleton as YOLO-pose folders with
its data.yaml: ``kpt_shape`` and ``kpt_oks_sigmas``; images 640 x 480).

    python sample_data/keypoints/make_sample.py
"""

from __future__ import annotations

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
W, H = 640, 480
COCO_NAMES = (
    "nose left_eye right_eye left_ear right_ear left_shoulder right_shoulder left_elbow "
    "right_elbow left_wrist right_wrist left_hip right_hip left_knee right_knee left_ankle "
    "right_ankle"
).split()


def people(rng: np.random.Generator, k: int, n_img: int) -> list[list[tuple]]:
    """Per image: (x, y, w, h, kx, ky, v) of each person."""
    out = []
    for _ in range(n_img):
        img = []
        for _ in range(int(rng.integers(0, 4))):
            h = float(rng.uniform(40, 300))
            w = h * float(rng.uniform(0.4, 0.7))
            x, y = float(rng.uniform(0, W - w)), float(rng.uniform(0, H - h))
            kx = np.round(x + rng.uniform(0.1, 0.9, k) * w, 1)
            ky = np.round(y + np.linspace(0.05, 0.95, k) * h, 1)
            v = rng.choice([0, 1, 2], size=k, p=[0.2, 0.2, 0.6])
            if rng.random() < 0.1:
                v[:] = 0
            img.append((round(x, 1), round(y, 1), round(w, 1), round(h, 1), kx, ky, v))
        out.append(img)
    return out


def guesses(rng: np.random.Generator, p: tuple, k: int) -> list[tuple]:
    """Predictions for one person: (x, y, w, h, kx, ky, conf, score)."""
    x, y, w, h, kx, ky, _v = p
    out = []
    for _ in range(int(rng.integers(0, 3))):
        noise = float(rng.choice([0.02, 0.05, 0.15])) * np.sqrt(w * h)
        out.append(
            (
                x,
                y,
                w,
                h,
                np.round(kx + rng.normal(0, noise, k), 1),
                np.round(ky + rng.normal(0, noise, k), 1),
                np.round(rng.uniform(0.2, 1.0, k), 2),
                round(float(rng.uniform(0.3, 1.0)), 3),
            )
        )
    return out


def coco() -> None:
    rng = np.random.default_rng(26)
    os.makedirs(os.path.join(HERE, "coco"), exist_ok=True)
    scene = people(rng, 17, 30)
    images = [
        {"id": i + 1, "file_name": f"{i + 1:06d}.jpg", "width": W, "height": H}
        for i in range(len(scene))
    ]
    cat = {
        "id": 1,
        "name": "person",
        "keypoints": COCO_NAMES,
        "skeleton": [[16, 14], [14, 12], [17, 15], [15, 13], [12, 13], [6, 12], [7, 13]],
    }
    anns, dets = [], []
    for i, img in enumerate(scene):
        for p in img:
            x, y, w, h, kx, ky, v = p
            kp = np.stack([np.where(v > 0, kx, 0), np.where(v > 0, ky, 0), v], 1)
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": i + 1,
                    "category_id": 1,
                    "bbox": [x, y, w, h],
                    "area": round(w * h * 0.6, 1),
                    "iscrowd": 0,
                    "num_keypoints": int((v > 0).sum()),
                    "keypoints": [float(c) if j % 3 < 2 else int(c) for j, c in enumerate(kp.ravel())],
                }
            )
            for g in guesses(rng, p, 17):
                kp = np.stack([g[4], g[5], g[6]], 1).ravel()
                dets.append(
                    {"image_id": i + 1, "category_id": 1, "keypoints": kp.tolist(), "score": g[7]}
                )
    gt = {"images": images, "annotations": anns, "categories": [cat]}
    with open(os.path.join(HERE, "coco", "gt.json"), "w") as fh:
        json.dump(gt, fh)
    with open(os.path.join(HERE, "coco", "preds.json"), "w") as fh:
        json.dump(dets, fh)


def yolo() -> None:
    rng = np.random.default_rng(5)
    k = 5
    root = os.path.join(HERE, "yolo")
    for sub in ("labels", "preds"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    with open(os.path.join(root, "data.yaml"), "w") as fh:
        fh.write(
            "# a 5-keypoint hand-drawn skeleton (head, hands, feet)\n"
            "names: [robot]\nkpt_names: {0: [head, left_hand, right_hand, left_foot, right_foot]}\n"
            "kpt_shape: [5, 3]\nkpt_oks_sigmas: [0.05, 0.08, 0.08, 0.1, 0.1]\n"
        )
    for i, img in enumerate(people(rng, k, 12)):
        lines, plines = [], []
        for p in img:
            x, y, w, h, kx, ky, v = p
            box = [(x + w / 2) / W, (y + h / 2) / H, w / W, h / H]
            kp = [c for j in range(k) for c in (kx[j] / W, ky[j] / H, int(v[j]))]
            kp = [0.0 if v[j // 3] == 0 and j % 3 < 2 else c for j, c in enumerate(kp)]
            lines.append(" ".join(f"{c:.6g}" for c in [0, *box, *kp]))
            for g in guesses(rng, p, k):
                gk = [c for j in range(k) for c in (g[4][j] / W, g[5][j] / H, g[6][j])]
                plines.append(" ".join(f"{c:.6g}" for c in [0, *box, *gk, g[7]]))
        for sub, rows in (("labels", lines), ("preds", plines)):
            with open(os.path.join(root, sub, f"{i:04d}.txt"), "w") as fh:
                fh.write("".join(r + "\n" for r in rows))


if __name__ == "__main__":
    coco()
    yolo()
