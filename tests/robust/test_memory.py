"""Memory follows the number of boxes, never images x classes (issue 16).

An iNaturalist-sized ground truth (10,000 classes, 100,000 images, one box per image, a
18 MB file) with one prediction per image, through the command line (reading, matching,
the report): the run must stay under 1 GiB of resident memory and take seconds. Before M1
the COCO protocol sized arrays by ``n_images * n_classes`` (1e9 cells) and ran out of
memory even with 12 GiB. (tests/robust/test_scale_memory.py checks the library call.)

Hand count: image i holds one ground truth of class ``i % 10000`` and one prediction, the
same box in the same class: every prediction is a true positive, every class has 10
ground truths found at every threshold, so AP = AP50 = AR100 = 1 (up to pycocotools'
float sums, hence 1e-12).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

N_IMAGES = 100_000
N_CLASSES = 10_000
GIB = 1 << 30


def inat_scene(folder: Path) -> list[str]:
    images = [
        {"id": i + 1, "file_name": f"{i}.jpg", "width": 500, "height": 400} for i in range(N_IMAGES)
    ]
    anns = [
        {
            "id": i + 1,
            "image_id": i + 1,
            "category_id": i % N_CLASSES + 1,
            "bbox": [10 + i % 50, 20, 100, 80],
            "area": 8000,
            "iscrowd": 0,
        }
        for i in range(N_IMAGES)
    ]
    cats = [{"id": k + 1, "name": f"species_{k}"} for k in range(N_CLASSES)]
    preds = [
        {
            "image_id": a["image_id"],
            "category_id": a["category_id"],
            "bbox": a["bbox"],
            "score": 0.5,
        }
        for a in anns
    ]
    gt = folder / "inat_gt.json"
    gt.write_text(json.dumps({"images": images, "annotations": anns, "categories": cats}))
    pred = folder / "inat_pred.json"
    pred.write_text(json.dumps(preds))
    return [str(pred), str(gt)]


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 * GIB, 4 * GIB))


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB on Linux")
def test_inat_sized_scene_under_1_gib(tmp_path: Path) -> None:
    args = inat_scene(tmp_path)
    start = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "iou_cli", *args, "-q", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_limit,  # a regression fails with a message, never eats a shared machine
    )
    seconds = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    # before M1 this ends with "iou-eval: error: out of memory evaluating 100000 images x
    # 10000 classes (...)": never "out of memory" alone
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout)["summary"]
    for key in ("AP", "AP50", "AR100"):
        assert summary[key] == pytest.approx(1.0, abs=1e-12), (key, summary[key])
    assert peak < GIB, f"peak RSS {peak / 2**20:.0f} MiB"
    assert seconds < 60, f"{seconds:.1f} s"  # "a few seconds" unloaded; CI machines are shared
