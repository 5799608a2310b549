"""Writes the synthetic label maps of sample_data/segment/ (deterministic; run from anywhere).

Three 96 x 64 street scenes, 4 classes (names.txt), ground-truth object outlines marked 255
(ignored), predictions shifted by a few pixels with some noise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
W, H = 96, 64
SCENES = [  # (car box, person box) as x0, y0, x1, y1
    ((10, 30, 40, 50), (60, 20, 68, 50)),
    ((50, 34, 90, 54), (20, 24, 27, 52)),
    ((30, 28, 70, 52), (80, 30, 86, 56)),
]


def scene(car: tuple[int, ...], person: tuple[int, ...], dx: int = 0) -> np.ndarray:
    m = np.zeros((H, W), dtype=np.uint8)  # 0 background
    m[44:, :] = 1  # road
    x0, y0, x1, y1 = car
    m[y0:y1, x0 + dx : x1 + dx] = 2
    x0, y0, x1, y1 = person
    m[y0:y1, x0 - dx : x1 - dx] = 3
    return m


def outline(m: np.ndarray) -> np.ndarray:
    edge = np.zeros_like(m, dtype=bool)
    edge[:, 1:] |= m[:, 1:] != m[:, :-1]
    edge[1:, :] |= m[1:, :] != m[:-1, :]
    out = m.copy()
    out[edge & (m >= 2)] = 255
    return out


def main() -> None:
    rng = np.random.default_rng(6)
    (HERE / "gt").mkdir(exist_ok=True)
    (HERE / "pred").mkdir(exist_ok=True)
    for i, (car, person) in enumerate(SCENES, start=1):
        gt = outline(scene(car, person))
        pred = scene(car, person, dx=2 + i)
        noise = rng.random((H, W)) < 0.03
        pred[noise] = rng.integers(0, 4, int(noise.sum()))
        Image.fromarray(gt, "L").save(HERE / "gt" / f"street_{i:02d}.png", optimize=True)
        Image.fromarray(pred, "L").save(HERE / "pred" / f"street_{i:02d}.png", optimize=True)
    (HERE / "names.txt").write_text("background\nroad\ncar\nperson\n", encoding="utf-8")


if __name__ == "__main__":
    main()
