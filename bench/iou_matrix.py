"""Micro-benchmark of the IoU engine: a 2,000 x 2,000 pairwise matrix (issue: well under 1 s).

Run: .venv/bin/python bench/iou_matrix.py  (part of `make bench`)
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from iou_cli import iou, paired_iou


def main() -> None:
    rng = np.random.default_rng(0)
    n = 2000
    a = np.c_[rng.uniform(0, 1000, (n, 2)), rng.uniform(1, 200, (n, 2))]
    b = np.c_[rng.uniform(0, 1000, (n, 2)), rng.uniform(1, 200, (n, 2))]
    iou(a[:10], b[:10], box_format="xywh")  # warm-up
    runs = []
    for _ in range(7):
        t = time.perf_counter()
        m = iou(a, b, box_format="xywh")
        runs.append(time.perf_counter() - t)
    crowd = []
    flags = rng.random(n) < 0.1
    for _ in range(7):
        t = time.perf_counter()
        iou(a, b, box_format="xywh", iscrowd=flags)
        crowd.append(time.perf_counter() - t)
    pair = []
    big_a = np.broadcast_to(a[:, None, :], (n, 500, 4))
    big_b = np.broadcast_to(b[None, :500, :], (n, 500, 4))
    for _ in range(5):
        t = time.perf_counter()
        paired_iou(big_a, big_b, box_format="xywh")
        pair.append(time.perf_counter() - t)
    print("IoU engine (median of runs, float64):")
    print(f"  pairwise {n} x {n}            {statistics.median(runs) * 1e3:8.1f} ms  {m.shape}")
    print(f"  pairwise {n} x {n}, 10% crowd {statistics.median(crowd) * 1e3:8.1f} ms")
    print(f"  element-wise (2000, 500) grid  {statistics.median(pair) * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
